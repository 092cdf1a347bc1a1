/* SPDX-License-Identifier: MIT */
/*
 * earth_remote.c - the EARTH side of the remote-access comparison in
 * compare.sh, on 2 nodes (under earthrun): node 0 reads a word on node 1
 * with GET_SYNC, one at a time (the round trip MPI_Get + flush does), and
 * starts a function on node 1 that sends a word back with DATA_RSYNC, one
 * at a time (the round trip of an MPI ping-pong). Prints the median time
 * per round trip over REPS runs of K each.
 *
 *   earthrun -n 2 earth_remote K REPS
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

static long word = 42;
static int k_ops, reps;
static double t_get[64], t_inv[64];
static int bad;

struct pong_args {
	long v;
	earth_gptr back;
	earth_gslot done;
};
static void pong_entry(void *f)
{
	struct pong_args *a = f;
	earth_data_rsync_l(a->v + 1, a->back, a->done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(pong_tf, pong_entry, struct pong_args,
			sizeof(struct pong_args));

struct main_frame {
	int rep, i, phase;
	long got;
	uint64_t t0;
	earth_slot s;
};
static void next(void *frame);
static void issue(struct main_frame *m)
{
	if (m->phase == 0) {
		earth_get_sync_l(earth_gptr_make(1, &word), &m->got, &m->s);
	} else {
		struct pong_args a = {m->i, earth_to_global(&m->got),
				      earth_slot_global(&m->s)};
		earth_invoke(1, &pong_tf, &a, sizeof(a));
	}
}
static void next(void *frame)
{
	struct main_frame *m = frame;
	if (m->i > 0 && m->got != (m->phase ? m->i + 1 : 42))
		bad++;
	if (m->i++ < k_ops) {
		issue(m);
		return;
	}
	double per = bench_ns((double)(q_tsc_ordered() - m->t0)) / k_ops;
	(m->phase ? t_inv : t_get)[m->rep] = per;
	if (++m->phase == 2) {
		m->phase = 0;
		if (++m->rep == reps)
			EARTH_END_FUNCTION(m);
	}
	m->i = 0;
	m->t0 = q_tsc_ordered();
	next(m);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->rep = m->i = m->phase = 0;
	earth_slot_init(&m->s, 1, 1, next, m);
	m->t0 = q_tsc_ordered();
	next(m);
}
EARTH_THREADED_FUNCTION(remote_main, main_entry, struct main_frame, 0);

int main(int argc, char **argv)
{
	struct earth_options o;
	earth_options_default(&o);
	if (earth_options_parse(&o, &argc, argv))
		return EARTH_EXIT_USAGE;
	k_ops = argc > 1 ? atoi(argv[1]) : 0;
	reps = argc > 2 ? atoi(argv[2]) : 0;
	if (argc != 3 || k_ops < 1 || reps < 1 || reps > 64) {
		fprintf(stderr, "usage: earthrun -n 2 earth_remote K REPS "
				"(K >= 1, REPS 1..64)\n");
		return 2;
	}
	int st = earth_run(&o, &remote_main, NULL, 0);
	if (st || bench_node_id() > 0)
		return st;
	if (bad) {
		printf("earth remote: %d WRONG values\n", bad);
		return 1;
	}
	printf("earth get_sync rtt median %.0f ns\n",
	       bench_median(t_get, reps));
	printf("earth invoke rtt median %.0f ns\n", bench_median(t_inv, reps));
	return 0;
}
