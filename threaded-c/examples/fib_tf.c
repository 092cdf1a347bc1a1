/* SPDX-License-Identifier: MIT */
/*
 * fib_tf.c - fib as a threaded function (see fib_tf.h).
 */
#include "fib_tf.h"

struct fib_frame {
	struct fib_args a;
	int x, y;
	earth_slot join;
};
static void fib_entry(void *f);
static void fib_join(void *f);
EARTH_THREADED_FUNCTION(fib_tf, fib_entry, struct fib_frame,
			sizeof(struct fib_args));

static void fib_entry(void *frame)
{
	struct fib_frame *f = frame;
	if (f->a.n < 2) {
		earth_data_rsync_i(f->a.n, f->a.result, f->a.done);
		EARTH_END_FUNCTION(f);
	}
	earth_slot_init(&f->join, 2, 0, fib_join, f);
	fib_tf_start(f->a.n - 1, &f->x, &f->join);
	fib_tf_start(f->a.n - 2, &f->y, &f->join);
}

static void fib_join(void *frame)
{
	struct fib_frame *f = frame;
	earth_data_rsync_i(f->x + f->y, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}
