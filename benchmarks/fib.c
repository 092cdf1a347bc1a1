/* SPDX-License-Identifier: MIT */
/*
 * fib.c - cost of a threaded-function call: fib(n) with one threaded
 * function per call (TOKEN for each child, DATA_RSYNC of the result to the
 * parent's slot, END_FUNCTION), against the same plain C recursion in the
 * same run. METRIC fib_call, fib_seq_call (ns per call) and their ratio;
 * token_cost: ns per TOKEN run locally, a chain of tokens each posting the
 * next (frame, push on the EU's deque, the fiber's end, pop, run,
 * END_FUNCTION), nothing else in between. fib_call_over_dispatch,
 * token_cost_over_dispatch: each over an empty function called through a
 * table on the EU's CPU right before each repeat (bench_dispatch_ns).
 */
#include "bench.h"
#include "bench_fib.h"
#include "fib_tf.h"

#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

static struct fib_timed run;

/* ---- token_cost: a chain of tokens ---- */

struct chain_run {
	uint64_t t_start, t_end; /* TSC */
	long ran;
};
struct chain_frame {
	struct chain_run *r;
	long k;
	earth_slot *done;
};
static void chain_entry(void *f);
EARTH_THREADED_FUNCTION(chain_tf, chain_entry, struct chain_frame,
			sizeof(struct chain_frame));

static void chain_entry(void *f)
{
	struct chain_frame *c = f;
	c->r->ran++;
	if (c->k > 1) {
		struct chain_frame a = {c->r, c->k - 1, c->done};
		earth_token(&chain_tf, &a, sizeof(a));
	} else {
		c->r->t_end = q_tsc_ordered();
		earth_sync(c->done);
	}
	EARTH_END_FUNCTION(c);
}

struct chain_main_frame {
	struct chain_run *r;
	long k;
	earth_slot done;
};
static void chain_main_entry(void *f);
EARTH_THREADED_FUNCTION(chain_main_tf, chain_main_entry,
			struct chain_main_frame,
			sizeof(struct chain_run *) + sizeof(long));

static void chain_main_done(void *f)
{
	EARTH_END_FUNCTION(f);
}

static void chain_main_entry(void *f)
{
	struct chain_main_frame *m = f;
	earth_slot_init(&m->done, 1, 0, chain_main_done, m);
	struct chain_frame a = {m->r, m->k, &m->done};
	m->r->t_start = q_tsc_ordered();
	earth_token(&chain_tf, &a, sizeof(a));
}

/* ns per token of a chain of k, or -1 when the chain did not run. */
static double token_cost(long k)
{
	struct chain_run r = {0, 0, 0};
	struct {
		struct chain_run *r;
		long k;
	} args = {&r, k};
	struct earth_options o;
	earth_options_default(&o);
	if (earth_run(&o, &chain_main_tf, &args, sizeof(args)) != 0 ||
	    r.ran != k) {
		fprintf(stderr, "fib: token chain of %ld ran %ld\n", k, r.ran);
		return -1;
	}
	return bench_ns((double)(r.t_end - r.t_start)) / (double)k;
}

static long fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

/* Calls made by fib(n): C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1. */
static double calls_of(int n)
{
	double a = 1, b = 1;
	for (int i = 2; i <= n; i++) {
		double c = 1 + a + b;
		a = b;
		b = c;
	}
	return n < 2 ? 1 : b;
}

int main(int argc, char **argv)
{
	bench_init("fib", argc, argv);
	run.n = argc > 1 ? atoi(argv[1]) : (bench_quick ? 27 : 30);
	int fib_n = run.n;
	long want = fib_seq(fib_n);
	double calls = calls_of(fib_n);
	double par[64], seq[64], tok[64], par_d[64], tok_d[64];
	long chain = bench_quick ? 1000000 : 5000000;
	int cpu_eu, cpu_su;
	bench_cpus(&cpu_eu, &cpu_su);
	for (int r = 0; r < bench_reps; r++) {
		double disp = bench_dispatch_ns(cpu_eu);
		struct earth_options o;
		earth_options_default(&o);
		run.result = -1;
		struct fib_timed *t = &run;
		if (earth_run(&o, &fib_timed_tf, &t, sizeof(t)) != 0 ||
		    run.result != want) {
			fprintf(stderr, "fib: fib(%d) = %d, want %ld\n", fib_n,
				run.result, want);
			return 1;
		}
		par[r] = bench_ns((double)(run.t_end - run.t_start)) / calls;
		uint64_t t0 = q_tsc_ordered();
		/* run.n, not a local copy: the compiler may not reuse want. */
		volatile long s = fib_seq(run.n);
		uint64_t t1 = q_tsc_ordered();
		if (s != want)
			return 1;
		seq[r] = bench_ns((double)(t1 - t0)) / calls;
		if ((tok[r] = token_cost(chain)) < 0)
			return 1;
		par_d[r] = par[r] / disp;
		tok_d[r] = tok[r] / disp;
	}
	printf("Result: fib(%d) = %d (correct), %.0f threaded calls\n", fib_n,
	       run.result, calls);
	double p = bench_median(par, bench_reps),
	       s = bench_median(seq, bench_reps);
	bench_metric_ns("fib_call", p);
	bench_metric_ns("fib_seq_call", s);
	bench_metric("fib_call_over_seq", p / s, "ratio");
	bench_metric_ns("token_cost", bench_median(tok, bench_reps));
	bench_metric("fib_call_over_dispatch", bench_median(par_d, bench_reps),
		     "ratio");
	bench_metric("token_cost_over_dispatch",
		     bench_median(tok_d, bench_reps), "ratio");
	return 0;
}
