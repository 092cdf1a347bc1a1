/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_notice.c - write notices and vector time (runtime/dsm/notice.h):
 * an acquire invalidates exactly the pages written before it, also along
 * a chain of three nodes; notices held already are skipped; random grants
 * between four nodes invalidate what a reference of known intervals says;
 * a grant keeps back its maker's own intervals past own_upto; a release
 * of more pages than an interval holds closes several, cut into messages
 * of whole intervals that add up to the whole; intervals
 * collected at a barrier free their memory and cannot be asked
 * for again; intervals a manager adds without invalidating are applied
 * at its next acquire and kept by a collection until then; intervals from a
 * hostile peer (a gap, a node or page out of range, pages out of order, our own
 * future, cut short, bytes after) are refused whole, naming the interval.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "dsm/notice.h"

TestSuite(dsm_notice, .timeout = 30);

#define PAGES 64u

static bool inval[PAGES];
static int ninval;

static void on_inval(void *arg, uint32_t page)
{
	(void)arg;
	cr_assert_lt(page, PAGES);
	inval[page] = true;
	ninval++;
}

static void mark_wide(void *arg, uint32_t page)
{
	((bool *)arg)[page] = true;
}

/* All of a's intervals (encoded into cut_enc, *len bytes) cut into
 * messages of at most cap bytes, each added to b (seen: the pages it
 * invalidated); how many messages. */
static uint8_t *cut_enc;
static size_t cut_into(struct dsm_log *a, struct dsm_log *b, size_t cap,
		       bool *seen, size_t *len)
{
	uint32_t zero[2] = {0, 0};
	*len = dsm_log_size_since(a, zero, UINT32_MAX);
	cut_enc = malloc(*len);
	uint8_t *part = malloc(cap);
	cr_assert(cut_enc && part);
	cr_assert_eq(dsm_log_encode_since(a, zero, UINT32_MAX, cut_enc, *len),
		     *len);
	size_t at = 4, parts = 0;
	while (at < *len) {
		size_t n = dsm_notice_cut(cut_enc, *len, &at, part, cap);
		cr_assert_gt(n, 4, "an interval does not fit %zu bytes", cap);
		cr_assert_leq(n, cap);
		memset(inval, 0, sizeof(inval));
		struct dsm_notice_fault f = {0};
		cr_assert_eq(dsm_log_add(b, part, n, mark_wide, seen, &f), 0,
			     "%s", f.what);
		parts++;
	}
	free(part);
	return parts;
}

/* to acquires from `from`: from's intervals to's vector time lacks. */
static void grant(struct dsm_log *from, struct dsm_log *to)
{
	static uint8_t buf[1 << 20];
	memset(inval, 0, sizeof(inval));
	ninval = 0;
	size_t len =
	    dsm_log_encode_since(from, to->vt, UINT32_MAX, buf, sizeof(buf));
	cr_assert_lt(len, (size_t)-2, "encode failed");
	cr_assert_eq(len, dsm_log_size_since(from, to->vt, UINT32_MAX));
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_log_add(to, buf, len, on_inval, NULL, &f), 0,
		     "refused: %s (interval %u)", f.what, f.interval);
}

static void expect_inval(const uint32_t *pages, int n)
{
	bool want[PAGES] = {0};
	for (int i = 0; i < n; i++)
		want[pages[i]] = true;
	for (uint32_t p = 0; p < PAGES; p++)
		cr_assert_eq(inval[p], want[p], "page %u %sinvalidated", p,
			     inval[p] ? "" : "not ");
}

Test(dsm_notice, chain_of_three_is_transitive)
{
	struct dsm_log a, b, c;
	cr_assert_eq(dsm_log_init(&a, 3, 0, PAGES), 0);
	cr_assert_eq(dsm_log_init(&b, 3, 1, PAGES), 0);
	cr_assert_eq(dsm_log_init(&c, 3, 2, PAGES), 0);
	uint32_t wa[] = {5, 3, 5}; /* repeats and order do not matter */
	cr_assert_eq(dsm_log_close(&a, wa, 3), 0);
	cr_assert_eq(a.vt[0], 1);
	grant(&a, &b); /* B acquires the lock A released */
	expect_inval((uint32_t[]){3, 5}, 2);
	uint32_t wb[] = {7};
	cr_assert_eq(dsm_log_close(&b, wb, 1), 0);
	grant(&b, &c); /* C acquires from B: A's writes come along */
	expect_inval((uint32_t[]){3, 5, 7}, 3);
	cr_assert_eq(c.vt[0], 1);
	cr_assert_eq(c.vt[1], 1);
	/* Back to A: only B's page (A's own are not invalidated). */
	grant(&c, &a);
	expect_inval((uint32_t[]){7}, 1);
	/* Nothing new: nothing invalidated, an empty grant. */
	grant(&c, &a);
	cr_assert_eq(ninval, 0);
	cr_assert_eq(dsm_log_size_since(&c, a.vt, UINT32_MAX), 4);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
	dsm_log_fini(&c);
}

/* A grant for another node's release keeps back this node's own
 * intervals after own_upto (their diffs may not be home yet), and sends
 * them once they may go; another node's intervals all go. */
Test(dsm_notice, own_intervals_after_own_upto_stay_back)
{
	static uint8_t buf[4096];
	struct dsm_log a, b, c;
	cr_assert_eq(dsm_log_init(&a, 3, 0, PAGES), 0);
	cr_assert_eq(dsm_log_init(&b, 3, 1, PAGES), 0);
	cr_assert_eq(dsm_log_init(&c, 3, 2, PAGES), 0);
	cr_assert_eq(dsm_log_close(&b, (uint32_t[]){9}, 1), 0);
	grant(&b, &a);
	cr_assert_eq(dsm_log_close(&a, (uint32_t[]){1}, 1), 0);
	cr_assert_eq(dsm_log_close(&a, (uint32_t[]){2}, 1), 0);
	size_t len = dsm_log_encode_since(&a, c.vt, 1, buf, sizeof(buf));
	cr_assert_eq(len, dsm_log_size_since(&a, c.vt, 1));
	struct dsm_notice_fault f = {0};
	memset(inval, 0, sizeof(inval));
	cr_assert_eq(dsm_log_add(&c, buf, len, on_inval, NULL, &f), 0);
	expect_inval((uint32_t[]){1, 9}, 2);
	cr_assert_eq(c.vt[0], 1, "an interval past own_upto went");
	cr_assert_eq(c.vt[1], 1);
	len = dsm_log_encode_since(&a, c.vt, 0, buf, sizeof(buf));
	cr_assert_eq(len, 4, "own_upto 0: nothing of a's own");
	grant(&a, &c); /* all may go now */
	expect_inval((uint32_t[]){2}, 1);
	cr_assert_eq(c.vt[0], 2);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
	dsm_log_fini(&c);
}

/* A release that wrote more than DSM_IV_PAGES_MAX pages closes several
 * intervals in a row; its notices cut into parts of whole intervals
 * (dsm_notice_cut), each a message of its own, add up at the receiver to
 * what the whole encoding gives. */
Test(dsm_notice, wide_release_cut_into_messages)
{
	enum { WIDE = 2 * DSM_IV_PAGES_MAX + 100, CAP = 40000 };
	struct dsm_log a, b;
	cr_assert_eq(dsm_log_init(&a, 2, 0, WIDE), 0);
	cr_assert_eq(dsm_log_init(&b, 2, 1, WIDE), 0);
	uint32_t *w = malloc(WIDE * sizeof(*w));
	cr_assert(w);
	for (uint32_t i = 0; i < WIDE; i++)
		w[i] = WIDE - 1 - i;
	cr_assert_eq(dsm_log_close(&a, w, WIDE), 0);
	cr_assert_eq(a.vt[0], 3, "one interval per DSM_IV_PAGES_MAX pages");
	cr_assert_eq(a.log[0].iv[0].npages, DSM_IV_PAGES_MAX);
	cr_assert_eq(a.log[0].iv[2].npages, 100);
	cr_assert_eq(a.log[0].iv[1].pages[0], DSM_IV_PAGES_MAX);
	static bool seen[WIDE];
	size_t len, parts = cut_into(&a, &b, CAP, seen, &len);
	uint8_t *enc = cut_enc, *part = malloc(CAP);
	cr_assert(part);
	cr_assert_eq(parts, 2, "32 KiB, then 32 KiB and the last 100 pages");
	cr_assert_eq(b.vt[0], 3);
	for (uint32_t p = 0; p < WIDE; p++)
		cr_assert(seen[p], "page %u not invalidated", p);
	/* Too small for the next interval: nothing taken. */
	size_t at = 4;
	cr_assert_eq(dsm_notice_cut(enc, len, &at, part, 1000), 4);
	cr_assert_eq(at, 4);
	free(enc);
	free(part);
	free(w);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
}

/* Messages smaller than DSM_IV_PAGES_MAX pages of notices (a job's rings
 * of 64 KiB carry 16 KiB): dsm_log_fit makes the intervals smaller, so
 * that every one goes in a message of that size. */
Test(dsm_notice, intervals_fit_small_messages)
{
	enum { WIDE = 10000, CAP = 16384 };
	struct dsm_log a, b;
	cr_assert_eq(dsm_log_init(&a, 2, 0, WIDE), 0);
	cr_assert_eq(dsm_log_init(&b, 2, 1, WIDE), 0);
	dsm_log_fit(&a, CAP);
	cr_assert_eq(a.iv_max, (CAP - 16) / 4);
	uint32_t *w = malloc(WIDE * sizeof(*w));
	cr_assert(w);
	for (uint32_t i = 0; i < WIDE; i++)
		w[i] = i;
	cr_assert_eq(dsm_log_close(&a, w, WIDE), 0);
	cr_assert_eq(a.vt[0], 3, "4092 + 4092 + 1816 pages");
	static bool seen[WIDE];
	size_t len;
	cr_assert_eq(cut_into(&a, &b, CAP, seen, &len), 3);
	for (uint32_t p = 0; p < WIDE; p++)
		cr_assert(seen[p], "page %u not invalidated", p);
	dsm_log_fit(&a, 1 << 20);
	cr_assert_eq(a.iv_max, DSM_IV_PAGES_MAX, "never past the most");
	free(cut_enc);
	free(w);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
}

Test(dsm_notice, held_notices_skipped)
{
	struct dsm_log a, b;
	cr_assert_eq(dsm_log_init(&a, 2, 0, PAGES), 0);
	cr_assert_eq(dsm_log_init(&b, 2, 1, PAGES), 0);
	uint32_t w[] = {1, 2};
	cr_assert_eq(dsm_log_close(&a, w, 2), 0);
	static uint8_t buf[4096];
	uint32_t zero[2] = {0, 0};
	size_t len =
	    dsm_log_encode_since(&a, zero, UINT32_MAX, buf, sizeof(buf));
	struct dsm_notice_fault f;
	memset(inval, 0, sizeof(inval));
	ninval = 0;
	cr_assert_eq(dsm_log_add(&b, buf, len, on_inval, NULL, &f), 0);
	cr_assert_eq(ninval, 2);
	ninval = 0; /* the same grant again (its request crossed another) */
	cr_assert_eq(dsm_log_add(&b, buf, len, on_inval, NULL, &f), 0);
	cr_assert_eq(ninval, 0);
	cr_assert_eq(b.log[0].n, 1);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
}

/* Random grants among 4 nodes against a reference: the set of intervals
 * each node knows, and the pages of each interval. */
Test(dsm_notice, random_grants_match_reference)
{
	enum { N = 4, STEPS = 3000, MAXIV = STEPS + 1 };
	struct dsm_log l[N];
	static bool known[N][N][MAXIV];
	static bool ivpages[N][MAXIV][PAGES];
	uint32_t made[N] = {0};
	memset(known, 0, sizeof(known));
	memset(ivpages, 0, sizeof(ivpages));
	for (int i = 0; i < N; i++)
		cr_assert_eq(dsm_log_init(&l[i], N, (uint32_t)i, PAGES), 0);
	unsigned s = 12345;
	for (int step = 0; step < STEPS; step++) {
		s = s * 1103515245 + 12345;
		int x = (int)(s >> 16) % N;
		s = s * 1103515245 + 12345;
		if ((s >> 16) % 3 == 0) { /* x writes and releases */
			uint32_t w[8];
			int k = 1 + (int)((s >> 20) % 8);
			for (int i = 0; i < k; i++) {
				s = s * 1103515245 + 12345;
				w[i] = (s >> 16) % PAGES;
			}
			cr_assert_eq(dsm_log_close(&l[x], w, (uint32_t)k), 0);
			uint32_t seq = ++made[x];
			cr_assert_eq(l[x].vt[x], seq);
			for (int i = 0; i < k; i++)
				ivpages[x][seq][w[i]] = true;
			known[x][x][seq] = true;
			continue;
		}
		int y = (int)((s >> 20) % N); /* y acquires from x */
		if (y == x)
			continue;
		bool want[PAGES] = {0};
		for (int n = 0; n < N; n++)
			for (uint32_t q = 1; q <= made[n]; q++)
				if (known[x][n][q] && !known[y][n][q]) {
					known[y][n][q] = true;
					if (n != y)
						for (uint32_t p = 0; p < PAGES;
						     p++)
							want[p] |=
							    ivpages[n][q][p];
				}
		grant(&l[x], &l[y]);
		for (uint32_t p = 0; p < PAGES; p++)
			cr_assert_eq(inval[p], want[p],
				     "step %d: node %d from %d: page %u", step,
				     y, x, p);
	}
	for (int i = 0; i < N; i++)
		dsm_log_fini(&l[i]);
}

/* A manager adds the notices of a release it receives without
 * invalidating (no callback); its node's next acquire invalidates them
 * with its own; a barrier's collection keeps what is not applied yet. */
Test(dsm_notice, learned_then_applied_at_the_next_acquire)
{
	struct dsm_log a, b;
	cr_assert_eq(dsm_log_init(&a, 2, 0, PAGES), 0);
	cr_assert_eq(dsm_log_init(&b, 2, 1, PAGES), 0);
	for (uint32_t i = 1; i <= 3; i++)
		cr_assert_eq(dsm_log_close(&a, &i, 1), 0);
	static uint8_t buf[4096];
	uint32_t zero[2] = {0, 0};
	size_t len =
	    dsm_log_encode_since(&a, zero, UINT32_MAX, buf, sizeof(buf));
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_log_add(&b, buf, len, NULL, NULL, &f), 0);
	cr_assert_eq(b.vt[0], 3, "held, to pass on");
	cr_assert_eq(b.applied[0], 0);
	uint32_t upto[2] = {3, 0};
	dsm_log_collect(&b, upto);
	cr_assert_eq(b.log[0].n, 3, "collected before it was applied");
	uint32_t w = 9;
	cr_assert_eq(dsm_log_close(&a, &w, 1), 0); /* interval 4 */
	grant(&a, &b);
	expect_inval((uint32_t[]){1, 2, 3, 9}, 4);
	cr_assert_eq(b.applied[0], 4);
	ninval = 0;
	dsm_log_apply(&b, on_inval, NULL);
	cr_assert_eq(ninval, 0, "applied twice");
	dsm_log_collect(&b, upto);
	cr_assert_eq(b.log[0].n, 1);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
}

Test(dsm_notice, barrier_collects)
{
	struct dsm_log a, b;
	cr_assert_eq(dsm_log_init(&a, 2, 0, PAGES), 0);
	cr_assert_eq(dsm_log_init(&b, 2, 1, PAGES), 0);
	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(dsm_log_close(&a, &i, 1), 0);
	grant(&a, &b);
	cr_assert_eq(a.held_bytes, 40);
	cr_assert_eq(b.held_bytes, 40);
	uint32_t upto[2] = {10, 0}; /* every node has A's 10 */
	dsm_log_collect(&a, upto);
	dsm_log_collect(&b, upto);
	cr_assert_eq(a.held_bytes, 0);
	cr_assert_eq(b.log[0].n, 0);
	uint32_t w = 3;
	cr_assert_eq(dsm_log_close(&a, &w, 1), 0); /* interval 11 */
	grant(&a, &b);
	expect_inval((uint32_t[]){3}, 1);
	/* A node that lacks collected intervals cannot be served. */
	struct dsm_log c;
	cr_assert_eq(dsm_log_init(&c, 2, 1, PAGES), 0);
	static uint8_t buf[4096];
	cr_assert_eq(
	    dsm_log_encode_since(&a, c.vt, UINT32_MAX, buf, sizeof(buf)),
	    (size_t)-2);
	dsm_log_fini(&a);
	dsm_log_fini(&b);
	dsm_log_fini(&c);
}

/* ---- hostile intervals ---- */

static size_t put_iv(uint8_t *b, size_t at, uint16_t node, uint16_t rsv,
		     uint32_t seq, const uint32_t *pages, uint32_t np)
{
	memcpy(b + at, &node, 2);
	memcpy(b + at + 2, &rsv, 2);
	memcpy(b + at + 4, &seq, 4);
	memcpy(b + at + 8, &np, 4);
	memcpy(b + at + 12, pages, (size_t)np * 4);
	return at + 12 + (size_t)np * 4;
}

static void refused(const uint8_t *b, size_t len, const char *what,
		    uint32_t interval)
{
	struct dsm_log l;
	cr_assert_eq(dsm_log_init(&l, 3, 1, PAGES), 0);
	uint32_t w = 9;
	cr_assert_eq(dsm_log_close(&l, &w, 1), 0); /* our interval 1 */
	struct dsm_notice_fault f = {0};
	ninval = 0;
	cr_assert_eq(dsm_log_add(&l, b, len, on_inval, NULL, &f), -1,
		     "intervals with %s added", what);
	cr_assert(f.what && strstr(f.what, what), "'%s', want '%s'",
		  f.what ? f.what : "(none)", what);
	cr_assert_eq(f.interval, interval, "%s: interval %u named, want %u",
		     what, f.interval, interval);
	cr_assert_eq(ninval, 0);
	cr_assert_eq(l.vt[0], 0, "%s: something was added", what);
	dsm_log_fini(&l);
}

Test(dsm_notice, hostile_intervals_refused_whole)
{
	static uint8_t b[4096];
	uint32_t ok[] = {1, 2}, bad_order[] = {2, 1}, out[] = {1, PAGES};
	uint32_t two = 2;
	size_t at;
#define START(n) (memcpy(b, &(uint32_t){n}, 4), 4)
	at = put_iv(b, START(2), 0, 0, 1, ok, 2);
	at = put_iv(b, at, 0, 0, 3, ok, 2);
	refused(b, at, "gap", 1);
	at = put_iv(b, START(2), 0, 0, 1, ok, 2);
	at = put_iv(b, at, 3, 0, 1, ok, 2);
	refused(b, at, "node the job does not have", 1);
	at = put_iv(b, START(1), 0, 0, 1, out, 2);
	refused(b, at, "past the end of the region", 0);
	at = put_iv(b, START(1), 0, 0, 1, bad_order, 2);
	refused(b, at, "ascending", 0);
	at = put_iv(b, START(1), 1, 0, 2, ok, 2);
	refused(b, at, "of ours that we never made", 0);
	at = put_iv(b, START(1), 0, 7, 1, ok, 2);
	refused(b, at, "reserved", 0);
	at = put_iv(b, START(2), 0, 0, 1, ok, 2);
	refused(b, at, "inside an interval's header", 1);
	at = put_iv(b, START(1), 0, 0, 1, ok, 2);
	refused(b, at - 1, "lists more pages", 0);
	refused(b, at + 4, "bytes after", 1);
	refused(b, 3, "shorter than its count", 0);
	at = put_iv(b, START(1), 2, 0, 0, &two, 1);
	refused(b, at, "seq 0", 0);
	/* 2^32 - 1 pages claimed in a short message */
	at = put_iv(b, START(1), 0, 0, 1, ok, 0);
	memcpy(b + 4 + 8, &(uint32_t){UINT32_MAX}, 4);
	refused(b, at, "lists more pages", 0);
#undef START
}

/* An interval of more pages than one may hold (no node closes one: a
 * release of more closes several) is refused, in a region that has them. */
Test(dsm_notice, interval_past_its_most_pages_refused)
{
	enum { NP = DSM_IV_PAGES_MAX + 1 };
	struct dsm_log l;
	cr_assert_eq(dsm_log_init(&l, 2, 1, NP), 0);
	uint8_t *b = malloc(4 + 12 + (size_t)NP * 4);
	uint32_t *pages = malloc((size_t)NP * 4);
	cr_assert(b && pages);
	for (uint32_t i = 0; i < NP; i++)
		pages[i] = i;
	memcpy(b, &(uint32_t){1}, 4);
	size_t at = put_iv(b, 4, 0, 0, 1, pages, NP);
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_log_add(&l, b, at, on_inval, NULL, &f), -1);
	cr_assert(f.what && strstr(f.what, "more pages than one may"), "%s",
		  f.what ? f.what : "(none)");
	cr_assert_eq(l.vt[0], 0);
	free(b);
	free(pages);
	dsm_log_fini(&l);
}
