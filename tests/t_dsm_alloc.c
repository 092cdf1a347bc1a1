/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_alloc.c - the shared region's allocator and the homes of its
 * pages (runtime/dsm/alloc.h): placements give every page the home they
 * say (block, cyclic, one node, first touch); random allocations and
 * frees never overlap, first fit reuses freed runs, and freed neighbours
 * join so a whole-region allocation fits again; a run too long, a bad
 * placement, a double free, and records from node 0 that do not fit the
 * region are refused with a reason.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "dsm/alloc.h"

TestSuite(dsm_alloc, .timeout = 10);

Test(dsm_alloc, placements_give_homes)
{
	uint16_t home[64];
	const char *why;
	struct dsm_placement b = {4, 10, DSM_PLACE_BLOCK, 0};
	cr_assert_eq(dsm_place_apply(&b, home, 64, 3, &why), 0);
	uint16_t want_b[10] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
	for (int k = 0; k < 10; k++)
		cr_assert_eq(home[4 + k], want_b[k], "block page %d", k);
	struct dsm_placement c = {0, 12, DSM_PLACE_CYCLIC, 2};
	cr_assert_eq(dsm_place_apply(&c, home, 64, 3, &why), 0);
	for (int k = 0; k < 12; k++)
		cr_assert_eq(home[k], k / 2 % 3, "cyclic page %d", k);
	struct dsm_placement n = {20, 5, DSM_PLACE_NODE, 2};
	cr_assert_eq(dsm_place_apply(&n, home, 64, 3, &why), 0);
	for (int k = 20; k < 25; k++)
		cr_assert_eq(home[k], 2);
	struct dsm_placement f = {30, 2, DSM_PLACE_FIRST, 0};
	cr_assert_eq(dsm_place_apply(&f, home, 64, 3, &why), 0);
	cr_assert_eq(home[30], DSM_HOME_NONE);
	cr_assert_eq(home[31], DSM_HOME_NONE);
}

Test(dsm_alloc, random_takes_and_frees_never_overlap)
{
	enum { P = 512 };
	struct dsm_alloc a;
	cr_assert_eq(dsm_alloc_init(&a, P, 4), 0);
	static int owner[P]; /* reference: which allocation holds a page */
	static uint32_t first[4096], len[4096];
	int live[4096], nlive = 0, next = 1;
	memset(owner, 0, sizeof(owner));
	srand(7);
	for (int step = 0; step < 20000; step++) {
		if (nlive && (rand() % 2 || nlive > 200)) {
			int i = rand() % nlive, id = live[i];
			const char *why;
			cr_assert_eq(dsm_alloc_free(&a, first[id], &why), 0,
				     "%s", why);
			for (uint32_t k = 0; k < len[id]; k++)
				owner[first[id] + k] = 0;
			live[i] = live[--nlive];
			continue;
		}
		uint32_t n = 1 + (uint32_t)rand() % 16;
		struct dsm_placement pl;
		const char *why;
		if (dsm_alloc_take(&a, n, DSM_PLACE_BLOCK, 0, &pl, &why)) {
			cr_assert(strstr(why, "no run"), "%s", why);
			continue;
		}
		cr_assert_eq(pl.pages, n);
		cr_assert_leq(pl.first + n, P);
		int id = next++ % 4096;
		if (!id)
			id = next++ % 4096;
		for (uint32_t k = 0; k < n; k++) {
			cr_assert_eq(owner[pl.first + k], 0,
				     "page %u given twice", pl.first + k);
			owner[pl.first + k] = id;
		}
		first[id] = pl.first;
		len[id] = n;
		live[nlive++] = id;
	}
	uint32_t used = 0;
	for (int i = 0; i < nlive; i++)
		used += len[live[i]];
	cr_assert_eq(a.used_pages, used);
	const char *why;
	for (int i = 0; i < nlive; i++)
		cr_assert_eq(dsm_alloc_free(&a, first[live[i]], &why), 0);
	struct dsm_placement pl;
	cr_assert_eq(dsm_alloc_take(&a, P, DSM_PLACE_NODE, 1, &pl, &why), 0,
		     "freed runs did not join: %s", why);
	dsm_alloc_fini(&a);
}

Test(dsm_alloc, first_fit_reuses_and_refusals)
{
	struct dsm_alloc a;
	cr_assert_eq(dsm_alloc_init(&a, 16, 2), 0);
	struct dsm_placement x, y, z;
	const char *why;
	cr_assert_eq(dsm_alloc_take(&a, 4, DSM_PLACE_BLOCK, 0, &x, &why), 0);
	cr_assert_eq(dsm_alloc_take(&a, 4, DSM_PLACE_BLOCK, 0, &y, &why), 0);
	cr_assert_eq(y.first, 4);
	cr_assert_eq(dsm_alloc_free(&a, x.first, &why), 0);
	cr_assert_eq(dsm_alloc_take(&a, 3, DSM_PLACE_BLOCK, 0, &z, &why), 0);
	cr_assert_eq(z.first, 0, "first fit did not reuse the freed run");
	cr_assert_eq(dsm_alloc_take(&a, 9, DSM_PLACE_BLOCK, 0, &z, &why), -1);
	cr_assert(strstr(why, "no run"), "%s", why);
	cr_assert_eq(dsm_alloc_free(&a, x.first + 1, &why), -1);
	cr_assert(strstr(why, "no allocation starts there"), "%s", why);
	cr_assert_eq(dsm_alloc_free(&a, y.first, &why), 0);
	cr_assert_eq(dsm_alloc_free(&a, y.first, &why), -1); /* twice */
	cr_assert(strstr(why, "freed twice"), "%s", why);
	cr_assert_eq(dsm_alloc_take(&a, 0, DSM_PLACE_BLOCK, 0, &z, &why), -1);
	cr_assert_eq(dsm_alloc_take(&a, 1, DSM_PLACE_CYCLIC, 0, &z, &why), -1);
	cr_assert(strstr(why, "0 pages per chunk"), "%s", why);
	cr_assert_eq(dsm_alloc_take(&a, 1, DSM_PLACE_NODE, 2, &z, &why), -1);
	cr_assert(strstr(why, "node the job does not have"), "%s", why);
	cr_assert_eq(dsm_alloc_take(&a, 1, (enum dsm_place)9, 0, &z, &why), -1);
	cr_assert(strstr(why, "unknown placement"), "%s", why);
	uint16_t home[16];
	struct dsm_placement bad = {10, 7, DSM_PLACE_BLOCK, 0};
	cr_assert_eq(dsm_place_apply(&bad, home, 16, 2, &why), -1);
	cr_assert(strstr(why, "past the end"), "%s", why);
	bad = (struct dsm_placement){UINT32_MAX, 2, DSM_PLACE_BLOCK, 0};
	cr_assert_eq(dsm_place_apply(&bad, home, 16, 2, &why), -1);
	dsm_alloc_fini(&a);
}
