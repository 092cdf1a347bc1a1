/* SPDX-License-Identifier: MIT */
/*
 * tomcatv.h - the Tomcatv mesh generation kernel (SPEC CFP92/95
 * 013/101.tomcatv, Thompson solver), shared by tomcatv.tc and
 * tomcatv_seq.c. Arrays are [i][j] with the Fortran I first: the
 * tridiagonal solves run along j, independently for each i, so a block of
 * rows i in [lo, hi) is computed exactly as the whole grid is; the
 * residual maxima are maxima, exact in any order. Hence the residual
 * history of the parallel run equals the sequential one bit for bit.
 *
 * The start grid (no reference grid is public): a square of side n - 1
 * (mesh spacing about 1, as in the SPEC input) with a bump on the lower
 * side, transfinite interpolation inside, plus a smooth interior
 * perturbation for the solver to remove.
 */
#ifndef APPS_TOMCATV_H
#define APPS_TOMCATV_H

#include "apps.h"

#include <math.h>
#include <string.h>

#define TV_NMAX 513
#define TV_ITMAX 1000
#define TV_REL (2.0 / 0.98)
#define TV_EPS 0.5e-8

typedef double tv_grid[TV_NMAX][TV_NMAX];

/* The start grid, n x n, into x and y. */
static inline void tv_init(int n, tv_grid x, tv_grid y)
{
	const double pi = 3.14159265358979323846, side = n - 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = (double)i / (n - 1), u = (double)j / (n - 1);
			double bump = 0.1 * sin(pi * s);
			x[i][j] = s;
			y[i][j] = (1 - u) * bump + u;
			if (i > 0 && i < n - 1 && j > 0 && j < n - 1) {
				double p = sin(3 * pi * s) * sin(2 * pi * u);
				x[i][j] += 0.02 * p;
				y[i][j] -= 0.015 * p * cos(pi * s);
			}
			x[i][j] *= side;
			y[i][j] *= side;
		}
}

/*
 * Residuals of rows lo..hi-1 (interior columns): reads x, y rows lo-1..hi,
 * writes aa, dd, rx, ry; raises *rxm, *rym to the largest |rx|, |ry|.
 */
static inline void tv_residual(int n, int lo, int hi, tv_grid x, tv_grid y,
			       tv_grid aa, tv_grid dd, tv_grid rx, tv_grid ry,
			       double *rxm, double *rym)
{
	double mx = *rxm, my = *rym;
	for (int i = lo; i < hi; i++)
		for (int j = 1; j < n - 1; j++) {
			double xx = x[i + 1][j] - x[i - 1][j];
			double yx = y[i + 1][j] - y[i - 1][j];
			double xy = x[i][j + 1] - x[i][j - 1];
			double yy = y[i][j + 1] - y[i][j - 1];
			double a = 0.25 * (xy * xy + yy * yy);
			double b = 0.25 * (xx * xx + yx * yx);
			double c = 0.125 * (xx * xy + yx * yy);
			aa[i][j] = -b;
			dd[i][j] = b + b + a * TV_REL;
			double pxx = x[i + 1][j] - 2.0 * x[i][j] + x[i - 1][j];
			double qxx = y[i + 1][j] - 2.0 * y[i][j] + y[i - 1][j];
			double pyy = x[i][j + 1] - 2.0 * x[i][j] + x[i][j - 1];
			double qyy = y[i][j + 1] - 2.0 * y[i][j] + y[i][j - 1];
			double pxy = x[i + 1][j + 1] - x[i + 1][j - 1] -
				     x[i - 1][j + 1] + x[i - 1][j - 1];
			double qxy = y[i + 1][j + 1] - y[i + 1][j - 1] -
				     y[i - 1][j + 1] + y[i - 1][j - 1];
			rx[i][j] = a * pxx + b * pyy - c * pxy;
			ry[i][j] = a * qxx + b * qyy - c * qxy;
			if (fabs(rx[i][j]) > mx)
				mx = fabs(rx[i][j]);
			if (fabs(ry[i][j]) > my)
				my = fabs(ry[i][j]);
		}
	*rxm = mx;
	*rym = my;
}

/* Tridiagonal solves along j for rows lo..hi-1, then x += rx, y += ry. */
static inline void tv_solve(int n, int lo, int hi, tv_grid x, tv_grid y,
			    tv_grid aa, tv_grid dd, tv_grid rx, tv_grid ry)
{
	double d[TV_NMAX];
	for (int i = lo; i < hi; i++) {
		d[1] = 1.0 / dd[i][1];
		for (int j = 2; j < n - 1; j++) {
			double r = aa[i][j] * d[j - 1];
			d[j] = 1.0 / (dd[i][j] - aa[i][j - 1] * r);
			rx[i][j] = rx[i][j] - rx[i][j - 1] * r;
			ry[i][j] = ry[i][j] - ry[i][j - 1] * r;
		}
		rx[i][n - 2] = rx[i][n - 2] * d[n - 2];
		ry[i][n - 2] = ry[i][n - 2] * d[n - 2];
		for (int j = n - 3; j >= 1; j--) {
			rx[i][j] = (rx[i][j] - aa[i][j] * rx[i][j + 1]) * d[j];
			ry[i][j] = (ry[i][j] - aa[i][j] * ry[i][j + 1]) * d[j];
		}
		for (int j = 1; j < n - 1; j++) {
			x[i][j] += rx[i][j];
			y[i][j] += ry[i][j];
		}
	}
}

/*
 * The sequential run: up to itmax iterations from the grid in x, y (the
 * start grid, tv_init), the residual maxima of each into hx[], hy[];
 * returns the iterations done.
 */
static inline int tv_seq(int n, int itmax, tv_grid x, tv_grid y, tv_grid aa,
			 tv_grid dd, tv_grid rx, tv_grid ry, double *hx,
			 double *hy)
{
	for (int it = 0; it < itmax; it++) {
		double mx = 0, my = 0;
		tv_residual(n, 1, n - 1, x, y, aa, dd, rx, ry, &mx, &my);
		hx[it] = mx;
		hy[it] = my;
		tv_solve(n, 1, n - 1, x, y, aa, dd, rx, ry);
		if (mx <= TV_EPS && my <= TV_EPS)
			return it + 1;
	}
	return itmax;
}

/* Prints the answer: iterations, the last maxima, a hash of the history. */
static inline void tv_answer(int n, int iters, const double *hx,
			     const double *hy)
{
	uint64_t h = apps_fnv(APPS_FNV_INIT, hx, iters * sizeof *hx);
	h = apps_fnv(h, hy, iters * sizeof *hy);
	apps_answer("tomcatv(%d): %d iterations, last rxm %.17g rym %.17g, "
		    "history hash %016llx",
		    n, iters, hx[iters - 1], hy[iters - 1],
		    (unsigned long long)h);
}

/* Reads n and itmax from argv[1..2]; 0 or -1. */
static inline int tv_args(int argc, char **argv, int *n, int *itmax)
{
	return apps_arg_int(argc, argv, 1, 129, 4, TV_NMAX, "n", n) ||
		       apps_arg_int(argc, argv, 2, 100, 1, TV_ITMAX, "itmax",
				    itmax)
		   ? -1
		   : 0;
}

#endif /* APPS_TOMCATV_H */
