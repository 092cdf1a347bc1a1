/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_modes.c - one small program that uses every operation, run
 * under each queue configuration (software rings; hardware-FIFO emulation
 * with 0 and 500 ns delivery latency; 8-slot rings that force both overflow
 * paths), set by options and by the EARTH_* environment, on two CPUs and on
 * one; floods in both directions at once with tiny rings (no deadlock, both
 * overflow counters move); and the exit status from earth_set_exit_status
 * through earth_run and earth_main.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "fib_tf.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

TestSuite(runtime_modes, .timeout = 60);

static struct earth_stats g_st;

/* ---- the small program ---- */

/* A helper function: reads a value with GET_SYNC, writes value * 3 back
 * with DATA_SYNC, copies a block with BLKMOV, signals done. */
struct work_args {
	earth_gptr in, out, blk_src, blk_dst;
	earth_gslot done;
};
struct work_frame {
	struct work_args a;
	long v;
	earth_slot got;
};
static void work_entry(void *f);
static void work_got(void *f);
EARTH_THREADED_FUNCTION(work_fn, work_entry, struct work_frame,
			sizeof(struct work_args));

static void work_entry(void *frame)
{
	struct work_frame *f = frame;
	earth_slot_init(&f->got, 1, 0, work_got, f);
	earth_get_rsync_l(f->a.in, &f->v, earth_slot_global(&f->got));
}

static void work_got(void *frame)
{
	struct work_frame *f = frame;
	earth_data_rsync_l(f->v * 3, f->a.out, f->a.done);
	earth_blkmov_rsync(f->a.blk_src, f->a.blk_dst, 64, f->a.done);
	EARTH_END_FUNCTION(f);
}

#define NW 64
#define NSP 100
struct prog_frame {
	int fib, spawned, phase;
	earth_slot fib_done, work_done, spawn_join, tick;
	long in[NW], out[NW];
	unsigned char src[NW][64], dst[NW][64];
};
static void prog_entry(void *f);
static void prog_fib_done(void *f);
static void prog_spawned(void *f);
static void prog_spawn_join(void *f);
static void prog_tick(void *f);
static void prog_work_done(void *f);
EARTH_THREADED_FUNCTION(prog_main, prog_entry, struct prog_frame, 0);

/* What the program saw; the exit status says whether it was all right. */
static int g_fib, g_spawned, g_ticks, g_bad_work;

static void prog_entry(void *frame)
{
	struct prog_frame *f = frame;
	f->spawned = 0;
	earth_slot_init(&f->fib_done, 1, 0, prog_fib_done, f);
	struct fib_args a = {14, earth_to_global(&f->fib),
			     earth_slot_global(&f->fib_done)};
	earth_token(&fib_tf, &a, sizeof(a));
}

static void prog_fib_done(void *frame)
{
	struct prog_frame *f = frame;
	g_fib = f->fib;
	earth_slot_init(&f->spawn_join, NSP, 0, prog_spawn_join, f);
	for (int i = 0; i < NSP; i++)
		earth_spawn(prog_spawned, f);
}

static void prog_spawned(void *frame)
{
	struct prog_frame *f = frame;
	f->spawned++;
	earth_sync(&f->spawn_join);
}

static void prog_spawn_join(void *frame)
{
	struct prog_frame *f = frame;
	g_spawned = f->spawned;
	/* A re-arming slot: 5 ticks of 4 signals each, plus INCR_SYNC. */
	f->phase = 0;
	earth_slot_init(&f->tick, 2, 4, prog_tick, f);
	earth_incr_sync(&f->tick, 2);
	for (int i = 0; i < 20; i++)
		earth_sync(&f->tick);
}

static void prog_tick(void *frame)
{
	struct prog_frame *f = frame;
	if (++f->phase < 5)
		return;
	g_ticks = f->phase;
	earth_slot_init(&f->work_done, 2 * NW, 0, prog_work_done, f);
	for (int i = 0; i < NW; i++) {
		f->in[i] = 1000 + i;
		f->out[i] = 0;
		memset(f->src[i], i, 64);
		memset(f->dst[i], 0xff, 64);
		struct work_args w = {
		    earth_to_global(&f->in[i]), earth_to_global(&f->out[i]),
		    earth_to_global(f->src[i]), earth_to_global(f->dst[i]),
		    earth_slot_global(&f->work_done)};
		earth_invoke(0, &work_fn, &w, sizeof(w));
	}
}

static void prog_work_done(void *frame)
{
	struct prog_frame *f = frame;
	for (int i = 0; i < NW; i++) {
		g_bad_work += f->out[i] != 3 * (1000 + i);
		for (int k = 0; k < 64; k++)
			g_bad_work += f->dst[i][k] != i;
	}
	bool ok =
	    g_fib == 377 && g_spawned == NSP && g_ticks == 5 && !g_bad_work;
	earth_set_exit_status(ok ? 0 : 1);
	EARTH_END_FUNCTION(f);
}

static void check_prog(const struct earth_options *o)
{
	int rc = t_run(o, &prog_main);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fib, 377);
	cr_assert_eq(g_spawned, NSP);
	cr_assert_eq(g_ticks, 5);
	cr_assert_eq(g_bad_work, 0);
	cr_assert_eq(rc, 0);
	/* fib(14): 2 fib(15) - 1 = 1219 calls. */
	cr_assert_eq(g_st.ops[EARTH_OP_TOKEN], 1219);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], NW);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], NSP);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], NSP + 20);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], 1);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], NW);
	/* 1219 fib results + NW work results */
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], 1219 + NW);
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], NW);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 1219 + NW + 1);
	cr_assert_eq(g_st.frames_allocated, 1219 + NW + 1);
	cr_assert_eq(g_st.fibers_run, g_st.fibers_ready + g_st.tokens_run + 1);
}

static void opts(struct earth_options *o, enum earth_queue_mode mode,
		 uint32_t latency, uint32_t slots)
{
	earth_options_default(o);
	o->queue_mode = mode;
	o->hwq_latency_ns = latency;
	o->queue_slots = slots;
}

/* check_prog with the options opts() makes. */
static void check_mode(enum earth_queue_mode mode, uint32_t latency,
		       uint32_t slots)
{
	struct earth_options o;
	opts(&o, mode, latency, slots);
	check_prog(&o);
}

Test(runtime_modes, sw)
{
	check_mode(EARTH_QUEUE_SW, 0, 1024);
}

Test(runtime_modes, hwq_latency_0)
{
	check_mode(EARTH_QUEUE_HWQ, 0, 1024);
}

Test(runtime_modes, hwq_latency_500ns)
{
	check_mode(EARTH_QUEUE_HWQ, 500, 1024);
}

Test(runtime_modes, sw_8_slots)
{
	check_mode(EARTH_QUEUE_SW, 0, 8);
}

Test(runtime_modes, hwq_8_slots)
{
	check_mode(EARTH_QUEUE_HWQ, 0, 8);
}

Test(runtime_modes, hwq_8_slots_latency_500ns)
{
	check_mode(EARTH_QUEUE_HWQ, 500, 8);
}

Test(runtime_modes, no_spinning)
{
	/* Units block as soon as they are idle: the sleep/wake paths. */
	struct earth_options o;
	opts(&o, EARTH_QUEUE_SW, 0, 1024);
	o.spin_us = 0;
	check_prog(&o);
}

Test(runtime_modes, options_from_environment)
{
	setenv("EARTH_QUEUE", "hwq", 1);
	setenv("EARTH_HWQ_LATENCY_NS", "500", 1);
	setenv("EARTH_QUEUE_SLOTS", "8", 1);
	setenv("EARTH_SPIN_US", "7", 1);
	struct earth_options o;
	earth_options_default(&o);
	cr_assert_eq(o.queue_mode, EARTH_QUEUE_HWQ);
	cr_assert_eq(o.hwq_latency_ns, 500);
	cr_assert_eq(o.queue_slots, 8);
	cr_assert_eq(o.spin_us, 7);
	cr_assert_eq(o.eu_cpu, -1);
	cr_assert_eq(o.su_cpu, -1);
	cr_assert_eq(o.print_stats, 0);
	check_prog(&o);
}

Test(runtime_modes, oversubscribed_units_share_one_cpu)
{
	int cpu;
	cr_assert_eq(t_first_cpu(&cpu), 0);
	char v[32];
	snprintf(v, sizeof(v), "%d,%d", cpu, cpu);
	setenv("EARTH_CPUS", v, 1);
	struct earth_options o;
	earth_options_default(&o);
	cr_assert_eq(o.eu_cpu, cpu);
	cr_assert_eq(o.su_cpu, cpu);
	check_prog(&o);
}

Test(runtime_modes, process_limited_to_one_cpu)
{
	int cpu;
	cr_assert_eq(t_first_cpu(&cpu), 0);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	check_mode(EARTH_QUEUE_HWQ, 0, 8);
}

Test(runtime_modes, two_runs_in_one_process)
{
	check_mode(EARTH_QUEUE_SW, 0, 8);
	g_fib = g_spawned = g_ticks = g_bad_work = 0;
	/* The counters start again from zero. */
	check_mode(EARTH_QUEUE_HWQ, 500, 16);
}

/* ---- floods in both directions with 8-slot rings ---- */

#define NFLOOD 100000 /* SPAWNs and SYNCs from one fiber */
#define NHELP 300     /* inbox signals while the EU is busy */
#define STALL (16u << 20)
static earth_slot g_all, g_sig, g_rdy, g_blk;
static int g_spawn_runs, g_sig_runs, g_rdy_runs, g_blk_ok, g_ended;
static unsigned char *g_stall_src, *g_stall_dst;
static atomic_int g_go, g_helper_done;
static int g_helper_errors, g_reg_errors;
static earth_gslot g_rdy_g;
static uint64_t g_nflood;

static void flood_spawned(void *frame)
{
	(void)frame;
	g_spawn_runs++;
	earth_sync(&g_all);
}

static void flood_sig(void *frame)
{
	(void)frame;
	g_sig_runs++;
	earth_sync(&g_all);
}

static void flood_rdy(void *frame)
{
	(void)frame;
	g_rdy_runs++;
	earth_sync(&g_all);
}

static void flood_blk(void *frame)
{
	(void)frame;
	g_blk_ok = !memcmp(g_stall_src, g_stall_dst, STALL) &&
		   !earth_unregister_memory(g_stall_src) &&
		   !earth_unregister_memory(g_stall_dst);
	earth_sync(&g_all);
}

static void flood_end(void *frame)
{
	g_ended++;
	EARTH_END_FUNCTION(frame);
}

static void *flood_helper(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&g_go, memory_order_acquire))
		sched_yield();
	for (int i = 0; i < NHELP; i++) {
		int r;
		while ((r = earth_sync_from_thread(g_rdy_g)) == -EAGAIN)
			sched_yield();
		g_helper_errors += r != 0;
	}
	atomic_store_explicit(&g_helper_done, 1, memory_order_release);
	return NULL;
}

static void flood_entry(void *f);
EARTH_THREADED_FUNCTION(flood_main, flood_entry, struct work_frame, 0);

static void flood_entry(void *frame)
{
	uint64_t n = g_nflood;
	earth_slot_init(&g_all, (int32_t)(n + NHELP + 1), 0, flood_end, frame);
	earth_slot_init(&g_sig, 1, 1, flood_sig, NULL);
	earth_slot_init(&g_rdy, 1, 1, flood_rdy, NULL);
	earth_slot_init(&g_blk, 1, 0, flood_blk, NULL);
	g_rdy_g = earth_slot_global(&g_rdy);
	/* The SU spends a while on this copy: the requests below pile up.
	 * (Heap memory a global pointer names is registered.) */
	if (earth_register_memory(g_stall_src, STALL) ||
	    earth_register_memory(g_stall_dst, STALL))
		g_reg_errors++;
	earth_blkmov_sync(earth_to_global(g_stall_src),
			  earth_to_global(g_stall_dst), STALL, &g_blk);
	for (uint64_t i = 0; i < n; i++) {
		if (i & 1)
			earth_sync(&g_sig);
		else
			earth_spawn(flood_spawned, NULL);
	}
	/* Now keep the EU busy while the helper thread feeds the SU through
	 * its inbox: once the helper has placed NHELP signals in the 256-slot
	 * inbox, the SU has handled at least NHELP - 256 of them, and every
	 * one made a fiber ready that the EU has not taken - more than the 24
	 * an 8-message ready ring holds. */
	atomic_store_explicit(&g_go, 1, memory_order_release);
	while (!atomic_load_explicit(&g_helper_done, memory_order_acquire))
		sched_yield();
}

Test(runtime_modes, floods_both_ways_with_8_slot_rings_no_deadlock)
{
	g_nflood = t_scaled(NFLOOD, 10000);
	g_stall_src = malloc(STALL);
	g_stall_dst = calloc(1, STALL);
	cr_assert(g_stall_src && g_stall_dst);
	for (size_t i = 0; i < STALL; i++)
		g_stall_src[i] = (unsigned char)(i * 7 + 1);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, flood_helper, NULL), 0);
	struct earth_options o;
	opts(&o, EARTH_QUEUE_SW, 0, 8);
	int rc = t_run(&o, &flood_main);
	pthread_join(th, NULL);
	earth_stats_get(&g_st);
	cr_assert_eq(rc, 0);
	cr_assert_eq(g_ended, 1);
	cr_assert_eq(g_helper_errors, 0);
	cr_assert_eq(g_reg_errors, 0);
	cr_assert_eq(g_spawn_runs, (int)(g_nflood / 2));
	cr_assert_eq(g_sig_runs, (int)(g_nflood / 2));
	cr_assert_eq(g_rdy_runs, NHELP);
	cr_assert_eq(g_blk_ok, 1);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], g_nflood / 2);
	/* SYNCs to g_sig, then one to g_all from each fiber but main. */
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC],
		     g_nflood / 2 + g_nflood + NHELP + 1);
	cr_assert_gt(g_st.req_overflow, 0, "no request spilled");
	cr_assert_gt(g_st.ready_overflow, 0, "no ready fiber spilled");
	cr_assert_eq(g_st.fibers_run, g_st.fibers_ready + g_st.tokens_run + 1);
	free(g_stall_src);
	free(g_stall_dst);
}

/* With a 20 ms delivery latency nothing posted within 20 ms of the first
 * request can be consumed: 120 SYNCs posted at once pack six per message
 * into 20 messages; of those, into 8 slots, exactly 12 spill. */
static void late_entry(void *f);
EARTH_THREADED_FUNCTION(late_main, late_entry, struct work_frame, 0);

static void late_entry(void *frame)
{
	earth_slot_init(&g_all, 120, 0, flood_end, frame);
	for (int i = 0; i < 120; i++)
		earth_sync(&g_all);
}

Test(runtime_modes, hwq_latency_holds_requests_back)
{
	struct earth_options o;
	opts(&o, EARTH_QUEUE_HWQ, 20000000, 8);
	/* The SYNCs go through the request ring (the EU would perform them
	 * itself otherwise: docs/architecture.md, "Signals on the EU"). */
	setenv("EARTH_EU_SIGNALS", "0", 1);
	uint64_t t0 = t_now_ns();
	cr_assert_eq(t_run(&o, &late_main), 0);
	unsetenv("EARTH_EU_SIGNALS");
	uint64_t dt = t_now_ns() - t0;
	earth_stats_get(&g_st);
	cr_assert_eq(g_ended, 1);
	cr_assert_eq(g_st.req_overflow, 12);
	cr_assert_eq(g_st.ready_overflow, 0);
	/* Three request batches and one ready message, 20 ms each. */
	cr_assert_geq(dt, 78000000ull, "ran in %llu ns",
		      (unsigned long long)dt);
}

/* ---- exit status ---- */

static int g_status;
static void status_entry(void *f);
static void status_later(void *f);
EARTH_THREADED_FUNCTION(status_main, status_entry, struct work_frame, 0);

static void status_entry(void *frame)
{
	struct work_frame *f = frame;
	earth_set_exit_status(99); /* overwritten below */
	earth_slot_init(&f->got, 3, 0, status_later, f);
	earth_sync(&f->got);
	earth_sync(&f->got);
	earth_sync(&f->got);
}

static void status_later(void *frame)
{
	earth_set_exit_status(g_status);
	EARTH_END_FUNCTION(frame);
}

Test(runtime_modes, exit_status_from_a_later_fiber)
{
	g_status = 42;
	cr_assert_eq(t_run(NULL, &status_main), 42);
}

Test(runtime_modes, exit_status_255)
{
	g_status = 255;
	cr_assert_eq(t_run(NULL, &status_main), 255);
}

Test(runtime_modes, exit_status_last_set_wins_and_zero)
{
	g_status = 0;
	cr_assert_eq(t_run(NULL, &status_main), 0);
}

static void plain_entry(void *f);
EARTH_THREADED_FUNCTION(plain_main, plain_entry, struct work_frame, 0);

static void plain_entry(void *frame)
{
	g_ended++;
	EARTH_END_FUNCTION(frame);
}

Test(runtime_modes, exit_status_defaults_to_zero)
{
	cr_assert_eq(t_run(NULL, &plain_main), 0);
	cr_assert_eq(g_ended, 1);
}

/* earth_main: --earth-* flags are removed, the rest reach main. */
struct args_frame {
	struct earth_main_args a;
};
static int g_argc;
static char g_argv1[32], g_argv2[32];
static int g_argv_end_null;
static void args_entry(void *f);
EARTH_THREADED_FUNCTION(args_main, args_entry, struct args_frame,
			sizeof(struct earth_main_args));

static void args_entry(void *frame)
{
	struct args_frame *f = frame;
	g_argc = f->a.argc;
	if (f->a.argc > 1)
		snprintf(g_argv1, sizeof(g_argv1), "%s", f->a.argv[1]);
	if (f->a.argc > 2)
		snprintf(g_argv2, sizeof(g_argv2), "%s", f->a.argv[2]);
	g_argv_end_null = f->a.argv[f->a.argc] == NULL;
	earth_set_exit_status(10 * f->a.argc + 3);
	EARTH_END_FUNCTION(f);
}

Test(runtime_modes, earth_main_strips_flags_and_returns_status)
{
	char a0[] = "prog", a1[] = "--earth-queue=hwq", a2[] = "first",
	     a3[] = "--earth-queue-slots=16", a4[] = "second",
	     a5[] = "--earth-hwq-latency=500", a6[] = "--earth-spin-us=0";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
	cr_assert_eq(earth_main(7, argv, &args_main), 33);
	cr_assert_eq(g_argc, 3);
	cr_assert_str_eq(g_argv1, "first");
	cr_assert_str_eq(g_argv2, "second");
	cr_assert_eq(g_argv_end_null, 1);
}

Test(runtime_modes, earth_main_bad_flag_returns_usage_without_running)
{
	char a0[] = "prog", a1[] = "--earth-queue=fast", a2[] = "x";
	char *argv[] = {a0, a1, a2, NULL};
	cr_assert_eq(earth_main(3, argv, &args_main), EARTH_EXIT_USAGE);
	cr_assert_eq(g_argc, 0, "main ran");
}

/* EARTH_STATS=1 prints the statistics table when the node stops. */
static int run_with_stats(void *arg)
{
	(void)arg;
	struct earth_options o;
	opts(&o, EARTH_QUEUE_HWQ, 0, 64);
	o.print_stats = 1;
	return t_run(&o, &prog_main);
}

Test(runtime_modes, print_stats_writes_the_table)
{
	t_expect_exit(run_with_stats, NULL, 0, "earth: node 0 statistics",
		      "queue hwq", "TOKEN", "1219", NULL);
}
