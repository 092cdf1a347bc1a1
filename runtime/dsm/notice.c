/* SPDX-License-Identifier: MIT */
/*
 * dsm/notice.c - intervals, write notices and vector time (dsm/notice.h).
 */
#include "dsm/notice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define IV_HDR 12u /* u16 node, u16 0, u32 seq, u32 npages */

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

int dsm_log_init(struct dsm_log *l, uint32_t nodes, uint32_t self,
		 uint32_t pages)
{
	memset(l, 0, sizeof(*l));
	if (!nodes || self >= nodes || nodes > UINT16_MAX + 1u) {
		errno = EINVAL;
		return -1;
	}
	l->vt = calloc(nodes, sizeof(*l->vt));
	l->applied = calloc(nodes, sizeof(*l->applied));
	l->log = calloc(nodes, sizeof(*l->log));
	if (!l->vt || !l->applied || !l->log) {
		dsm_log_fini(l);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t n = 0; n < nodes; n++)
		l->log[n].first = 1;
	l->nodes = nodes;
	l->self = self;
	l->pages = pages;
	l->iv_max = DSM_IV_PAGES_MAX;
	return 0;
}

void dsm_log_fini(struct dsm_log *l)
{
	if (l->log)
		for (uint32_t n = 0; n < l->nodes; n++) {
			for (uint32_t i = 0; i < l->log[n].n; i++)
				free(l->log[n].iv[i].pages);
			free(l->log[n].iv);
		}
	free(l->log);
	free(l->vt);
	free(l->applied);
	memset(l, 0, sizeof(*l));
}

/* Appends interval seq of node (its pages taken over); 0 or -1. */
static int append(struct dsm_log *l, uint32_t node, uint32_t seq,
		  uint32_t *pages, uint32_t npages)
{
	struct dsm_node_log *g = &l->log[node];
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 8;
		struct dsm_interval *iv = realloc(g->iv, cap * sizeof(*iv));
		if (!iv)
			return -1;
		g->iv = iv;
		g->cap = cap;
	}
	g->iv[g->n++] = (struct dsm_interval){seq, npages, pages};
	l->vt[node] = seq;
	l->held_bytes += (uint64_t)npages * 4;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

void dsm_pages_sort(uint32_t *pages, uint32_t n)
{
	qsort(pages, n, sizeof(*pages), cmp_u32);
}

int dsm_log_close(struct dsm_log *l, const uint32_t *pages, uint32_t n)
{
	if (!n)
		return 0;
	uint32_t *p = malloc((size_t)n * sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(p, pages, (size_t)n * sizeof(*p));
	dsm_pages_sort(p, n);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] >= l->pages) {
			free(p);
			errno = EINVAL;
			return -1;
		}
		if (!k || p[k - 1] != p[i])
			p[k++] = p[i];
	}
	/* Past iv_max pages: intervals of that many, the last of the rest,
	 * each its own copy (p itself kept for the last). */
	uint32_t from = 0, most = l->iv_max;
	for (; k - from > most; from += most) {
		uint32_t *q = malloc((size_t)most * sizeof(*q));
		if (!q)
			goto nomem;
		memcpy(q, p + from, (size_t)most * sizeof(*q));
		if (append(l, l->self, l->vt[l->self] + 1, q, most)) {
			free(q);
			goto nomem;
		}
	}
	if (from)
		memmove(p, p + from, (size_t)(k - from) * sizeof(*p));
	if (append(l, l->self, l->vt[l->self] + 1, p, k - from))
		goto nomem;
	return 0;
nomem:
	free(p);
	errno = ENOMEM;
	return -1;
}

/* Node n's intervals after `after`: index of the first in the log, or
 * -1 when some were collected already. */
static long first_after(const struct dsm_node_log *g, uint32_t after)
{
	if (after + 1 < g->first)
		return -1;
	return (long)(after + 1 - g->first);
}

/* The last interval of node n that goes to a holder of their_vt: all
 * this node holds of n, of its own only up to own_upto. */
static uint32_t send_upto(const struct dsm_log *l, uint32_t n,
			  uint32_t own_upto)
{
	return n == l->self && own_upto < l->vt[n] ? own_upto : l->vt[n];
}

size_t dsm_log_size_since(const struct dsm_log *l, const uint32_t *their_vt,
			  uint32_t own_upto)
{
	size_t len = 4;
	for (uint32_t n = 0; n < l->nodes; n++) {
		const struct dsm_node_log *g = &l->log[n];
		uint32_t upto = send_upto(l, n, own_upto);
		if (their_vt[n] >= upto)
			continue;
		long i = first_after(g, their_vt[n]);
		if (i < 0)
			return (size_t)-2;
		for (; (uint32_t)i < g->n && g->iv[i].seq <= upto; i++)
			len += IV_HDR + (size_t)g->iv[i].npages * 4;
	}
	return len;
}

size_t dsm_log_encode_since(const struct dsm_log *l, const uint32_t *their_vt,
			    uint32_t own_upto, void *out, size_t cap)
{
	size_t need = dsm_log_size_since(l, their_vt, own_upto);
	if (need == (size_t)-2)
		return need;
	if (need > cap)
		return (size_t)-1;
	uint8_t *o = out;
	size_t at = 4;
	uint32_t count = 0;
	for (uint32_t n = 0; n < l->nodes; n++) {
		const struct dsm_node_log *g = &l->log[n];
		uint32_t upto = send_upto(l, n, own_upto);
		if (their_vt[n] >= upto)
			continue;
		for (long i = first_after(g, their_vt[n]);
		     (uint32_t)i < g->n && g->iv[i].seq <= upto; i++) {
			const struct dsm_interval *v = &g->iv[i];
			uint16_t node = (uint16_t)n, zero = 0;
			memcpy(o + at, &node, 2);
			memcpy(o + at + 2, &zero, 2);
			memcpy(o + at + 4, &v->seq, 4);
			memcpy(o + at + 8, &v->npages, 4);
			memcpy(o + at + IV_HDR, v->pages,
			       (size_t)v->npages * 4);
			at += IV_HDR + (size_t)v->npages * 4;
			count++;
		}
	}
	memcpy(o, &count, 4);
	return at;
}

size_t dsm_notice_cut(const void *enc, size_t len, size_t *at, void *out,
		      size_t cap)
{
	const uint8_t *e = enc;
	uint8_t *o = out;
	size_t w = 4;
	uint32_t count = 0;
	while (*at + IV_HDR <= len) {
		size_t n = IV_HDR + (size_t)rd32(e + *at + 8) * 4;
		if (n > len - *at || w + n > cap)
			break;
		memcpy(o + w, e + *at, n);
		w += n;
		*at += n;
		count++;
	}
	memcpy(o, &count, 4);
	return w;
}

void dsm_log_fit(struct dsm_log *l, size_t cap)
{
	size_t most = (cap - 4 - IV_HDR) / 4;
	l->iv_max = most < DSM_IV_PAGES_MAX ? (uint32_t)most : DSM_IV_PAGES_MAX;
}

/* The check of dsm_log_add: everything, before anything changes. */
static const char *check(const struct dsm_log *l, const uint8_t *b, size_t len,
			 uint32_t *bad)
{
	*bad = 0;
	if (len < 4)
		return "shorter than its count of intervals";
	uint32_t count = rd32(b);
	size_t at = 4;
	/* The next seq each node's intervals must have, as they come. */
	uint32_t *next = calloc(l->nodes, sizeof(*next));
	if (!next)
		return "no memory to check it";
	for (uint32_t n = 0; n < l->nodes; n++)
		next[n] = l->vt[n] + 1;
	const char *why = NULL;
	uint32_t i = 0;
	for (; i < count && !why; i++) {
		if (len - at < IV_HDR) {
			why = "ends inside an interval's header";
			break;
		}
		uint32_t node = rd16(b + at), seq = rd32(b + at + 4),
			 np = rd32(b + at + 8);
		if (rd16(b + at + 2))
			why = "an interval's reserved field is not 0";
		else if (node >= l->nodes)
			why = "an interval names a node the job does not have";
		else if (seq == 0 || seq > next[node])
			why = "an interval comes after a gap in its node's "
			      "intervals (or has seq 0)";
		else if (node == l->self && seq >= next[node])
			why = "an interval of ours that we never made";
		else if (np > l->pages || (len - at - IV_HDR) / 4 < np)
			why = "an interval lists more pages than the region "
			      "has, or than the bytes left";
		else if (np > DSM_IV_PAGES_MAX)
			why = "an interval lists more pages than one may "
			      "(DSM_IV_PAGES_MAX)";
		if (why)
			break;
		const uint8_t *pg = b + at + IV_HDR;
		for (uint32_t k = 0; k < np && !why; k++) {
			uint32_t p = rd32(pg + 4 * (size_t)k);
			if (p >= l->pages)
				why = "a page past the end of the region";
			else if (k && p <= rd32(pg + 4 * (size_t)(k - 1)))
				why = "pages not in ascending order";
		}
		if (why)
			break;
		if (seq == next[node])
			next[node]++;
		at += IV_HDR + (size_t)np * 4;
	}
	if (!why && at != len)
		why = "bytes after its last interval";
	free(next);
	*bad = i;
	return why;
}

int dsm_log_add(struct dsm_log *l, const void *buf, size_t len,
		void (*invalidate)(void *arg, uint32_t page), void *arg,
		struct dsm_notice_fault *f)
{
	const uint8_t *b = buf;
	uint32_t bad;
	const char *why = check(l, b, len, &bad);
	if (why) {
		if (f) {
			f->what = why;
			f->interval = bad;
		}
		errno = EPROTO;
		return -1;
	}
	uint32_t count = rd32(b);
	size_t at = 4;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t node = rd16(b + at), seq = rd32(b + at + 4),
			 np = rd32(b + at + 8);
		const uint8_t *pg = b + at + IV_HDR;
		at += IV_HDR + (size_t)np * 4;
		if (seq <= l->vt[node])
			continue; /* held already */
		uint32_t *p = malloc((size_t)(np ? np : 1) * sizeof(*p));
		if (!p || append(l, node, seq, p, np)) {
			free(p);
			if (f) {
				f->what = "no memory for its intervals";
				f->interval = i;
			}
			errno = ENOMEM;
			return -1;
		}
		memcpy(p, pg, (size_t)np * 4);
	}
	if (invalidate)
		dsm_log_apply(l, invalidate, arg);
	return 0;
}

void dsm_log_apply(struct dsm_log *l,
		   void (*invalidate)(void *arg, uint32_t page), void *arg)
{
	for (uint32_t n = 0; n < l->nodes; n++) {
		if (n == l->self || l->applied[n] == l->vt[n])
			continue;
		struct dsm_node_log *g = &l->log[n];
		/* collect keeps what is not applied: applied[n] + 1 is held */
		for (uint32_t seq = l->applied[n] + 1; seq <= l->vt[n]; seq++) {
			const struct dsm_interval *iv = &g->iv[seq - g->first];
			for (uint32_t k = 0; k < iv->npages; k++)
				invalidate(arg, iv->pages[k]);
		}
		l->applied[n] = l->vt[n];
	}
}

void dsm_log_collect(struct dsm_log *l, const uint32_t *upto)
{
	for (uint32_t n = 0; n < l->nodes; n++) {
		struct dsm_node_log *g = &l->log[n];
		uint32_t drop = 0,
			 last = n == l->self || upto[n] < l->applied[n]
				    ? upto[n]
				    : l->applied[n];
		while (drop < g->n && g->iv[drop].seq <= last) {
			l->held_bytes -= (uint64_t)g->iv[drop].npages * 4;
			free(g->iv[drop].pages);
			drop++;
		}
		if (!drop)
			continue;
		memmove(g->iv, g->iv + drop, (g->n - drop) * sizeof(*g->iv));
		g->n -= drop;
		g->first += drop;
	}
}
