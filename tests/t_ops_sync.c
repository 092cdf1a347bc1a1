/* SPDX-License-Identifier: MIT */
/*
 * t_ops_sync.c - the signalling operations on one node: SYNC and RSYNC
 * count a slot down and fire its fiber exactly when the count reaches zero,
 * INCR_SYNC / INCR_RSYNC raise the count of an armed slot, SPAWN makes a
 * fiber ready at once on any frame. Each test checks, after earth_run
 * returns, what its fibers recorded and the node's exact operation counters.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

TestSuite(ops_sync, .timeout = 60);

/* Written by fibers on the EU, read by the test after earth_run. */
static int g_fired, g_probe_fired_seen, g_other_fired, g_frame_ok;
static void *g_frame_seen;
static int g_counter_seen;
static earth_slot g_slot_a, g_slot_b;
static struct earth_stats g_st;

static void get_stats(void)
{
	earth_stats_get(&g_st);
}

/* ---- SYNC: count 5, one-shot ---- */

struct count_frame {
	earth_slot s;
	int spawned;
	earth_slot join;
};
static void sync5_entry(void *f);
static void sync5_fired(void *f);
EARTH_THREADED_FUNCTION(sync5_main, sync5_entry, struct count_frame, 0);

static void sync5_entry(void *frame)
{
	struct count_frame *f = frame;
	earth_slot_init(&f->s, 5, 0, sync5_fired, f);
	for (int i = 0; i < 5; i++)
		earth_sync(&f->s);
}

static void sync5_fired(void *frame)
{
	g_fired++;
	g_frame_seen = frame;
	EARTH_END_FUNCTION(frame);
}

/* Requests the SU performs of n signals the EU could perform itself: none
 * on a dual node, all on a single-core one (EARTH_MODE, tests/run.sh). */
static uint64_t via_su(uint64_t n)
{
	const char *m = getenv("EARTH_MODE");
	return m && strncmp(m, "single", 6) == 0 ? n : 0;
}

Test(ops_sync, sync_fires_once_after_count_signals)
{
	cr_assert_eq(t_run(NULL, &sync5_main), 0);
	get_stats();
	cr_assert_eq(g_fired, 1);
	cr_assert_not_null(g_frame_seen);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 5);
	cr_assert_eq(g_st.slot_signals, 5);
	/* Performed on the EU itself on a dual node (eu/post.c). */
	cr_assert_eq(g_st.su_handled, via_su(5));
	cr_assert_eq(g_st.fibers_ready, 1);
	cr_assert_eq(g_st.fibers_run, 2);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 1);
}

/* ---- a partly signalled slot does not fire ---- */

static void partial_entry(void *f);
static void partial_a(void *f);
static void partial_b(void *f);
EARTH_THREADED_FUNCTION(partial_main, partial_entry, struct count_frame, 0);

static void partial_entry(void *frame)
{
	earth_slot_init(&g_slot_a, 3, 3, partial_a, frame);
	earth_slot_init(&g_slot_b, 1, 0, partial_b, frame);
	earth_sync(&g_slot_a);
	earth_sync(&g_slot_a);
	/* Requests are handled in order: B fires after A's two signals. */
	earth_sync(&g_slot_b);
}

static void partial_a(void *frame)
{
	(void)frame;
	g_other_fired++;
}

static void partial_b(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, two_of_three_signals_do_not_fire)
{
	cr_assert_eq(t_run(NULL, &partial_main), 0);
	cr_assert_eq(g_other_fired, 0);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_slot_a.count, 1, "slot A has %d signals to go",
		     g_slot_a.count);
	cr_assert_eq(g_slot_a.reset, 3);
	cr_assert_eq(g_slot_b.count, 0);
}

/* ---- RSYNC through a global slot pointer ---- */

static earth_gslot g_gslot_seen;
static void rsync_entry(void *f);
static void rsync_fired(void *f);
EARTH_THREADED_FUNCTION(rsync_main, rsync_entry, struct count_frame, 0);

static void rsync_entry(void *frame)
{
	struct count_frame *f = frame;
	earth_slot_init(&f->s, 7, 0, rsync_fired, f);
	earth_gslot g = earth_slot_global(&f->s);
	g_gslot_seen = g;
	g_frame_seen = f;
	for (int i = 0; i < 4; i++)
		earth_rsync(g);
	/* Mixed with local signals to the same slot. */
	for (int i = 0; i < 3; i++)
		earth_sync(&f->s);
}

static void rsync_fired(void *frame)
{
	g_fired++;
	g_frame_ok = frame == g_frame_seen;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, rsync_and_sync_count_down_one_slot)
{
	cr_assert_eq(t_run(NULL, &rsync_main), 0);
	get_stats();
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_frame_ok, 1, "the fiber ran on another frame");
	cr_assert_eq(earth_gslot_node(g_gslot_seen), 0);
	cr_assert_eq((void *)earth_gslot_addr(g_gslot_seen),
		     (void *)&((struct count_frame *)g_frame_seen)->s);
	/* 4 RSYNCs and 3 SYNCs, each counted as itself. */
	cr_assert_eq(g_st.ops[EARTH_OP_RSYNC], 4);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 3);
	cr_assert_eq(g_st.slot_signals, 7);
}

/* ---- INCR_SYNC raises the count of an armed slot ---- */

static void incr_entry(void *f);
static void incr_target(void *f);
static void incr_probe(void *f);
EARTH_THREADED_FUNCTION(incr_main, incr_entry, struct count_frame, 0);

static void incr_entry(void *frame)
{
	struct count_frame *f = frame;
	earth_slot_init(&g_slot_a, 1, 0, incr_target, f);
	earth_slot_init(&f->s, 1, 1, incr_probe, f);
	earth_incr_sync(&g_slot_a, 2); /* count 3 */
	earth_sync(&g_slot_a);	       /* 2 */
	earth_sync(&f->s);	       /* probe: the target has not fired */
	earth_sync(&g_slot_a);	       /* 1 */
	earth_sync(&g_slot_a);	       /* 0: fires */
}

static void incr_probe(void *frame)
{
	(void)frame;
	g_probe_fired_seen = g_fired;
	g_other_fired++;
}

static void incr_target(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, incr_sync_raises_count)
{
	g_probe_fired_seen = -1;
	cr_assert_eq(t_run(NULL, &incr_main), 0);
	get_stats();
	cr_assert_eq(g_other_fired, 1);
	cr_assert_eq(g_probe_fired_seen, 0,
		     "the slot fired before its raised count was reached");
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_slot_a.count, 0);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], 1);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 4);
	cr_assert_eq(g_st.slot_signals, 4, "INCR_SYNC is not a signal");
	/* Performed on the EU itself on a dual node (eu/post.c). */
	cr_assert_eq(g_st.su_handled, via_su(5));
}

/* INCR_RSYNC through a global slot pointer, several increments. */
static void incr_r_entry(void *f);
EARTH_THREADED_FUNCTION(incr_r_main, incr_r_entry, struct count_frame, 0);

static void incr_r_entry(void *frame)
{
	struct count_frame *f = frame;
	earth_slot_init(&g_slot_a, 2, 0, incr_target, f);
	earth_slot_init(&f->s, 1, 1, incr_probe, f);
	earth_gslot g = earth_slot_global(&g_slot_a);
	earth_incr_rsync(g, 3); /* 5 */
	earth_incr_rsync(g, 1); /* 6 */
	for (int i = 0; i < 5; i++)
		earth_rsync(g);
	earth_sync(&f->s); /* probe after 5 of 6 */
	earth_rsync(g);
}

Test(ops_sync, incr_rsync_raises_count)
{
	g_probe_fired_seen = -1;
	cr_assert_eq(t_run(NULL, &incr_r_main), 0);
	get_stats();
	cr_assert_eq(g_probe_fired_seen, 0);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], 2);
	cr_assert_eq(g_st.ops[EARTH_OP_RSYNC], 6);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 1);
}

/* ---- SPAWN ---- */

#define NSPAWN 100
static void spawn_entry(void *f);
static void spawn_one(void *f);
static void spawn_join(void *f);
EARTH_THREADED_FUNCTION(spawn_main, spawn_entry, struct count_frame, 0);

static void spawn_entry(void *frame)
{
	struct count_frame *f = frame;
	f->spawned = 0;
	g_frame_seen = f;
	earth_slot_init(&f->join, NSPAWN, 0, spawn_join, f);
	for (int i = 0; i < NSPAWN; i++)
		earth_spawn(spawn_one, f);
}

static void spawn_one(void *frame)
{
	struct count_frame *f = frame;
	if (frame != g_frame_seen)
		g_other_fired++;
	f->spawned++;
	earth_sync(&f->join);
}

static void spawn_join(void *frame)
{
	struct count_frame *f = frame;
	g_counter_seen = f->spawned;
	g_fired++;
	EARTH_END_FUNCTION(f);
}

Test(ops_sync, spawn_runs_each_fiber_once_on_its_frame)
{
	cr_assert_eq(t_run(NULL, &spawn_main), 0);
	get_stats();
	cr_assert_eq(g_other_fired, 0, "a spawned fiber got the wrong frame");
	cr_assert_eq(g_counter_seen, NSPAWN);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], NSPAWN);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], NSPAWN);
	cr_assert_eq(g_st.fibers_run, 1 + NSPAWN + 1);
	cr_assert_eq(g_st.fibers_ready, NSPAWN + 1);
}

/* SPAWN with a null frame: the fiber gets NULL. */
static void spawn_null_entry(void *f);
static void spawn_null_fiber(void *f);
static void spawn_null_end(void *f);
EARTH_THREADED_FUNCTION(spawn_null_main, spawn_null_entry, struct count_frame,
			0);

static void spawn_null_entry(void *frame)
{
	earth_slot_init(&g_slot_a, 1, 0, spawn_null_end, frame);
	g_frame_seen = &g_frame_seen; /* not NULL */
	earth_spawn(spawn_null_fiber, NULL);
}

static void spawn_null_fiber(void *frame)
{
	g_frame_seen = frame;
	g_other_fired++;
	earth_sync(&g_slot_a);
}

static void spawn_null_end(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, spawn_with_null_frame)
{
	cr_assert_eq(t_run(NULL, &spawn_null_main), 0);
	cr_assert_eq(g_other_fired, 1);
	cr_assert_null(g_frame_seen);
	cr_assert_eq(g_fired, 1);
}

/* ---- many slots, each with its own count, reset and frame ---- */

#define NSLOTS 16
#define ROUNDS 3
static int g_hits[NSLOTS];
static earth_slot g_slots[NSLOTS];
static void many_entry(void *f);
static void many_hit(void *f);
static void many_end(void *f);
EARTH_THREADED_FUNCTION(many_main, many_entry, struct count_frame, 0);

static void many_entry(void *frame)
{
	for (int i = 0; i < NSLOTS; i++)
		earth_slot_init(&g_slots[i], i + 1, i + 1, many_hit,
				&g_hits[i]);
	earth_slot_init(&g_slot_b, 1, 0, many_end, frame);
	/* Interleaved: signal r goes to every slot that still needs one. */
	for (int r = 0; r < NSLOTS * ROUNDS; r++)
		for (int i = 0; i < NSLOTS; i++)
			if (r < (i + 1) * ROUNDS)
				earth_sync(&g_slots[i]);
	/* One more signal to the odd slots: not enough to fire again. */
	for (int i = 1; i < NSLOTS; i += 2)
		earth_sync(&g_slots[i]);
	earth_sync(&g_slot_b);
}

static void many_hit(void *frame)
{
	(*(int *)frame)++;
}

static void many_end(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, slots_count_independently)
{
	cr_assert_eq(t_run(NULL, &many_main), 0);
	get_stats();
	cr_assert_eq(g_fired, 1);
	uint64_t signals = 1;
	for (int i = 0; i < NSLOTS; i++) {
		cr_assert_eq(g_hits[i], ROUNDS,
			     "slot %d (count %d) fired %d times", i, i + 1,
			     g_hits[i]);
		int left = (i & 1) ? i : i + 1;
		cr_assert_eq(g_slots[i].count, left, "slot %d count %d", i,
			     g_slots[i].count);
		signals += (uint64_t)(i + 1) * ROUNDS + (i & 1);
	}
	cr_assert_eq(g_st.slot_signals, signals);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], signals);
	cr_assert_eq(g_st.fibers_ready, NSLOTS * ROUNDS + 1);
}

/* ---- signals from many fibers to one slot ---- */

#define NFIB 1000
static void fan_entry(void *f);
static void fan_leaf(void *f);
static void fan_join(void *f);
EARTH_THREADED_FUNCTION(fan_main, fan_entry, struct count_frame, 0);

static void fan_entry(void *frame)
{
	struct count_frame *f = frame;
	earth_slot_init(&f->join, NFIB, 0, fan_join, f);
	for (int i = 0; i < NFIB; i++)
		earth_spawn(fan_leaf, f);
}

static void fan_leaf(void *frame)
{
	struct count_frame *f = frame;
	g_other_fired++;
	/* Half the signals local, half through the global slot pointer. */
	if (g_other_fired & 1)
		earth_sync(&f->join);
	else
		earth_rsync(earth_slot_global(&f->join));
}

static void fan_join(void *frame)
{
	g_counter_seen = g_other_fired;
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_sync, one_signal_from_each_of_many_fibers)
{
	cr_assert_eq(t_run(NULL, &fan_main), 0);
	get_stats();
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_counter_seen, NFIB, "the join fired after %d signals",
		     g_counter_seen);
	cr_assert_eq(g_st.slot_signals, NFIB);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], NFIB);
}
