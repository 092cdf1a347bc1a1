/* SPDX-License-Identifier: MIT */
/*
 * su_capacity.c - how many remote requests one SU serves per second, fed
 * by every EU of its node (smp.sh, `su_capacity.k<k>`). On 2 nodes (under
 * earthrun): node 0 starts W workers as TOKENs (they spread over its EUs,
 * and idle nodes may take some); each worker reads a word of the other
 * node with GET_SYNC, one at a time, C times, checks every value and
 * signals node 0's main with RSYNC. With W well above the EUs' count many
 * requests are always out, so the rate is what the SUs keep up with.
 * Prints the median over REPS runs of W * C / wall time.
 *
 *   earthrun -n 2 su_capacity W C REPS
 */
#include <earth.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* The word every worker reads on the other node: each node holds its own
 * id plus a constant, so a value read from the wrong node shows. */
static long word;
static int workers, count, reps;
static double rate[64];
static _Atomic int bad;

struct worker_args {
	int32_t left;
	earth_gslot done;
};
struct worker_frame {
	struct worker_args a;
	long got;
	earth_slot s;
};
static void worker_next(void *frame);
static void worker_entry(void *frame)
{
	struct worker_frame *f = frame;
	earth_slot_init(&f->s, 1, 1, worker_next, f);
	f->got = 1000 + (long)(earth_node_id() + 1) % earth_num_nodes();
	worker_next(f);
}
EARTH_THREADED_FUNCTION(worker_tf, worker_entry, struct worker_frame,
			sizeof(struct worker_args));

static void worker_next(void *frame)
{
	struct worker_frame *f = frame;
	uint32_t other = (earth_node_id() + 1) % earth_num_nodes();
	if (f->got != 1000 + (long)other)
		atomic_fetch_add(&bad, 1);
	if (f->a.left-- == 0) {
		earth_rsync(f->a.done);
		EARTH_END_FUNCTION(f);
	}
	earth_get_sync_l(earth_gptr_make(other, &word), &f->got, &f->s);
}

struct main_frame {
	int rep;
	uint64_t t0;
	earth_slot done;
};
static void start(struct main_frame *m)
{
	struct worker_args a = {count, earth_slot_global(&m->done)};
	m->t0 = q_tsc_ordered();
	for (int i = 0; i < workers; i++)
		earth_token(&worker_tf, &a, sizeof(a));
}
static void main_done(void *frame)
{
	struct main_frame *m = frame;
	double ns = bench_ns((double)(q_tsc_ordered() - m->t0));
	rate[m->rep] = (double)workers * count / ns * 1e9;
	if (++m->rep == reps)
		EARTH_END_FUNCTION(m);
	start(m);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->rep = 0;
	earth_slot_init(&m->done, workers, workers, main_done, m);
	start(m);
}
EARTH_THREADED_FUNCTION(capacity_main, main_entry, struct main_frame, 0);

int main(int argc, char **argv)
{
	struct earth_options o;
	earth_options_default(&o);
	if (earth_options_parse(&o, &argc, argv))
		return EARTH_EXIT_USAGE;
	workers = argc > 1 ? atoi(argv[1]) : 0;
	count = argc > 2 ? atoi(argv[2]) : 0;
	reps = argc > 3 ? atoi(argv[3]) : 0;
	if (argc != 4 || workers < 1 || workers > 100000 || count < 1 ||
	    reps < 1 || reps > 64) {
		fprintf(
		    stderr,
		    "usage: earthrun -n 2 su_capacity W C REPS (W 1..100000 "
		    "workers, C >= 1 reads each, REPS 1..64)\n");
		return 2;
	}
	int id = bench_node_id();
	word = 1000 + (long)(id > 0 ? id : 0);
	int st = earth_run(&o, &capacity_main, NULL, 0);
	if (st || bench_node_id() > 0)
		return st;
	if (bad) {
		printf("su_capacity: %d WRONG values\n", bad);
		return 1;
	}
	printf("su_capacity workers=%d reads=%d: median %.0f requests/s\n",
	       workers, count, bench_median(rate, reps));
	return 0;
}
