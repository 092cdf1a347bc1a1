/* SPDX-License-Identifier: MIT */
/*
 * t_sleep_shared.c - a dozing SU that shares its core with a busy thread
 * sleeps sooner (su/loop.c, su_spin_ticks): a probe of its own speed
 * slower than EARTH_SHARED_SLOWER_PCT percent of the least seen gives
 * EARTH_SHARED_SPIN_US, anything else EARTH_SPIN_US, and the least follows
 * the fastest probe; a dozing node measures at its first idle check (the
 * least and the last probe are set, the report says what it found); a
 * node with EARTH_SHARED_SPIN_US no shorter than EARTH_SPIN_US, or one
 * whose SU does not doze, never measures; jobs are right with the SU
 * dozing at once when it finds the core shared (EARTH_SHARED_SPIN_US=0).
 * Under TSan too (t_sleep*).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "node/node.h"
#include "su/su.h"

TestSuite(sleep_shared, .timeout = 120);

Test(sleep_shared, slower_than_the_least_is_shared)
{
	struct earth_node n = {.spin_ticks = 100000, .shared_spin_ticks = 500};
	struct su_state su = {.probe_least = 1000};
	/* As fast as alone, or slower by up to the threshold: the spin. */
	cr_assert_eq(su_spin_ticks(&n, &su, 1000), 100000);
	cr_assert_eq(
	    su_spin_ticks(&n, &su, 1000 * EARTH_SHARED_SLOWER_PCT / 100),
	    100000);
	cr_assert_eq(su.shared_seen, 0);
	/* Past it: shared, counted. */
	cr_assert_eq(
	    su_spin_ticks(&n, &su, 1000 * EARTH_SHARED_SLOWER_PCT / 100 + 1),
	    500);
	cr_assert_eq(su_spin_ticks(&n, &su, 1800), 500);
	cr_assert_eq(su.shared_seen, 2);
	cr_assert_eq(su.probe_last, 1800);
	cr_assert_eq(su.probe_least, 1000);
	/* A faster probe is the new least, and what was alone is shared. */
	cr_assert_eq(su_spin_ticks(&n, &su, 700), 100000);
	cr_assert_eq(su.probe_least, 700);
	cr_assert_eq(su_spin_ticks(&n, &su, 1000), 500);
	cr_assert_eq(su.shared_seen, 3);
}

/* ---- whole nodes ---- */

struct sum_frame {
	long v[64];
	earth_slot done;
};
static long g_sum;

/* The sum, then 20 ms of computing with the SU idle: time for its idle
 * checks even where other tests' threads share the CPUs. */
static void sum_done(void *frame)
{
	struct sum_frame *f = frame;
	long s = 0;
	for (int i = 0; i < 64; i++)
		s += f->v[i];
	g_sum = s;
	t_busy_ns(20000000);
	EARTH_END_FUNCTION(f);
}

/* 64 DATA_SYNCs the SU performs (EARTH_EU_SIGNALS=0), each after some
 * computing, so the SU goes idle between them. */
static void sum_entry(void *frame)
{
	struct sum_frame *f = frame;
	earth_slot_init(&f->done, 64, 0, sum_done, f);
	for (long i = 0; i < 64; i++) {
		t_busy_ns(20000);
		earth_data_sync_l(i + 1, earth_to_global(&f->v[i]), &f->done);
	}
}
EARTH_THREADED_FUNCTION(sum_main, sum_entry, struct sum_frame, 0);

static void run_sum(const char *shared_us, uint32_t spin_us, const char *doze)
{
	setenv("EARTH_EU_SIGNALS", "0", 1);
	setenv("EARTH_SU_DOZE", doze, 1);
	if (shared_us)
		setenv("EARTH_SHARED_SPIN_US", shared_us, 1);
	struct earth_options o;
	earth_options_default(&o);
	o.spin_us = spin_us;
	g_sum = 0;
	int rc = t_run(&o, &sum_main);
	unsetenv("EARTH_EU_SIGNALS");
	unsetenv("EARTH_SU_DOZE");
	unsetenv("EARTH_SHARED_SPIN_US");
	cr_assert_eq(rc, 0);
	cr_assert_eq(g_sum, 64 * 65 / 2, "the DATA_SYNCs summed to %ld", g_sum);
}

Test(sleep_shared, a_dozing_node_measures)
{
	run_sum(NULL, 200, "1");
	if (!earth_node_g.su_doze)
		cr_skip_test("the SU does not doze here (no membarrier)");
	cr_assert(earth_node_g.su_probe);
	cr_assert_gt(su_g.probe_least, 0, "no probe at the SU's start");
	cr_assert_gt(su_g.probe_at, 0, "no probe at an idle check");
	cr_assert_geq(su_g.probe_last, su_g.probe_least);
	/* The statistics say it, with the figures. */
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	cr_assert_not_null(f);
	struct earth_stats st;
	earth_stats_get(&st);
	stats_print_to(f, &st);
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want), "probe least %llu, last %llu ticks",
		 (unsigned long long)su_g.probe_least,
		 (unsigned long long)su_g.probe_last);
	cr_assert(strstr(buf, "SU shared") && strstr(buf, want),
		  "the statistics do not report the probe:\n%s", buf);
	cr_log_info("probe least %llu, last %llu ticks, shared %llu times",
		    (unsigned long long)su_g.probe_least,
		    (unsigned long long)su_g.probe_last,
		    (unsigned long long)su_g.shared_seen);
}

Test(sleep_shared, dozing_at_once_when_shared_is_right)
{
	run_sum("0", 200, "1");
}

Test(sleep_shared, no_measure_without_a_shorter_spin_or_a_doze)
{
	run_sum("200", 200, "1");
	cr_assert(!earth_node_g.su_probe);
	cr_assert_eq(su_g.probe_least, 0);
	cr_assert_eq(su_g.probe_at, 0);
	run_sum("5", 3, "1");
	cr_assert(!earth_node_g.su_probe);
	cr_assert_eq(su_g.probe_at, 0);
	run_sum(NULL, 200, "0");
	cr_assert(!earth_node_g.su_probe);
	cr_assert_eq(su_g.probe_at, 0);
}
