/* SPDX-License-Identifier: MIT */
/*
 * nqueens_tf.h - N-Queens as a threaded function: one invocation per board
 * prefix down to `depth` rows, each child a TOKEN joined on a slot, the
 * rows below counted sequentially, the count sent to the parent with
 * DATA_RSYNC. Used by the multi-node tests, remote_ops (balancing) and the
 * TBB comparison.
 *
 *   THREADED nqueens(int n, int row, int depth, unsigned cols, d1, d2,
 *                    long *GLOBAL result, SPTR done)
 */
#ifndef EARTH_EXAMPLES_NQUEENS_TF_H
#define EARTH_EXAMPLES_NQUEENS_TF_H

#include <earth.h>

struct nqueens_args {
	int n, row, depth;
	unsigned cols, d1, d2; /* columns and diagonals taken so far */
	earth_gptr result;     /* long on the caller's node */
	earth_gslot done;      /* signalled once *result is written */
};

extern const struct earth_tfunc nqueens_tf;

/* Solutions that complete a board prefix, counted sequentially. Any
 * thread. */
long nqueens_count(int n, int row, unsigned cols, unsigned d1, unsigned d2);

/* Starts the count of n-queens solutions (n <= 32) with one threaded
 * function per prefix down to `depth` rows: TOKEN(nqueens, ...). EU only. */
static inline void nqueens_tf_start(int n, int depth, long *result,
				    earth_slot *done)
{
	struct nqueens_args a = {n,
				 0,
				 depth,
				 0,
				 0,
				 0,
				 earth_to_global(result),
				 earth_slot_global(done)};
	earth_token(&nqueens_tf, &a, sizeof(a));
}

#endif /* EARTH_EXAMPLES_NQUEENS_TF_H */
