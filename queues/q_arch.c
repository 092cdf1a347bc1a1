/* SPDX-License-Identifier: MIT */
/*
 * arch.c - TSC calibration against CLOCK_MONOTONIC (done once: two
 * measurements of 2 ms that agree, else one of 20 ms).
 */
#include "q_arch.h"

#include <stdatomic.h>
#include <time.h>

/* Calibration: the short measurement, how far two may differ (a
 * fraction), how many more are tried, and the long one. */
#define Q_CAL_SHORT_NS 2000000ull
#define Q_CAL_AGREE 5e-5
#define Q_CAL_TRIES 3
#define Q_CAL_LONG_NS 20000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Ticks per ns over at least ns of CLOCK_MONOTONIC. */
static double measure(uint64_t ns)
{
	uint64_t n0 = mono_ns(), t0 = q_tsc_ordered();
	while (mono_ns() - n0 < ns)
		;
	uint64_t n1 = mono_ns(), t1 = q_tsc_ordered();
	return (double)(t1 - t0) / (double)(n1 - n0);
}

double q_tsc_per_ns(void)
{
	/* Benign race: two first callers both calibrate and store a valid
	 * value; the relaxed atomic keeps TSan quiet and pairs with nothing. */
	static _Atomic double cached;
	double v = atomic_load_explicit(&cached, memory_order_relaxed);
	if (v > 0)
		return v;
	/* Two short measurements that agree within Q_CAL_AGREE are taken
	 * (a vCPU held up between the clock's read and the TSC's, which
	 * skews one, makes them disagree); else, after Q_CAL_TRIES, one
	 * long one. */
	double a = measure(Q_CAL_SHORT_NS);
	v = 0;
	for (int i = 0; i < Q_CAL_TRIES && v <= 0; i++) {
		double b = measure(Q_CAL_SHORT_NS), d = a > b ? a - b : b - a;
		if (d <= a * Q_CAL_AGREE)
			v = (a + b) / 2;
		a = b;
	}
	if (v <= 0)
		v = measure(Q_CAL_LONG_NS);
	if (v <= 0)
		v = 1.0;
	atomic_store_explicit(&cached, v, memory_order_relaxed);
	return v;
}
