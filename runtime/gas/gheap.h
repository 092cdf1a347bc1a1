/* SPDX-License-Identifier: MIT */
/*
 * gheap.h - an extent allocator over the offsets [0, size) of a global
 * memory segment: a sorted list of free extents, first fit from the bottom
 * or last fit from the top, a given range taken on request, and freed
 * extents merged with their neighbours. It keeps its lists in process
 * memory, never in the segment (which other nodes can write). Not
 * thread-safe: its owner (gmem.c) holds a lock.
 */
#ifndef EARTH_GHEAP_H
#define EARTH_GHEAP_H

#ifndef EARTH_INTERNAL
#error "gheap.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gheap {
	struct gheap_ext {
		uint64_t off, len;
	} * free; /* sorted by offset, never adjacent */
	size_t nfree, cap;
};

/* One free extent [0, size). 0 or -ENOMEM. */
int gheap_init(struct gheap *h, uint64_t size);
void gheap_fini(struct gheap *h);
/* Takes len bytes: the lowest fit (high: the highest). Returns the
 * offset, or -1 when no free extent is large enough. */
int64_t gheap_alloc(struct gheap *h, uint64_t len, bool high);
/* Takes exactly [off, off + len): 0, or -1 when it is not all free. */
int gheap_take(struct gheap *h, uint64_t off, uint64_t len);
/* Returns [off, off + len), which the caller had taken: 0, or -ENOMEM
 * (the extent list could not grow; the bytes stay taken). */
int gheap_put(struct gheap *h, uint64_t off, uint64_t len);

#endif /* EARTH_GHEAP_H */
