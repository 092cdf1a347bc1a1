/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_localblk.c - block moves the EU copies itself: a BLKMOV_SYNC
 * (or BLKMOV_RSYNC to a slot of its own node) of at most
 * EARTH_EU_BLKMOV_MAX bytes between two places of its own node, on a
 * dual node, once the SU has performed every request posted before it
 * (docs/architecture.md, "Signals on the EU"). Every size around the
 * limit copies exactly, overlapping ranges as memmove does, and the
 * statistics say which unit copied: the EU up to the limit, the SU past
 * it, behind a request still with the SU, with EARTH_EU_SIGNALS=0 and on
 * single-core nodes. Under TSan too (t_runtime_*).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "helpers.h"

TestSuite(runtime_localblk, .timeout = 120);

_Static_assert(T_SU_BLOCK > EARTH_EU_BLKMOV_MAX,
	       "T_SU_BLOCK must be a block move the SU performs");

enum { BUF = 2 * T_SU_BLOCK };
static unsigned char g_a[BUF], g_b[BUF], g_want[BUF];
static size_t g_n, g_src_off, g_dst_off;
static int g_rsync, g_behind, g_done, g_order[2], g_norder;
static struct earth_stats g_st;

struct blk_frame {
	int dummy;
	earth_slot moved, first;
};

static void first_done(void *frame)
{
	(void)frame;
	g_order[g_norder++ & 1] = 1;
}

static void moved(void *frame)
{
	g_order[g_norder++ & 1] = 2;
	g_done = 1;
	EARTH_END_FUNCTION(frame);
}

/* Fills g_a, moves g_n bytes from g_a + g_src_off to g_b + g_dst_off
 * (or within g_a, overlapping, when g_dst_off is ~0), behind a block
 * move the SU performs when g_behind. */
static void blk_entry(void *frame)
{
	struct blk_frame *f = frame;
	for (size_t i = 0; i < BUF; i++)
		g_a[i] = (unsigned char)(i * 7 + 3);
	memset(g_b, 0xee, BUF);
	unsigned char *dst =
	    g_dst_off == (size_t)~0 ? g_a + g_src_off + 3 : g_b + g_dst_off;
	memcpy(g_want, g_a, BUF);
	unsigned char *wdst =
	    g_dst_off == (size_t)~0 ? g_want + g_src_off + 3 : NULL;
	if (wdst)
		memmove(wdst, g_want + g_src_off, g_n);
	earth_slot_init(&f->moved, 1, 0, moved, f);
	earth_slot_init(&f->first, 1, 0, first_done, f);
	g_norder = 0;
	if (g_behind)
		earth_blkmov_sync(earth_to_global(g_b + T_SU_BLOCK),
				  earth_to_global(g_a + T_SU_BLOCK), T_SU_BLOCK,
				  &f->first);
	earth_gptr src = earth_to_global(g_a + g_src_off);
	earth_gptr dg = earth_to_global(dst);
	if (g_rsync)
		earth_blkmov_rsync(src, dg, g_n, earth_slot_global(&f->moved));
	else
		earth_blkmov_sync(src, dg, g_n, &f->moved);
}
EARTH_THREADED_FUNCTION(blk_main, blk_entry, struct blk_frame, 0);

/* One move of n bytes; returns the requests the SU performed. */
static uint64_t move(const struct earth_options *o, size_t n, size_t src_off,
		     size_t dst_off, int rsync, int behind)
{
	g_n = n;
	g_src_off = src_off;
	g_dst_off = dst_off;
	g_rsync = rsync;
	g_behind = behind;
	g_done = 0;
	cr_assert_eq(t_run(o, &blk_main), 0);
	cr_assert(g_done, "%zu bytes: the slot never fired", n);
	if (dst_off == (size_t)~0) {
		cr_assert(memcmp(g_a, g_want, T_SU_BLOCK) == 0,
			  "%zu bytes overlapping: not as memmove", n);
	} else {
		cr_assert(memcmp(g_b + dst_off, g_a + src_off, n) == 0,
			  "%zu bytes: not copied", n);
		cr_assert(dst_off == 0 || g_b[dst_off - 1] == 0xee,
			  "%zu bytes: a byte before the destination written",
			  n);
		cr_assert(dst_off + n >= BUF || g_b[dst_off + n] == 0xee,
			  "%zu bytes: a byte past the destination written", n);
	}
	earth_stats_get(&g_st);
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], 1u + (behind ? 1u : 0u));
	return g_st.su_handled;
}

static const size_t sizes[] = {0,
			       1,
			       7,
			       8,
			       63,
			       256,
			       EARTH_EU_BLKMOV_MAX - 1,
			       EARTH_EU_BLKMOV_MAX,
			       EARTH_EU_BLKMOV_MAX + 1,
			       T_SU_BLOCK};

Test(runtime_localblk, the_eu_copies_up_to_the_limit)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL; /* whatever EARTH_MODE says */
	for (int q = 0; q < 2; q++) {
		o.queue_mode = q ? EARTH_QUEUE_HWQ : EARTH_QUEUE_SW;
		for (size_t i = 0; i < T_NCASES(sizes); i++)
			for (int rsync = 0; rsync < 2; rsync++) {
				size_t n = sizes[i];
				uint64_t su = move(&o, n, 5, 11, rsync, 0);
				cr_expect_eq(su,
					     n <= EARTH_EU_BLKMOV_MAX ? 0 : 1,
					     "%zu bytes (%s): the SU performed "
					     "%llu requests",
					     n, rsync ? "RSYNC" : "SYNC",
					     (unsigned long long)su);
			}
	}
}

Test(runtime_localblk, overlapping_ranges_move_as_memmove)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL;
	/* the destination 3 bytes past the source, inside it */
	cr_expect_eq(move(&o, 200, 40, (size_t)~0, 0, 0), 0);
	cr_expect_eq(move(&o, EARTH_EU_BLKMOV_MAX + 100, 40, (size_t)~0, 0, 0),
		     1);
}

/* Behind a request still with the SU, a small move goes to the SU too:
 * the two fire in the order they were posted. */
Test(runtime_localblk, behind_a_request_the_su_copies_in_order)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL;
	for (int r = 0; r < 20; r++) {
		uint64_t su = move(&o, 64, 0, 0, 0, 1);
		cr_expect_eq(su, 2, "the SU performed %llu requests",
			     (unsigned long long)su);
		cr_expect(g_order[0] == 1 && g_order[1] == 2,
			  "round %d: fired %d then %d", r, g_order[0],
			  g_order[1]);
	}
}

/* Single-core nodes and EARTH_EU_SIGNALS=0: every move is the SU's. */
Test(runtime_localblk, the_su_copies_where_the_eu_may_not)
{
	static const enum earth_node_mode modes[] = {EARTH_MODE_SINGLE_POLL,
						     EARTH_MODE_SINGLE_IRQ};
	struct earth_options o;
	earth_options_default(&o);
	for (size_t m = 0; m < T_NCASES(modes); m++) {
		o.node_mode = modes[m];
		cr_expect_eq(move(&o, 64, 1, 2, 0, 0), 1, "mode %d",
			     (int)modes[m]);
	}
	o.node_mode = EARTH_MODE_DUAL;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	uint64_t su = move(&o, 64, 1, 2, 0, 0);
	unsetenv("EARTH_EU_SIGNALS");
	cr_expect_eq(su, 1, "EARTH_EU_SIGNALS=0: the SU performed %llu",
		     (unsigned long long)su);
}
