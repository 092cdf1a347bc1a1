/* SPDX-License-Identifier: MIT */
/*
 * smpjoin.c - a frame's fibers run one at a time on a node of k EUs
 * (tests/t_smp.c). Main's first fiber posts m TOKENs whose children
 * signal main's join slot, then keeps running (it spins, as a long fiber
 * would) until every child has run and a while longer; idle siblings
 * steal the children meanwhile, so the join's last signal comes from
 * another EU while the first fiber still runs. The join must wait for the
 * first fiber's end: it checks the first fiber's "running" mark in the
 * frame. A fiber a child SPAWNs on main's frame is held to the same
 * rule; it and the join both signal the slot whose fiber ends the frame.
 * White box: each child checks that the frame it runs on belongs to the
 * EU running it (a stolen token's frame moves to its thief), and counts
 * whether it ran on another EU than EU 0 (eu/eu.h).
 *
 *   smpjoin [m]   1 node; prints "smpjoin: m children, on other EUs S,
 *                 frames of their runner yes, join during first fiber no,
 *                 spawn during first fiber no" and exits 0 (1 when a rule
 *                 was broken); then "smpjoin: SU requests R", the
 *                 requests the SU performed (earth_stats)
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"

#include <earth.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic unsigned long children_done, on_other, not_runner;
static _Atomic unsigned join_ran, join_overlap, spawn_ran, spawn_overlap;

static unsigned my_eu(void)
{
	return eu_self->owner_tag >> FRAME_OWNER_SHIFT;
}

struct main_frame {
	struct earth_main_args a;
	long m;
	_Atomic int first_running;
	earth_slot join, fin;
};

struct child_args {
	struct main_frame *parent;
	long i;
};
struct child_frame {
	struct child_args a;
};
static void child_entry(void *frame);
EARTH_THREADED_FUNCTION(smpjoin_child, child_entry, struct child_frame,
			sizeof(struct child_args));

static void main_spawned(void *frame)
{
	struct main_frame *f = frame;
	if (atomic_load(&f->first_running))
		atomic_store(&spawn_overlap, 1);
	atomic_store(&spawn_ran, 1);
	earth_sync(&f->fin);
}

static void child_entry(void *frame)
{
	struct child_frame *c = frame;
	const struct frame_hdr *h = (const struct frame_hdr *)frame - 1;
	if (frame_owner(h) != my_eu())
		atomic_fetch_add(&not_runner, 1);
	if (my_eu() != 0)
		atomic_fetch_add(&on_other, 1);
	volatile unsigned long x = (unsigned long)c->a.i;
	for (int k = 0; k < 20000; k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	if (c->a.i == 0)
		earth_spawn(main_spawned, c->a.parent);
	atomic_fetch_add(&children_done, 1);
	earth_sync(&c->a.parent->join);
	EARTH_END_FUNCTION(c);
}

static void main_entry(void *f);
static void main_join(void *f);
static void main_fin(void *f);
EARTH_THREADED_FUNCTION(smpjoin_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void main_entry(void *frame)
{
	struct main_frame *f = frame;
	f->m = f->a.argc > 1 ? atol(f->a.argv[1]) : 64;
	if (earth_num_nodes() != 1 || f->m < 1 || f->m > 100000) {
		fprintf(stderr, "smpjoin: 1 node, m from 1 to 100000\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(f);
		return;
	}
	atomic_store(&f->first_running, 1);
	earth_slot_init(&f->join, (int32_t)f->m, 0, main_join, f);
	earth_slot_init(&f->fin, 2, 0, main_fin, f);
	for (long i = 0; i < f->m; i++) {
		struct child_args ca = {f, i};
		earth_token(&smpjoin_child, &ca, sizeof(ca));
	}
	/* A long fiber: until siblings ran every child (or 5 s), then 50 ms
	 * more, time enough for a join or SPAWN let loose to run. */
	double t0 = now(), end = t0 + 5;
	while (atomic_load(&children_done) < (unsigned long)f->m && now() < end)
		;
	for (double t1 = now(); now() < t1 + 0.05;)
		;
	atomic_store(&f->first_running, 0);
}

static void main_join(void *frame)
{
	struct main_frame *f = frame;
	if (atomic_load(&f->first_running))
		atomic_store(&join_overlap, 1);
	atomic_store(&join_ran, 1);
	earth_sync(&f->fin);
}

static void main_fin(void *frame)
{
	struct main_frame *f = frame;
	unsigned long done = atomic_load(&children_done);
	bool ok = done == (unsigned long)f->m && !atomic_load(&not_runner) &&
		  !atomic_load(&join_overlap) && !atomic_load(&spawn_overlap) &&
		  atomic_load(&spawn_ran) && atomic_load(&join_ran);
	printf("smpjoin: %lu children, on other EUs %lu, frames of their "
	       "runner %s, join during first fiber %s, spawn during first "
	       "fiber %s\n",
	       done, atomic_load(&on_other),
	       atomic_load(&not_runner) ? "no" : "yes",
	       atomic_load(&join_overlap) ? "yes" : "no",
	       atomic_load(&spawn_overlap) ? "yes" : "no");
	if (!ok)
		earth_set_exit_status(1);
	EARTH_END_FUNCTION(f);
}

int main(int argc, char **argv)
{
	int rc = earth_main(argc, argv, &smpjoin_main);
	/* Requests the SU performed: none where the EUs signal their slots
	 * and hand each other the fibers of their frames themselves
	 * (observed or not); every signal with EARTH_EU_SIGNALS=0. */
	struct earth_stats s;
	earth_stats_get(&s);
	printf("smpjoin: SU requests %llu\n", (unsigned long long)s.su_handled);
	return rc;
}
