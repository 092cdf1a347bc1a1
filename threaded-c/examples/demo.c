/* SPDX-License-Identifier: MIT */
/*
 * demo.c - one EARTH node end to end, written against the C API (what
 * earthcc generates from Threaded-C): fib(n) with one threaded function per
 * call spread by TOKEN, then a pipeline of split-phase GET_SYNCs over an
 * array, both checked against plain C. Prints the node's statistics.
 *
 *   demo [n] [--earth-queue=sw|hwq] [--earth-stats]
 */
#include <earth.h>
#include "fib_tf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- main ---- */

#define PIPE_LEN 4096
struct main_frame {
	struct earth_main_args a;
	int n, fib_result, stage;
	double t0;
	earth_slot fib_done, pipe_done;
	long src[PIPE_LEN], dst[PIPE_LEN];
};
static void main_entry(void *f);
static void main_fib_done(void *f);
static void main_pipe_done(void *f);
EARTH_THREADED_FUNCTION(demo_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->n = m->a.argc > 1 ? atoi(m->a.argv[1]) : 25;
	if (m->n < 0 || m->n > 40) {
		fprintf(stderr, "demo: n must be 0..40 (got %s)\n",
			m->a.argv[1]);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	printf("EARTH demo: node %u of %u\n", earth_node_id(),
	       earth_num_nodes());
	earth_slot_init(&m->fib_done, 1, 0, main_fib_done, m);
	m->t0 = now_s();
	fib_tf_start(m->n, &m->fib_result, &m->fib_done);
}

static void main_fib_done(void *frame)
{
	struct main_frame *m = frame;
	double t = now_s() - m->t0;
	int want = fib_seq(m->n);
	/* calls(n) = 2 fib(n+1) - 1 */
	long calls = 2L * fib_seq(m->n + 1) - 1;
	printf("fib(%d) = %d (%s): %ld threaded calls in %.3f ms, %.1f ns per "
	       "call\n",
	       m->n, m->fib_result, m->fib_result == want ? "correct" : "WRONG",
	       calls, t * 1e3, t * 1e9 / calls);
	if (m->fib_result != want)
		earth_set_exit_status(1);
	/* Pipeline: one GET_SYNC per element, all in flight at once. */
	for (int i = 0; i < PIPE_LEN; i++) {
		m->src[i] = (long)i * i;
		m->dst[i] = -1;
	}
	earth_slot_init(&m->pipe_done, PIPE_LEN, 0, main_pipe_done, m);
	m->t0 = now_s();
	for (int i = 0; i < PIPE_LEN; i++)
		earth_get_sync_l(earth_to_global(&m->src[i]), &m->dst[i],
				 &m->pipe_done);
}

static void main_pipe_done(void *frame)
{
	struct main_frame *m = frame;
	double t = now_s() - m->t0;
	int bad = 0;
	for (int i = 0; i < PIPE_LEN; i++)
		bad += m->dst[i] != (long)i * i;
	printf("pipeline: %d GET_SYNCs in %.1f us, %s\n", PIPE_LEN, t * 1e6,
	       bad ? "WRONG" : "all values correct");
	if (bad)
		earth_set_exit_status(1);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &demo_main);
}
