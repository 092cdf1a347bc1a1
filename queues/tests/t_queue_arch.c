/* SPDX-License-Identifier: MIT */
/*
 * t_queue_arch.c - the TSC calibration (queues/q_arch.h): q_tsc_per_ns
 * agrees with the TSC and CLOCK_MONOTONIC read over 200 ms here to 0.1 %
 * (it measures far shorter: two short measurements that agree), and is
 * measured once (a second call returns the same value).
 */
#include <criterion/criterion.h>

#include <time.h>

#include "../q_arch.h"

TestSuite(arch, .timeout = 10);

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

Test(arch, tsc_per_ns_agrees_with_the_clock)
{
	double v = q_tsc_per_ns();
	cr_assert_gt(v, 0);
	uint64_t n0 = mono_ns(), t0 = q_tsc_ordered();
	while (mono_ns() - n0 < 200000000ull)
		;
	uint64_t n1 = mono_ns(), t1 = q_tsc_ordered();
	double m = (double)(t1 - t0) / (double)(n1 - n0);
	double d = v > m ? v - m : m - v;
	cr_expect_leq(d, m * 1e-3, "calibrated %.6f ticks/ns, measured %.6f", v,
		      m);
	cr_expect_eq(q_tsc_per_ns(), v, "measured again");
}
