/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_readyorder.c - fibers made ready by one fiber's requests run in
 * the order it posted them, whichever unit performs each (the EU performs
 * signals to its own slots, SPAWN and INVOKE on its own node itself; the SU
 * the rest): a SPAWN then a SYNC, an INVOKE then a SPAWN then a SYNC, a
 * BLKMOV_SYNC through the SU then an INVOKE whose function reads the block,
 * a burst of INVOKEs; a SYNC, an INVOKE and a SPAWN then a block move
 * through the SU whose fiber the SU makes ready before this fiber ends;
 * rounds of each, in every node mode and both queue modes. Under TSan too
 * (t_runtime_*).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

TestSuite(runtime_readyorder, .timeout = 180);

#define ROUNDS 2000 /* of 4 kinds */
#define BURST 40
#define BLOCK T_SU_BLOCK /* a request the SU performs */

/* Fibers append their tag; a round checks the tags it expects. */
static int g_seq[BURST + 8], g_nseq, g_bad_round, g_bad_block, g_rounds;
static char g_block_src[BLOCK], g_block_dst[BLOCK];

struct ord_frame {
	struct earth_main_args a;
	int round;
	earth_slot tag_slot, block_slot, next;
};

struct tag_frame {
	int tag;
};

static void tagged(void *f);
EARTH_THREADED_FUNCTION(tag_tf, tagged, struct tag_frame, sizeof(int));

static void note(int tag)
{
	if (g_nseq < (int)(sizeof(g_seq) / sizeof(g_seq[0])))
		g_seq[g_nseq] = tag;
	g_nseq++;
}

static void tagged(void *f)
{
	struct tag_frame *t = f;
	note(t->tag);
	/* The block move was posted before this INVOKE: it is in place. */
	if (t->tag == 1000 && memcmp(g_block_dst, g_block_src, BLOCK) != 0)
		g_bad_block++;
	EARTH_END_FUNCTION(t);
}

static void spawned(void *f)
{
	(void)f;
	note(-1);
}

static void by_slot(void *f)
{
	(void)f;
	note(-2);
}

static void block_done(void *f)
{
	(void)f;
}

static void block_noted(void *f)
{
	(void)f;
	note(-3);
}

static bool g_dual;

static void round_fiber(void *f);

/* SPAWNed last in its round: every fiber the round made ready has run. */
static void check_fiber(void *f)
{
	struct ord_frame *m = f;
	int kind = m->round % 4;
	int want[BURST + 8], n = 0;
	if (kind == 3) {
		want[n++] = -2; /* SYNC, INVOKE, SPAWN, then BLKMOV_SYNC */
		want[n++] = 9;
		want[n++] = -1;
		want[n++] = -3;
	} else if (kind == 0) {
		want[n++] = -1; /* SPAWN, then SYNC */
		want[n++] = -2;
	} else if (kind == 1) {
		want[n++] = 7; /* INVOKE, SPAWN, SYNC */
		want[n++] = -1;
		want[n++] = -2;
	} else {
		want[n++] = 1000; /* BLKMOV_SYNC, then INVOKE, then a burst */
		for (int i = 0; i < BURST; i++)
			want[n++] = i;
	}
	if (g_nseq != n || memcmp(g_seq, want, (size_t)n * sizeof(int)) != 0)
		g_bad_round++;
	g_nseq = 0;
	g_rounds++;
	if (++m->round == ROUNDS) {
		EARTH_END_FUNCTION(m);
	}
	round_fiber(m);
}

static void round_fiber(void *f)
{
	struct ord_frame *m = f;
	int kind = m->round % 4;
	if (kind == 3) {
		/* Three fibers made ready on a dual node's EU, then a request
		 * whose fiber the SU makes ready while this one still runs:
		 * the three run first. */
		memset(g_block_src, m->round & 0xff, BLOCK);
		earth_slot_init(&m->tag_slot, 1, 0, by_slot, m);
		earth_slot_init(&m->block_slot, 1, 0, block_noted, m);
		earth_sync(&m->tag_slot);
		struct tag_frame a = {9};
		earth_invoke(earth_node_id(), &tag_tf, &a, sizeof(int));
		earth_spawn(spawned, m);
		earth_blkmov_sync(earth_to_global(g_block_src),
				  earth_to_global(g_block_dst), BLOCK,
				  &m->block_slot);
		/* Give the SU time to copy, signal and publish (its own CPU;
		 * a single-core node performs it only after this fiber). */
		if (g_dual)
			t_busy_ns(20000);
	} else if (kind == 0) {
		earth_slot_init(&m->tag_slot, 1, 0, by_slot, m);
		earth_spawn(spawned, m);
		earth_sync(&m->tag_slot);
	} else if (kind == 1) {
		earth_slot_init(&m->tag_slot, 1, 0, by_slot, m);
		struct tag_frame a = {7};
		earth_invoke(earth_node_id(), &tag_tf, &a, sizeof(int));
		earth_spawn(spawned, m);
		earth_sync(&m->tag_slot);
	} else {
		memset(g_block_src, m->round & 0xff, BLOCK);
		earth_slot_init(&m->block_slot, 1, 0, block_done, m);
		earth_blkmov_sync(earth_to_global(g_block_src),
				  earth_to_global(g_block_dst), BLOCK,
				  &m->block_slot);
		struct tag_frame a = {1000};
		earth_invoke(earth_node_id(), &tag_tf, &a, sizeof(int));
		for (int i = 0; i < BURST; i++) {
			a.tag = i;
			earth_invoke(earth_node_id(), &tag_tf, &a, sizeof(int));
		}
	}
	/* Posted last: runs after every fiber above. */
	earth_spawn(check_fiber, m);
}

static void ord_entry(void *f)
{
	struct ord_frame *m = f;
	m->round = 0;
	round_fiber(m);
}
EARTH_THREADED_FUNCTION(ord_main, ord_entry, struct ord_frame,
			sizeof(struct earth_main_args));

static void check_mode(enum earth_node_mode node, enum earth_queue_mode queue)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = node;
	o.queue_mode = queue;
	g_nseq = g_bad_round = g_bad_block = g_rounds = 0;
	g_dual = node == EARTH_MODE_DUAL;
	struct earth_main_args a = {0, NULL};
	cr_assert_eq(earth_run(&o, &ord_main, &a, sizeof(a)), 0);
	cr_assert_eq(g_rounds, ROUNDS);
	cr_assert_eq(g_bad_round, 0,
		     "%d of %d rounds ran their fibers out of posting order "
		     "(node mode %d, queue mode %d)",
		     g_bad_round, ROUNDS, (int)node, (int)queue);
	cr_assert_eq(g_bad_block, 0,
		     "%d INVOKEd functions ran before the block move posted "
		     "before them was done",
		     g_bad_block);
	if (node != EARTH_MODE_DUAL)
		return;
	/* A dual node performs most of rounds 0 and 1 on the EU (3 and 4
	 * requests each); the block move keeps round 2's on the SU, and
	 * round 3's (5: the SU makes the first three ready too). */
	struct earth_stats st;
	earth_stats_get(&st);
	uint64_t k = ROUNDS / 4;
	uint64_t k0 = k, k1 = k, k2 = k, k3 = k;
	uint64_t all = k0 * 3 + k1 * 4 + k2 * (BURST + 3) + k3 * 5;
	cr_assert_lt(st.su_handled, all - (k0 * 3 + k1 * 4) / 2,
		     "the SU performed %llu of %llu requests: the EU did not "
		     "SPAWN, INVOKE and signal on its own node",
		     (unsigned long long)st.su_handled,
		     (unsigned long long)all);
}

Test(runtime_readyorder, dual_hwq)
{
	check_mode(EARTH_MODE_DUAL, EARTH_QUEUE_HWQ);
}

Test(runtime_readyorder, dual_sw)
{
	check_mode(EARTH_MODE_DUAL, EARTH_QUEUE_SW);
}

Test(runtime_readyorder, single_poll)
{
	check_mode(EARTH_MODE_SINGLE_POLL, EARTH_QUEUE_SW);
}

Test(runtime_readyorder, single_interrupt)
{
	check_mode(EARTH_MODE_SINGLE_IRQ, EARTH_QUEUE_SW);
}
