/* SPDX-License-Identifier: MIT */
/*
 * json.h - a strict JSON reader for the tests that check what the runtime
 * writes (traces, statistics): RFC 8259 syntax, a tree of values, lookups.
 */
#ifndef EARTH_TEST_JSON_H
#define EARTH_TEST_JSON_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type type;
	double num;	/* JSON_NUM, JSON_BOOL (0 or 1) */
	char *str;	/* JSON_STR, unescaped */
	size_t n;	/* JSON_ARR, JSON_OBJ: members */
	struct json *v; /* members' values */
	char **k;	/* JSON_OBJ: members' keys */
};

/* Parses all of text; NULL with a message naming the offset in err. */
struct json *json_parse(const char *text, char *err, size_t errlen);
/* Reads and parses a file. */
struct json *json_parse_file(const char *path, char *err, size_t errlen);
void json_free(struct json *j);
/* The member `key` of an object, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);

#endif /* EARTH_TEST_JSON_H */
