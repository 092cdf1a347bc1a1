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
 *   dsm_fault_uffd    the kernel's part done with userfaultfd instead of
 *                     protections: a memfd's page whose mapping in the
 *                     program's view was dropped (MADV_DONTNEED: the page
 *                     stays in the file), the view registered for minor
 *                     faults with UFFD_FEATURE_SIGBUS (the faulting
 *                     thread gets a signal instead of sleeping in the
 *                     kernel, so the EU could switch threads as it does
 *                     now), the handler copying 4 KiB in through the
 *                     writable view and mapping the page (UFFDIO_CONTINUE),
 *                     the read run again (256 pages dropped at once)
 *   dsm_fault_uffd_over_kernel   its ratio to dsm_fault_kernel (reported;
 *                     below 1, userfaultfd is the cheaper fault)
 *   dsm_fault_kernel_write   a write to a read-only page by protections:
 *                     the SIGSEGV, the handler copying the page to a twin
 *                     and making it writable (256 pages read-only again
 *                     at once)
 *   dsm_fault_uffd_write   the same by userfaultfd's write-protect mode on
 *                     shared memory (SIGBUS, twin, UFFDIO_WRITEPROTECT
 *                     cleared); dsm_fault_uffd_write_over_kernel their
 *                     ratio (reported)
 *   dsm_fault_maps_mprotect, dsm_fault_maps_uffd   the process's mappings
 *                     more than at the start with every other page of
 *                     256 readable: a protection splits the mapping,
 *                     a dropped page does not
 * Where the kernel refuses userfaultfd, its figures are not printed and
 * the benchmark says why.
 *
 * Pinned to the EU's CPU (EARTH_CPUS, else CPU 0).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* ---- the same read with userfaultfd ---- */

static int uffd = -1;
static uint8_t *u_view, *u_alias;
static bool u_wp; /* the write-protect mode too */
/* Per page: 0 dropped, 1 mapped write-protected, 2 writable. */
static uint8_t u_state[PAGES];
static uint8_t twin[PG];

static void u_protect(uintptr_t off, size_t len, bool wp)
{
	struct uffdio_writeprotect w = {
	    .range = {.start = (uintptr_t)u_view + off, .len = len},
	    .mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0};
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &w))
		abort();
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	uintptr_t off = (uintptr_t)si->si_addr - (uintptr_t)u_view;
	if (off >= (uintptr_t)PAGES * PG)
		abort(); /* not ours: the benchmark is wrong */
	off &= ~(uintptr_t)(PG - 1);
	uint32_t p = (uint32_t)(off / PG);
	if (u_state[p] == 1) { /* a write: the twin, then writable */
		memcpy(twin, u_alias + off, PG);
		u_protect(off, PG, false);
		u_state[p] = 2;
		return;
	}
	memcpy(u_alias + off, src, PG);
	struct uffdio_continue c = {
	    .range = {.start = (uintptr_t)u_view + off, .len = PG}};
	if (ioctl(uffd, UFFDIO_CONTINUE, &c) && errno != EEXIST)
		abort();
	u_state[p] = 2;
}

/* The view and its alias over a memfd, the view registered for minor
 * faults; 0, or -1 with why. */
static int uffd_open(const char **why)
{
	int fd = memfd_create("dsm_fault_uffd", 0);
	if (fd < 0 || ftruncate(fd, (off_t)PAGES * PG)) {
		*why = "memfd";
		return -1;
	}
	u_alias = mmap(NULL, (size_t)PAGES * PG, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	u_view = mmap(NULL, (size_t)PAGES * PG, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0);
	close(fd);
	if (u_alias == MAP_FAILED || u_view == MAP_FAILED) {
		*why = "mmap";
		return -1;
	}
	memset(u_alias, 0, (size_t)PAGES * PG); /* every page in the file */
	/* With the write-protect mode where the kernel has it on shared
	 * memory, else without. */
	for (u_wp = true;; u_wp = false) {
		uffd = (int)syscall(SYS_userfaultfd,
				    O_CLOEXEC | UFFD_USER_MODE_ONLY);
		if (uffd < 0) {
			*why = "userfaultfd(2) (vm.unprivileged_userfaultfd, "
			       "or CAP_SYS_PTRACE)";
			return -1;
		}
		struct uffdio_api api = {
		    .api = UFFD_API,
		    .features = UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_SIGBUS |
				(u_wp ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM : 0)};
		if (!ioctl(uffd, UFFDIO_API, &api))
			break;
		close(uffd);
		if (!u_wp) {
			*why = "UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_SIGBUS";
			return -1;
		}
	}
	struct uffdio_register reg_u = {
	    .range = {.start = (uintptr_t)u_view, .len = (size_t)PAGES * PG},
	    .mode = UFFDIO_REGISTER_MODE_MINOR |
		    (u_wp ? UFFDIO_REGISTER_MODE_WP : 0)};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg_u)) {
		*why = "UFFDIO_REGISTER_MODE_MINOR on shared memory";
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	return 0;
}

static double run_uffd(void)
{
	madvise(u_view, (size_t)PAGES * PG, MADV_DONTNEED);
	uint64_t t0 = q_tsc();
	for (long i = 0; i < rounds; i++) {
		uint32_t p = (uint32_t)(i % PAGES);
		if (p == 0 && i)
			madvise(u_view, (size_t)PAGES * PG, MADV_DONTNEED);
		sink += *(volatile uint64_t *)(u_view + (size_t)p * PG + 8);
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

/* A write to each page mapped write-protected: the WP fault's SIGBUS,
 * the twin, the protection cleared (256 pages protected again at once). */
static double run_uffd_w(void)
{
	for (uint32_t p = 0; p < PAGES; p++) /* every page mapped */
		sink += *(volatile uint64_t *)(u_view + (size_t)p * PG + 8);
	u_protect(0, (size_t)PAGES * PG, true);
	memset(u_state, 1, sizeof(u_state));
	uint64_t t0 = q_tsc();
	for (long i = 0; i < rounds; i++) {
		uint32_t p = (uint32_t)(i % PAGES);
		if (p == 0 && i) {
			u_protect(0, (size_t)PAGES * PG, true);
			memset(u_state, 1, sizeof(u_state));
		}
		*(volatile uint64_t *)(u_view + (size_t)p * PG + 16) =
		    (uint64_t)i;
	}
	return bench_ns((double)(q_tsc() - t0)) / (double)rounds;
}

/* The same by protections (the runtime's handler): the SIGSEGV, the
 * twin, the page made writable. */
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

static void maps(void)
{
	dsm_region_set(&reg, 0, PAGES, DSM_PAGE_INVALID);
	madvise(u_view, (size_t)PAGES * PG, MADV_DONTNEED);
	long base = maps_now();
	for (uint32_t p = 0; p < PAGES; p += 2)
		fill(p);
	long m = maps_now() - base;
	base = maps_now();
	for (uint32_t p = 0; p < PAGES; p += 2)
		sink += *(volatile uint64_t *)(u_view + (size_t)p * PG + 8);
	long u = maps_now() - base;
	bench_metric("dsm_fault_maps_mprotect", (double)m, "mappings");
	bench_metric("dsm_fault_maps_uffd", (double)u, "mappings");
}

int main(int argc, char **argv)
{
	bench_init("dsm_fault", argc, argv);
	int eu, su;
	bench_cpus(&eu, &su);
	bench_pin(eu);
	char err[512];
	if (dsm_region_map(&reg, NULL, (size_t)PAGES * PG, PG,
			   DSM_FAULTS_PROTECT, err, sizeof(err))) {
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
	const char *why = NULL;
	bool uf = uffd_open(&why) == 0;
	double k[64], w[64], u[64], kw[64], uw[64];
	for (int r = 0; r < bench_reps; r++) {
		fs.on_fault = at_once;
		k[r] = run_kernel();
		fs.on_fault = wait;
		w[r] = run_wait();
		if (w[r] < 0) {
			perror("dsm_fault: sigaltstack");
			return 1;
		}
		fs.on_fault = at_once_w;
		kw[r] = run_kernel_w();
		if (uf)
			u[r] = run_uffd();
		if (uf && u_wp)
			uw[r] = run_uffd_w();
	}
	double kn = bench_median(k, bench_reps),
	       wn = bench_median(w, bench_reps);
	bench_metric_ns("dsm_fault_kernel", kn);
	bench_metric_ns("dsm_fault_wait", wn);
	bench_metric("dsm_fault_wait_over_kernel", wn / kn, "x");
	double kwn = bench_median(kw, bench_reps);
	bench_metric_ns("dsm_fault_kernel_write", kwn);
	if (uf) {
		double un = bench_median(u, bench_reps);
		bench_metric_ns("dsm_fault_uffd", un);
		bench_metric("dsm_fault_uffd_over_kernel", un / kn, "x");
		if (u_wp) {
			double uwn = bench_median(uw, bench_reps);
			bench_metric_ns("dsm_fault_uffd_write", uwn);
			bench_metric("dsm_fault_uffd_write_over_kernel",
				     uwn / kwn, "x");
		} else {
			printf("dsm_fault: no dsm_fault_uffd_write: the kernel "
			       "has no write-protect mode on shared memory "
			       "(UFFD_FEATURE_WP_HUGETLBFS_SHMEM)\n");
		}
		maps();
	} else {
		printf("dsm_fault: no userfaultfd figures: the kernel refused "
		       "%s (%s)\n",
		       why, strerror(errno));
	}
	if (fs.faults < (uint64_t)rounds * 3 * (uint64_t)bench_reps) {
		fprintf(stderr, "dsm_fault: %llu faults, want %llu\n",
			(unsigned long long)fs.faults,
			(unsigned long long)rounds * 3 * bench_reps);
		return 1;
	}
	return 0;
}
