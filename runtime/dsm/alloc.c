/* SPDX-License-Identifier: MIT */
/*
 * dsm/alloc.c - first-fit runs of pages and their placements
 * (dsm/alloc.h). The region is a sequence of runs, each free or
 * allocated; run[] holds each run's length at its first page.
 */
#include "dsm/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dsm_alloc_init(struct dsm_alloc *a, uint32_t pages, uint32_t nodes)
{
	memset(a, 0, sizeof(*a));
	if (!pages || !nodes || nodes > DSM_HOME_NONE) {
		errno = EINVAL;
		return -1;
	}
	a->run = calloc(pages, sizeof(*a->run));
	a->used = calloc(pages, 1);
	if (!a->run || !a->used) {
		dsm_alloc_fini(a);
		errno = ENOMEM;
		return -1;
	}
	a->pages = pages;
	a->nodes = nodes;
	a->run[0] = pages; /* one free run */
	return 0;
}

void dsm_alloc_fini(struct dsm_alloc *a)
{
	free(a->run);
	free(a->used);
	memset(a, 0, sizeof(*a));
}

static const char *place_check(uint32_t place, uint32_t arg, uint32_t nodes)
{
	switch (place) {
	case DSM_PLACE_BLOCK:
	case DSM_PLACE_FIRST:
		return NULL;
	case DSM_PLACE_CYCLIC:
		return arg ? NULL : "a cyclic placement of 0 pages per chunk";
	case DSM_PLACE_NODE:
		return arg < nodes ? NULL
				   : "a placement on a node the job does not "
				     "have";
	}
	return "an unknown placement";
}

int dsm_alloc_take(struct dsm_alloc *a, uint32_t pages, enum dsm_place place,
		   uint32_t arg, struct dsm_placement *out, const char **why)
{
	if ((*why = place_check(place, arg, a->nodes)))
		return -1;
	if (!pages) {
		*why = "an allocation of 0 pages";
		return -1;
	}
	for (uint32_t p = 0; p < a->pages; p += a->run[p]) {
		if (a->used[p] || a->run[p] < pages)
			continue;
		if (a->run[p] > pages) /* split: the rest stays free */
			a->run[p + pages] = a->run[p] - pages;
		a->run[p] = pages;
		a->used[p] = 1;
		a->used_pages += pages;
		*out = (struct dsm_placement){p, pages, place, arg, 0};
		return 0;
	}
	*why = "no run of free pages that long left in the shared region";
	return -1;
}

int dsm_alloc_free(struct dsm_alloc *a, uint32_t first, const char **why)
{
	/* Walk to it: it must be a run's first page, and allocated. */
	uint32_t prev = UINT32_MAX, p = 0;
	while (p < a->pages && p < first) {
		prev = p;
		p += a->run[p];
	}
	if (p != first || p >= a->pages || !a->used[p]) {
		*why = "no allocation starts there (freed twice, or not a "
		       "pointer an allocation returned)";
		return -1;
	}
	*why = NULL;
	a->used[p] = 0;
	a->used_pages -= a->run[p];
	uint32_t next = p + a->run[p];
	if (next < a->pages && !a->used[next]) { /* join the next */
		a->run[p] += a->run[next];
		a->run[next] = 0;
	}
	if (prev != UINT32_MAX && !a->used[prev]) { /* join the previous */
		a->run[prev] += a->run[p];
		a->run[p] = 0;
	}
	return 0;
}

int dsm_place_apply(const struct dsm_placement *pl, uint16_t *home,
		    uint32_t pages, uint32_t nodes, const char **why)
{
	if (pl->first > pages || !pl->pages || pl->pages > pages - pl->first)
		*why = "a placement past the end of the region";
	else
		*why = place_check(pl->place, pl->arg, nodes);
	if (*why)
		return -1;
	for (uint32_t k = 0; k < pl->pages; k++) {
		uint32_t h = 0;
		switch (pl->place) {
		case DSM_PLACE_BLOCK:
			h = (uint32_t)((uint64_t)k * nodes / pl->pages);
			break;
		case DSM_PLACE_CYCLIC:
			h = k / pl->arg % nodes;
			break;
		case DSM_PLACE_NODE:
			h = pl->arg;
			break;
		default:
			h = DSM_HOME_NONE;
			break;
		}
		home[pl->first + k] = (uint16_t)h;
	}
	return 0;
}
