/* SPDX-License-Identifier: MIT */
/*
 * earth_tasks.c - the EARTH side of the task benchmarks in compare.sh, on
 * one node: fib(n) with one threaded function per call (TOKEN, the shared
 * fib_tf), and N-Queens with one threaded function per board prefix down
 * to `depth` rows (TOKEN per child, counted sequentially below), the same
 * shapes as tbb_tasks.cpp. Prints the median wall time of REPS runs and
 * checks the answers.
 *
 *   earth_tasks fib N REPS          earth_tasks nqueens N DEPTH REPS
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fib_tf.h"
#include "nqueens_tf.h"

static int is_fib, n, depth, reps;
static long want;
static double t[64];
static int bad;

struct main_frame {
	int rep;
	int ires;
	long lres;
	uint64_t t0;
	earth_slot done;
};
static void start(struct main_frame *m)
{
	m->t0 = q_tsc_ordered();
	if (is_fib) {
		fib_tf_start(n, &m->ires, &m->done);
	} else {
		nqueens_tf_start(n, depth, &m->lres, &m->done);
	}
}
static void main_done(void *frame)
{
	struct main_frame *m = frame;
	t[m->rep] = bench_ns((double)(q_tsc_ordered() - m->t0));
	long got = is_fib ? m->ires : m->lres;
	if (got != want)
		bad++;
	if (++m->rep == reps)
		EARTH_END_FUNCTION(m);
	start(m);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->rep = 0;
	earth_slot_init(&m->done, 1, 1, main_done, m);
	start(m);
}
EARTH_THREADED_FUNCTION(tasks_main, main_entry, struct main_frame, 0);

static long fib_seq(int k)
{
	return k < 2 ? k : fib_seq(k - 1) + fib_seq(k - 2);
}

int main(int argc, char **argv)
{
	struct earth_options o;
	earth_options_default(&o);
	if (earth_options_parse(&o, &argc, argv))
		return EARTH_EXIT_USAGE;
	is_fib = argc == 4 && !strcmp(argv[1], "fib");
	int is_nq = argc == 5 && !strcmp(argv[1], "nqueens");
	if (!is_fib && !is_nq) {
		fprintf(stderr, "usage: earth_tasks fib N REPS | earth_tasks "
				"nqueens N DEPTH REPS\n");
		return 2;
	}
	n = atoi(argv[2]);
	depth = is_nq ? atoi(argv[3]) : 0;
	reps = atoi(argv[is_nq ? 4 : 3]);
	if (n < 1 || n > (is_nq ? 16 : 40) || reps < 1 || reps > 64) {
		fprintf(stderr, "earth_tasks: bad arguments\n");
		return 2;
	}
	want = is_fib ? fib_seq(n) : nqueens_count(n, 0, 0, 0, 0);
	int st = earth_run(&o, &tasks_main, NULL, 0);
	if (st)
		return st;
	if (bad) {
		printf("earth %s: %d WRONG answers\n", argv[1], bad);
		return 1;
	}
	printf("earth %s n=%d: %ld correct, median %.0f ns\n", argv[1], n, want,
	       bench_median(t, reps));
	return 0;
}
