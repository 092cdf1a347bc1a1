/* SPDX-License-Identifier: MIT */
/*
 * su_wake.c - what a dozing SU costs the request that wakes it, on one
 * dual node: a fiber computes for a gap, then posts a BLKMOV_SYNC of
 * 2 x EARTH_EU_BLKMOV_MAX bytes (longer than the EU copies itself: the SU
 * performs it) whose slot starts the next such fiber;
 * the figure is the time from the post to that fiber's start, median over
 * the rounds of a run, median over runs.
 *
 *   su_wake.polling: gaps of 50 µs, shorter than the SU's spin
 *     (EARTH_SPIN_US, 200 µs): the SU still polls when the request comes.
 *   su_wake.dozing: gaps of 300 µs: the SU has dozed, and the EU's post
 *     wakes it (eu_su_nudge: a futex wake) before it performs anything.
 *   su_wake.dozing_over_polling: their ratio, what an SU that dozes
 *     sooner (EARTH_SHARED_SPIN_US, where it finds its core shared; or a
 *     lower EARTH_SPIN_US) costs a request after a gap. Reported, not
 *     judged.
 *
 * The EU spins while it waits for the block move (a wait far shorter
 * than its own EARTH_SPIN_US), so only the SU's sleep is measured.
 */
#define EARTH_INTERNAL 1
#include "base/config.h"
#include "bench.h"

#include <earth.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 1000

static double samples[MAX_ROUNDS];
static int nsamples, rounds;
static uint64_t gap_ticks;
static int dozed_runs;

struct wframe {
	int round;
	uint64_t t_post;
	earth_slot next;
};

#define WAKE_BLK (2 * EARTH_EU_BLKMOV_MAX)
static char wake_src[WAKE_BLK], wake_dst[WAKE_BLK];

static void round_fiber(void *frame);

static void post_after_gap(struct wframe *w)
{
	uint64_t end = q_tsc() + gap_ticks;
	while (q_tsc() < end)
		q_cpu_relax();
	w->t_post = q_tsc_ordered();
	earth_blkmov_sync(earth_to_global(wake_src), earth_to_global(wake_dst),
			  WAKE_BLK, &w->next);
}

/* The block move's fiber: its latency, then the next round. */
static void round_fiber(void *frame)
{
	struct wframe *w = frame;
	uint64_t t = q_tsc_ordered();
	if (w->round > 2 && nsamples < MAX_ROUNDS) /* two warm-up rounds */
		samples[nsamples++] = (double)(t - w->t_post);
	if (w->round++ == rounds) {
		EARTH_END_FUNCTION(w);
	}
	post_after_gap(w);
}

static void main_entry(void *frame)
{
	struct wframe *w = frame;
	w->round = 0;
	earth_slot_init(&w->next, 1, 1, round_fiber, w);
	post_after_gap(w);
}
EARTH_THREADED_FUNCTION(wake_main, main_entry, struct wframe,
			sizeof(struct earth_main_args));

/* One node run with gaps of gap_us; median latency in ticks. */
static double run_gaps(unsigned gap_us)
{
	struct earth_options o;
	earth_options_default(&o);
	gap_ticks = (uint64_t)(gap_us * 1000.0 * q_tsc_per_ns());
	rounds = bench_quick ? 40 : 200;
	nsamples = 0;
	struct earth_main_args a = {0, NULL};
	if (earth_run(&o, &wake_main, &a, sizeof(a)) != 0) {
		fprintf(stderr, "su_wake: node failed\n");
		exit(1);
	}
	struct earth_stats st;
	earth_stats_get(&st);
	dozed_runs += st.su_sleeps > 0;
	return bench_median(samples, nsamples);
}

int main(int argc, char **argv)
{
	bench_init("su_wake", argc, argv);
	double poll[64], doze[64], ratio[64];
	int reps = bench_reps < 64 ? bench_reps : 63;
	int doze_dozed = 0, poll_dozed = 0;
	for (int r = 0; r < reps; r++) {
		dozed_runs = 0;
		poll[r] = bench_ns(run_gaps(50));
		poll_dozed += dozed_runs;
		dozed_runs = 0;
		doze[r] = bench_ns(run_gaps(300));
		doze_dozed += dozed_runs;
		ratio[r] = doze[r] / poll[r];
	}
	printf("# su_wake: the SU slept in %d of %d runs with 300 us gaps, "
	       "%d of %d with 50 us gaps\n",
	       doze_dozed, reps, poll_dozed, reps);
	bench_metric_ns("su_wake.polling", bench_median(poll, reps));
	bench_metric_ns("su_wake.dozing", bench_median(doze, reps));
	bench_metric("su_wake.dozing_over_polling", bench_median(ratio, reps),
		     "ratio");
	return 0;
}
