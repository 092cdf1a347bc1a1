/* SPDX-License-Identifier: MIT */
/*
 * pfold.h - protein folding as in the Cilk pfold benchmark, shared by
 * pfold.tc and pfold_seq.c: count the Hamiltonian paths of an x*y*z grid
 * graph (compact conformations of a chain of x*y*z monomers on the cubic
 * lattice) by backtracking. Paths are directed: every start and end, each
 * undirected path counted twice.
 */
#ifndef APPS_PFOLD_H
#define APPS_PFOLD_H

#include "apps.h"

#include <stdint.h>

#define PF_MAX_V 64 /* vertices: the visited set is one 64-bit word */
#define PF_MAX_SIDE 16

/* This node's grid (built by pf_build). */
static struct {
	int x, y, z, v;
	int deg[PF_MAX_V];
	int nb[PF_MAX_V][6];
} pf;

/* Builds the neighbour lists of the x*y*z grid (does nothing if built). */
static inline void pf_build(int x, int y, int z)
{
	if (pf.x == x && pf.y == y && pf.z == z)
		return;
	pf.x = x, pf.y = y, pf.z = z, pf.v = x * y * z;
	for (int k = 0; k < z; k++)
		for (int j = 0; j < y; j++)
			for (int i = 0; i < x; i++) {
				int u = (k * y + j) * x + i, d = 0;
				if (i > 0)
					pf.nb[u][d++] = u - 1;
				if (i < x - 1)
					pf.nb[u][d++] = u + 1;
				if (j > 0)
					pf.nb[u][d++] = u - x;
				if (j < y - 1)
					pf.nb[u][d++] = u + x;
				if (k > 0)
					pf.nb[u][d++] = u - x * y;
				if (k < z - 1)
					pf.nb[u][d++] = u + x * y;
				pf.deg[u] = d;
			}
}

/* Paths that continue a path ending at u, having visited `seen`, with
 * `left` vertices still to visit. */
static inline long pf_count(int u, uint64_t seen, int left)
{
	if (left == 0)
		return 1;
	long n = 0;
	for (int d = 0; d < pf.deg[u]; d++) {
		int w = pf.nb[u][d];
		if (!(seen >> w & 1))
			n += pf_count(w, seen | 1ull << w, left - 1);
	}
	return n;
}

/* Known directed counts (research notes, recomputed): 0 if not known.
 * The dimensions in any order. */
static inline long pf_known(int x, int y, int z)
{
	int s[3] = {x, y, z};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2 - i; j++)
			if (s[j] > s[j + 1]) {
				int t = s[j];
				s[j] = s[j + 1];
				s[j + 1] = t;
			}
	static const struct {
		int a, b, c;
		long n;
	} k[] = {{1, 1, 1, 1},
		 {2, 2, 2, 144},
		 {2, 2, 3, 1168},
		 {2, 2, 4, 8032},
		 {2, 3, 3, 33760}};
	for (unsigned i = 0; i < sizeof k / sizeof k[0]; i++)
		if (k[i].a == s[0] && k[i].b == s[1] && k[i].c == s[2])
			return k[i].n;
	return 0;
}

/* Reads x y z from argv[1..3] (default 2 3 3), checked; 0 or -1. */
static inline int pf_args(int argc, char **argv, int *x, int *y, int *z)
{
	if (apps_arg_int(argc, argv, 1, 2, 1, PF_MAX_SIDE, "x", x) ||
	    apps_arg_int(argc, argv, 2, 3, 1, PF_MAX_SIDE, "y", y) ||
	    apps_arg_int(argc, argv, 3, 3, 1, PF_MAX_SIDE, "z", z))
		return -1;
	if (*x * *y * *z > PF_MAX_V) {
		fprintf(stderr, "%s: grid %dx%dx%d has more than %d vertices\n",
			argv[0], *x, *y, *z, PF_MAX_V);
		return -1;
	}
	return 0;
}

#endif /* APPS_PFOLD_H */
