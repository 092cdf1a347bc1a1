/* SPDX-License-Identifier: MIT */
/*
 * nqueens_tf.c - N-Queens as a threaded function (see nqueens_tf.h).
 */
#include "nqueens_tf.h"

struct nqueens_frame {
	struct nqueens_args a;
	long sum[32];
	int kids;
	earth_slot join;
};
static void nqueens_entry(void *f);
static void nqueens_join(void *f);
EARTH_THREADED_FUNCTION(nqueens_tf, nqueens_entry, struct nqueens_frame,
			sizeof(struct nqueens_args));

/* At a 64-byte boundary, as benchmarks/compare/tbb_tasks.cpp's copy: the
 * comparison then runs one machine code at one alignment on both sides
 * (placed 32 bytes apart they differed by 1-2 %). */
__attribute__((aligned(64))) long nqueens_count(int n, int row, unsigned cols,
						unsigned d1, unsigned d2)
{
	if (row == n)
		return 1;
	long c = 0;
	unsigned all = (1u << n) - 1, free = all & ~(cols | d1 | d2);
	while (free) {
		unsigned bit = free & -free;
		free ^= bit;
		c += nqueens_count(n, row + 1, cols | bit,
				   ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
	}
	return c;
}

static void nqueens_entry(void *frame)
{
	struct nqueens_frame *f = frame;
	struct nqueens_args *a = &f->a;
	if (a->row >= a->depth || a->row == a->n) {
		earth_data_rsync_l(
		    nqueens_count(a->n, a->row, a->cols, a->d1, a->d2),
		    a->result, a->done);
		EARTH_END_FUNCTION(f);
	}
	unsigned all = (1u << a->n) - 1,
		 free = all & ~(a->cols | a->d1 | a->d2);
	f->kids = __builtin_popcount(free);
	if (!f->kids) {
		earth_data_rsync_l(0, a->result, a->done);
		EARTH_END_FUNCTION(f);
	}
	earth_slot_init(&f->join, f->kids, 0, nqueens_join, f);
	for (int k = 0; free; k++) {
		unsigned bit = free & -free;
		free ^= bit;
		struct nqueens_args c = {a->n,
					 a->row + 1,
					 a->depth,
					 a->cols | bit,
					 ((a->d1 | bit) << 1) & all,
					 (a->d2 | bit) >> 1,
					 earth_to_global(&f->sum[k]),
					 earth_slot_global(&f->join)};
		earth_token(&nqueens_tf, &c, sizeof(c));
	}
}

static void nqueens_join(void *frame)
{
	struct nqueens_frame *f = frame;
	long s = 0;
	for (int k = 0; k < f->kids; k++)
		s += f->sum[k];
	earth_data_rsync_l(s, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}
