/* SPDX-License-Identifier: MIT */
/*
 * job.c - the in-job program of remote_load (driver.c starts it as 2-node
 * jobs over shm, once per node mode; remote_load.h lists what node 0
 * prints). Both nodes run a chain of busy fibers (fixed arithmetic, about
 * BUSY_NS each) so that an arrival finds the core computing, as in the
 * paper. Phases on node 0: (1) base: busy chains only; (2) seq: one load
 * at a time on top; base and seq alternate 6 times. The CPU time of both
 * nodes' EU threads in seq that the busy work done does not explain (at
 * base's CPU time per unit), per load, is the EU overhead of a remote load
 * (everything the EU cores spent on it: posting, SU work done on the EU
 * core, interrupts, cache traffic); thread CPU time leaves out the time a
 * thread was preempted; (3) stages: one busy chain, reading node 1's stamps
 * after each load (the library variant built with -DEARTH_STAMPS,
 * runtime/base/stamp.h); (4) k chains of loads, each load followed by WORK_NS
 * of work on node 0 (no busy chain there): loads per second and node 0's busy
 * share.
 */
#define _GNU_SOURCE 1
#include "remote_load.h"

#include <earth.h>
#include <sched.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lib/pairs.h"

#include "base/stamp.h"
#ifndef EARTH_STAMPS
extern uint64_t earth_stamp_t[STAMP_COUNT_];
#endif

#define CHAINS 4   /* busy chains: the ready queue never runs dry */
#define MAXS 20000 /* stage samples kept */

/* ---- work of fixed size ---- */

static volatile uint64_t g_sink;
static long g_busy_iters, g_work_iters;
static double g_ns_per_iter;

static void work(long iters)
{
	uint64_t x = g_sink;
	for (long i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	g_sink = x;
}

double remote_load_calibrate(void)
{
	long it = 1000000;
	double best = 1e30;
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = q_tsc_ordered();
		work(it);
		double ns = bench_ns((double)(q_tsc_ordered() - t0));
		if (ns < best)
			best = ns;
	}
	g_ns_per_iter = best / it;
	g_busy_iters = (long)(BUSY_NS / g_ns_per_iter);
	g_work_iters = (long)(WORK_NS / g_ns_per_iter);
	return g_ns_per_iter;
}

/* ---- the busy chain (each node) ---- */

enum phase { PH_BASE, PH_SEQ, PH_STAGES, PH_THR, PH_DONE };
static int g_phase;	 /* node 0 */
static uint64_t g_units; /* busy units done on this node */
static int g_busy_on;
static uint64_t g_phase_end; /* node 0: TSC when the phase ends */
static void phase_next(void *frame);

/* CPU time of this node's EU thread (the one thread of a single-core
 * node) and the busy units done by then; busy fibers refresh it every 32
 * units, node 0 at each phase boundary. CPU time does not count the time
 * the thread was preempted: robust on a shared machine. */
struct cpu_mark {
	uint64_t ns, units;
};
static struct cpu_mark g_mark;

static void mark_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	g_mark.ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	g_mark.units = g_units;
}

static int g_live;	  /* node 0: busy chains still running */
static int g_load_parked; /* node 0: the load chain saw the end */

/* Node 0: the phase moves on once every chain stopped (the frames and the
 * counters are reused by the next phase). */
static void maybe_next(void)
{
	if (g_live == 0 && (g_phase == PH_BASE || g_load_parked)) {
		g_load_parked = 0;
		earth_spawn(phase_next, NULL);
	}
}

static void busy_fiber(void *frame)
{
	(void)frame;
	int node0 = earth_node_id() == 0;
	if (g_busy_on) {
		work(g_busy_iters);
		if ((++g_units & 31) == 0)
			mark_now();
		if (!node0 || q_tsc() < g_phase_end) {
			earth_spawn(busy_fiber, NULL);
			return;
		}
		g_busy_on = 0;
	}
	if (node0) {
		g_live--;
		maybe_next();
	}
}

struct busy_frame {
	long on;
};
static int g_eu_cpu = -1; /* where this node's EU ran (checked by the driver) */
static void busy_entry(void *frame)
{
	struct busy_frame *f = frame;
	int was = g_busy_on;
	g_eu_cpu = sched_getcpu();
	g_busy_on = (int)f->on;
	if (g_busy_on && !was)
		for (int i = 0; i < CHAINS; i++)
			earth_spawn(busy_fiber, NULL);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(busy_start, busy_entry, struct busy_frame,
			sizeof(long));

/* ---- node 0 ---- */

static long g_word = 42; /* the load target (node 1's copy) */
static struct cpu_mark g_rmark, g_m0, g_rm0; /* node 1's; at phase start */
static int g_ki, g_round;
#define ROUNDS 6 /* base/seq pairs */
static double g_phase_ms;
static uint64_t g_t0, g_u0, g_loads;
static void *g_main_frame;
static int g_bad;

/* Per-load samples (cycles). */
static double g_total[MAXS];
/* A stage: the signed difference of two stamps (TSC, same on all cores). */
#define D(x) ((double)(int64_t)(x))
static int g_ntotal;
static double g_stage[S_COUNT][MAXS];
static int g_nstage;

struct load_frame {
	long v;
	uint64_t t_post, t_ret;
	uint64_t a[STAMP_COUNT_], b[STAMP_COUNT_];
	earth_slot s, s_st;
};
static struct load_frame g_loads_f[MAXK];
static void load_issue(void *frame);
static void load_done(void *frame);
static void load_stamps(void *frame);

static void phase_report(void)
{
	double ms = bench_ns((double)(q_tsc() - g_t0)) / 1e6;
	static const char *names[] = {"base", "seq", "stages", "thr"};
	if (g_phase == PH_THR)
		printf("RL thr %d %.6g %.6g %.6g\n", ks[g_ki], ms,
		       (double)g_loads, (double)(g_units - g_u0));
	else
		printf("RL %s %.6g %.6g %.6g %.6g %.6g %.6g\n", names[g_phase],
		       ms, (double)g_loads, (double)(g_mark.ns - g_m0.ns),
		       (double)(g_mark.units - g_m0.units),
		       (double)(g_rmark.ns - g_rm0.ns),
		       (double)(g_rmark.units - g_rm0.units));
}

/* node 1's unit count, then the phase moves on */
struct ru_frame {
	earth_slot s;
};
static struct ru_frame g_ru;
static void phase_start(void *frame);

static void ru_got(void *frame)
{
	(void)frame;
	mark_now();
	if (g_phase >= 0 && g_t0)
		phase_report();
	phase_start(NULL);
}

static void phase_next(void *frame)
{
	(void)frame;
	earth_slot_init(&g_ru.s, 1, 0, ru_got, NULL);
	earth_blkmov_sync(earth_gptr_make(1, &g_mark),
			  earth_to_global(&g_rmark), sizeof(g_rmark), &g_ru.s);
}

static void phase_start(void *frame)
{
	(void)frame;
	if (g_t0) { /* the phase that just ended */
		if (g_phase == PH_THR && ++g_ki < NKS) {
			/* next k */
		} else if (g_phase == PH_SEQ && ++g_round < ROUNDS) {
			/* base and seq alternate, so that a change in the
			 * machine's load hits both alike */
			g_phase = PH_BASE;
		} else {
			g_phase++;
			g_ki = 0;
		}
	} else {
		g_phase = PH_BASE;
	}
	if (g_phase == PH_DONE) {
		struct busy_frame off = {0};
		earth_invoke(1, &busy_start, &off, sizeof(off));
		fflush(stdout);
		earth_set_exit_status(g_bad);
		EARTH_END_FUNCTION(g_main_frame);
	}
	g_t0 = q_tsc();
	g_u0 = g_units;
	g_m0 = g_mark;
	g_rm0 = g_rmark;
	g_loads = 0;
	double ms = g_phase <= PH_SEQ ? g_phase_ms / 2 : g_phase_ms;
	g_phase_end = g_t0 + (uint64_t)(ms * 1e6 / bench_ns(1.0));
	int k = g_phase == PH_THR ? ks[g_ki] : g_phase == PH_BASE ? 0 : 1;
	if (g_phase != PH_THR) {
		/* One chain while stamping: a load's next fiber then waits
		 * behind at most one busy fiber. */
		g_live = g_phase == PH_STAGES ? 1 : CHAINS;
		g_busy_on = 1;
		for (int i = 0; i < g_live; i++)
			earth_spawn(busy_fiber, NULL);
	}
	for (int i = 0; i < k; i++)
		earth_spawn(load_issue, &g_loads_f[i]);
}

static void load_issue(void *frame)
{
	struct load_frame *f = frame;
	earth_slot_init(&f->s, 1, 0, load_done, f);
	f->t_post = q_tsc();
	earth_get_sync_l(earth_gptr_make(1, &g_word), &f->v, &f->s);
	f->t_ret = q_tsc();
}

static void phase_over_thr(void)
{
	/* The last chain to see the end moves the phase on. */
	static int left;
	if (!left)
		left = ks[g_ki];
	if (--left == 0)
		earth_spawn(phase_next, NULL);
}

static void load_done(void *frame)
{
	struct load_frame *f = frame;
	uint64_t now = q_tsc();
	if (f->v != 42)
		g_bad = 1;
	g_loads++;
	if (g_phase == PH_THR) {
		work(g_work_iters);
		g_units++;
		if (now >= g_phase_end)
			phase_over_thr();
		else
			load_issue(f);
		return;
	}
	if (g_phase == PH_STAGES && g_ntotal < MAXS)
		g_total[g_ntotal++] =
		    D(earth_stamp_t[STAMP_EU_FETCH] - f->t_post);
	if (!g_busy_on) { /* a busy chain saw the end of the phase */
		g_load_parked = 1;
		maybe_next();
		return;
	}
	if (g_phase == PH_STAGES) {
		memcpy(f->a, earth_stamp_t, sizeof(f->a));
		earth_slot_init(&f->s_st, 1, 0, load_stamps, f);
		earth_blkmov_sync(earth_gptr_make(1, earth_stamp_t),
				  earth_to_global(f->b), sizeof(f->b),
				  &f->s_st);
		return;
	}
	load_issue(f);
}

static void load_stamps(void *frame)
{
	struct load_frame *f = frame;
	const uint64_t *a = f->a, *b = f->b;
	if (g_nstage < MAXS && a[STAMP_SU_FETCH] >= f->t_post &&
	    a[STAMP_EU_FETCH] >= a[STAMP_SIGNALLED]) {
		double *s[S_COUNT];
		for (int i = 0; i < S_COUNT; i++)
			s[i] = &g_stage[i][g_nstage];
		*s[S_POST] = D(f->t_ret - f->t_post);
		*s[S_FETCH] = D(a[STAMP_SU_FETCH] - f->t_ret);
		*s[S_SEND] = D(a[STAMP_SU_SENT] - a[STAMP_SU_FETCH]);
		*s[S_XMIT1] = D(b[STAMP_R_READ] - a[STAMP_SU_SENT]);
		*s[S_GET] = D(b[STAMP_R_GET] - b[STAMP_R_READ]);
		*s[S_REPLY] = D(b[STAMP_R_SENT] - b[STAMP_R_GET]);
		*s[S_XMIT2] = D(a[STAMP_REPLY_READ] - b[STAMP_R_SENT]);
		*s[S_STORE] = D(a[STAMP_SIGNALLED] - a[STAMP_REPLY_READ]);
		*s[S_READY] = D(a[STAMP_READY] - a[STAMP_SIGNALLED]);
		*s[S_EU] = D(a[STAMP_EU_FETCH] - a[STAMP_READY]);
		*s[S_RAISE] = D(a[STAMP_IRQ_RAISE] - f->t_post);
		*s[S_IRQLAT] = D(b[STAMP_R_IRQ] - a[STAMP_IRQ_RAISE]);
		*s[S_RREAD] = D(b[STAMP_R_READ] - b[STAMP_R_IRQ]);
		*s[S_SIGEU] = D(a[STAMP_EU_FETCH] - a[STAMP_SIGNALLED]);
		g_nstage++;
	}
	if (g_busy_on) {
		load_issue(f);
		return;
	}
	g_load_parked = 1;
	maybe_next();
}

struct main_frame {
	struct earth_main_args a;
};
static void main_entry(void *frame)
{
	g_main_frame = frame;
	if (earth_num_nodes() != 2) {
		fprintf(stderr, "remote_load: run me directly (I start a "
				"2-node job)\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(frame);
	}
	struct busy_frame on = {1};
	earth_invoke(1, &busy_start, &on, sizeof(on));
	g_phase = -1;
	g_t0 = 0;
	phase_start(NULL);
}
EARTH_THREADED_FUNCTION(rl_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int remote_load_node(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	g_phase_ms = bench_quick ? 60 : 200;
	remote_load_calibrate();
	int ret = earth_main(argc, argv, &rl_main);
	printf("RL cpu %u %d\n", earth_node_id(), g_eu_cpu);
	if (earth_node_id() != 0 || ret)
		return ret;
	printf("RL total %.6g\n", bench_ns(bench_median_of(g_total, g_ntotal)));
	for (int i = 0; i < S_COUNT; i++)
		printf("RL stage %d %.6g\n", i,
		       bench_ns(bench_median_of(g_stage[i], g_nstage)));
	printf("RL samples %d %d\n", g_ntotal, g_nstage);
	return 0;
}
