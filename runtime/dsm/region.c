/* SPDX-License-Identifier: MIT */
/*
 * dsm/region.c - mapping the shared region at its address, and the
 * protection of its pages (dsm/region.h).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1 /* earth_fatal */
#include "dsm/region.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Kernels from 6.6 map a page write-protected as UFFDIO_CONTINUE maps it;
 * older headers lack the flag (older kernels refuse it: EINVAL). */
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif

/* Mappings a node needs beside its region (libraries, stacks, the
 * transport's segments), counted in what is left before the limit. */
#define MAPS_SPARE 1000

static const int prot_of[] = {
    [DSM_PAGE_INVALID] = PROT_NONE,
    [DSM_PAGE_READ] = PROT_READ,
    [DSM_PAGE_WRITE] = PROT_READ | PROT_WRITE,
    [DSM_PAGE_HOME] = PROT_READ,
};

void dsm_map_count(long *have, long *most)
{
	*have = *most = -1;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	if (f) {
		if (fscanf(f, "%ld", most) != 1)
			*most = -1;
		fclose(f);
	}
	f = fopen("/proc/self/maps", "r");
	if (f) {
		long k = 0;
		int c;
		while ((c = getc(f)) != EOF)
			k += c == '\n';
		fclose(f);
		*have = k;
	}
}

/* ---- userfaultfd ---- */

static uint8_t *view_of(const struct dsm_region *r, uint32_t page)
{
	return r->base + ((size_t)page << r->page_shift);
}

/* Write-protects pages [first, first + n) of the view (wp), or makes them
 * writable; 0 or -1 with errno. */
static int uffd_protect(const struct dsm_region *r, uint32_t first, uint32_t n,
			bool wp)
{
	struct uffdio_writeprotect w = {
	    .range = {.start = (uintptr_t)view_of(r, first),
		      .len = (size_t)n << r->page_shift},
	    .mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP
		       : UFFDIO_WRITEPROTECT_MODE_DONTWAKE};
	return ioctl(r->uffd, UFFDIO_WRITEPROTECT, &w);
}

/* Maps pages [first, first + n) into the view, write-protected (wp) or
 * writable, none of them mapped before (a fault on them is reported, none
 * maps them); 0 or -1 with errno. A page not yet in the memory (never
 * written anywhere) is put there first, through the alias, its contents
 * (zeros) unchanged. */
static int uffd_map(const struct dsm_region *r, uint32_t first, uint32_t n,
		    bool wp)
{
	uintptr_t at = (uintptr_t)view_of(r, first);
	size_t len = (size_t)n << r->page_shift;
	bool filled = false;
	while (len) {
		struct uffdio_continue c = {
		    .range = {.start = at, .len = len},
		    .mode = UFFDIO_CONTINUE_MODE_DONTWAKE |
			    (wp ? UFFDIO_CONTINUE_MODE_WP : 0)};
		if (!ioctl(r->uffd, UFFDIO_CONTINUE, &c))
			return 0;
		int e = errno;
		size_t done = c.mapped > 0 ? (size_t)c.mapped : 0;
		at += done;
		len -= done;
		if (e == EAGAIN)
			continue;
		if (e != EFAULT || filled)
			return -1;
		/* Not in the memory yet: made so, once. */
		filled = true;
		uint8_t *a = r->alias + (at - (uintptr_t)r->base);
		if (madvise(a, len, MADV_POPULATE_WRITE))
			return -1;
	}
	return 0;
}

/* What a state asks of the view: not mapped, write-protected, writable. */
static int uffd_class(uint8_t st)
{
	return st == DSM_PAGE_INVALID ? 0 : st == DSM_PAGE_WRITE ? 2 : 1;
}

/* To a state other than invalid (dsm_region_invalidate drops pages). */
static int uffd_set(struct dsm_region *r, uint32_t first, uint32_t n,
		    enum dsm_page_state state)
{
	int to = uffd_class((uint8_t)state);
	for (uint32_t i = first, end = first + n; i < end;) {
		int from =
		    uffd_class(__atomic_load_n(&r->state[i], __ATOMIC_RELAXED));
		uint32_t j = i + 1;
		while (j < end && uffd_class(__atomic_load_n(
				      &r->state[j], __ATOMIC_RELAXED)) == from)
			j++;
		int rc = 0;
		if (from != to)
			atomic_fetch_add_explicit(&r->changes, 1,
						  memory_order_relaxed);
		if (from == to)
			rc = 0; /* as asked already */
		else if (from == 0)
			rc = uffd_map(r, i, j - i, to == 1);
		else
			rc = uffd_protect(r, i, j - i, to == 1);
		if (rc)
			return -1;
		i = j;
	}
	return 0;
}

/* Pages [at, at + len) of the view each, dropped in one system call
 * where r->pidfd allows, else one madvise each; 0 or -1 with errno. The
 * count of changes goes up by the calls made. */
static int drop_ranges(struct dsm_region *r, const struct iovec *v, unsigned k)
{
	size_t bytes = 0;
	for (unsigned i = 0; i < k; i++)
		bytes += v[i].iov_len;
	if (k > 1 && r->pidfd >= 0) {
		atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
		if (syscall(SYS_process_madvise, r->pidfd, v, (size_t)k,
			    MADV_DONTNEED, 0u) == (long)bytes)
			return 0;
		/* Refused or cut short: each again, on its own (dropping
		 * a page twice changes nothing). */
	}
	for (unsigned i = 0; i < k; i++) {
		atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
		if (madvise(v[i].iov_base, v[i].iov_len, MADV_DONTNEED))
			return -1;
	}
	return 0;
}

/* r->pidfd: this process, kept where process_madvise drops a page of
 * the view (Linux 6.13 and later; page 0, invalid already), else -1. */
static void pidfd_open_self(struct dsm_region *r)
{
	r->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0u);
	struct iovec v = {.iov_base = r->base, .iov_len = r->page_size};
	if (r->pidfd >= 0 &&
	    syscall(SYS_process_madvise, r->pidfd, &v, (size_t)1, MADV_DONTNEED,
		    0u) != (long)r->page_size) {
		close(r->pidfd);
		r->pidfd = -1;
	}
}

/* Opens r's userfaultfd on its view (mapped readable and writable, no
 * page in it yet): missing and minor faults (a page not mapped) and
 * write-protect faults, each a SIGBUS; and tries UFFDIO_CONTINUE's
 * write-protect mode on page 0. 0, or -1 with why (r->uffd stays -1). */
static int uffd_open(struct dsm_region *r, char *why, size_t len)
{
	int u = (int)syscall(SYS_userfaultfd,
			     O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (u < 0) {
		snprintf(why, len, "userfaultfd(2): %s", strerror(errno));
		return -1;
	}
	struct uffdio_api api = {.api = UFFD_API,
				 .features = UFFD_FEATURE_MINOR_SHMEM |
					     UFFD_FEATURE_SIGBUS |
					     UFFD_FEATURE_WP_HUGETLBFS_SHMEM};
	struct uffdio_register reg = {
	    .range = {.start = (uintptr_t)r->base, .len = r->size},
	    .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR |
		    UFFDIO_REGISTER_MODE_WP};
	const uint64_t need =
	    (1ull << _UFFDIO_CONTINUE) | (1ull << _UFFDIO_WRITEPROTECT);
	if (ioctl(u, UFFDIO_API, &api)) {
		snprintf(why, len,
			 "it has no minor and write-protect faults on shared "
			 "memory with SIGBUS (UFFDIO_API: %s)",
			 strerror(errno));
	} else if (ioctl(u, UFFDIO_REGISTER, &reg)) {
		snprintf(why, len, "UFFDIO_REGISTER on the region: %s",
			 strerror(errno));
	} else if ((reg.ioctls & need) != need) {
		snprintf(why, len,
			 "UFFDIO_CONTINUE or UFFDIO_WRITEPROTECT missing on "
			 "the region");
	} else {
		r->uffd = u;
		if (!uffd_map(r, 0, 1, true) &&
		    !madvise(r->base, r->page_size, MADV_DONTNEED)) {
			pidfd_open_self(r);
			return 0;
		}
		snprintf(why, len,
			 "UFFDIO_CONTINUE_MODE_WP (Linux 6.6 and later): %s",
			 strerror(errno));
		r->uffd = -1;
	}
	close(u);
	return -1;
}

/* Unmaps r's view and alias, closes its userfaultfd and fd (>= 0). */
static void region_drop(struct dsm_region *r, int fd)
{
	if (r->uffd >= 0)
		close(r->uffd);
	if (r->pidfd >= 0)
		close(r->pidfd);
	munmap(r->base, r->size);
	munmap(r->alias, r->size);
	if (fd >= 0)
		close(fd);
	r->uffd = r->pidfd = -1;
	r->base = r->alias = NULL;
}

/* Whether a region of pages protected page by page could need more
 * kernel mappings than this process has left: then the message, naming
 * the limit (and why userfaultfd, which needs none, is not used: uffd_why,
 * or ""), in err. */
static bool maps_refused(size_t pages, size_t page_size, const char *uffd_why,
			 char *err, size_t errlen)
{
	long have, most;
	dsm_map_count(&have, &most);
	if (most <= 0 || have < 0 ||
	    (long)pages + 2 <= most - have - MAPS_SPARE)
		return false;
	snprintf(err, errlen,
		 "shared memory: a region of %zu pages of %zu bytes "
		 "may need %zu kernel mappings (one per page where "
		 "neighbours differ: page protections%s%s), and this "
		 "process has %ld of vm.max_map_count = %ld left "
		 "after %d spare: raise the limit (sysctl -w "
		 "vm.max_map_count=%ld), use larger pages, or share "
		 "less memory",
		 pages, page_size, pages + 2,
		 *uffd_why ? ", as userfaultfd is refused: " : "", uffd_why,
		 most - have > 0 ? most - have : 0, most, MAPS_SPARE,
		 (long)pages * 2 + have + MAPS_SPARE);
	return true;
}

/* ---- the region ---- */

int dsm_region_map(struct dsm_region *r, void *at, size_t size,
		   size_t page_size, enum dsm_region_faults how, char *err,
		   size_t errlen)
{
	return dsm_region_map_fd(r, at, size, page_size, how, -1, 0, err,
				 errlen);
}

int dsm_region_map_fd(struct dsm_region *r, void *at, size_t size,
		      size_t page_size, enum dsm_region_faults how,
		      int shared_fd, uint64_t shared_off, char *err,
		      size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->fd = r->uffd = r->pidfd = -1;
	size_t sys = (size_t)sysconf(_SC_PAGESIZE);
	if (page_size < sys || page_size % sys ||
	    (page_size & (page_size - 1))) {
		snprintf(err, errlen,
			 "shared memory: a page of %zu bytes is not a power of "
			 "two and a multiple of the system's %zu-byte page",
			 page_size, sys);
		return -1;
	}
	if (!size || size > (size_t)UINT32_MAX * page_size / 2) {
		snprintf(err, errlen,
			 "shared memory: a region of %zu bytes is empty or "
			 "too large",
			 size);
		return -1;
	}
	size_t pages = (size + page_size - 1) / page_size;
	size_t bytes = pages * page_size;
	if (how == DSM_FAULTS_PROTECT &&
	    maps_refused(pages, page_size, "", err, errlen))
		return -1;
	bool own = shared_fd < 0;
	int fd = own ? memfd_create("earth-dsm", MFD_CLOEXEC) : shared_fd;
	off_t off = own ? 0 : (off_t)shared_off;
	if (fd < 0 || (own && ftruncate(fd, (off_t)bytes))) {
		snprintf(err, errlen,
			 "shared memory: cannot make %zu bytes of memory "
			 "(memfd_create, ftruncate): %s",
			 bytes, strerror(errno));
		if (own && fd >= 0)
			close(fd);
		return -1;
	}
	/* Readable and writable where userfaultfd keeps the states. */
	void *p =
	    mmap(at, bytes,
		 how == DSM_FAULTS_PROTECT ? PROT_NONE : PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_NORESERVE | (at ? MAP_FIXED_NOREPLACE : 0),
		 fd, off);
	if (p == MAP_FAILED || (at && p != at)) {
		int e = p == MAP_FAILED ? errno : EEXIST;
		if (p != MAP_FAILED)
			munmap(p, bytes);
		if (own)
			close(fd);
		snprintf(err, errlen,
			 "shared memory: cannot map %zu bytes at %p: %s%s",
			 bytes, at, strerror(e),
			 e == EEXIST ? " (something of this process is "
				       "mapped there already: the nodes of a "
				       "job must have the same layout; run "
				       "them with earthrun, which turns off "
				       "address randomisation)"
				     : "");
		return -1;
	}
	void *alias = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_NORESERVE, fd, off);
	if (alias == MAP_FAILED) {
		snprintf(err, errlen,
			 "shared memory: cannot map the %zu bytes a second "
			 "time: %s",
			 bytes, strerror(errno));
		munmap(p, bytes);
		if (own)
			close(fd);
		return -1;
	}
	/* Not into a child of fork: it would read and write the job's
	 * memory with no fault (a userfaultfd is not inherited) and no
	 * protocol. */
	madvise(p, bytes, MADV_DONTFORK);
	madvise(alias, bytes, MADV_DONTFORK);
	r->base = p;
	r->alias = alias;
	r->fd = own ? fd : -1; /* a shared one stays its owner's */
	r->size = bytes;
	r->page_size = page_size;
	r->pages = (uint32_t)pages;
	r->page_shift = (unsigned)__builtin_ctzll(page_size);
	char why[160] = "";
	if (how != DSM_FAULTS_PROTECT && uffd_open(r, why, sizeof(why))) {
		if (how == DSM_FAULTS_UFFD) {
			snprintf(err, errlen,
				 "shared memory: EARTH_DSM_FAULTS=userfaultfd, "
				 "and the kernel refuses it: %s (use "
				 "EARTH_DSM_FAULTS=auto or protections)",
				 why);
			region_drop(r, own ? fd : -1);
			return -1;
		}
		if (mprotect(p, bytes, PROT_NONE)) {
			snprintf(err, errlen,
				 "shared memory: cannot protect the region: %s",
				 strerror(errno));
			region_drop(r, own ? fd : -1);
			return -1;
		}
	}
	if (r->uffd < 0 && how != DSM_FAULTS_PROTECT &&
	    maps_refused(pages, page_size, why, err, errlen)) {
		region_drop(r, own ? fd : -1);
		return -1;
	}
	r->state = calloc(pages, 1);
	if (!r->state) {
		region_drop(r, own ? fd : -1);
		snprintf(err, errlen,
			 "shared memory: no memory for the states of %zu "
			 "pages",
			 pages);
		return -1;
	}
	return 0;
}

void dsm_region_unmap(struct dsm_region *r)
{
	if (r->base)
		region_drop(r, r->fd);
	free(r->state);
	memset(r, 0, sizeof(*r));
	r->fd = r->uffd = r->pidfd = -1;
}

/* A state change the kernel refused: the pages would fault forever, or
 * their writes would go unnoticed, so the node ends naming them. */
static _Noreturn EARTH_COLD void refused(const struct dsm_region *r,
					 uint32_t first, uint32_t n,
					 enum dsm_page_state state)
{
	static const char *const what[] = {
	    [DSM_PAGE_INVALID] = "invalid",
	    [DSM_PAGE_READ] = "read-only",
	    [DSM_PAGE_WRITE] = "writable",
	    [DSM_PAGE_HOME] = "read-only (home)",
	};
	int e = errno;
	char pages[48];
	if (n == 1)
		snprintf(pages, sizeof(pages), "page %u", first);
	else
		snprintf(pages, sizeof(pages), "pages %u to %u", first,
			 first + n - 1);
	earth_fatal(
	    "shared memory: the kernel refused to make %s %s (%s: %s)%s", pages,
	    what[state], r->uffd >= 0 ? "userfaultfd" : "mprotect", strerror(e),
	    e == ENOMEM && r->uffd < 0
		? ": the process may be out of kernel mappings "
		  "(vm.max_map_count) or memory; raise the limit or "
		  "run with EARTH_DSM_FAULTS=auto on Linux 6.6 or "
		  "later"
		: "");
}

/* Pages' entries, once their mapping or protection is done: read by the
 * EU's fault handler while the SU writes them. */
static void states_set(struct dsm_region *r, uint32_t first, uint32_t n,
		       enum dsm_page_state state)
{
	for (uint32_t i = first; i < first + n; i++)
		__atomic_store_n(&r->state[i], (uint8_t)state,
				 __ATOMIC_RELAXED);
}

int dsm_region_set(struct dsm_region *r, uint32_t first, uint32_t n,
		   enum dsm_page_state state)
{
	if (first > r->pages || n > r->pages - first) {
		errno = EINVAL;
		return -1;
	}
	if (r->uffd >= 0 && state == DSM_PAGE_INVALID)
		return dsm_region_invalidate(r, &(struct dsm_run){first, n}, 1);
	if (r->uffd < 0)
		atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
	if (r->uffd >= 0 ? uffd_set(r, first, n, state)
			 : mprotect(view_of(r, first),
				    (size_t)n << r->page_shift, prot_of[state]))
		refused(r, first, n, state);
	states_set(r, first, n, state);
	return 0;
}

int dsm_region_invalidate(struct dsm_region *r, const struct dsm_run *runs,
			  uint32_t nruns)
{
	uint32_t lo = UINT32_MAX, hi = 0; /* what a refusal names */
	if (nruns > DSM_REGION_RUNS) {
		errno = EINVAL;
		return -1;
	}
	for (uint32_t q = 0; q < nruns; q++) {
		if (runs[q].first > r->pages ||
		    runs[q].n > r->pages - runs[q].first) {
			errno = EINVAL;
			return -1;
		}
		if (runs[q].first < lo)
			lo = runs[q].first;
		if (runs[q].first + runs[q].n > hi)
			hi = runs[q].first + runs[q].n;
	}
	if (r->uffd < 0) {
		for (uint32_t q = 0; q < nruns; q++)
			dsm_region_set(r, runs[q].first, runs[q].n,
				       DSM_PAGE_INVALID);
		return 0;
	}
	/* The stretches of each run mapped now (not invalid already), one
	 * range each, dropped whenever the vector is full and at the end. */
	struct iovec v[DSM_REGION_RUNS];
	unsigned k = 0;
	for (uint32_t q = 0; q < nruns; q++) {
		for (uint32_t i = runs[q].first, end = i + runs[q].n;
		     i < end;) {
			bool mapped =
			    dsm_region_state(r, i) != DSM_PAGE_INVALID;
			uint32_t j = i + 1;
			while (j < end && (dsm_region_state(r, j) !=
					   DSM_PAGE_INVALID) == mapped)
				j++;
			if (mapped) {
				if (k == DSM_REGION_RUNS) {
					if (drop_ranges(r, v, k))
						refused(r, lo, hi - lo,
							DSM_PAGE_INVALID);
					k = 0;
				}
				v[k].iov_base = view_of(r, i);
				v[k++].iov_len = (size_t)(j - i)
						 << r->page_shift;
			}
			i = j;
		}
	}
	if (k && drop_ranges(r, v, k))
		refused(r, lo, hi - lo, DSM_PAGE_INVALID);
	for (uint32_t q = 0; q < nruns; q++)
		states_set(r, runs[q].first, runs[q].n, DSM_PAGE_INVALID);
	return 0;
}

int dsm_region_claim(struct dsm_region *r, uint32_t page,
		     enum dsm_page_state from)
{
	if (page >= r->pages) {
		errno = EINVAL;
		return -1;
	}
	uint8_t want = (uint8_t)from;
	if (!__atomic_compare_exchange_n(&r->state[page], &want,
					 (uint8_t)DSM_PAGE_WRITE, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		errno = EAGAIN;
		return -1;
	}
	/* Another EU that faults now sees WRITE and runs the access again
	 * until this protection lands. */
	atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
	if (r->uffd >= 0 ? uffd_protect(r, page, 1, false)
			 : mprotect(view_of(r, page), r->page_size,
				    prot_of[DSM_PAGE_WRITE])) {
		int e = errno;
		__atomic_store_n(&r->state[page], want, __ATOMIC_RELAXED);
		errno = e;
		return -1;
	}
	return 0;
}
