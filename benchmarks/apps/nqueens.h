/* SPDX-License-Identifier: MIT */
/*
 * nqueens.h - N-Queens, shared by nqueens.tc and nqueens_seq.c: the
 * bitmask backtracking kernel and the known counts (OEIS A000170).
 */
#ifndef APPS_NQUEENS_H
#define APPS_NQUEENS_H

#include "apps.h"

#define NQ_MAX 16

/* A000170: placements of n non-attacking queens, n = 0..16. */
static const long nq_known[NQ_MAX + 1] = {
    1,	 1,   0,    0,	   2,	  10,	  4,	   40,	    92,
    352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

/* Completions of a board whose filled rows leave columns `cols` and
 * diagonals d1 (moving left) and d2 (moving right) attacked. */
static inline long nq_solve(unsigned all, unsigned cols, unsigned d1,
			    unsigned d2)
{
	if (cols == all)
		return 1;
	long count = 0;
	for (unsigned avail = all & ~(cols | d1 | d2); avail;
	     avail &= avail - 1) {
		unsigned bit = avail & -avail;
		count +=
		    nq_solve(all, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
	}
	return count;
}

#endif /* APPS_NQUEENS_H */
