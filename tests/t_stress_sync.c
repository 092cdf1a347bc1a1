/* SPDX-License-Identifier: MIT */
/*
 * t_stress_sync.c - millions of signals with exact counts: 10^7 SYNCs
 * through one re-arming slot (count K, reset K; the fiber it fires posts
 * the next K), then RSYNCs spread over several slots joined each round, the
 * same through 8-slot rings in both queue modes (the overflow paths under
 * load), and signals from many short fibers. Totals are divided by
 * EARTH_TEST_SCALE when it is set (the TSan run sets 10). Every signal
 * goes through the SU here (EARTH_EU_SIGNALS=0: the request ring is what
 * is stressed); t_runtime_localsig has the EU's own signals.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "helpers.h"

TestSuite(stress_sync, .timeout = 60);

static uint64_t g_total; /* signals to send */
static uint64_t g_sent, g_fires, g_bad;
static struct earth_stats g_st;

struct stress_frame {
	earth_slot s;
	earth_slot many[4];
	earth_slot join;
};

/* ---- one slot, count K reset K, 10^7 SYNCs ---- */

#define K 1000
static void one_entry(void *f);
static void one_fired(void *f);
EARTH_THREADED_FUNCTION(one_main, one_entry, struct stress_frame, 0);

static void one_post(struct stress_frame *f)
{
	for (int i = 0; i < K; i++)
		earth_sync(&f->s);
	g_sent += K;
}

static void one_entry(void *frame)
{
	struct stress_frame *f = frame;
	earth_slot_init(&f->s, K, K, one_fired, f);
	one_post(f);
}

static void one_fired(void *frame)
{
	struct stress_frame *f = frame;
	g_fires++;
	/* Fired exactly when the last of each K arrived. */
	g_bad += g_fires * K != g_sent;
	if (g_sent < g_total) {
		one_post(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

static void check_one(enum earth_queue_mode mode, uint32_t slots,
		      uint64_t total)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.queue_slots = slots;
	g_total = total / K * K;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	cr_assert_eq(t_run(&o, &one_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_bad, 0);
	cr_assert_eq(g_sent, g_total);
	cr_assert_eq(g_fires, g_total / K);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], g_total);
	cr_assert_eq(g_st.slot_signals, g_total);
	cr_assert_eq(g_st.su_handled, g_total);
	cr_assert_eq(g_st.fibers_ready, g_total / K);
	cr_assert_eq(g_st.fibers_run, g_total / K + 1);
}

Test(stress_sync, ten_million_syncs_one_slot_count_k_reset_k)
{
	check_one(EARTH_QUEUE_SW, 0, t_scaled(10000000, 10000));
}

Test(stress_sync, million_syncs_hwq_8_slots)
{
	check_one(EARTH_QUEUE_HWQ, 8, t_scaled(1000000, 10000));
}

Test(stress_sync, million_syncs_sw_8_slots)
{
	check_one(EARTH_QUEUE_SW, 8, t_scaled(1000000, 10000));
}

/* ---- RSYNC over 4 slots of different counts, joined each round ---- */

static const int32_t counts4[4] = {1, 7, 250, 742}; /* sum 1000 */
static int g_hits4[4];
static struct stress_frame *g_four_frame; /* for four_hit */
static void four_entry(void *f);
static void four_hit(void *f);
static void four_join(void *f);
EARTH_THREADED_FUNCTION(four_main, four_entry, struct stress_frame, 0);

static void four_post(struct stress_frame *f)
{
	earth_gslot g[4];
	for (int s = 0; s < 4; s++)
		g[s] = earth_slot_global(&f->many[s]);
	/* Round-robin over the slots that still need signals. */
	for (int32_t i = 0; i < counts4[3]; i++)
		for (int s = 0; s < 4; s++)
			if (i < counts4[s])
				earth_rsync(g[s]);
	g_sent += 1000;
}

static void four_entry(void *frame)
{
	struct stress_frame *f = frame;
	for (int s = 0; s < 4; s++)
		earth_slot_init(&f->many[s], counts4[s], counts4[s], four_hit,
				&g_hits4[s]);
	earth_slot_init(&f->join, 4, 4, four_join, f);
	g_four_frame = f;
	four_post(f);
}

static void four_hit(void *frame)
{
	(*(int *)frame)++;
	earth_sync(&g_four_frame->join);
}

static void four_join(void *frame)
{
	struct stress_frame *f = frame;
	g_fires++;
	for (int s = 0; s < 4; s++)
		g_bad += (uint64_t)g_hits4[s] != g_fires;
	if (g_sent < g_total) {
		four_post(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

Test(stress_sync, rsyncs_over_four_slots_joined_each_round)
{
	g_total = t_scaled(4000000, 10000) / 1000 * 1000;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	cr_assert_eq(t_run(NULL, &four_main), 0);
	earth_stats_get(&g_st);
	uint64_t rounds = g_total / 1000;
	cr_assert_eq(g_bad, 0, "%lu rounds with a slot out of step",
		     (unsigned long)g_bad);
	cr_assert_eq(g_fires, rounds);
	for (int s = 0; s < 4; s++)
		cr_assert_eq((uint64_t)g_hits4[s], rounds);
	/* 1000 RSYNCs + 4 joins (SYNCs) per round, each counted as
	 * itself. */
	cr_assert_eq(g_st.ops[EARTH_OP_RSYNC], rounds * 1000);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], rounds * 4);
	cr_assert_eq(g_st.slot_signals, rounds * 1004);
	cr_assert_eq(g_st.fibers_ready, rounds * 5);
}

/* ---- many short fibers, each posting a few signals ---- */

#define FIBERS 20000
#define PER 10
static void short_entry(void *f);
static void short_fiber(void *f);
static void short_done(void *f);
EARTH_THREADED_FUNCTION(short_main, short_entry, struct stress_frame, 0);

static void short_entry(void *frame)
{
	struct stress_frame *f = frame;
	earth_slot_init(&f->join, (int32_t)(g_total * PER), 0, short_done, f);
	for (uint64_t i = 0; i < g_total; i++)
		earth_spawn(short_fiber, f);
}

static void short_fiber(void *frame)
{
	struct stress_frame *f = frame;
	for (int i = 0; i < PER; i++)
		earth_sync(&f->join);
	g_sent += PER;
}

static void short_done(void *frame)
{
	g_fires++;
	g_bad = g_sent;
	EARTH_END_FUNCTION(frame);
}

Test(stress_sync, signals_from_many_short_fibers)
{
	g_total = t_scaled(FIBERS * 10, FIBERS / 10);
	struct earth_options o;
	earth_options_default(&o);
	o.queue_slots = 64;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	cr_assert_eq(t_run(&o, &short_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fires, 1);
	cr_assert_eq(g_bad, g_total * PER, "fired after %lu signals",
		     (unsigned long)g_bad);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], g_total);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], g_total * PER);
	cr_assert_eq(g_st.fibers_run, g_total + 2);
}
