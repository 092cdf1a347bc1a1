/* SPDX-License-Identifier: MIT */
/*
 * hide.h - the two computations of the latency-hiding benchmark, shared
 * by the fiber version (hide.tc) and the program-thread version
 * (threads.c) so that both do the same work on the same data layout, page
 * for page. Every array is page-cyclic (EARTH_DSM_CYCLIC by one page):
 * page q on node q mod 2, and each page is written only by its home.
 *
 * jacobi: two arrays of NB pages (W doubles a page), S sweeps of a 3-point
 *   average from one into the other; block b (a page) is written by node
 *   b mod 2, so every block reads its two neighbours from the other node.
 *   The blocks of a node are split among its P workers (fiber chains or
 *   program threads), worker j taking its node's blocks q with
 *   q mod P == j (q the block's index among the node's blocks); after each
 *   sweep every worker of both nodes meets at a barrier.
 * matmul: C = A B, A of M rows of K doubles, B of K rows of W doubles, C
 *   of M rows of W; every row a page of its own (A padded to W). Row i of
 *   A and C and row k of B are homed on node i mod 2 (k mod 2). Node h
 *   computes its own rows of C; its P workers split the W columns, worker
 *   j taking columns [jW/P, (j+1)W/P) and the rows of B in the order
 *   k = (jK/P + t) mod K, t = 0..K-1 (workers start on different rows, so
 *   their misses are different pages), summing into memory of its own;
 *   then it writes its columns of C. The values are small integers:
 *   every sum is exact whatever the order, so the checksum is the same for
 *   every P.
 */
#ifndef TC_DSM_HIDE_H
#define TC_DSM_HIDE_H

enum { HIDE_MAX_REPS = 64, HIDE_MAX_WORKERS = 64 };

/* jacobi: the value of point i of npts at the start */
static inline double hj_init(long i, long npts)
{
	return (i == 0 || i == npts - 1) ? 1000.0 + (double)i : (double)(i % 7);
}

/* jacobi: points [lo, hi) of dst from src (the ends are fixed) */
static inline void hj_block(const double *src, double *dst, long lo, long hi,
			    long npts)
{
	for (long i = lo; i < hi; i++)
		dst[i] =
		    (i == 0 || i == npts - 1)
			? src[i]
			: 0.25 * src[i - 1] + 0.5 * src[i] + 0.25 * src[i + 1];
}

/* jacobi: the node's q-th block is block 2q + node */
static inline long hj_blocks_of(long nb, long node)
{
	return (nb - node + 1) / 2;
}

/* matmul: elements of A and B (small integers: exact sums) */
static inline double hm_a(long i, long k)
{
	return (double)((i * 7 + k * 3) % 11 - 5);
}
static inline double hm_b(long k, long j)
{
	return (double)((k * 5 + j * 13) % 17 - 8);
}

/* matmul: acc[i / 2][0..c1 - c0) += A[i][k] B[k][c0..c1) for the rows i
 * of node h (a worker sums into memory of its own and writes its columns
 * of C once, at the end: C's pages are written once per product) */
static inline void hm_update(const double *a, const double *b, double *acc,
			     long m, long w, long h, long k, long c0, long c1)
{
	for (long i = h; i < m; i += 2) {
		double aik = a[i * w + k];
		double *row = acc + (i / 2) * (c1 - c0) - c0;
		for (long col = c0; col < c1; col++)
			row[col] += aik * b[k * w + col];
	}
}

/* A weighted sum of n doubles: the checksum both versions print */
static inline double hide_sum(const double *v, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += v[i] * (double)(i % 7 + 1);
	return s;
}

#endif /* TC_DSM_HIDE_H */
