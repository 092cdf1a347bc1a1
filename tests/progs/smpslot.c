/* SPDX-License-Identifier: MIT */
/*
 * smpslot.c - one slot of node 0 signalled from every EU of node 0 and
 * from node 1 at once (a node of k EUs, tests/t_smp.c): node 1 sends m
 * INVOKEs of `work` to node 0, whose SU gives each new frame to the EU
 * with the shortest ready ring, and m RSYNCs of main's slot; each `work`
 * computes a little, then signals the slot itself from the EU it runs on.
 * The slot waits for exactly 2m signals. White box: each `work` counts the
 * EU it ran on (eu/eu.h); after the run node 0 prints its statistics,
 * every EU's summed (earth_stats_get).
 *
 *   smpslot [m]   2 nodes; node 0 prints "smpslot: 2m signals, fired 1,
 *                 work m on EUs a b c ..." and "smpslot: node 0 ran m+2
 *                 fibers, m+1 frames, m+1 END_FUNCTIONs", and exits 0
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"

#include <earth.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_EUS 64

static _Atomic unsigned long ran_on[MAX_EUS];
static _Atomic unsigned fired;

struct work_args {
	earth_gslot slot;
	long i;
};
struct work_frame {
	struct work_args a;
};
static void work_entry(void *frame);
EARTH_THREADED_FUNCTION(smp_work, work_entry, struct work_frame,
			sizeof(struct work_args));

static void work_entry(void *frame)
{
	struct work_frame *w = frame;
	unsigned eu = eu_self->owner_tag >> FRAME_OWNER_SHIFT;
	atomic_fetch_add(&ran_on[eu < MAX_EUS ? eu : MAX_EUS - 1], 1);
	volatile unsigned long x = (unsigned long)w->a.i;
	for (int k = 0; k < 2000; k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	earth_sync(earth_gslot_addr(w->a.slot));
	EARTH_END_FUNCTION(w);
}

struct kick_args {
	earth_gslot slot;
	long m;
};
struct kick_frame {
	struct kick_args a;
};
static void kick_entry(void *frame);
EARTH_THREADED_FUNCTION(smp_kick, kick_entry, struct kick_frame,
			sizeof(struct kick_args));

static void kick_entry(void *frame)
{
	struct kick_frame *k = frame;
	for (long i = 0; i < k->a.m; i++) {
		struct work_args wa = {k->a.slot, i};
		earth_invoke(0, &smp_work, &wa, sizeof(wa));
		earth_rsync(k->a.slot);
	}
	EARTH_END_FUNCTION(k);
}

struct main_frame {
	struct earth_main_args a;
	long m;
	earth_slot all;
};
static void main_entry(void *f);
static void main_all(void *f);
EARTH_THREADED_FUNCTION(smp_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *f = frame;
	f->m = f->a.argc > 1 ? atol(f->a.argv[1]) : 2000;
	if (earth_num_nodes() != 2 || f->m < 1 || f->m > 1000000) {
		fprintf(stderr, "smpslot: 2 nodes, m from 1 to 1000000\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(f);
		return;
	}
	earth_slot_init(&f->all, (int32_t)(2 * f->m), 0, main_all, f);
	struct kick_args ka = {earth_slot_global(&f->all), f->m};
	earth_invoke(1, &smp_kick, &ka, sizeof(ka));
}

static void main_all(void *frame)
{
	struct main_frame *f = frame;
	unsigned long sum = 0;
	char line[1024];
	int at = 0;
	for (unsigned i = 0; i < earth_node_g.eus && i < MAX_EUS; i++) {
		unsigned long c = atomic_load(&ran_on[i]);
		sum += c;
		at += snprintf(line + at, sizeof(line) - (size_t)at, " %lu", c);
	}
	unsigned n = atomic_fetch_add(&fired, 1) + 1;
	printf("smpslot: %ld signals, fired %u, work %lu on EUs%s\n", 2 * f->m,
	       n, sum, line);
	if (sum != (unsigned long)f->m)
		earth_set_exit_status(1);
	EARTH_END_FUNCTION(f);
}

int main(int argc, char **argv)
{
	int rc = earth_main(argc, argv, &smp_main);
	/* Node 0's counters, every EU's summed: main's two fibers and the
	 * m trampolines; main's frame and the m work frames. */
	if (earth_node_id() == 0 && rc == 0) {
		struct earth_stats st;
		earth_stats_get(&st);
		printf("smpslot: node 0 ran %llu fibers, %llu frames, %llu "
		       "END_FUNCTIONs\n",
		       (unsigned long long)st.fibers_run,
		       (unsigned long long)st.frames_allocated,
		       (unsigned long long)st.ops[EARTH_OP_END_FUNCTION]);
	}
	return rc;
}
