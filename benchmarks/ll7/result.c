/* SPDX-License-Identifier: MIT */
/*
 * result.c - fiber sizes, medians, the paper's percentage and the physical
 * bound of the Livermore Loop 7 experiment (formulas in ll7.h), and their
 * output as CSV rows, summaries and METRIC lines.
 */
#include "ll7.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int ll7_s_values(const struct ll7_plan *p, long n, long f, long *out)
{
	int k = 0;
	long last = 0;
	for (int i = 0; k < LL7_MAX_S - 1; i++) {
		long s = lround(pow(10.0, (double)i / p->per_decade));
		if (s >= n)
			break;
		if (s == last)
			continue;
		last = s;
		if ((n + s - 1) / s * f <= p->ops_cap)
			out[k++] = s;
	}
	out[k++] = n;
	return k;
}

int ll7_reps(const struct ll7_plan *p, long n)
{
	return n <= LL7_SHORT_N ? p->reps * LL7_SHORT_X : p->reps;
}

/* The widest run of consecutive fiber sizes with pct <= limit, into
 * *lo, *hi (0 when there is none). */
static void widest_run(const struct ll7_result *r, double limit, long *lo,
		       long *hi)
{
	*lo = *hi = 0;
	for (int i = 0; i < r->ns; i++) {
		if (r->pct[i] > limit)
			continue;
		int j = i;
		while (j + 1 < r->ns && r->pct[j + 1] <= limit)
			j++;
		if (!*lo || (double)r->s[j] / (double)r->s[i] >
				(double)*hi / (double)*lo) {
			*lo = r->s[i];
			*hi = r->s[j];
		}
		i = j;
	}
}

void ll7_compute(const struct ll7_plan *p, long n, long f, const long *s,
		 int ns, double *seq, double *ff, double *fetch, double *th,
		 double *first, struct ll7_result *r)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	r->f = f;
	r->ns = ns;
	int reps = ll7_reps(p, n), all = ns * reps;
	r->seq = bench_median(seq, all);
	r->ff = bench_median(ff, all);
	r->fetch = bench_median(fetch, all);
	r->comm = r->ff - r->seq;
	r->comm_comp = r->fetch / r->seq;
	r->best = 0;
	r->bound_min = INFINITY;
	for (int i = 0; i < ns; i++) {
		r->s[i] = s[i];
		r->th[i] = bench_median(th + i * reps, reps);
		r->first[i] = bench_median(first + i * reps, reps);
		/* The median, and the spread: the fastest and the slowest
		 * repetition, each against the same baseline (seq: the
		 * sequential loop timed in every repetition, between the
		 * runs, its median over all of them). */
		r->pct[i] = (r->th[i] - r->seq) / r->comm * 100.0;
		double lo = th[i * reps], hi = th[i * reps];
		for (int k = 1; k < reps; k++) {
			if (th[i * reps + k] < lo)
				lo = th[i * reps + k];
			if (th[i * reps + k] > hi)
				hi = th[i * reps + k];
		}
		r->pct_min[i] = (lo - r->seq) / r->comm * 100.0;
		r->pct_max[i] = (hi - r->seq) / r->comm * 100.0;
		r->bound[i] = r->first[i] / r->comm * 100.0;
		if (r->pct[i] < r->pct[r->best])
			r->best = i;
		if (r->bound[i] < r->bound_min)
			r->bound_min = r->bound[i];
	}
	widest_run(r, 3.0, &r->s_lo3, &r->s_hi3);
	widest_run(r, LL7_PAPER_BEST_PCT, &r->s_lo_paper, &r->s_hi_paper);
}

double ll7_residual(const struct ll7_result *r, int i)
{
	return r->pct[i] < 0 ? 0 : r->pct[i];
}

void ll7_residual_text(const struct ll7_result *r, int i, char *buf, size_t len)
{
	if (r->pct[i] < 0)
		snprintf(buf, len,
			 "0%% within noise (median of the repetitions "
			 "%.2f%%, below the 0%% floor; %.2f..%.2f%%)",
			 r->pct[i], r->pct_min[i], r->pct_max[i]);
	else
		snprintf(buf, len, "%.2f%% (repetitions %.2f..%.2f%%)",
			 r->pct[i], r->pct_min[i], r->pct_max[i]);
}

/* The residual at index i as METRIC lines: NAME (the median, never below
 * the 0 % floor), NAME_min and NAME_max (the fastest and the slowest
 * repetition, as measured). */
static void ll7_residual_metrics(const char *base, const char *sfx,
				 const struct ll7_result *r, int i)
{
	printf("METRIC %s.%s %.3f %%\n", base, sfx, ll7_residual(r, i));
	printf("METRIC %s_min.%s %.3f %%\n", base, sfx, r->pct_min[i]);
	printf("METRIC %s_max.%s %.3f %%\n", base, sfx, r->pct_max[i]);
}

void ll7_print(const struct ll7_plan *p, const struct ll7_result *r)
{
	for (int i = 0; i < r->ns; i++)
		printf("ll7row,%s,%s,%ld,%ld,%ld,%ld,%.0f,%.0f,%.0f,%.0f,%.0f,"
		       "%.4f,%.2f,%.2f,%.2f,%.2f\n",
		       p->label, p->mode, r->n, r->f, r->s[i],
		       (r->n + r->s[i] - 1) / r->s[i], r->seq, r->ff, r->fetch,
		       r->th[i], r->first[i], r->comm_comp, r->pct[i],
		       r->bound[i], r->pct_min[i], r->pct_max[i]);
	int b = r->best;
	char res[160];
	ll7_residual_text(r, b, res, sizeof(res));
	printf("ll7sum,%s,%s,%ld,%ld,%.4f,%ld,%.2f,%.2f,%.2f,%ld,%ld,%.0f,"
	       "%.0f,%.0f,%ld,%ld,%.2f,%.2f\n",
	       p->label, p->mode, r->n, r->f, r->comm_comp, r->s[b],
	       ll7_residual(r, b), r->bound_min, r->bound[b], r->s_lo3,
	       r->s_hi3, r->seq, r->ff, r->fetch, r->s_lo_paper, r->s_hi_paper,
	       r->pct_min[b], r->pct_max[b]);
	printf("# ll7 %s %s n=%ld x%ld: comp %.1f us, fetch-first comm %.1f "
	       "us (comm/comp %.3f); best s=%ld: %s (its bound %.2f%%; "
	       "smallest bound over s %.2f%%)",
	       p->label, p->mode, r->n, r->f, r->seq / 1e3, r->comm / 1e3,
	       r->comm_comp, r->s[b], res, r->bound[b], r->bound_min);
	if (r->s_lo3)
		printf("; <= 3%% for s = %ld..%ld", r->s_lo3, r->s_hi3);
	else
		printf("; never <= 3%%");
	if (r->s_lo_paper)
		printf("; <= %.1f%% (the paper's optimum) for s = %ld..%ld\n",
		       LL7_PAPER_BEST_PCT, r->s_lo_paper, r->s_hi_paper);
	else
		printf("; never <= %.1f%% (the paper's optimum)\n",
		       LL7_PAPER_BEST_PCT);
	if (r->f != 1)
		return;
	char sfx[80];
	if (!strcmp(p->mode, "dual"))
		snprintf(sfx, sizeof(sfx), "%s", p->label);
	else
		snprintf(sfx, sizeof(sfx), "%s_%s", p->label, p->mode);
	char name[160];
	if (r->n == 1000000) {
		ll7_residual_metrics("ll7_residual_pct", sfx, r, b);
		snprintf(name, sizeof(name), "ll7_best_s.%s", sfx);
		printf("METRIC %s %ld iterations\n", name, r->s[b]);
		snprintf(name, sizeof(name), "ll7_comm_comp.%s", sfx);
		printf("METRIC %s %.4f ratio\n", name, r->comm_comp);
	} else if (r->n == 9900) {
		ll7_residual_metrics("ll7_residual_pct_n9900", sfx, r, b);
		snprintf(name, sizeof(name), "ll7_bound_pct_n9900.%s", sfx);
		printf("METRIC %s %.3f %%\n", name, r->bound[b]);
		snprintf(name, sizeof(name), "ll7_best_s_n9900.%s", sfx);
		printf("METRIC %s %ld iterations\n", name, r->s[b]);
	}
	fflush(stdout);
}
