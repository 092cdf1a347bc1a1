/* SPDX-License-Identifier: MIT */
/*
 * t_inbox.c - earth_sync_from_thread, the way threads that are not the EU
 * signal a slot: 4 pthreads signal one slot 100,000 times in all while the
 * node runs (its main fiber keeps it alive until every signal has arrived),
 * as one count and as one firing per signal; a signal wakes a node whose
 * units are asleep; -ESRCH when no node runs, -EINVAL for a null slot or
 * another node's slot. Totals are divided by EARTH_TEST_SCALE when set.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "helpers.h"

TestSuite(inbox, .timeout = 60);

#define NTHREADS 4
#define TOTAL 100000

static earth_slot g_slot;
static earth_gslot g_gslot;
static atomic_int g_go;
static uint64_t g_per_thread;
static int g_fired, g_ended;
static struct earth_stats g_st;

/* Per sending thread; read by the test after joining it. */
struct sender {
	pthread_t tid;
	uint64_t sent, again;
	int other_errors, first_error;
};
static struct sender g_senders[NTHREADS];

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	while (!atomic_load_explicit(&g_go, memory_order_acquire))
		sched_yield();
	while (s->sent < g_per_thread) {
		int r = earth_sync_from_thread(g_gslot);
		if (r == 0) {
			s->sent++;
		} else if (r == -EAGAIN) {
			s->again++;
			sched_yield();
		} else {
			if (!s->other_errors++)
				s->first_error = r;
			break;
		}
	}
	return NULL;
}

static void start_senders(void)
{
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_create(&g_senders[i].tid, NULL,
					    sender_main, &g_senders[i]),
			     0);
}

static void join_senders(void)
{
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(g_senders[i].tid, NULL);
		cr_assert_eq(g_senders[i].other_errors, 0,
			     "sender %d: error %d", i,
			     g_senders[i].first_error);
		cr_assert_eq(g_senders[i].sent, g_per_thread);
	}
}

struct inbox_frame {
	earth_slot unused;
};

/* ---- one slot of count 100,000 ---- */

static void count_entry(void *f);
static void count_fired(void *f);
EARTH_THREADED_FUNCTION(count_main, count_entry, struct inbox_frame, 0);

static void count_entry(void *frame)
{
	/* main's frame stays live until the slot fires: the node runs. */
	earth_slot_init(&g_slot, (int32_t)(g_per_thread * NTHREADS), 0,
			count_fired, frame);
	g_gslot = earth_slot_global(&g_slot);
	atomic_store_explicit(&g_go, 1, memory_order_release);
}

static void count_fired(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(inbox, four_threads_signal_one_slot_100k_times)
{
	g_per_thread = t_scaled(TOTAL, 1000) / NTHREADS;
	start_senders();
	cr_assert_eq(t_run(NULL, &count_main), 0);
	join_senders();
	earth_stats_get(&g_st);
	uint64_t total = g_per_thread * NTHREADS;
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_slot.count, 0);
	cr_assert_eq(g_st.slot_signals, total);
	cr_assert_eq(g_st.su_handled, total);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 0,
		     "inbox signals are not EU "
		     "operations");
	cr_assert_eq(g_st.fibers_ready, 1);
}

/* ---- count 1 reset 1: one firing per signal ---- */

static void each_entry(void *f);
static void each_fired(void *f);
static void *g_main_frame;
EARTH_THREADED_FUNCTION(each_main, each_entry, struct inbox_frame, 0);

static void each_entry(void *frame)
{
	g_main_frame = frame;
	earth_slot_init(&g_slot, 1, 1, each_fired, NULL);
	g_gslot = earth_slot_global(&g_slot);
	atomic_store_explicit(&g_go, 1, memory_order_release);
}

static void each_fired(void *frame)
{
	(void)frame;
	if ((uint64_t)++g_fired == g_per_thread * NTHREADS)
		EARTH_END_FUNCTION(g_main_frame);
}

Test(inbox, four_threads_one_firing_per_signal)
{
	g_per_thread = t_scaled(TOTAL, 1000) / NTHREADS;
	start_senders();
	struct earth_options o;
	earth_options_default(&o);
	o.queue_slots = 8; /* the firings overflow the ready ring too */
	cr_assert_eq(t_run(&o, &each_main), 0);
	join_senders();
	earth_stats_get(&g_st);
	uint64_t total = g_per_thread * NTHREADS;
	cr_assert_eq((uint64_t)g_fired, total);
	cr_assert_eq(g_st.slot_signals, total);
	cr_assert_eq(g_st.fibers_ready, total);
	cr_assert_eq(g_slot.count, 1);
}

/* ---- a signal wakes a sleeping node ---- */

static void *late_sender(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&g_go, memory_order_acquire))
		sched_yield();
	/* Long enough for both units to block. */
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	g_senders[0].first_error = earth_sync_from_thread(g_gslot);
	return NULL;
}

static void wake_entry(void *f);
EARTH_THREADED_FUNCTION(wake_main, wake_entry, struct inbox_frame, 0);

static void wake_entry(void *frame)
{
	earth_slot_init(&g_slot, 1, 0, count_fired, frame);
	g_gslot = earth_slot_global(&g_slot);
	atomic_store_explicit(&g_go, 1, memory_order_release);
}

Test(inbox, signal_wakes_a_sleeping_node)
{
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, late_sender, NULL), 0);
	struct earth_options o;
	earth_options_default(&o);
	o.spin_us = 0;
	uint64_t t0 = t_now_ns();
	cr_assert_eq(t_run(&o, &wake_main), 0);
	uint64_t dt = t_now_ns() - t0;
	pthread_join(th, NULL);
	earth_stats_get(&g_st);
	cr_assert_eq(g_senders[0].first_error, 0);
	cr_assert_eq(g_fired, 1);
	cr_assert_geq(dt, 100000000ull);
	cr_assert_geq(g_st.eu_sleeps, 1);
	cr_assert_geq(g_st.su_sleeps, 1);
}

/* ---- errors ---- */

Test(inbox, esrch_when_no_node_runs)
{
	static earth_slot s;
	earth_gslot g = {earth_gptr_make(0, &s).bits};
	cr_assert_eq(earth_sync_from_thread(g), -ESRCH);
	cr_assert_eq(earth_sync_from_thread((earth_gslot){0}), -ESRCH);
}

static int g_r_null, g_r_node, g_r_ok;
static void einval_entry(void *f);
static void einval_fired(void *f);
EARTH_THREADED_FUNCTION(einval_main, einval_entry, struct inbox_frame, 0);

static void einval_entry(void *frame)
{
	earth_slot_init(&g_slot, 1, 0, einval_fired, frame);
	/* Any thread may call it, the EU included. */
	g_r_null = earth_sync_from_thread((earth_gslot){0});
	g_r_node = earth_sync_from_thread(
	    (earth_gslot){earth_gptr_make(1, &g_slot).bits});
	g_r_ok = earth_sync_from_thread(earth_slot_global(&g_slot));
}

static void einval_fired(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(inbox, einval_for_null_or_remote_slot)
{
	cr_assert_eq(t_run(NULL, &einval_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_r_null, -EINVAL);
	cr_assert_eq(g_r_node, -EINVAL);
	cr_assert_eq(g_r_ok, 0);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_st.slot_signals, 1, "a rejected signal was delivered");
}

static int g_r_after;
static void after_entry(void *f);
EARTH_THREADED_FUNCTION(after_main, after_entry, struct inbox_frame, 0);

static void after_entry(void *frame)
{
	g_gslot = earth_slot_global(&g_slot);
	g_ended++;
	EARTH_END_FUNCTION(frame);
}

Test(inbox, esrch_after_the_node_stopped)
{
	cr_assert_eq(t_run(NULL, &after_main), 0);
	cr_assert_eq(g_ended, 1);
	g_r_after = earth_sync_from_thread(g_gslot);
	cr_assert_eq(g_r_after, -ESRCH);
}

/* ---- signals racing the end of the node ---- */

#define RACE_RUNS 200
#define RACE_THREADS 2
static atomic_int g_stop_seen;

static void *racer_main(void *arg)
{
	struct sender *s = arg;
	while (!atomic_load_explicit(&g_go, memory_order_acquire))
		sched_yield();
	/* Until the node has stopped. */
	for (;;) {
		int r = earth_sync_from_thread(g_gslot);
		if (r == 0)
			s->sent++;
		else if (r == -EAGAIN)
			s->again++;
		else if (r == -ESRCH)
			break;
		else if (!s->other_errors++)
			s->first_error = r;
	}
	atomic_fetch_add_explicit(&g_stop_seen, 1, memory_order_relaxed);
	return NULL;
}

static void race_entry(void *f);
static void race_fired(void *f);
EARTH_THREADED_FUNCTION(race_main, race_entry, struct inbox_frame, 0);

static void race_entry(void *frame)
{
	g_main_frame = frame;
	g_fired = 0;
	earth_slot_init(&g_slot, 1, 1, race_fired, NULL);
	g_gslot = earth_slot_global(&g_slot);
	atomic_store_explicit(&g_go, 1, memory_order_release);
}

static void race_fired(void *frame)
{
	(void)frame;
	/* End while the senders are still sending. */
	if (++g_fired == 100)
		EARTH_END_FUNCTION(g_main_frame);
}

Test(inbox, signals_racing_the_end_of_the_node)
{
	int runs = (int)t_scaled(RACE_RUNS, 20);
	for (int run = 0; run < runs; run++) {
		atomic_store_explicit(&g_go, 0, memory_order_relaxed);
		memset(g_senders, 0, sizeof(g_senders));
		for (int i = 0; i < RACE_THREADS; i++)
			cr_assert_eq(pthread_create(&g_senders[i].tid, NULL,
						    racer_main, &g_senders[i]),
				     0);
		cr_assert_eq(t_run(NULL, &race_main), 0);
		uint64_t sent = 0;
		for (int i = 0; i < RACE_THREADS; i++) {
			pthread_join(g_senders[i].tid, NULL);
			cr_assert_eq(g_senders[i].other_errors, 0,
				     "run %d: error %d", run,
				     g_senders[i].first_error);
			sent += g_senders[i].sent;
		}
		earth_stats_get(&g_st);
		cr_assert_geq(g_fired, 100);
		cr_assert_geq(sent, (uint64_t)g_fired);
	}
	cr_assert_eq(atomic_load(&g_stop_seen), runs * RACE_THREADS);
}
