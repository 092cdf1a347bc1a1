/* SPDX-License-Identifier: MIT */
/*
 * exptree.h - a binary expression tree of matrix products (Distributed
 * Filaments: 70 x 70 matrices, height 7), shared by exptree.tc and
 * exptree_seq.c. Leaf k (of 2^h, left to right) is a scaled permutation
 * matrix s_k P_k: row i holds s_k = 2^(k mod 3 - 1) in column
 * sigma_k(i) = (a_k i + b_k) mod n, gcd(a_k, n) = 1. An inner node is the
 * product (left right), computed with the plain i-k-j loop. The root is
 * then the scaled permutation of the composed sigmas, every value a power
 * of two (exact): it is checked entry by entry in O(n^2) without a
 * product.
 */
#ifndef APPS_EXPTREE_H
#define APPS_EXPTREE_H

#include "apps.h"

#include <string.h>

#define ET_NMAX 96
#define ET_HMAX 10

/* sigma_k's multiplier and offset for an n x n leaf k. */
static inline void et_perm(int n, int k, int *a, int *b)
{
	int m = (k * 37 + 1) % n;
	for (;; m = (m + 1) % n) {
		int x = m, y = n;
		while (y) {
			int t = x % y;
			x = y;
			y = t;
		}
		if (x == 1)
			break;
	}
	*a = m;
	*b = (k * 13 + 5) % n;
}

static inline double et_scale(int k)
{
	return k % 3 == 0 ? 0.5 : k % 3 == 1 ? 1.0 : 2.0;
}

/* Leaf k into m (n x n, row-major). */
static inline void et_leaf(int n, int k, double *m)
{
	int a, b;
	et_perm(n, k, &a, &b);
	memset(m, 0, sizeof(double) * n * n);
	for (int i = 0; i < n; i++)
		m[i * n + (a * i + b) % n] = et_scale(k);
}

/* p = l r, n x n row-major, i-k-j order. */
static inline void et_mul(int n, const double *l, const double *r, double *p)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++)
			p[i * n + j] = 0;
		for (int k = 0; k < n; k++) {
			double lik = l[i * n + k];
			for (int j = 0; j < n; j++)
				p[i * n + j] += lik * r[k * n + j];
		}
	}
}

/* Prints the answer (a hash of the root's bytes) and checks the root
 * against the composed permutation and scale; returns the exit status. */
static inline int et_report(int n, int h, const double *root, double ms)
{
	int pi[ET_NMAX];
	double s = 1;
	for (int i = 0; i < n; i++)
		pi[i] = i;
	for (int k = 0; k < 1 << h; k++) {
		int a, b;
		et_perm(n, k, &a, &b);
		for (int i = 0; i < n; i++)
			pi[i] = (a * pi[i] + b) % n;
		s *= et_scale(k);
	}
	int ok = 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (root[i * n + j] != (j == pi[i] ? s : 0.0))
				ok = 0;
	apps_answer("exptree(%d, height %d): root scale %g, hash %016llx", n, h,
		    s,
		    (unsigned long long)apps_fnv(APPS_FNV_INIT, root,
						 sizeof(double) * n * n));
	return apps_verdict(ms, ok,
			    "root equals the composed scaled permutation");
}

/* Reads n and h from argv[1..2]; 0 or -1. */
static inline int et_args(int argc, char **argv, int *n, int *h)
{
	return apps_arg_int(argc, argv, 1, 70, 1, ET_NMAX, "n", n) ||
		       apps_arg_int(argc, argv, 2, 7, 0, ET_HMAX, "height", h)
		   ? -1
		   : 0;
}

#endif /* APPS_EXPTREE_H */
