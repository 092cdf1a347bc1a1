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
 *   -m barrier  -n barriers of the threads, -k a node (one by default):
 *               ns per barrier
 *   -m jacobi   the 1-D Jacobi of JAC_N doubles, JAC_SWEEPS sweeps (a
 *               barrier after each), each half of both arrays homed on the
 *               thread that writes it (EARTH_DSM_CYCLIC, a half's pages
 *               at a time; a half starts on a page of its own): ns per
 *               run of the sweeps; also "checksum S" of the result, which
 *               the driver compares with its own sequential run
 *   -m first    first writes: main allocates 2 * -n pages placed first
 *               touch (EARTH_DSM_FIRST_TOUCH), a barrier, each thread
 *               writes a word of each page of its half (every write the
 *               first to a page with no home: node 0 decides the home),
 *               a barrier: ns per page from barrier to barrier; then main
 *               reads node 1's words back, and frees the pages
 *   -m hidden   latency hiding: -k threads per node; each node's threads
 *               read every page (-n per node) homed on the other node, in
 *               turn, and sum its words, between two barriers: ns from the
 *               first barrier to the second (main's clock)
 *   -m miss_eu  the EU's time per miss (EARTH_TIMING=1): main writes a
 *               word of each of -n pages homed on node 0, a barrier,
 *               thread 1 reads them (each a fault: signal, handler,
 *               request, switch out and back), then again with the
 *               pages fetched for a chain of fibers on node 1 instead
 *               (earth_dsm_acquire_sync of each page, the next fiber
 *               reads its word: a request, a fiber's end and start),
 *               thread 1 waiting for the chain's flag; node 1's EU busy
 *               time (earth_stats_get) over each phase per page: "result
 *               miss_eu NS" (fibers) and "result miss_eu_thread NS";
 *               then, the chain's range released, 1000 acquisitions of
 *               its first page (each a hit the EU takes itself) and
 *               100000 inline checks (earth_dsm_usable) of its pages,
 *               timed: "result miss_eu_hit NS", "result miss_eu_check NS"
 */
#include <earth.h>
#include <earth_dsm.h>
#include <earth_dsm_fiber.h>

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
	earth_dsm_flag_t chain_done;	/* miss_eu: the fibers' chain ended */
	double ns_thread[MAX_REPS + 1]; /* miss_eu: the threads' phase */
	double ns_hit[MAX_REPS + 1], ns_check[MAX_REPS + 1]; /* miss_eu */
	long counter;
	long wrong;
	double ns[MAX_REPS + 1];
	double checksum;
	uint8_t *first; /* first: this repetition's pages */
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

static void *alloc_or_die(size_t size, enum earth_dsm_place pl, unsigned arg);

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

/* ---- miss_eu ---- */

static long chain_wrong = -1; /* node 1: a page whose word was wrong */
/* Node 1, the last chain: ns per hit (an acquisition of a page usable
 * already: no request) and per inline check (earth_dsm_usable). */
static double chain_hit_ns, chain_check_ns;
static double chain_busy; /* node 1's EU busy ns when the chain's misses
			   * were done (the hits and checks after it not
			   * counted) */
static double eu_busy(void);
enum { HITS = 1000, CHECKS = 100000 };

struct chain_args {
	uint8_t *pages;
	long n, pg, want0;
	earth_dsm_flag_t done;
};
struct chain_frame {
	struct chain_args x;
	long k;
	earth_slot s_page, s_rel, s_set, s_hits, s_unhit;
};
static void chain_hits(void *f);
static void chain_unhit(void *f);
static void chain_entry(void *f);
static void chain_page(void *f);
static void chain_released(void *f);
static void chain_end(void *f);
EARTH_THREADED_FUNCTION(chain, chain_entry, struct chain_frame,
			sizeof(struct chain_args));

static void chain_entry(void *frame)
{
	struct chain_frame *f = frame;
	f->k = 0;
	earth_slot_init(&f->s_page, 1, 1, chain_page, f);
	earth_dsm_acquire_sync(f->x.pages, sizeof(long), EARTH_DSM_READ,
			       &f->s_page);
}

/* Page k usable: its word checked, the next one asked for (the pages
 * stay held until the chain's end). */
static void chain_page(void *frame)
{
	struct chain_frame *f = frame;
	long at = f->k;
	if (*(long *)(f->x.pages + at * f->x.pg) != f->x.want0 + at)
		chain_wrong = at;
	if (++f->k < f->x.n) {
		earth_dsm_acquire_sync(f->x.pages + f->k * f->x.pg,
				       sizeof(long), EARTH_DSM_READ,
				       &f->s_page);
		return;
	}
	earth_slot_init(&f->s_rel, 1, 0, chain_released, f);
	earth_dsm_release_sync(f->x.pages, (size_t)(f->x.n * f->x.pg),
			       &f->s_rel);
}

/* The range released; its first page still usable here: HITS
 * acquisitions of it (each a hit on the EU), timed, and CHECKS inline
 * checks of the range's pages, timed. */
static void chain_released(void *frame)
{
	struct chain_frame *f = frame;
	chain_busy = eu_busy();
	earth_slot_init(&f->s_hits, HITS, 0, chain_hits, f);
	double t0 = now_ns();
	for (int i = 0; i < HITS; i++)
		earth_dsm_acquire_sync(f->x.pages, sizeof(long), EARTH_DSM_READ,
				       &f->s_hits);
	chain_hit_ns = (now_ns() - t0) / HITS;
	uint64_t ok = 0;
	t0 = now_ns();
	for (long i = 0; i < CHECKS; i++)
		ok += earth_dsm_usable(f->x.pages + (i % f->x.n) * f->x.pg,
				       false);
	chain_check_ns = (now_ns() - t0) / CHECKS;
	sink += ok;
}

static void chain_hits(void *frame)
{
	struct chain_frame *f = frame;
	earth_slot_init(&f->s_unhit, HITS, 0, chain_unhit, f);
	for (int i = 0; i < HITS; i++)
		earth_dsm_release_sync(f->x.pages, sizeof(long), &f->s_unhit);
}

static void chain_unhit(void *frame)
{
	struct chain_frame *f = frame;
	earth_slot_init(&f->s_set, 1, 0, chain_end, f);
	earth_dsm_flag_set_sync(f->x.done, &f->s_set);
}

static void chain_end(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

/* Node 1's EU busy time so far, ns (EARTH_TIMING=1). */
static double eu_busy(void)
{
	struct earth_stats st;
	earth_stats_get(&st);
	return (double)st.eu_busy_ns;
}

static void miss_eu_thread(unsigned me)
{
	for (int r = 0; r <= reps; r++)
		for (int fib = 0; fib < 2; fib++) {
			long want0 = (2 * r + fib) * 1000003L;
			if (me == 0)
				for (long p = 0; p < n; p++)
					*(long *)(pages + p * pg) = want0 + p;
			earth_dsm_barrier(g->bar, 2);
			if (me == 1) {
				double b0 = eu_busy();
				if (fib) {
					struct chain_args x = {
					    pages, n, pg, want0, g->chain_done};
					earth_invoke(1, &chain, &x, sizeof(x));
					earth_dsm_flag_wait(g->chain_done);
					g->ns[r] =
					    (chain_busy - b0) / (double)n;
					g->ns_hit[r] = chain_hit_ns;
					g->ns_check[r] = chain_check_ns;
					earth_dsm_flag_clear(g->chain_done);
					if (chain_wrong >= 0)
						wrong("a page's word (fibers)",
						      chain_wrong, -1);
				} else {
					long bad = -1;
					for (long p = 0; p < n; p++)
						if (*(volatile long
							  *)(pages + p * pg) !=
						    want0 + p)
							bad = p;
					g->ns_thread[r] =
					    (eu_busy() - b0) / (double)n;
					if (bad >= 0)
						wrong("a page's word", bad, -1);
				}
				if (b0 <= 0 && eu_busy() <= 0)
					wrong("EU busy time (EARTH_TIMING=1)",
					      0, 1);
			}
			earth_dsm_barrier(g->bar, 2);
		}
}

/* ---- lock, incr, barrier ---- */

static void sync_thread(unsigned me)
{
	int incr = !strcmp(mode, "incr"), bar = !strcmp(mode, "barrier");
	for (int r = 0; r <= reps; r++) {
		earth_dsm_barrier(g->bar, (unsigned)P);
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (bar) {
				earth_dsm_barrier(g->bar, (unsigned)P);
				continue;
			}
			earth_dsm_lock(g->lock);
			if (incr)
				g->counter++;
			earth_dsm_unlock(g->lock);
		}
		double t = now_ns() - t0;
		earth_dsm_barrier(g->bar, (unsigned)P);
		/* both threads' acquisitions (increments) in the time the
		 * slower of the two took: main's clock after the barrier
		 * would add a barrier, so each keeps its own and the larger
		 * counts */
		if (me == 0)
			g->ns[r] = t;
		earth_dsm_barrier(g->bar, (unsigned)P);
		if (me == 1 && t > g->ns[r])
			g->ns[r] = t;
		earth_dsm_barrier(g->bar, (unsigned)P);
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
			/* the neighbour's value from the other node's half */
			jac_sweep(jat(src, lo), jat(dst, lo), JAC_HALF,
				  lo ? *jat(src, lo - 1) : 0,
				  hi < JAC_N ? *jat(src, hi) : 0, lo == 0,
				  hi == JAC_N);
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

/* ---- first ---- */

static void first_thread(unsigned me)
{
	for (int r = 0; r <= reps; r++) {
		if (me == 0)
			g->first = alloc_or_die((size_t)(2 * n * pg),
						EARTH_DSM_FIRST_TOUCH, 0);
		earth_dsm_barrier(g->bar, 2);
		uint8_t *mine = g->first + (size_t)me * (size_t)(n * pg);
		double t0 = now_ns();
		for (long p = 0; p < n; p++)
			*(long *)(mine + p * pg) = r * 1000003L + p;
		earth_dsm_barrier(g->bar, 2);
		if (me == 0) {
			g->ns[r] = (now_ns() - t0) / (double)n;
			const uint8_t *theirs = g->first + n * pg;
			for (long p = 0; p < n; p++)
				if (*(const long *)(theirs + p * pg) !=
				    r * 1000003L + p)
					wrong("a first-touch page's word",
					      *(const long *)(theirs + p * pg),
					      r * 1000003L + p);
			earth_dsm_free(g->first);
		}
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
	else if (!strcmp(mode, "miss_eu"))
		miss_eu_thread(me);
	else if (!strcmp(mode, "jacobi"))
		jacobi_thread(me);
	else if (!strcmp(mode, "hidden"))
		hidden_thread(me);
	else if (!strcmp(mode, "first"))
		first_thread(me);
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
					    "barrier", "jacobi", "hidden",
					    "miss_eu", "first"};
	int known = 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(*modes); i++)
		known |= !strcmp(mode, modes[i]);
	if (!known || n < 1 || reps < 1 || reps > MAX_REPS || k < 1 || k > 32 ||
	    earth_dsm_nodes() != 2) {
		fprintf(
		    stderr,
		    "dsm_ops_prog: usage: earthrun -n 2 dsm_ops_prog -m "
		    "fault|lock|incr|barrier|jacobi|hidden|miss_eu|first [-n "
		    "count] "
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
	g->chain_done = earth_dsm_flag_new();
	if (!strcmp(mode, "fault") || !strcmp(mode, "miss_eu"))
		pages = alloc_or_die((size_t)n * (size_t)pg, EARTH_DSM_NODE, 0);
	if (!strcmp(mode, "barrier"))
		P = 2 * k;
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
	if (!strcmp(mode, "miss_eu")) {
		for (int r = 0; r < reps; r++)
			v[r] = g->ns_thread[r + 1];
		printf("result miss_eu_thread %.1f\n", median(v, reps));
		for (int r = 0; r < reps; r++)
			v[r] = g->ns_hit[r + 1];
		printf("result miss_eu_hit %.2f\n", median(v, reps));
		for (int r = 0; r < reps; r++)
			v[r] = g->ns_check[r + 1];
		printf("result miss_eu_check %.2f\n", median(v, reps));
	}
	if (!strcmp(mode, "jacobi"))
		printf("checksum %.17g\n", g->checksum);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
