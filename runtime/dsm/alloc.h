/* SPDX-License-Identifier: MIT */
/*
 * dsm/alloc.h - the shared region's allocator and the homes of its pages.
 * One node (node 0) allocates for the job: an allocation is a run of whole
 * pages with a placement, which gives every page its home:
 *
 *   DSM_PLACE_BLOCK   the pages cut into N runs, run i homed on node i
 *   DSM_PLACE_CYCLIC  page k of the allocation on node (k / chunk) % N
 *   DSM_PLACE_NODE    every page on one node
 *   DSM_PLACE_FIRST   no home yet: the first node that writes a page
 *                     becomes its home (the protocol's manager decides)
 *
 * What an allocation placed is a record of a few words (struct
 * dsm_placement) that node 0 sends to every node, which applies it to its
 * own table of homes; the same record gives the same homes everywhere.
 * Freed runs join their free neighbours; allocation is first fit.
 */
#ifndef EARTH_DSM_ALLOC_H
#define EARTH_DSM_ALLOC_H

#include <stdint.h>

enum dsm_place {
	DSM_PLACE_BLOCK,
	DSM_PLACE_CYCLIC,
	DSM_PLACE_NODE,
	DSM_PLACE_FIRST,
};

#define DSM_HOME_NONE UINT16_MAX /* first touch: not decided yet */

/* What an allocation placed, as node 0 sends it (checked on arrival). */
struct dsm_placement {
	uint32_t first, pages; /* the run */
	uint32_t place;	       /* enum dsm_place */
	uint32_t arg;	       /* CYCLIC: pages per chunk; NODE: the node */
	uint32_t tail; /* bytes of the last page allocated (1 to a page) */
};

struct dsm_alloc {
	uint32_t pages, nodes;
	uint32_t *run; /* per page: run length where a run starts, else 0 */
	uint8_t *used; /* per page where a run starts: allocated */
	uint32_t used_pages;
};

int dsm_alloc_init(struct dsm_alloc *a, uint32_t pages, uint32_t nodes);
void dsm_alloc_fini(struct dsm_alloc *a);

/* A run of `pages` pages placed as asked: its record in *out (tail 0:
 * the caller knows the bytes). Returns 0,
 * or -1 with *why (no room left, a bad placement). */
int dsm_alloc_take(struct dsm_alloc *a, uint32_t pages, enum dsm_place place,
		   uint32_t arg, struct dsm_placement *out, const char **why);

/* Frees the run that starts at page first. -1 with *why when no
 * allocated run starts there. */
int dsm_alloc_free(struct dsm_alloc *a, uint32_t first, const char **why);

/* Applies a record (from node 0: untrusted) to a table of homes of
 * `pages` entries for a job of `nodes` nodes. -1 with *why when the
 * record does not fit the region or names no valid placement. */
int dsm_place_apply(const struct dsm_placement *pl, uint16_t *home,
		    uint32_t pages, uint32_t nodes, const char **why);

#endif
