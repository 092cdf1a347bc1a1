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
 *   computes its own rows of C; its P workers split the K rows of B,
 *   worker j taking rows [jK/P, (j+1)K/P) (hm_rows_of: each row of B read
 *   by one worker of each node, every other one remote), and sums A[i][k]
 *   B[k][.] over them into a partial C of its own (all W columns of the
 *   node's rows); then the node's last worker adds the partials into C.
 *   The values are small integers: every sum is exact whatever the order,
 *   so the checksum is the same for every P.
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

/* matmul: worker j of p takes rows [*k0, *k1) of B's kk (none when
 * p > kk leaves it none) */
static inline void hm_rows_of(long j, long p, long kk, long *k0, long *k1)
{
	*k0 = j * kk / p;
	*k1 = (j + 1) * kk / p;
}

/* matmul: acc[i / 2][0..w) += A[i][k] B[k][0..w) for the rows i of node h
 * (= at the worker's first row: no zeroing; a worker sums into memory of
 * its own, and the node's last worker adds every partial into C once) */
static inline void hm_update(const double *a, const double *b, double *acc,
			     long m, long w, long h, long k, int first)
{
	const double *brow = b + k * w;
	for (long i = h; i < m; i += 2) {
		double aik = a[i * w + k];
		double *row = acc + (i / 2) * w;
		if (first)
			for (long col = 0; col < w; col++)
				row[col] = aik * brow[col];
		else
			for (long col = 0; col < w; col++)
				row[col] += aik * brow[col];
	}
}

/* matmul: row i of C (dst, w doubles) = the sum of the partials acc[0..p)
 * of the workers that have rows of B, in worker order */
static inline void hm_reduce(double *dst, double *const *acc, long p, long kk,
			     long w, long i)
{
	int any = 0;
	for (long jj = 0; jj < p; jj++) {
		long k0, k1;
		hm_rows_of(jj, p, kk, &k0, &k1);
		if (k0 == k1)
			continue;
		const double *src = acc[jj] + (i / 2) * w;
		if (!any)
			for (long col = 0; col < w; col++)
				dst[col] = src[col];
		else
			for (long col = 0; col < w; col++)
				dst[col] += src[col];
		any = 1;
	}
	if (!any)
		for (long col = 0; col < w; col++)
			dst[col] = 0;
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
