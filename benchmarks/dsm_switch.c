/* SPDX-License-Identifier: MIT */
/*
 * dsm_switch.c - what switching between two program threads costs the EU
 * (runtime/dsm/thread.h): the calling thread and one program thread hand
 * the CPU to each other N times; one switch is one direction.
 *
 *   dsm_switch                  ns per switch (target <= 100 ns)
 *   dsm_switch_over_dispatch    against bench_dispatch_ns, the cost of
 *                               the least call through a table, taken on
 *                               the same CPU in the same run (reported)
 *
 * Pinned to the EU's CPU (EARTH_CPUS, else CPU 0).
 */
#define EARTH_INTERNAL 1
#include "bench.h"

#include <stdint.h>

#include "dsm/thread.h"

static struct dsm_ctx main_ctx;
static struct dsm_thread peer;

static void bounce(void *arg)
{
	(void)arg;
	for (;;)
		dsm_switch(&peer.ctx, &main_ctx);
}

int main(int argc, char **argv)
{
	bench_init("dsm_switch", argc, argv);
	int eu, su;
	bench_cpus(&eu, &su);
	bench_pin(eu);
	dsm_ctx_self(&main_ctx);
	if (dsm_thread_init(&peer, 0, bounce, NULL, &main_ctx))
		return 1;
	long n = bench_quick ? 200000 : 2000000;
	double v[64];
	for (long i = 0; i < n / 10; i++) /* warm */
		dsm_switch(&main_ctx, &peer.ctx);
	for (int r = 0; r < bench_reps; r++) {
		uint64_t t0 = q_tsc();
		for (long i = 0; i < n; i++)
			dsm_switch(&main_ctx, &peer.ctx);
		v[r] = bench_ns((double)(q_tsc() - t0)) / (2.0 * (double)n);
	}
	double sw = bench_median(v, bench_reps);
	double floor = bench_dispatch_ns(eu);
	bench_metric_ns("dsm_switch", sw);
	bench_metric("dsm_switch_over_dispatch", sw / floor, "x");
	return 0;
}
