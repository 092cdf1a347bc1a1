/* SPDX-License-Identifier: MIT */
/*
 * json.c - see json.h. Recursive descent; depth limited to 64.
 */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *s, *p;
	char *err;
	size_t errlen;
	int depth;
};

static int jfail(struct jp *j, const char *what)
{
	if (j->err && !j->err[0])
		snprintf(j->err, j->errlen, "%s at offset %ld", what,
			 (long)(j->p - j->s));
	return -1;
}

static void skip_ws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int parse_value(struct jp *j, struct json *out);

static int parse_string(struct jp *j, char **out)
{
	if (*j->p != '"')
		return jfail(j, "expected a string");
	j->p++;
	size_t cap = 16, n = 0;
	char *b = malloc(cap);
	if (!b)
		return jfail(j, "out of memory");
	for (;;) {
		unsigned char c = (unsigned char)*j->p;
		if (!c || c < 0x20) {
			free(b);
			return jfail(
			    j, "unterminated string or control character");
		}
		j->p++;
		if (c == '"')
			break;
		if (c == '\\') {
			char e = *j->p++;
			switch (e) {
			case '"':
			case '\\':
			case '/':
				c = (unsigned char)e;
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u': {
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					char h = *j->p++;
					v <<= 4;
					if (h >= '0' && h <= '9')
						v |= (unsigned)(h - '0');
					else if (h >= 'a' && h <= 'f')
						v |= (unsigned)(h - 'a' + 10);
					else if (h >= 'A' && h <= 'F')
						v |= (unsigned)(h - 'A' + 10);
					else {
						free(b);
						return jfail(j,
							     "bad \\u escape");
					}
				}
				c = v < 0x80 ? (unsigned char)v : '?';
				break;
			}
			default:
				free(b);
				return jfail(j, "bad escape");
			}
		}
		if (n + 2 > cap) {
			cap *= 2;
			char *nb = realloc(b, cap);
			if (!nb) {
				free(b);
				return jfail(j, "out of memory");
			}
			b = nb;
		}
		b[n++] = (char)c;
	}
	b[n] = 0;
	*out = b;
	return 0;
}

static int parse_number(struct jp *j, struct json *out)
{
	const char *p = j->p;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return jfail(j, "bad number");
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return jfail(j, "bad fraction");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return jfail(j, "bad exponent");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	out->type = JSON_NUM;
	out->num = strtod(j->p, NULL);
	j->p = p;
	return 0;
}

static int push(struct json *c, size_t *cap)
{
	if (c->n < *cap)
		return 0;
	*cap = *cap ? 2 * *cap : 8;
	struct json *v = realloc(c->v, *cap * sizeof(*v));
	if (!v)
		return -1;
	c->v = v;
	if (c->type == JSON_OBJ) {
		char **k = realloc(c->k, *cap * sizeof(*k));
		if (!k)
			return -1;
		c->k = k;
	}
	return 0;
}

static int parse_container(struct jp *j, struct json *out, char close)
{
	size_t cap = 0;
	out->type = close == ']' ? JSON_ARR : JSON_OBJ;
	j->p++;
	skip_ws(j);
	if (*j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		skip_ws(j);
		if (push(out, &cap))
			return jfail(j, "out of memory");
		struct json *v = &out->v[out->n];
		memset(v, 0, sizeof(*v));
		if (out->type == JSON_OBJ) {
			out->k[out->n] = NULL;
			if (parse_string(j, &out->k[out->n]))
				return -1;
			out->n++;
			skip_ws(j);
			if (*j->p != ':')
				return jfail(j, "expected ':'");
			j->p++;
			skip_ws(j);
		} else {
			out->n++;
		}
		if (parse_value(j, v))
			return -1;
		skip_ws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == close) {
			j->p++;
			return 0;
		}
		return jfail(j, close == ']' ? "expected ',' or ']'"
					     : "expected ',' or '}'");
	}
}

static int parse_value(struct jp *j, struct json *out)
{
	if (++j->depth > 64)
		return jfail(j, "nested too deeply");
	int r;
	skip_ws(j);
	switch (*j->p) {
	case '{':
		r = parse_container(j, out, '}');
		break;
	case '[':
		r = parse_container(j, out, ']');
		break;
	case '"':
		out->type = JSON_STR;
		r = parse_string(j, &out->str);
		break;
	case 't':
		r = strncmp(j->p, "true", 4)
			? jfail(j, "bad literal")
			: (j->p += 4, out->type = JSON_BOOL, out->num = 1, 0);
		break;
	case 'f':
		r = strncmp(j->p, "false", 5)
			? jfail(j, "bad literal")
			: (j->p += 5, out->type = JSON_BOOL, 0);
		break;
	case 'n':
		r = strncmp(j->p, "null", 4)
			? jfail(j, "bad literal")
			: (j->p += 4, out->type = JSON_NULL, 0);
		break;
	default:
		r = parse_number(j, out);
		break;
	}
	j->depth--;
	return r;
}

static void free_members(struct json *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free_members(&j->v[i]);
		if (j->type == JSON_OBJ)
			free(j->k[i]);
	}
	free(j->v);
	free(j->k);
	free(j->str);
}

void json_free(struct json *j)
{
	if (!j)
		return;
	free_members(j);
	free(j);
}

struct json *json_parse(const char *text, char *err, size_t errlen)
{
	struct jp j = {text, text, err, errlen, 0};
	if (err && errlen)
		err[0] = 0;
	struct json *root = calloc(1, sizeof(*root));
	if (!root)
		return NULL;
	if (parse_value(&j, root) == 0) {
		skip_ws(&j);
		if (!*j.p)
			return root;
		jfail(&j, "text after the value");
	}
	json_free(root);
	return NULL;
}

struct json *json_parse_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b[n] = 0;
	struct json *j = json_parse(b, err, errlen);
	free(b);
	return j;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->k[i], key))
			return &obj->v[i];
	return NULL;
}
