/* SPDX-License-Identifier: MIT */
/*
 * fib_tf.h - fib as a threaded function, one invocation per call: the
 * shape EARTH programs share (spawn children with TOKEN, join them on a
 * slot, send the result to the parent with DATA_RSYNC). Used by the demo,
 * the fib benchmark and the tests.
 *
 *   THREADED fib(int n, int *GLOBAL result, SPTR done)
 */
#ifndef EARTH_EXAMPLES_FIB_TF_H
#define EARTH_EXAMPLES_FIB_TF_H

#include <earth.h>

struct fib_args {
	int n;
	earth_gptr result; /* int on the caller's node */
	earth_gslot done;  /* signalled once *result is written */
};

extern const struct earth_tfunc fib_tf;

/* Starts fib(n) from a fiber: TOKEN(fib, n, result, done). EU only. */
static inline void fib_tf_start(int n, int *result, earth_slot *done)
{
	struct fib_args a = {n, earth_to_global(result),
			     earth_slot_global(done)};
	earth_token(&fib_tf, &a, sizeof(a));
}

#endif /* EARTH_EXAMPLES_FIB_TF_H */
