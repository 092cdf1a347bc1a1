/* SPDX-License-Identifier: MIT */
/*
 * arch.c - TSC calibration against CLOCK_MONOTONIC (20 ms, done once).
 */
#include "q_arch.h"

#include <stdatomic.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double q_tsc_per_ns(void)
{
	/* Benign race: two first callers both calibrate and store a valid
	 * value; the relaxed atomic keeps TSan quiet and pairs with nothing. */
	static _Atomic double cached;
	double v = atomic_load_explicit(&cached, memory_order_relaxed);
	if (v > 0)
		return v;
	uint64_t n0 = mono_ns(), t0 = q_tsc_ordered();
	while (mono_ns() - n0 < 20000000ull)
		;
	uint64_t n1 = mono_ns(), t1 = q_tsc_ordered();
	v = (double)(t1 - t0) / (double)(n1 - n0);
	if (v <= 0)
		v = 1.0;
	atomic_store_explicit(&cached, v, memory_order_relaxed);
	return v;
}
