/* SPDX-License-Identifier: MIT */
/*
 * bench_fib.c - the timed fib main of bench_fib.h.
 */
#include "bench_fib.h"
#include "fib_tf.h"
#include "queues/q_arch.h"

struct fib_timed_frame {
	struct fib_timed *t;
	earth_slot done;
};
static void fib_timed_entry(void *f);
EARTH_THREADED_FUNCTION(fib_timed_tf, fib_timed_entry, struct fib_timed_frame,
			sizeof(struct fib_timed *));

static void fib_timed_done(void *frame)
{
	struct fib_timed_frame *m = frame;
	m->t->t_end = q_tsc_ordered();
	EARTH_END_FUNCTION(m);
}

static void fib_timed_entry(void *frame)
{
	struct fib_timed_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, fib_timed_done, m);
	m->t->t_start = q_tsc_ordered();
	fib_tf_start(m->t->n, &m->t->result, &m->done);
}
