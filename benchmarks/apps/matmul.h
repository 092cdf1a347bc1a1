/* SPDX-License-Identifier: MIT */
/*
 * matmul.h - matrix multiplication C = A B (Distributed Filaments), shared
 * by matmul.tc and matmul_seq.c, with A_ij = i + j and B_ij = i - j
 * (0-based): then C_ij = S2 + S1 (i - j) - n i j, S1 = n(n-1)/2,
 * S2 = (n-1)n(2n-1)/6, and every value is an integer that double holds
 * exactly, so each element is checked against the formula.
 */
#ifndef APPS_MATMUL_H
#define APPS_MATMUL_H

#include "apps.h"

#define MM_NMAX 1024

typedef double mm_mat[MM_NMAX][MM_NMAX];

static inline void mm_init(int n, mm_mat a, mm_mat b)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			a[i][j] = i + j;
			b[i][j] = i - j;
		}
}

/* Rows lo..hi-1 of C = A B, i-k-j order. */
static inline void mm_rows(int n, int lo, int hi, mm_mat a, mm_mat b, mm_mat c)
{
	for (int i = lo; i < hi; i++) {
		for (int j = 0; j < n; j++)
			c[i][j] = 0;
		for (int k = 0; k < n; k++) {
			double aik = a[i][k];
			for (int j = 0; j < n; j++)
				c[i][j] += aik * b[k][j];
		}
	}
}

/* Prints the answer (the sum and the corners) and checks every element
 * against the formula; returns the exit status. */
static inline int mm_report(int n, mm_mat c, double ms)
{
	double s1 = (double)n * (n - 1) / 2,
	       s2 = (double)(n - 1) * n * (2 * n - 1) / 6;
	double sum = 0;
	int ok = 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			sum += c[i][j];
			if (c[i][j] != s2 + s1 * (i - j) - (double)n * i * j)
				ok = 0;
		}
	double want = (double)n * n * s2 - n * s1 * s1;
	apps_answer("matmul(%d): sum %.0f, C00 %.0f, C(n-1,0) %.0f, "
		    "C(0,n-1) %.0f, C(n-1,n-1) %.0f",
		    n, sum, c[0][0], c[n - 1][0], c[0][n - 1], c[n - 1][n - 1]);
	return apps_verdict(ms, ok && sum == want,
			    "every element and the sum equal the closed form");
}

#endif /* APPS_MATMUL_H */
