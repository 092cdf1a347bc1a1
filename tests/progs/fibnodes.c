/* SPDX-License-Identifier: MIT */
/*
 * fibnodes.c - TOKEN load balancing and collectives across nodes: once
 * every node answered an INVOKE (all are up: a node that starts late
 * would find fib done, node 0 runs tokens from its own deque at once),
 * fib(n) with one threaded function per call spread by TOKEN, checked;
 * then every
 * node runs `collect`: a barrier and allreduces over int, long and double
 * with sum, min and max, whose results node 0 checks; each node also
 * reports how many fibers it ran, so the output shows how the work spread.
 *
 *   fibnodes [n]     prints "fibnodes: fib(n)=X correct, collectives
 *                    correct, fibers per node: a b c ..." and exits 0
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

#include "fib_tf.h"

#define MAXN 64

struct collect_args {
	earth_gptr out; /* long[8] on node 0 for this node */
	earth_gslot done;
};
struct collect_frame {
	struct collect_args a;
	int ri;
	long rl, rl2;
	double rd;
	long res[8];
	int stage;
	earth_slot s;
};
static void collect_entry(void *f);
static void collect_step(void *f);
EARTH_THREADED_FUNCTION(collect, collect_entry, struct collect_frame,
			sizeof(struct collect_args));

static void collect_entry(void *frame)
{
	struct collect_frame *f = frame;
	f->stage = 0;
	earth_slot_init(&f->s, 1, 1, collect_step, f);
	earth_barrier(&f->s);
}

/* Stages: barrier done -> sum of ids -> min -> max(double) -> send. */
static void collect_step(void *frame)
{
	struct collect_frame *f = frame;
	long id = earth_node_id();
	switch (f->stage++) {
	case 0:
		earth_allreduce_l(id + 1, EARTH_SUM, &f->rl, &f->s);
		return;
	case 1:
		earth_allreduce_i(100 - (int)id, EARTH_MIN, &f->ri, &f->s);
		return;
	case 2:
		earth_allreduce_d(0.5 * (double)id, EARTH_MAX, &f->rd, &f->s);
		return;
	case 3: {
		struct earth_stats st;
		earth_stats_get(&st);
		earth_allreduce_l((long)st.fibers_run, EARTH_SUM, &f->rl2,
				  &f->s);
		return;
	}
	default: {
		struct earth_stats st;
		earth_stats_get(&st);
		f->res[0] = f->rl;
		f->res[1] = f->ri;
		f->res[2] = (long)(f->rd * 2);
		f->res[3] = (long)st.fibers_run;
		f->res[4] = f->rl2;
		earth_blkmov_rsync(earth_to_global(f->res), f->a.out,
				   5 * sizeof(long), f->a.done);
		/* The frame is the source of the move: end only after it is
		 * done, which main confirms by ending the job. */
		return;
	}
	}
}

/* Answers node 0's roll call. */
static void hello_entry(void *f)
{
	earth_rsync(*(earth_gslot *)f);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(hello, hello_entry, earth_gslot, sizeof(earth_gslot));

struct main_frame {
	struct earth_main_args a;
	int n, fib;
	earth_slot up, fib_done, all;
	long out[MAXN][8];
};
static void main_entry(void *f);
static void main_up(void *f);
static void main_fib(void *f);
static void main_all(void *f);
EARTH_THREADED_FUNCTION(fn_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static int fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->n = m->a.argc > 1 ? atoi(m->a.argv[1]) : 22;
	if (earth_num_nodes() > MAXN || m->n < 0 || m->n > 35) {
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	uint32_t nn = earth_num_nodes();
	if (nn == 1) {
		main_up(m);
		return;
	}
	earth_slot_init(&m->up, (int32_t)nn - 1, 0, main_up, m);
	earth_gslot up = earth_slot_global(&m->up);
	for (uint32_t k = 1; k < nn; k++)
		earth_invoke(k, &hello, &up, sizeof(up));
}

static void main_up(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->fib_done, 1, 0, main_fib, m);
	fib_tf_start(m->n, &m->fib, &m->fib_done);
}

static void main_fib(void *frame)
{
	struct main_frame *m = frame;
	uint32_t nn = earth_num_nodes();
	earth_slot_init(&m->all, (int32_t)nn, 0, main_all, m);
	for (uint32_t k = 0; k < nn; k++) {
		struct collect_args ca = {earth_to_global(m->out[k]),
					  earth_slot_global(&m->all)};
		earth_invoke(k, &collect, &ca, sizeof(ca));
	}
}

static void main_all(void *frame)
{
	struct main_frame *m = frame;
	long nn = earth_num_nodes();
	int bad = m->fib != fib_seq(m->n);
	long total = 0;
	for (long k = 0; k < nn; k++) {
		long *o = m->out[k];
		if (o[0] != nn * (nn + 1) / 2 || o[1] != 100 - (nn - 1) ||
		    o[2] != nn - 1) {
			fprintf(stderr,
				"fibnodes: node %ld got sum %ld min %ld "
				"max*2 %ld\n",
				k, o[0], o[1], o[2]);
			bad = 1;
		}
		if (o[4] != m->out[0][4]) {
			fprintf(stderr,
				"fibnodes: node %ld got fiber total "
				"%ld, node 0 %ld\n",
				k, o[4], m->out[0][4]);
			bad = 1;
		}
		total += o[3];
	}
	printf("fibnodes: fib(%d)=%d %s, collectives %s, fibers per node:",
	       m->n, m->fib, m->fib == fib_seq(m->n) ? "correct" : "WRONG",
	       bad ? "WRONG" : "correct");
	for (long k = 0; k < nn; k++)
		printf(" %ld", m->out[k][3]);
	printf("\n");
	(void)total;
	earth_set_exit_status(bad);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &fn_main);
}
