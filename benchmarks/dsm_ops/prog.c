/* SPDX-License-Identifier: MIT */
/*
 * prog.c - the shared-memory program of the dsm_ops benchmark (driver.c
 * runs it as 2-node jobs under earthrun: `dsm_ops_prog -m MODE ...`).
 * Program thread 0 (main) runs on node 0, thread 1 on node 1 (thread t on
 * node t mod 2). Every mode runs one repetition that is not recorded
 * (first touches, the first fetches, stacks), then -r recorded ones, and
 * node 0 prints "result NAME VALUE" with the median, in ns (a line
 * "wrong ..." and exit status 1 when a value read back is not the one
 * written).
 *
 *   -m fault    one-page read faults: main writes a word of each of -n
 *               pages homed on node 0, a barrier, thread 1 reads one word
 *               of each (every read a fault and a fetch of the page from
 *               node 0), a barrier: ns per page, fault to resume
 *   -m lock     threads 0 and 1 each take and release one lock -n times,
 *               contending (first come, first served: the lock goes to
 *               the other node whenever it waits): ns per acquisition
 *   -m incr     the same with a counter in shared memory (homed on node
 *               0) incremented under the lock: ns per increment; the
 *               counter is checked
 *   -m barrier  -n barriers of the two threads: ns per barrier
 *   -m jacobi   the 1-D Jacobi of JAC_N doubles, JAC_SWEEPS sweeps (a
 *               barrier after each), each half of both arrays homed on the
 *               thread that writes it (EARTH_DSM_CYCLIC, a half's pages
 *               at a time; a half starts on a page of its own): ns per
 *               run of the sweeps; also "checksum S" of the result, which
 *               the driver compares with its own sequential run
 *   -m hidden   latency hiding: -k threads per node; each node's threads
 *               read every page (-n per node) homed on the other node, in
 *               turn, and sum its words, between two barriers: ns from the
 *               first barrier to the second (main's clock)
 */
#include <earth_dsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jacobi.h"

enum { MAX_REPS = 64 };

struct shared {
	earth_dsm_lock_t lock;
	earth_dsm_barrier_t bar;
	long counter;
	long wrong;
	double ns[MAX_REPS + 1];
	double checksum;
};

static struct shared *g;
static const char *mode = "fault";
static long n = 1000;
static int reps = 9, k = 1, P = 2;
static long pg = 4096;
static uint8_t *pages;	 /* fault: n pages homed on node 0 */
static uint8_t *home[2]; /* hidden: n pages homed on each node */
static double *jx, *jy;	 /* jacobi: two arrays, halves apart */
static long half_stride; /* jacobi: doubles from half 0 to half 1 */
static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int m)
{
	qsort(v, (size_t)m, sizeof(*v), cmp_d);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static void wrong(const char *what, long got, long want)
{
	earth_dsm_lock(g->lock);
	if (!g->wrong)
		fprintf(stderr, "dsm_ops_prog: thread %u: %s = %ld, want %ld\n",
			earth_dsm_thread_id(), what, got, want);
	g->wrong = 1;
	earth_dsm_unlock(g->lock);
}

/* ---- fault ---- */

static void fault_thread(unsigned me)
{
	for (int r = 0; r <= reps; r++) {
		if (me == 0)
			for (long p = 0; p < n; p++)
				*(long *)(pages + p * pg) = r * 1000003L + p;
		earth_dsm_barrier(g->bar, 2);
		if (me == 1) {
			double t0 = now_ns();
			long bad = -1;
			for (long p = 0; p < n; p++)
				if (*(volatile long *)(pages + p * pg) !=
				    r * 1000003L + p)
					bad = p;
			g->ns[r] = (now_ns() - t0) / (double)n;
			if (bad >= 0)
				wrong("a page's word",
				      *(long *)(pages + bad * pg),
				      r * 1000003L + bad);
		}
		earth_dsm_barrier(g->bar, 2);
	}
}

/* ---- lock, incr, barrier ---- */

static void sync_thread(unsigned me)
{
	int incr = !strcmp(mode, "incr"), bar = !strcmp(mode, "barrier");
	for (int r = 0; r <= reps; r++) {
		earth_dsm_barrier(g->bar, 2);
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (bar) {
				earth_dsm_barrier(g->bar, 2);
				continue;
			}
			earth_dsm_lock(g->lock);
			if (incr)
				g->counter++;
			earth_dsm_unlock(g->lock);
		}
		double t = now_ns() - t0;
		earth_dsm_barrier(g->bar, 2);
		/* both threads' acquisitions (increments) in the time the
		 * slower of the two took: main's clock after the barrier
		 * would add a barrier, so each keeps its own and the larger
		 * counts */
		if (me == 0)
			g->ns[r] = t;
		earth_dsm_barrier(g->bar, 2);
		if (me == 1 && t > g->ns[r])
			g->ns[r] = t;
		earth_dsm_barrier(g->bar, 2);
		if (me == 0)
			g->ns[r] /= bar ? (double)n : 2.0 * (double)n;
	}
}

/* ---- jacobi ---- */

static double *jat(double *a, long i)
{
	return a + (i < JAC_HALF ? i : half_stride + (i - JAC_HALF));
}

static void jacobi_thread(unsigned me)
{
	long lo = (long)me * JAC_HALF, hi = lo + JAC_HALF;
	for (int r = 0; r <= reps; r++) {
		for (long i = lo; i < hi; i++)
			*jat(jx, i) = *jat(jy, i) = jac_init(i);
		earth_dsm_barrier(g->bar, 2);
		double t0 = now_ns();
		for (int s = 0; s < JAC_SWEEPS; s++) {
			double *src = s % 2 ? jy : jx, *dst = s % 2 ? jx : jy;
			for (long i = lo; i < hi; i++) {
				if (i == 0 || i == JAC_N - 1)
					continue;
				*jat(dst, i) =
				    jac_step(*jat(src, i - 1), *jat(src, i),
					     *jat(src, i + 1));
			}
			earth_dsm_barrier(g->bar, 2);
		}
		if (me == 0)
			g->ns[r] = now_ns() - t0;
	}
	if (me == 0) {
		double *res = JAC_SWEEPS % 2 ? jy : jx, sum = 0;
		for (long i = 0; i < JAC_N; i++)
			sum += *jat(res, i) * (double)(i % 7 + 1);
		g->checksum = sum;
	}
}

/* ---- hidden ---- */

static void hidden_thread(unsigned me)
{
	unsigned node = me % 2, j = me / 2;
	uint8_t *mine = home[node], *other = home[1 - node];
	long words = pg / (long)sizeof(uint64_t);
	for (int r = 0; r <= reps; r++) {
		for (long p = j; p < n; p += k)
			*(long *)(mine + p * pg) = r * 1000003L + p;
		earth_dsm_barrier(g->bar, (unsigned)P);
		double t0 = now_ns();
		for (long p = j; p < n; p += k) {
			const uint64_t *w = (const uint64_t *)(other + p * pg);
			uint64_t s = 0;
			for (long i = 0; i < words; i++)
				s += w[i];
			if (w[0] != (uint64_t)(r * 1000003L + p))
				wrong("a page's word", (long)w[0],
				      r * 1000003L + p);
			sink += s;
		}
		earth_dsm_barrier(g->bar, (unsigned)P);
		if (me == 0)
			g->ns[r] = now_ns() - t0;
	}
}

static void run(void)
{
	unsigned me = earth_dsm_thread_id();
	if (!strcmp(mode, "fault"))
		fault_thread(me);
	else if (!strcmp(mode, "jacobi"))
		jacobi_thread(me);
	else if (!strcmp(mode, "hidden"))
		hidden_thread(me);
	else
		sync_thread(me);
}

static void *alloc_or_die(size_t size, enum earth_dsm_place pl, unsigned arg)
{
	void *p = earth_dsm_alloc(size, pl, arg);
	if (!p) {
		perror("dsm_ops_prog: earth_dsm_alloc");
		exit(1);
	}
	return p;
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "m:n:r:k:")) != -1) {
		if (c == 'm')
			mode = optarg;
		else if (c == 'n')
			n = atol(optarg);
		else if (c == 'r')
			reps = atoi(optarg);
		else if (c == 'k')
			k = atoi(optarg);
		else
			return 2;
	}
	static const char *const modes[] = {"fault",   "lock",	 "incr",
					    "barrier", "jacobi", "hidden"};
	int known = 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(*modes); i++)
		known |= !strcmp(mode, modes[i]);
	if (!known || n < 1 || reps < 1 || reps > MAX_REPS || k < 1 || k > 32 ||
	    earth_dsm_nodes() != 2) {
		fprintf(stderr,
			"dsm_ops_prog: usage: earthrun -n 2 dsm_ops_prog -m "
			"fault|lock|incr|barrier|jacobi|hidden [-n count] "
			"[-r 1..%d] [-k threads per node, 1..32]\n",
			MAX_REPS);
		return 2;
	}
	const char *ps = getenv("EARTH_DSM_PAGE");
	if (ps && *ps)
		pg = atol(ps);
	g = alloc_or_die(sizeof(*g), EARTH_DSM_NODE, 0);
	g->lock = earth_dsm_lock_new();
	g->bar = earth_dsm_barrier_new();
	if (!strcmp(mode, "fault"))
		pages = alloc_or_die((size_t)n * (size_t)pg, EARTH_DSM_NODE, 0);
	if (!strcmp(mode, "hidden")) {
		P = 2 * k;
		for (unsigned h = 0; h < 2; h++)
			home[h] = alloc_or_die((size_t)n * (size_t)pg,
					       EARTH_DSM_NODE, h);
	}
	if (!strcmp(mode, "jacobi")) {
		/* a half's pages, homed a half at a time */
		long hp = (JAC_HALF * (long)sizeof(double) + pg - 1) / pg;
		half_stride = hp * pg / (long)sizeof(double);
		jx = alloc_or_die((size_t)(2 * hp * pg), EARTH_DSM_CYCLIC,
				  (unsigned)hp);
		jy = alloc_or_die((size_t)(2 * hp * pg), EARTH_DSM_CYCLIC,
				  (unsigned)hp);
	}
	for (int t = 1; t < P; t++)
		EARTH_DSM_CREATE(run);
	run();
	earth_dsm_wait_for_end((unsigned)P - 1);
	if (g->wrong)
		return 1;
	if (!strcmp(mode, "incr") && g->counter != 2 * n * (long)(reps + 1)) {
		printf("wrong counter %ld, want %ld\n", g->counter,
		       2 * n * (long)(reps + 1));
		return 1;
	}
	double v[MAX_REPS];
	memcpy(v, g->ns + 1, sizeof(double) * (size_t)reps);
	printf("result %s %.1f\n", mode, median(v, reps));
	if (!strcmp(mode, "jacobi"))
		printf("checksum %.17g\n", g->checksum);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
