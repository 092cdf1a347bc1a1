/* SPDX-License-Identifier: MIT */
/*
 * bench_fib.h - a node's main for the benchmarks that time fib(n) with one
 * threaded function per call (fib, trace_cost): fib_tf from its entry
 * fiber, timed with the TSC from the first TOKEN to the result. Run it
 * with earth_run(opts, &fib_timed_tf, &t, sizeof(t)) where t is a
 * struct fib_timed * that outlives the run.
 */
#ifndef EARTH_BENCH_FIB_H
#define EARTH_BENCH_FIB_H

#include <earth.h>
#include <stdint.h>

struct fib_timed {
	int n;
	int result;
	uint64_t t_start, t_end; /* TSC */
};
extern const struct earth_tfunc fib_timed_tf;

#endif /* EARTH_BENCH_FIB_H */
