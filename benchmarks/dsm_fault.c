/* SPDX-License-Identifier: MIT */
/*
 * dsm_fault.c - what a fault on a page of shared memory costs a node
 * before any network: the kernel's part and the EU's (runtime/dsm/).
 *
 *   dsm_fault_kernel  a read of an invalid 4 KiB page: the SIGSEGV, the
 *                     handler copying 4 KiB in through the writable view
 *                     and making the page readable, the access run again
 *                     (one page in 256 pays for making all 256 invalid
 *                     again): the
 *                     floor of dsm_fault.<t> without the transport's GET
 *   dsm_fault_wait    the same read by a program thread that waits for
 *                     the page: the handler switches it out, the EU's
 *                     loop (here: this benchmark) fills the page and
 *                     resumes it: what a miss costs the EU beyond the
 *                     kernel's part (two switches and a sigaltstack)
 *   dsm_fault_wait_over_kernel   their ratio (reported)
 *
 * Pinned to the EU's CPU (EARTH_CPUS, else CPU 0).
 */
#define EARTH_INTERNAL 1
#include "bench.h"

#include <stdio.h>
#include <string.h>

#include "dsm/fault.h"

#define PG 4096u
#define PAGES 256u

static struct dsm_region reg;
static struct dsm_faults fs;
static struct dsm_ctx sched;
static struct dsm_thread th;
static uint8_t src[PG];
static volatile uint64_t sink;
static long rounds;

static void fill(uint32_t page)
{
	memcpy(dsm_region_alias(&reg, page), src, PG);
	dsm_region_set(&reg, page, 1, DSM_PAGE_READ);
}

static enum dsm_fault_do at_once(void *arg, uint32_t page, bool write)
{
	(void)arg;
	(void)write;
	fill(page);
	return DSM_FAULT_RETRY;
}

static uint32_t asked;
static enum dsm_fault_do wait(void *arg, uint32_t page, bool write)
{
	(void)arg;
	(void)write;
	asked = page;
	return DSM_FAULT_WAIT;
}

static void reader(void *arg)
{
	(void)arg;
	for (long i = 0;; i++)
		sink += *(volatile uint64_t *)(reg.base +
					       (size_t)(i % PAGES) * PG + 8);
}

static double run_kernel(void)
{
	dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
	uint64_t t0 = q_tsc();
	for (long i = 0; i < rounds; i++) {
		uint32_t p = (uint32_t)(i % PAGES);
		if (p == 0 && i)
			dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
		sink += *(volatile uint64_t *)(reg.base + (size_t)p * PG + 8);
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

static double run_wait(void)
{
	dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
	uint64_t t0 = q_tsc();
	for (long i = 0; i < rounds; i++) {
		if (i % PAGES == 0 && i)
			dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
		dsm_faults_run(&fs, &th); /* faults, waits */
		fill(asked);
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

int main(int argc, char **argv)
{
	bench_init("dsm_fault", argc, argv);
	int eu, su;
	bench_cpus(&eu, &su);
	bench_pin(eu);
	char err[512];
	if (dsm_region_map(&reg, NULL, (size_t)PAGES * PG, PG, err,
			   sizeof(err))) {
		fprintf(stderr, "dsm_fault: %s\n", err);
		return 1;
	}
	memset(src, 0x5a, sizeof(src));
	dsm_ctx_self(&sched);
	if (dsm_fault_install() ||
	    dsm_faults_init(&fs, &reg, at_once, NULL, &sched, "dsm_fault: ") ||
	    dsm_thread_init(&th, 0, reader, NULL, &sched)) {
		perror("dsm_fault");
		return 1;
	}
	rounds = bench_quick ? 20000 : 100000;
	double k[64], w[64];
	for (int r = 0; r < bench_reps; r++) {
		fs.on_fault = at_once;
		k[r] = run_kernel();
		fs.on_fault = wait;
		w[r] = run_wait();
		if (w[r] < 0) {
			perror("dsm_fault: sigaltstack");
			return 1;
		}
	}
	double kn = bench_median(k, bench_reps),
	       wn = bench_median(w, bench_reps);
	bench_metric_ns("dsm_fault_kernel", kn);
	bench_metric_ns("dsm_fault_wait", wn);
	bench_metric("dsm_fault_wait_over_kernel", wn / kn, "x");
	if (fs.faults < (uint64_t)rounds * 2 * (uint64_t)bench_reps) {
		fprintf(stderr, "dsm_fault: %llu faults, want %llu\n",
			(unsigned long long)fs.faults,
			(unsigned long long)rounds * 2 * bench_reps);
		return 1;
	}
	return 0;
}
