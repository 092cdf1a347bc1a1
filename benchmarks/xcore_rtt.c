/* SPDX-License-Identifier: MIT */
/*
 * xcore_rtt.c - the floor for every EU<->SU figure: a plain cache-line
 * ping-pong between the two CPUs a node uses (each side spins on its own
 * line and answers on the other's). METRIC xcore_rtt.
 */
#include "bench.h"

int main(int argc, char **argv)
{
	bench_init("xcore_rtt", argc, argv);
	int eu, su;
	bench_cpus(&eu, &su);
	long rounds = bench_quick ? 100000 : 500000;
	double v[64];
	for (int r = 0; r < bench_reps; r++)
		v[r] = bench_xcore_rtt_ns(eu, su, rounds);
	bench_metric_ns("xcore_rtt", bench_median(v, bench_reps));
	return 0;
}
