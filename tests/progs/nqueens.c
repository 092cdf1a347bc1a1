/* SPDX-License-Identifier: MIT */
/*
 * nqueens.c - N-Queens solutions counted with one threaded function per
 * board prefix down to `depth` rows (TOKEN per child, the rest counted
 * sequentially), spread over the nodes by load balancing; checked against
 * the known counts (OEIS A000170).
 *
 *   nqueens [n] [depth]   prints "nqueens: n=N solutions=S correct"
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724,
			     2680, 14200, 73712, 365596};

struct nq_args {
	int n, row, depth;
	unsigned cols, d1, d2;
	earth_gptr result; /* long on the parent's node */
	earth_gslot done;
};
struct nq_frame {
	struct nq_args a;
	long sum[32];
	int kids;
	earth_slot join;
};
static void nq_entry(void *f);
static void nq_join(void *f);
EARTH_THREADED_FUNCTION(nq, nq_entry, struct nq_frame, sizeof(struct nq_args));

static long count(int n, int row, unsigned cols, unsigned d1, unsigned d2)
{
	if (row == n)
		return 1;
	long c = 0;
	unsigned all = (1u << n) - 1, free = all & ~(cols | d1 | d2);
	while (free) {
		unsigned bit = free & -free;
		free ^= bit;
		c += count(n, row + 1, cols | bit, ((d1 | bit) << 1) & all,
			   (d2 | bit) >> 1);
	}
	return c;
}

static void nq_entry(void *frame)
{
	struct nq_frame *f = frame;
	struct nq_args *a = &f->a;
	if (a->row >= a->depth || a->row == a->n) {
		earth_data_rsync_l(count(a->n, a->row, a->cols, a->d1, a->d2),
				   a->result, a->done);
		EARTH_END_FUNCTION(f);
	}
	unsigned all = (1u << a->n) - 1, free = all & ~(a->cols | a->d1 | a->d2);
	f->kids = __builtin_popcount(free);
	if (!f->kids) {
		earth_data_rsync_l(0, a->result, a->done);
		EARTH_END_FUNCTION(f);
	}
	earth_slot_init(&f->join, f->kids, 0, nq_join, f);
	for (int k = 0; free; k++) {
		unsigned bit = free & -free;
		free ^= bit;
		struct nq_args c = {a->n, a->row + 1, a->depth, a->cols | bit,
				    ((a->d1 | bit) << 1) & all, (a->d2 | bit) >> 1,
				    earth_to_global(&f->sum[k]),
				    earth_slot_global(&f->join)};
		earth_token(&nq, &c, sizeof(c));
	}
}

static void nq_join(void *frame)
{
	struct nq_frame *f = frame;
	long s = 0;
	for (int k = 0; k < f->kids; k++)
		s += f->sum[k];
	earth_data_rsync_l(s, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}

struct main_frame {
	struct earth_main_args a;
	int n;
	long result;
	earth_slot done;
};
static void main_done(void *frame)
{
	struct main_frame *m = frame;
	int ok = m->result == known[m->n];
	printf("nqueens: n=%d solutions=%ld %s\n", m->n, m->result,
	       ok ? "correct" : "WRONG");
	earth_set_exit_status(!ok);
	EARTH_END_FUNCTION(m);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->n = m->a.argc > 1 ? atoi(m->a.argv[1]) : 10;
	int depth = m->a.argc > 2 ? atoi(m->a.argv[2]) : 4;
	if (m->n < 1 || m->n > 14 || depth < 0) {
		fprintf(stderr, "nqueens: n must be 1..14, depth >= 0\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	earth_slot_init(&m->done, 1, 0, main_done, m);
	struct nq_args a = {m->n, 0, depth, 0, 0, 0,
			    earth_to_global(&m->result),
			    earth_slot_global(&m->done)};
	earth_token(&nq, &a, sizeof(a));
}
EARTH_THREADED_FUNCTION(nq_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &nq_main);
}
