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
 *   dsm_fault_kernel_write   a write to a read-only page: the SIGSEGV,
 *                     the handler copying the page to a twin and making
 *                     it writable (256 pages read-only again at once)
 *   dsm_fault_uffd, dsm_fault_uffd_wait, dsm_fault_uffd_write   the same
 *                     three with the region's pages kept by userfaultfd
 *                     (EARTH_DSM_FAULTS=userfaultfd, dsm/region.h): a
 *                     read of a page not mapped in the view, a minor
 *                     fault raised as SIGBUS, the page mapped by
 *                     UFFDIO_CONTINUE; a write to a write-protected one,
 *                     SIGBUS, the protection cleared
 *   dsm_fault_uffd_over_kernel, dsm_fault_uffd_write_over_kernel   their
 *                     ratios to protections (reported; below 1,
 *                     userfaultfd is the cheaper fault)
 *   dsm_fault_maps_mprotect, dsm_fault_maps_uffd   the process's mappings
 *                     more than at the start with every other page of
 *                     256 readable: a protection splits the mapping,
 *                     a page mapped by userfaultfd does not
 * Where the kernel refuses userfaultfd, its figures are not printed and
 * the benchmark says why.
 *
 * Pinned to the EU's CPU (EARTH_CPUS, else CPU 0).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "bench.h"

#include <stdio.h>
#include <string.h>

#include "dsm/fault.h"

#define PG 4096u
#define PAGES 256u

/* The region of the run: by protections, or by userfaultfd. */
static struct dsm_region by[2];
#define reg (*fs.region)
static struct dsm_faults fs;
static struct dsm_ctx sched;
/* A reader per region: a thread left waiting at the end of a run resumes
 * at the next on the same region. */
static struct dsm_thread th[2], *reading;
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
	const struct dsm_region *r = arg;
	for (long i = 0;; i++)
		sink += *(volatile uint64_t *)(r->base +
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
		dsm_faults_run(&fs, reading); /* faults, waits */
		fill(asked);
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

/* A write to each read-only page: the fault, the twin, the page made
 * writable. */
static uint8_t twin[PG];
static enum dsm_fault_do at_once_w(void *arg, uint32_t page, bool write)
{
	(void)arg;
	(void)write;
	memcpy(twin, dsm_region_alias(&reg, page), PG);
	dsm_region_set(&reg, page, 1, DSM_PAGE_WRITE);
	return DSM_FAULT_RETRY;
}

static double run_kernel_w(void)
{
	dsm_region_set(&reg, 0, PAGES, DSM_PAGE_READ);
	uint64_t t0 = q_tsc();
	for (long i = 0; i < rounds; i++) {
		uint32_t p = (uint32_t)(i % PAGES);
		if (p == 0 && i)
			dsm_region_set(&reg, 0, PAGES, DSM_PAGE_READ);
		*(volatile uint64_t *)(reg.base + (size_t)p * PG + 16) =
		    (uint64_t)i;
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

/* Mappings more than at the start with every other page readable. */
static long maps_now(void)
{
	long have, most;
	dsm_map_count(&have, &most);
	return have;
}

static long maps_of(struct dsm_region *r)
{
	fs.region = r;
	dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
	long base = maps_now();
	for (uint32_t p = 0; p < PAGES; p += 2)
		fill(p);
	return maps_now() - base;
}

/* Read, wait and write over region r: their medians into m[0..2]. */
static void runs(struct dsm_region *r, double m[3])
{
	double k[64], w[64], kw[64];
	fs.region = r;
	reading = &th[r == &by[1]];
	for (int i = 0; i < bench_reps; i++) {
		fs.on_fault = at_once;
		k[i] = run_kernel();
		fs.on_fault = wait;
		w[i] = run_wait();
		fs.on_fault = at_once_w;
		kw[i] = run_kernel_w();
	}
	m[0] = bench_median(k, bench_reps);
	m[1] = bench_median(w, bench_reps);
	m[2] = bench_median(kw, bench_reps);
}

int main(int argc, char **argv)
{
	bench_init("dsm_fault", argc, argv);
	int eu, su;
	bench_cpus(&eu, &su);
	bench_pin(eu);
	char err[512], why[512] = "";
	if (dsm_region_map(&by[0], NULL, (size_t)PAGES * PG, PG,
			   DSM_FAULTS_PROTECT, err, sizeof(err))) {
		fprintf(stderr, "dsm_fault: %s\n", err);
		return 1;
	}
	bool uf = !dsm_region_map(&by[1], NULL, (size_t)PAGES * PG, PG,
				  DSM_FAULTS_UFFD, why, sizeof(why));
	memset(src, 0x5a, sizeof(src));
	dsm_ctx_self(&sched);
	if (dsm_fault_install() ||
	    dsm_faults_init(&fs, &by[0], at_once, NULL, &sched,
			    "dsm_fault: ") ||
	    dsm_thread_init(&th[0], 0, reader, &by[0], &sched) ||
	    (uf && dsm_thread_init(&th[1], 0, reader, &by[1], &sched))) {
		perror("dsm_fault");
		return 1;
	}
	rounds = bench_quick ? 20000 : 100000;
	double k[3], u[3];
	runs(&by[0], k);
	bench_metric_ns("dsm_fault_kernel", k[0]);
	bench_metric_ns("dsm_fault_wait", k[1]);
	bench_metric("dsm_fault_wait_over_kernel", k[1] / k[0], "x");
	bench_metric_ns("dsm_fault_kernel_write", k[2]);
	uint64_t want = (uint64_t)rounds * 3 * (uint64_t)bench_reps;
	if (uf) {
		runs(&by[1], u);
		bench_metric_ns("dsm_fault_uffd", u[0]);
		bench_metric_ns("dsm_fault_uffd_wait", u[1]);
		bench_metric_ns("dsm_fault_uffd_write", u[2]);
		bench_metric("dsm_fault_uffd_over_kernel", u[0] / k[0], "x");
		bench_metric("dsm_fault_uffd_write_over_kernel", u[2] / k[2],
			     "x");
		bench_metric("dsm_fault_maps_mprotect", (double)maps_of(&by[0]),
			     "mappings");
		bench_metric("dsm_fault_maps_uffd", (double)maps_of(&by[1]),
			     "mappings");
		want *= 2;
	} else {
		printf("dsm_fault: no userfaultfd figures: %s\n", why);
	}
	if (fs.faults < want) {
		fprintf(stderr, "dsm_fault: %llu faults, want %llu\n",
			(unsigned long long)fs.faults,
			(unsigned long long)want);
		return 1;
	}
	return 0;
}
