/* SPDX-License-Identifier: MIT */
/*
 * ll7.h - the Livermore Loop 7 latency-hiding experiment (Figure 3 of the
 * EARTH-MANNA paper): what the driver (ll7.c) and the 2-node job (job.c)
 * share, and the paper's percentage.
 *
 * Per loop length n, factor f and fiber size s, with medians over the
 * repetitions (seq, ff and fetch over every repetition of every s):
 *   comm      = ff - seq           the overhead of fetching everything first
 *   pct(s)    = (threaded(s) - seq) / comm * 100; pct_min, pct_max the
 *               same for the fastest and the slowest repetition. seq is
 *               timed in every repetition, between the runs (the baseline
 *               interleaved with them). A median below 0 is noise:
 *               reported as 0 with its spread (ll7_residual)
 *               100% = as slow as fetching first, 0% = as fast as local data
 *   bound(s)  = first(s) / comm * 100, the physical bound: nothing can
 *               be computed before the first chunk is here, so pct(s)
 *               cannot go below it (first(s): f block moves of one chunk)
 *   comm/comp = fetch / seq (fetch: the fetch-first run's transfer alone)
 * The optimum is the s with the smallest pct; its bound is bound(s) there.
 */
#ifndef EARTH_LL7_H
#define EARTH_LL7_H

#include "kernel.h"

#include <stddef.h>

#define LL7_MAX_S 48
#define LL7_MAX_N 8
#define LL7_MAX_F 8

struct ll7_plan {
	char label[32]; /* transport, e.g. shm, tcp, shm_emu */
	char mode[32];	/* node mode: dual, single-poll, ... */
	long n[LL7_MAX_N];
	int nn;
	long f[LL7_MAX_F];
	int nf;
	int reps;
	int per_decade; /* fiber sizes per decade of s */
	long ops_cap;	/* skip s where (n/s)*f block moves exceed this */
	int cpus;	/* usable CPUs, and the first two of them */
	int cpu_list[2];
	int y_global; /* Y in node 1's global memory (LL7_Y=global): over
		       * shm node 0's SU reads it one-sided; else Y is
		       * registered memory served by node 1's SU */
};

/* Repetitions at loop length n: the plan's, times LL7_SHORT_X for the
 * short loops (n <= LL7_SHORT_N: tens of µs a run, where one preemption
 * moves a median), so that their medians rest on more samples. */
#define LL7_SHORT_N 20000
#define LL7_SHORT_X 8
int ll7_reps(const struct ll7_plan *p, long n);

/* Fiber sizes for (n, f): log-spaced from 1 to n, n included, those with
 * more than ops_cap block moves left out. Returns how many (<= LL7_MAX_S). */
int ll7_s_values(const struct ll7_plan *p, long n, long f, long *out);

struct ll7_result {
	long n, f;
	int ns;
	long s[LL7_MAX_S];
	double th[LL7_MAX_S], first[LL7_MAX_S]; /* medians, ns */
	double pct[LL7_MAX_S], bound[LL7_MAX_S];
	/* The spread of pct over the repetitions: pct of the fastest and of
	 * the slowest threaded run (seq and comm as for pct). */
	double pct_min[LL7_MAX_S], pct_max[LL7_MAX_S];
	double seq, ff, fetch, comm, comm_comp;
	int best;	  /* index of the smallest pct */
	double bound_min; /* smallest bound(s) */
	/* The widest run of consecutive fiber sizes (by s_hi / s_lo) with
	 * pct <= 3, and with pct <= LL7_PAPER_BEST_PCT (0 when none). */
	long s_lo3, s_hi3;
	long s_lo_paper, s_hi_paper;
};

/* The paper's residual at its optimum (330 iterations, n = 9900): a range
 * of s doing at least as well is a range over which this machine hides
 * as much as the 1995 one did at its single best size. */
#define LL7_PAPER_BEST_PCT 5.8

/* The residual at fiber size index i as a result: its median, or 0 when
 * the median fell below the 0 % floor (faster than the local loop timed
 * beside it: noise, never a result). */
double ll7_residual(const struct ll7_result *r, int i);
/* The same in words with the spread of the repetitions, saying when the
 * median was below the floor. */
void ll7_residual_text(const struct ll7_result *r, int i, char *buf,
		       size_t len);

/* From samples [s][rep] (reps from the plan). */
void ll7_compute(const struct ll7_plan *p, long n, long f, const long *s,
		 int ns, double *seq, double *ff, double *fetch, double *th,
		 double *first, struct ll7_result *r);

/* Prints the CSV rows ("ll7row,..."), the summary ("ll7sum,...") and, for
 * f = 1 at n = 10^6 and n = 9900, the METRIC lines. */
void ll7_print(const struct ll7_plan *p, const struct ll7_result *r);

/* Runs one 2-node job's node (called under earthrun). */
int ll7_job(const struct ll7_plan *p, int argc, char **argv);

#endif /* EARTH_LL7_H */
