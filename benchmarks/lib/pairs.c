/* SPDX-License-Identifier: MIT */
/*
 * pairs.c - pair statistics (see pairs.h).
 */
#include "pairs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench.h"

void bench_paired_init(struct bench_paired *p, const char *who,
		       const char *name, const char *floor, const char *ratio,
		       const char *unit)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->floor, sizeof(p->floor), "%s", floor);
	snprintf(p->ratio, sizeof(p->ratio), "%s", ratio);
	p->unit = unit;
	p->who = who;
}

void bench_paired_add(struct bench_paired *p, double v, double floor)
{
	if (v <= 0 || floor <= 0 || p->n == BENCH_PAIRS_MAX)
		return;
	p->v[p->n] = v;
	p->f[p->n] = floor;
	p->r[p->n] = v / floor;
	p->n++;
}

int bench_paired_print(struct bench_paired *p, int print_floor)
{
	if (p->n == 0) {
		printf("# %s: no sample of %s\n", p->who ? p->who : "bench",
		       p->name);
		return 1;
	}
	int ns = !strcmp(p->unit, "ns");
	double v = bench_median(p->v, p->n), f = bench_median(p->f, p->n);
	if (ns)
		bench_metric_ns(p->name, v);
	else
		bench_metric(p->name, v, p->unit);
	if (print_floor && ns)
		bench_metric_ns(p->floor, f);
	else if (print_floor)
		bench_metric(p->floor, f, p->unit);
	bench_metric(p->ratio, bench_median(p->r, p->n), "x");
	return 0;
}

double bench_median_of(const double *v, int n)
{
	if (n <= 0)
		return NAN;
	double *c = malloc((size_t)n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, (size_t)n * sizeof(*c));
	double m = bench_median(c, n);
	free(c);
	return m;
}

double bench_median_spread(double *v, int n, double *lo, double *hi)
{
	if (n <= 0) {
		*lo = *hi = NAN;
		return NAN;
	}
	double m = bench_median(v, n); /* sorts v */
	*lo = v[0];
	*hi = v[n - 1];
	return m;
}

void bench_pair_line(const char *name, double value)
{
	printf("pair %s %.3f\n", name, value);
}

double bench_pair_value(const char *out, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = strstr(out, "pair "); p;
	     p = strstr(p + 1, "pair ")) {
		if (!strncmp(p + 5, name, l) && p[5 + l] == ' ')
			return atof(p + 6 + l);
	}
	return -1;
}
