/* SPDX-License-Identifier: MIT */
/*
 * kernel.c - LFK kernel 7, its data and checksum (kernel.h). Build with
 * -ffp-contract=off: a fused multiply-add changes the last digits.
 */
#include "kernel.h"

#include <stdlib.h>
#include <string.h>

/* LFK SUBROUTINE SIGNEL: the standard pseudo-data, values near 0.09999. */
static void signel(double *v, long n)
{
	double fuzz = 1.2345e-3, buzz = 1.0 + fuzz, fizz = 1.1 * fuzz;
	double scaled = 1.0 / 10.0;
	for (long k = 0; k < n; k++) {
		buzz = (1.0 - fuzz) * buzz + fuzz;
		fuzz = -fuzz;
		v[k] = (buzz - fizz) * scaled;
	}
}

int ll7_alloc(struct ll7_data *d, long n)
{
	memset(d, 0, sizeof(*d));
	if (n < 1)
		return -1;
	d->n = n;
	d->u = malloc((size_t)(n + 6) * sizeof(double));
	d->y = malloc((size_t)n * sizeof(double));
	d->z = malloc((size_t)n * sizeof(double));
	d->x = calloc((size_t)n, sizeof(double));
	double spacer[39];
	if (!d->u || !d->y || !d->z || !d->x) {
		ll7_free(d);
		return -1;
	}
	signel(spacer, 39);
	d->q = spacer[27]; /* Q = SPACER(28) */
	d->r = spacer[29]; /* R = SPACER(30) */
	d->t = spacer[35]; /* T = SPACER(36) */
	if (n <= LL7_COMMON_MAX) {
		double *s = malloc(19977 * sizeof(double));
		if (!s) {
			ll7_free(d);
			return -1;
		}
		signel(s, 19977);
		memcpy(d->u, s, (size_t)(n + 6) * sizeof(double));
		memcpy(d->y, s + 4004, (size_t)n * sizeof(double));
		memcpy(d->z, s + 5005, (size_t)n * sizeof(double));
		free(s);
	} else {
		signel(d->u, n + 6);
		signel(d->y, n);
		signel(d->z, n);
	}
	return 0;
}

void ll7_free(struct ll7_data *d)
{
	free(d->u);
	free(d->y);
	free(d->z);
	free(d->x);
	memset(d, 0, sizeof(*d));
}

void ll7_kernel(const struct ll7_data *d, double *x, const double *y, long k0,
		long k1)
{
	const double q = d->q, r = d->r, t = d->t;
	const double *u = d->u, *z = d->z;
	for (long k = k0; k < k1; k++)
		x[k] = u[k] + r * (z[k] + r * y[k]) +
		       t * (u[k + 3] + r * (u[k + 2] + r * u[k + 1]) +
			    t * (u[k + 6] + q * (u[k + 5] + q * u[k + 4])));
}

double ll7_checksum(const double *x, long n)
{
	double s = 0;
	for (long k = 0; k < n; k++)
		s += (double)(k + 1) * x[k];
	return s;
}
