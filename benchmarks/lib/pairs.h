/* SPDX-License-Identifier: MIT */
/*
 * pairs.h - pair statistics. The vCPUs of a shared host move between
 * placements (a cache-line round trip of ~110 ns or ~500 ns), so a figure
 * compared with a floor is taken pair by pair: the floor, then at once
 * what is compared with it; the ratio reported is the median of the
 * pairs' ratios, not the ratio of two medians. Also the medians and the
 * spread of a set of samples, and the "pair NAME VALUE" lines a job
 * prints for the driver that pairs its figures.
 */
#ifndef EARTH_BENCH_PAIRS_H
#define EARTH_BENCH_PAIRS_H

/* The most pairs one figure keeps. */
#define BENCH_PAIRS_MAX 64

/* One figure measured pair by pair: its samples, its floor's, their
 * ratios. */
struct bench_paired {
	char name[64], floor[64], ratio[64];
	const char *unit; /* "ns": printed with bench_metric_ns */
	double v[BENCH_PAIRS_MAX], f[BENCH_PAIRS_MAX], r[BENCH_PAIRS_MAX];
	int n;
	const char *who; /* who says there was no sample */
};

void bench_paired_init(struct bench_paired *p, const char *who,
		       const char *name, const char *floor, const char *ratio,
		       const char *unit);
/* One pair: the figure v and its floor; dropped unless both are > 0. */
void bench_paired_add(struct bench_paired *p, double v, double floor);
/* METRIC lines: the figure's median, its floor's (print_floor) and the
 * median of the pairs' ratios. 0, or 1 when no pair gave a sample. */
int bench_paired_print(struct bench_paired *p, int print_floor);

/* Median of n doubles, v left as it is; NAN when n <= 0. */
double bench_median_of(const double *v, int n);
/* Median of n doubles (sorts v), and the smallest and largest into *lo
 * and *hi; all NAN when n <= 0. */
double bench_median_spread(double *v, int n, double *lo, double *hi);

/* In a job: "pair NAME VALUE" on standard output. */
void bench_pair_line(const char *name, double value);
/* In the driver: the VALUE of "pair NAME VALUE" in a job's output, or -1. */
double bench_pair_value(const char *out, const char *name);

#endif /* EARTH_BENCH_PAIRS_H */
