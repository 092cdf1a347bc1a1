/* SPDX-License-Identifier: MIT */
/*
 * jacobi.h - the 1-D Jacobi that dsm_ops runs on shared memory across two
 * nodes (prog.c) and with two pthreads on one host (driver.c): JAC_N
 * doubles, the two ends fixed, JAC_SWEEPS sweeps of a three-point average
 * from one array into the other, each thread a half. Both sides compute
 * every element with the same operations, so their results are equal bit
 * for bit.
 */
#ifndef EARTH_BENCH_DSM_JACOBI_H
#define EARTH_BENCH_DSM_JACOBI_H

#define JAC_N 20000L
#define JAC_HALF (JAC_N / 2)
#define JAC_SWEEPS 20

static inline double jac_init(long i)
{
	return (double)((i * 37) % 101) / 100.0;
}

static inline double jac_step(double l, double c, double r)
{
	return (l + c + r) * (1.0 / 3.0);
}

/* One sweep of a half: s and d its n elements, left and right the values
 * beside it (not read at the array's ends, which stay fixed). Both sides
 * run this loop, so they compute alike and only the memory differs. */
static inline void jac_sweep(const double *restrict s, double *restrict d,
			     long n, double left, double right, int first,
			     int last)
{
	if (!first)
		d[0] = jac_step(left, s[0], s[1]);
	for (long i = 1; i < n - 1; i++)
		d[i] = jac_step(s[i - 1], s[i], s[i + 1]);
	if (!last)
		d[n - 1] = jac_step(s[n - 2], s[n - 1], right);
}

#endif /* EARTH_BENCH_DSM_JACOBI_H */
