/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_diff.c - a page's changes against its twin as byte runs
 * (runtime/dsm/diff.h): under random masks of every density, and at the
 * page's edges, a diff applied to the twin gives the page back, carries
 * exactly the changed bytes and fits its bound; the diffs of two writers
 * of disjoint bytes (even of one word) merge at the home; a diff from
 * elsewhere that is cut short, runs past the page, overlaps or goes
 * backwards is refused whole, naming its run, and changes nothing.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dsm/diff.h"

TestSuite(dsm_diff, .timeout = 30);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* page = twin with the bytes where mask is set changed (never to their
 * old value); how many changed. */
static size_t scribble(uint8_t *page, const uint8_t *twin, const bool *mask,
		       size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		page[i] = twin[i];
		if (mask[i]) {
			page[i] = (uint8_t)(twin[i] + 1 + next() % 255);
			k++;
		}
	}
	return k;
}

/* Encodes page against twin, checks the diff's size and contents, applies
 * it to a copy of the twin and compares with page. */
static void round_trip(const uint8_t *page, const uint8_t *twin, size_t n,
		       size_t changed)
{
	size_t cap = dsm_diff_bound(n);
	uint8_t *d = malloc(cap), *home = malloc(n);
	size_t len = dsm_diff_encode(page, twin, n, d, cap);
	cr_assert_neq(len, (size_t)-1,
		      "a diff of %zu changed bytes of %zu "
		      "did not fit its bound %zu",
		      changed, n, cap);
	struct dsm_diff_fault f = {0};
	cr_assert_eq(dsm_diff_check(d, len, n, &f), 0,
		     "the encoder's own diff refused: %s (run %u)", f.what,
		     f.run);
	uint32_t runs, bytes;
	dsm_diff_count(d, len, &runs, &bytes);
	cr_assert_eq(bytes, changed, "the diff carries %u bytes, %zu changed",
		     bytes, changed);
	cr_assert_eq(len, runs * DSM_DIFF_RUN_HDR + bytes);
	memcpy(home, twin, n);
	cr_assert_eq(dsm_diff_apply(home, n, d, len, &f), 0);
	cr_assert(!memcmp(home, page, n), "twin + diff differs from the page");
	/* Cut into parts of at most a message (the smallest, a header and
	 * one byte): each part a diff of its own, all of them together the
	 * same changes. */
	static const size_t caps[] = {DSM_DIFF_RUN_HDR + 1, 7, 64, 1000, 16384};
	uint8_t *part = malloc(16384);
	for (size_t ci = 0; ci < sizeof(caps) / sizeof(*caps); ci++) {
		struct dsm_diff_cutter c;
		dsm_diff_cut_init(&c, d, len);
		memcpy(home, twin, n);
		size_t m, parts = 0, carried = 0;
		while ((m = dsm_diff_cut(&c, part, caps[ci]))) {
			cr_assert_leq(m, caps[ci]);
			cr_assert_eq(dsm_diff_apply(home, n, part, m, &f), 0,
				     "part %zu (cap %zu) refused: %s", parts,
				     caps[ci], f.what);
			dsm_diff_count(part, m, &runs, &bytes);
			carried += bytes;
			parts++;
		}
		cr_assert_eq(carried, changed,
			     "cap %zu: %zu bytes in %zu parts", caps[ci],
			     carried, parts);
		cr_assert(!memcmp(home, page, n),
			  "twin + the diff's parts (cap %zu) differs",
			  caps[ci]);
		if (len <= caps[ci])
			cr_assert_eq(parts, len ? 1 : 0);
	}
	free(part);
	/* No smaller cap fits: the encoder says so instead of writing past. */
	if (len)
		cr_assert_eq(dsm_diff_encode(page, twin, n, d, len - 1),
			     (size_t)-1);
	free(d);
	free(home);
}

Test(dsm_diff, random_masks_round_trip)
{
	static const size_t sizes[] = {4096, 16384, 65536, 24, 8};
	static const double dens[] = {0, 0.0005, 0.01, 0.1, 0.5, 0.9, 1};
	for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
		size_t n = sizes[s];
		uint8_t *twin = malloc(n), *page = malloc(n);
		bool *mask = malloc(n);
		for (size_t di = 0; di < sizeof(dens) / sizeof(*dens); di++)
			for (int rep = 0; rep < 20; rep++) {
				for (size_t i = 0; i < n; i++) {
					twin[i] = (uint8_t)next();
					mask[i] = (double)(next() % 1000000) <
						  dens[di] * 1000000;
				}
				size_t k = scribble(page, twin, mask, n);
				round_trip(page, twin, n, k);
			}
		free(twin);
		free(page);
		free(mask);
	}
}

/* The worst case (every other byte), runs at the page's first and last
 * bytes, a run across a word boundary, one byte, the whole page. */
Test(dsm_diff, shapes_and_edges)
{
	enum { N = 4096 };
	static uint8_t twin[N], page[N];
	static bool mask[N];
	for (size_t i = 0; i < N; i++)
		twin[i] = (uint8_t)(i * 7);
	struct {
		const char *name;
		size_t from, to, step;
	} shapes[] = {{"every other byte", 0, N, 2},
		      {"every other byte from 1", 1, N, 2},
		      {"first byte", 0, 1, 1},
		      {"last byte", N - 1, N, 1},
		      {"bytes 5..12 (across a word)", 5, 13, 1},
		      {"whole page", 0, N, 1},
		      {"every eighth byte", 7, N, 8}};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
		memset(mask, 0, sizeof(mask));
		for (size_t i = shapes[s].from; i < shapes[s].to;
		     i += shapes[s].step)
			mask[i] = true;
		size_t k = scribble(page, twin, mask, N);
		cr_log_info("%s: %zu bytes", shapes[s].name, k);
		round_trip(page, twin, N, k);
	}
	/* The bound is met exactly by every other byte. */
	memset(mask, 0, sizeof(mask));
	for (size_t i = 0; i < N; i += 2)
		mask[i] = true;
	scribble(page, twin, mask, N);
	static uint8_t d[N * 3];
	cr_assert_eq(dsm_diff_encode(page, twin, N, d, sizeof(d)),
		     N / 2 * (DSM_DIFF_RUN_HDR + 1));
	cr_assert_eq(dsm_diff_encode(page, twin, N, d, sizeof(d)),
		     dsm_diff_bound(N) - N / 2);
}

/* Two nodes write disjoint bytes of one page, interleaved within words:
 * the home applies both diffs and has both writers' bytes. */
Test(dsm_diff, two_writers_merge_at_home)
{
	enum { N = 4096 };
	static uint8_t twin[N], a[N], b[N], want[N], home[N];
	static bool ma[N], mb[N];
	static uint8_t da[N * 3], db[N * 3];
	for (int rep = 0; rep < 50; rep++) {
		for (size_t i = 0; i < N; i++) {
			twin[i] = (uint8_t)next();
			unsigned r = (unsigned)(next() % 4);
			ma[i] = r == 1;
			mb[i] = r == 2; /* disjoint, often in one word */
		}
		scribble(a, twin, ma, N);
		scribble(b, twin, mb, N);
		for (size_t i = 0; i < N; i++)
			want[i] = ma[i] ? a[i] : mb[i] ? b[i] : twin[i];
		size_t la = dsm_diff_encode(a, twin, N, da, sizeof(da)),
		       lb = dsm_diff_encode(b, twin, N, db, sizeof(db));
		memcpy(home, twin, N);
		struct dsm_diff_fault f;
		cr_assert_eq(dsm_diff_apply(home, N, db, lb, &f), 0);
		cr_assert_eq(dsm_diff_apply(home, N, da, la, &f), 0);
		cr_assert(!memcmp(home, want, N),
			  "the home lost a writer's byte (rep %d)", rep);
	}
}

static size_t put_run(uint8_t *d, size_t at, unsigned off, unsigned count)
{
	uint16_t o = (uint16_t)off, c = (uint16_t)(count - 1);
	memcpy(d + at, &o, 2);
	memcpy(d + at + 2, &c, 2);
	memset(d + at + 4, 0xab, count);
	return at + 4 + count;
}

/* A bad diff is refused whole: the page is as it was, the fault names
 * what is wrong and the run. */
static void refused(const uint8_t *d, size_t len, size_t n, const char *what,
		    uint32_t run)
{
	static uint8_t page[65536], before[65536];
	for (size_t i = 0; i < n; i++)
		page[i] = before[i] = (uint8_t)i;
	struct dsm_diff_fault f = {0};
	cr_assert_eq(dsm_diff_apply(page, n, d, len, &f), -1,
		     "a diff with %s was applied", what);
	cr_assert(f.what && strstr(f.what, what), "fault '%s', want '%s'",
		  f.what ? f.what : "(none)", what);
	cr_assert_eq(f.run, run, "%s: run %u named, want %u", what, f.run, run);
	cr_assert(!memcmp(page, before, n), "%s: the page changed", what);
}

Test(dsm_diff, bad_diffs_refused_whole)
{
	enum { N = 4096 };
	static uint8_t d[N * 3];
	size_t at;
	/* a good run first, so that a refusal that came late would show */
	at = put_run(d, 0, 0, 16);
	refused(d, at + 3, N, "inside a run's header", 1);
	at = put_run(d, put_run(d, 0, 0, 16), 100, 10);
	refused(d, at - 1, N, "inside a run's bytes", 1);
	at = put_run(d, put_run(d, 0, 0, 16), N - 4, 8);
	refused(d, at, N, "past the end of the page", 1);
	at = put_run(d, put_run(d, 0, 100, 16), 50, 4);
	refused(d, at, N, "ascending", 1);
	at = put_run(d, put_run(d, 0, 100, 16), 115, 4);
	refused(d, at, N, "ascending", 1);
	/* 65536 bytes from offset 1 of a 64 KiB page */
	static uint8_t big[4 + 65536 + 8];
	at = put_run(big, 0, 1, 65536);
	refused(big, at, 65536, "past the end of the page", 0);
	refused(d, 0, 0, "page size", 0);
	/* An empty diff is a valid no-op; a run right after another is
	 * fine. */
	struct dsm_diff_fault f;
	uint8_t page[N] = {0};
	cr_assert_eq(dsm_diff_apply(page, N, d, 0, &f), 0);
	at = put_run(d, put_run(d, 0, 0, 16), 16, 16);
	cr_assert_eq(dsm_diff_apply(page, N, d, at, &f), 0);
	cr_assert_eq(page[31], 0xab);
	cr_assert_eq(page[32], 0);
}
