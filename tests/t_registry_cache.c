/* SPDX-License-Identifier: MIT */
/*
 * t_registry_cache.c - the lock-free look at the registry's segments a unit
 * keeps (gas/registry.h, reg_cache): reg_mem_hit finds only what a lookup
 * put in the cache and only in the generation it was found in;
 * reg_mem_hit2 (a GET's source and destination at once) says yes exactly
 * when both ranges lie in cached segments, whether in one segment (one look)
 * or in two (each alone), and no when either does not, at a segment's edge,
 * across two adjacent segments, and at the top of the address space.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include "gas/registry.h"

#include <stdint.h>

TestSuite(registry_cache, .timeout = 30);

/* Two adjacent segments a | b and a separate one c; gap is never
 * registered. */
static char mem[4096] __attribute__((aligned(64)));
static char gap[256];
#define A ((uint64_t)(uintptr_t)mem)
#define B (A + 1024)
#define C (A + 3072)
#define END (A + sizeof(mem))

static void add_all(void)
{
	reg_mem_clear();
	cr_assert_eq(reg_mem_add(mem, 1024), 0);
	cr_assert_eq(reg_mem_add(mem + 1024, 1024), 0);
	cr_assert_eq(reg_mem_add(mem + 3072, 1024), 0);
}

/* The answer reg_mem_contains gives for both ranges, through no cache. */
static bool both_in(uint64_t a, uint64_t b, uint64_t len)
{
	return reg_mem_contains(a, len) && reg_mem_contains(b, len);
}

Test(registry_cache, hit_only_after_a_lookup_and_in_its_generation)
{
	add_all();
	struct reg_cache c = {0};
	cr_assert(!reg_mem_hit(&c, A + 8, 8), "an empty cache knows nothing");
	cr_assert(reg_mem_lookup(&c, A + 8, 8));
	cr_assert(reg_mem_hit(&c, A + 8, 8));
	cr_assert(reg_mem_hit(&c, A, 1024));
	cr_assert(!reg_mem_hit(&c, A + 1020, 8), "runs into the next segment");
	cr_assert(!reg_mem_hit(&c, B, 8), "b is not in the cache yet");
	cr_assert(!reg_mem_lookup(&c, (uintptr_t)gap, 8));
	cr_assert(!reg_mem_hit(&c, (uintptr_t)gap, 8));
	/* A removal bumps the generation: nothing cached is used after. */
	cr_assert_eq(reg_mem_remove(mem + 3072), 0);
	cr_assert(!reg_mem_hit(&c, A + 8, 8));
	cr_assert(!reg_mem_hit2(&c, A + 8, A + 16, 8));
	cr_assert(reg_mem_lookup(&c, A + 8, 8));
	cr_assert(reg_mem_hit2(&c, A + 8, A + 16, 8));
	cr_assert(!reg_mem_lookup(&c, C, 8), "c was removed");
	reg_mem_clear();
}

Test(registry_cache, hit2_is_both_ranges_in_cached_segments)
{
	add_all();
	struct reg_cache c = {0};
	cr_assert(reg_mem_lookup(&c, A, 8));
	cr_assert(reg_mem_lookup(&c, B, 8));
	cr_assert(reg_mem_lookup(&c, C, 8));
	/* Every pair of 8-byte ranges, in either order, at every 4 bytes
	 * around the edges of a, b, c and the gap between b and c. */
	uint64_t at[] = {A,	A + 4,	  A + 512,  B - 8,    B - 4, B,
			 B + 4, B + 1016, B + 1020, B + 1024, C - 8, C - 4,
			 C,	C + 4,	  END - 8,  END - 4,  END,   A - 8};
	size_t n = sizeof(at) / sizeof(at[0]), yes = 0, no = 0;
	for (uint64_t len = 1; len <= 8; len *= 2)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				bool want = both_in(at[i], at[j], len);
				cr_assert_eq(
				    reg_mem_hit2(&c, at[i], at[j], len), want,
				    "ranges at +%lld and +%lld, %llu "
				    "bytes: want %d",
				    (long long)(at[i] - A),
				    (long long)(at[j] - A),
				    (unsigned long long)len, want);
				yes += want;
				no += !want;
			}
	/* Both answers occur, and pairs in two segments among the yes. */
	cr_assert_gt(yes, 100);
	cr_assert_gt(no, 100);
	cr_assert(reg_mem_hit2(&c, A + 8, C + 8, 8), "a and c: each alone");
	cr_assert(reg_mem_hit2(&c, B - 8, B, 8), "adjacent: each alone");
	cr_assert(!reg_mem_hit2(&c, B - 4, B + 8, 8), "one across the edge");
	cr_assert(!reg_mem_hit2(&c, A + 8, (uintptr_t)gap, 8));
	cr_assert(!reg_mem_hit2(&c, (uintptr_t)gap, A + 8, 8));
	reg_mem_clear();
}

Test(registry_cache, hit2_at_the_top_of_the_address_space)
{
	add_all();
	struct reg_cache c = {0};
	cr_assert(reg_mem_lookup(&c, A, 8));
	/* The hull's end wraps: no, never a hit through the wrap. */
	cr_assert(!reg_mem_hit2(&c, A, UINT64_MAX - 3, 8));
	cr_assert(!reg_mem_hit2(&c, UINT64_MAX - 3, A, 8));
	cr_assert(!reg_mem_hit2(&c, UINT64_MAX, UINT64_MAX, 1));
	cr_assert(!reg_mem_hit2(&c, 0, A, 8));
	reg_mem_clear();
}
