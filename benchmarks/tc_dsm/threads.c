/* SPDX-License-Identifier: MIT */
/*
 * threads.c - the computations of hide.tc (hide.h) with program threads
 * of the page DSM (earth_dsm.h) instead of fiber chains: k threads per
 * node (2k in all, thread t on node t mod 2, worker t / 2 of its node),
 * each doing what chain j of hide.tc does on the same pages in the same
 * order, but touching shared memory directly (a fault switches the thread
 * out while the page comes). The same barriers (all threads, main
 * among them, after the initialisation and after each step), the same
 * initialisation (jacobi: every worker its blocks; matmul: worker 0 of
 * each node its pages), the same stores (matmul: the node's last worker
 * to finish adds every worker's partial sums into C).
 *
 *   earthrun -n 2 hide_threads -m jacobi|matmul -k K [-n N] [-s S] [-r R]
 *
 * Prints "result MODE NS" (main's clock, from the barrier after the
 * initialisation to the barrier after the last step; the median of R
 * repetitions after one that is not recorded) and "checksum X" (main reads
 * the result), as hide.tc does.
 */
#include <earth.h>
#include <earth_dsm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hide.h"

enum { HM_M = 16 }; /* matmul: rows of A and C (as hide.tc) */

static const char *mode = "jacobi";
static long k = 1, n = 0, steps = 10, reps = 5, w = 512;
static double *x, *y; /* jacobi: the arrays; matmul: A|B|C in x */
static earth_dsm_barrier_t bar;
static double ns[HIDE_MAX_REPS + 1];  /* node 0: main's clock */
static double *acc[HIDE_MAX_WORKERS]; /* matmul: each worker's sums */
static long left;		      /* matmul: workers not done */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void meet(void)
{
	earth_dsm_barrier(bar, (unsigned)(2 * k));
}

static void jacobi(unsigned me)
{
	long node = me % 2, j = me / 2, nq = hj_blocks_of(n, (long)node);
	for (long r = 0; r <= reps; r++) {
		for (long q = j; q < nq; q += k) {
			long b = 2 * q + node;
			for (long i = b * w; i < (b + 1) * w; i++)
				x[i] = y[i] = hj_init(i, n * w);
		}
		meet();
		double t0 = now_ns();
		for (long s = 0; s < steps; s++) {
			for (long q = j; q < nq; q += k) {
				long b = 2 * q + node;
				hj_block(s % 2 ? y : x, s % 2 ? x : y, b * w,
					 (b + 1) * w, n * w);
			}
			meet();
		}
		if (me == 0)
			ns[r] = now_ns() - t0;
	}
}

static void matmul(unsigned me)
{
	long node = me % 2, j = me / 2, nq = (2 * HM_M + n - node + 1) / 2;
	long k0, k1;
	hm_rows_of(j, k, n, &k0, &k1);
	acc[j] = malloc(sizeof(double) * (size_t)(HM_M / 2 * w));
	if (!acc[j]) {
		perror("hide_threads: malloc");
		exit(1);
	}
	for (long r = 0; r <= reps; r++) {
		if (j == 0) {
			for (long q = 0; q < nq; q++) {
				long pg = 2 * q + node;
				double *row = x + pg * w;
				for (long c = 0; c < w; c++)
					row[c] = pg < HM_M
						     ? (c < n ? hm_a(pg, c) : 0)
						 : pg < HM_M + n
						     ? hm_b(pg - HM_M, c)
						     : 0;
			}
			__atomic_store_n(&left, k, __ATOMIC_SEQ_CST);
		}
		meet();
		double t0 = now_ns();
		for (long kb = k0; kb < k1; kb++)
			hm_update(x, x + HM_M * w, acc[j], HM_M, w, node, kb,
				  kb == k0);
		if (__atomic_sub_fetch(&left, 1, __ATOMIC_SEQ_CST) == 0)
			for (long i = node; i < HM_M; i += 2)
				hm_reduce(x + (HM_M + n + i) * w, acc, k, n, w,
					  i);
		meet();
		if (me == 0)
			ns[r] = now_ns() - t0;
	}
	free(acc[j]);
}

static void run(void)
{
	unsigned me = earth_dsm_thread_id();
	if (!strcmp(mode, "jacobi"))
		jacobi(me);
	else
		matmul(me);
}

static int cmp_d(const void *a, const void *b)
{
	double p = *(const double *)a, q = *(const double *)b;
	return (p > q) - (p < q);
}

static int program(int argc, char **argv)
{
	int c;
	long pg = 4096;
	while ((c = getopt(argc, argv, "m:k:n:s:r:")) != -1) {
		if (c == 'm')
			mode = optarg;
		else if (c == 'k')
			k = atol(optarg);
		else if (c == 'n')
			n = atol(optarg);
		else if (c == 's')
			steps = atol(optarg);
		else if (c == 'r')
			reps = atol(optarg);
		else
			return 2;
	}
	int jac = !strcmp(mode, "jacobi");
	if (!n)
		n = jac ? 64 : 128;
	if ((!jac && strcmp(mode, "matmul")) || k < 1 || k > 32 || n < 2 ||
	    n > 4096 || steps < 1 || reps < 1 || reps > HIDE_MAX_REPS ||
	    earth_dsm_nodes() != 2) {
		fprintf(stderr,
			"hide_threads: usage: earthrun -n 2 hide_threads -m "
			"jacobi|matmul [-k threads per node, 1..32] [-n pages "
			"(jacobi) or rows of B (matmul), 2..4096] [-s sweeps "
			">= 1] [-r 1..%d]\n",
			HIDE_MAX_REPS);
		return 2;
	}
	const char *ps = getenv("EARTH_DSM_PAGE");
	if (ps && *ps)
		pg = atol(ps);
	w = pg / (long)sizeof(double);
	long pages = jac ? n : 2 * HM_M + n;
	x = earth_dsm_alloc((size_t)(pages * pg), EARTH_DSM_CYCLIC, 1);
	y = jac ? earth_dsm_alloc((size_t)(n * pg), EARTH_DSM_CYCLIC, 1) : NULL;
	if (!x || (jac && !y)) {
		perror("hide_threads: earth_dsm_alloc");
		return 1;
	}
	bar = earth_dsm_barrier_new();
	for (long t = 1; t < 2 * k; t++)
		EARTH_DSM_CREATE(run);
	run();
	earth_dsm_wait_for_end((unsigned)(2 * k - 1));
	double v[HIDE_MAX_REPS];
	memcpy(v, ns + 1, sizeof(double) * (size_t)reps);
	qsort(v, (size_t)reps, sizeof(*v), cmp_d);
	printf("result %s %.1f\n", mode,
	       reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2);
	double sum = jac ? hide_sum(steps % 2 ? y : x, n * w)
			 : hide_sum(x + (HM_M + n) * w, HM_M * w);
	printf("checksum %.17g\n", sum);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
