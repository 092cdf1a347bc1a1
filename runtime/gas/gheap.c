/* SPDX-License-Identifier: MIT */
/*
 * gheap.c - the extent allocator of global memory segments (gheap.h).
 * Segments hold few, large objects (arrays, buffers), so a sorted array of
 * free extents searched linearly is enough.
 */
#define EARTH_INTERNAL 1
#include "gas/gheap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct gheap *h)
{
	if (h->nfree < h->cap)
		return 0;
	size_t c = h->cap ? h->cap * 2 : 16;
	struct gheap_ext *p = realloc(h->free, c * sizeof(*p));
	if (!p)
		return -ENOMEM;
	h->free = p;
	h->cap = c;
	return 0;
}

int gheap_init(struct gheap *h, uint64_t size)
{
	memset(h, 0, sizeof(*h));
	if (!size)
		return 0;
	if (grow(h))
		return -ENOMEM;
	h->free[0] = (struct gheap_ext){0, size};
	h->nfree = 1;
	return 0;
}

void gheap_fini(struct gheap *h)
{
	free(h->free);
	memset(h, 0, sizeof(*h));
}

static void drop(struct gheap *h, size_t i)
{
	memmove(h->free + i, h->free + i + 1,
		(h->nfree - i - 1) * sizeof(*h->free));
	h->nfree--;
}

int64_t gheap_alloc(struct gheap *h, uint64_t len, bool high)
{
	if (!len)
		return -1;
	for (size_t k = 0; k < h->nfree; k++) {
		size_t i = high ? h->nfree - 1 - k : k;
		struct gheap_ext *e = &h->free[i];
		if (e->len < len)
			continue;
		uint64_t off;
		if (high) {
			off = e->off + e->len - len;
		} else {
			off = e->off;
			e->off += len;
		}
		e->len -= len;
		if (!e->len)
			drop(h, i);
		return (int64_t)off;
	}
	return -1;
}

int gheap_take(struct gheap *h, uint64_t off, uint64_t len)
{
	if (!len || off + len < off)
		return -1;
	for (size_t i = 0; i < h->nfree; i++) {
		struct gheap_ext *e = &h->free[i];
		if (off < e->off || off + len > e->off + e->len)
			continue;
		uint64_t head = off - e->off;
		uint64_t tail = e->off + e->len - (off + len);
		if (head && tail) { /* split in two */
			if (grow(h))
				return -1;
			e = &h->free[i];
			memmove(h->free + i + 2, h->free + i + 1,
				(h->nfree - i - 1) * sizeof(*h->free));
			h->free[i + 1] = (struct gheap_ext){off + len, tail};
			h->nfree++;
			e->len = head;
		} else if (head) {
			e->len = head;
		} else if (tail) {
			e->off = off + len;
			e->len = tail;
		} else {
			drop(h, i);
		}
		return 0;
	}
	return -1;
}

int gheap_put(struct gheap *h, uint64_t off, uint64_t len)
{
	size_t i = 0;
	while (i < h->nfree && h->free[i].off < off)
		i++;
	bool left = i > 0 && h->free[i - 1].off + h->free[i - 1].len == off;
	bool right = i < h->nfree && off + len == h->free[i].off;
	if (left && right) {
		h->free[i - 1].len += len + h->free[i].len;
		drop(h, i);
	} else if (left) {
		h->free[i - 1].len += len;
	} else if (right) {
		h->free[i].off = off;
		h->free[i].len += len;
	} else {
		if (grow(h))
			return -ENOMEM;
		memmove(h->free + i + 1, h->free + i,
			(h->nfree - i) * sizeof(*h->free));
		h->free[i] = (struct gheap_ext){off, len};
		h->nfree++;
	}
	return 0;
}
