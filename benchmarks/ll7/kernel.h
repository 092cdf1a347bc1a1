/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - Livermore Fortran Kernel 7 ("equation of state fragment"),
 * its standard data (LFK SIGNEL/SUPPLY) and checksum (LFK SUMO,
 * sum of k * x(k), k from 1). kernel.c is compiled with -ffp-contract=off so
 * that every version of the loop gives the same bits as the sequential one.
 * Any thread; no state.
 */
#ifndef EARTH_LL7_KERNEL_H
#define EARTH_LL7_KERNEL_H

#include <stddef.h>

/* Longest span of the LFK COMMON layout (U is 1001 words, U needs n+6). */
#define LL7_COMMON_MAX 995

struct ll7_data {
	long n;
	double q, r, t;
	double *u;	   /* n + 6 */
	double *y, *z, *x; /* n each */
};

/*
 * Allocates and fills the inputs for n iterations: for n <= 995 the LFK
 * COMMON layout (one SIGNEL stream over /SPACE1/: U, Y, Z at words 0,
 * 4004, 5005), for larger n a fresh SIGNEL stream per array (U with n+6
 * words); q, r, t from SIGNEL over the 39-word scalar block. x is zeroed.
 * Returns 0, or -1 (n < 1 or out of memory). Free with ll7_free.
 */
int ll7_alloc(struct ll7_data *d, long n);
void ll7_free(struct ll7_data *d);

/* x[k] for k in [k0, k1) from u, the given y and z (y may be a copy). */
void ll7_kernel(const struct ll7_data *d, double *x, const double *y, long k0,
		long k1);

/* LFK checksum of x[0..n): sum of (k+1)*x[k], in order. */
double ll7_checksum(const double *x, long n);

#endif /* EARTH_LL7_KERNEL_H */
