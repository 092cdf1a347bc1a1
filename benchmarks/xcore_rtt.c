/* SPDX-License-Identifier: MIT */
/*
 * xcore_rtt.c - the floor for every EU<->SU figure: a plain cache-line
 * ping-pong between the two CPUs a node uses (each side spins on its own
 * line and answers on the other's). METRIC xcore_rtt.
 */
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static struct {
	_Atomic uint64_t ping q_aligned_line;
	_Atomic uint64_t pong q_aligned_line;
} lines;
static long rounds;
static int su_cpu;

static void *ponger(void *arg)
{
	(void)arg;
	bench_pin(su_cpu);
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		/* Pairs with the pinger's release store of ping. */
		while (atomic_load_explicit(&lines.ping, memory_order_acquire) != i)
			q_cpu_relax();
		atomic_store_explicit(&lines.pong, i, memory_order_release);
	}
	return NULL;
}

static double one_run(void)
{
	atomic_store(&lines.ping, 0);
	atomic_store(&lines.pong, 0);
	pthread_t t;
	pthread_create(&t, NULL, ponger, NULL);
	uint64_t t0 = 0;
	long warm = rounds / 10;
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		if (i == (uint64_t)warm + 1)
			t0 = q_tsc_ordered();
		atomic_store_explicit(&lines.ping, i, memory_order_release);
		/* Pairs with the ponger's release store of pong. */
		while (atomic_load_explicit(&lines.pong, memory_order_acquire) != i)
			q_cpu_relax();
	}
	uint64_t t1 = q_tsc_ordered();
	pthread_join(t, NULL);
	return bench_ns((double)(t1 - t0) / (double)(rounds - warm));
}

int main(int argc, char **argv)
{
	bench_init("xcore_rtt", argc, argv);
	int eu;
	bench_cpus(&eu, &su_cpu);
	bench_pin(eu);
	rounds = bench_quick ? 100000 : 500000;
	double v[64];
	for (int r = 0; r < bench_reps; r++)
		v[r] = one_run();
	bench_metric_ns("xcore_rtt", bench_median(v, bench_reps));
	return 0;
}
