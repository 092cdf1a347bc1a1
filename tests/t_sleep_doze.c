/* SPDX-License-Identifier: MIT */
/*
 * t_sleep_doze.c - an SU with nothing to do sleeps while its EU computes
 * (su/loop.c, su_try_sleep), and wakes for every request the EU publishes
 * meanwhile (eu_su_nudge): rounds of a fiber that computes past the spin
 * time, posts a DATA_SYNC the SU must perform (EARTH_EU_SIGNALS=0) and
 * leaves a token that waits, still on the EU, until the SU has written the
 * value, then starts the next round as a token: the EU never goes idle, so
 * a lost wake-up would leave it waiting (QT_STALL_NS, then the test fails).
 * Both queue modes; the SU's sleep count shows it dozed. An EU that goes idle
 * while the SU dozes wakes it, so a stuck job is still found; EARTH_SU_DOZE=0
 * keeps the SU polling. Under TSan too (t_sleep*), but for the stuck job.
 */
#include <criterion/criterion.h>

#include <linux/membarrier.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(sleep_doze, .timeout = 120);

/* Longer than the SU's spin (EARTH_SPIN_US=20 below, checked every 64
 * polls) so it dozes before the request comes. */
#define COMPUTE_NS 300000u
#define ROUNDS 200

struct doze_frame {
	long value;
	int round;
	int stalled;
	earth_slot sink, done;
};

static int g_rounds, g_stalled;

/* Every round is a token of this node: the EU always has one to run, so
 * it never goes idle (which would wake the SU too) and only the nudge can
 * wake a dozing SU. */
struct round_args {
	struct doze_frame *f;
	long want;
};
static void round_entry(void *frame);
static void waiter_entry(void *frame);
EARTH_THREADED_FUNCTION(round_tf, round_entry, struct round_args,
			sizeof(struct round_args));
EARTH_THREADED_FUNCTION(waiter_tf, waiter_entry, struct round_args,
			sizeof(struct round_args));

/* Computes past the SU's spin, posts a DATA_SYNC for the SU, leaves the
 * token that waits for it. */
static void round_entry(void *frame)
{
	struct round_args *r = frame;
	struct doze_frame *f = r->f;
	t_busy_ns(COMPUTE_NS);
	struct round_args w = {f, 1000 + f->round++};
	earth_data_sync_l(w.want, earth_to_global(&f->value), &f->sink);
	earth_token(&waiter_tf, &w, sizeof(w));
	EARTH_END_FUNCTION(r);
}

/* Waits, on the EU, until the SU has written the round's value; then the
 * next round, or the end (a SYNC the SU performs too). */
static void waiter_entry(void *frame)
{
	struct round_args *w = frame;
	struct doze_frame *f = w->f;
	/* The SU writes the value, then counts the sink slot down (acq_rel
	 * compare-and-swap, unit/slot.h): the count says it is done. */
	int32_t left = INT32_MAX - (int32_t)(w->want - 999);
	struct qt_waiter wt = {.yield_mask = 63, .clock_mask = 1023};
	while (__atomic_load_n(&f->sink.count, __ATOMIC_ACQUIRE) != left)
		if (!qt_wait_more(&wt)) {
			f->stalled++;
			break;
		}
	if (!f->stalled && f->value != w->want)
		f->stalled = -1000000; /* a wrong value: fails as a stall */
	if (!f->stalled && f->round < ROUNDS) {
		struct round_args r = {f, 0};
		earth_token(&round_tf, &r, sizeof(r));
	} else {
		earth_sync(&f->done);
	}
	EARTH_END_FUNCTION(w);
}

static void sink_fiber(void *frame)
{
	(void)frame;
	abort();
}

static void doze_done(void *frame)
{
	struct doze_frame *f = frame;
	g_rounds = f->round;
	g_stalled = f->stalled;
	EARTH_END_FUNCTION(f);
}

static void doze_entry(void *frame)
{
	struct doze_frame *f = frame;
	f->value = 0;
	f->round = 0;
	f->stalled = 0;
	earth_slot_init(&f->sink, INT32_MAX, INT32_MAX, sink_fiber, f);
	earth_slot_init(&f->done, 1, 0, doze_done, f);
	struct round_args r = {f, 0};
	earth_token(&round_tf, &r, sizeof(r));
}
EARTH_THREADED_FUNCTION(doze_main, doze_entry, struct doze_frame, 0);

static void run_rounds(enum earth_queue_mode mode, const char *doze)
{
	setenv("EARTH_EU_SIGNALS", "0", 1);
	setenv("EARTH_SU_DOZE", doze, 1);
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.spin_us = 20;
	g_rounds = g_stalled = -1;
	int rc = t_run(&o, &doze_main);
	unsetenv("EARTH_EU_SIGNALS");
	unsetenv("EARTH_SU_DOZE");
	cr_assert_eq(rc, 0);
	cr_assert_eq(g_stalled, 0,
		     "a request published while the SU dozed was not "
		     "performed (round %d)",
		     g_rounds);
	cr_assert_eq(g_rounds, ROUNDS);
}

static uint64_t su_sleeps(void)
{
	struct earth_stats st;
	earth_stats_get(&st);
	return st.su_sleeps;
}

/* Does the kernel have the fence the SU needs to doze (base/fence.c)? */
static bool have_fence(void)
{
	int have = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	return have >= 0 && (have & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

static void expect_dozes(enum earth_queue_mode mode, const char *name)
{
	if (!have_fence())
		cr_skip_test("no membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): "
			     "the SU does not doze here");
	run_rounds(mode, "1");
	uint64_t s = su_sleeps();
	cr_log_info("%s: SU slept %llu times in %d rounds", name,
		    (unsigned long long)s, ROUNDS);
	cr_assert_gt(s, 0, "the SU never dozed while the EU computed");
}

Test(sleep_doze, wakes_for_each_request_hwq)
{
	expect_dozes(EARTH_QUEUE_HWQ, "hwq");
}

Test(sleep_doze, wakes_for_each_request_sw)
{
	expect_dozes(EARTH_QUEUE_SW, "sw");
}

Test(sleep_doze, off_keeps_polling)
{
	run_rounds(EARTH_QUEUE_HWQ, "0");
	cr_assert_eq(su_sleeps(), 0,
		     "EARTH_SU_DOZE=0: the SU slept while the EU ran");
}

/* ---- the EU goes idle while the SU dozes: a stuck job is still found */

struct stuck_frame {
	earth_slot never;
};
static void never_fiber(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
static void stuck_entry(void *frame)
{
	struct stuck_frame *f = frame;
	earth_slot_init(&f->never, 1, 0, never_fiber, f);
	t_busy_ns(20 * COMPUTE_NS); /* the SU dozes */
	/* Ends with nothing that can signal `never`. */
}
EARTH_THREADED_FUNCTION(stuck_main, stuck_entry, struct stuck_frame, 0);

static int stuck_child(void *arg)
{
	(void)arg;
	struct earth_options o;
	earth_options_default(&o);
	o.spin_us = 20;
	return t_run(&o, &stuck_main);
}

Test(sleep_doze, stuck_found_after_doze)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan's own threads are threads the node does not know: they
	 * might signal, so a job of this process is never called stuck
	 * (t_stuck runs its jobs as programs of their own). */
	cr_skip_test("in-process stuck detection under TSan");
#endif
	t_expect_exit(stuck_child, NULL, EARTH_EXIT_STUCK,
		      "stuck: every node is idle", NULL);
}
