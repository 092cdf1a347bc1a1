/* SPDX-License-Identifier: MIT */
/*
 * dsm/region.c - mapping the shared region at its address, and the
 * protection of its pages (dsm/region.h).
 */
#define _GNU_SOURCE 1
#include "dsm/region.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

int dsm_region_map(struct dsm_region *r, void *at, size_t size,
		   size_t page_size, char *err, size_t errlen)
{
	return dsm_region_map_fd(r, at, size, page_size, -1, 0, err, errlen);
}

int dsm_region_map_fd(struct dsm_region *r, void *at, size_t size,
		      size_t page_size, int shared_fd, uint64_t shared_off,
		      char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
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
	long have, most;
	dsm_map_count(&have, &most);
	if (most > 0 && have >= 0 &&
	    (long)pages + 2 > most - have - MAPS_SPARE) {
		snprintf(err, errlen,
			 "shared memory: a region of %zu pages of %zu bytes "
			 "may need %zu kernel mappings (one per page where "
			 "neighbours differ), and this process has %ld of "
			 "vm.max_map_count = %ld left after %d spare: raise "
			 "the limit (sysctl -w vm.max_map_count=%ld), use "
			 "larger pages, or share less memory",
			 pages, page_size, pages + 2,
			 most - have > 0 ? most - have : 0, most, MAPS_SPARE,
			 (long)pages * 2 + have + MAPS_SPARE);
		return -1;
	}
	size_t bytes = pages * page_size;
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
	void *p =
	    mmap(at, bytes, PROT_NONE,
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
	r->state = calloc(pages, 1);
	if (!r->state) {
		munmap(p, bytes);
		munmap(alias, bytes);
		if (own)
			close(fd);
		snprintf(err, errlen,
			 "shared memory: no memory for the states of %zu "
			 "pages",
			 pages);
		return -1;
	}
	r->base = p;
	r->alias = alias;
	r->fd = own ? fd : -1; /* a shared one stays its owner's */
	r->size = bytes;
	r->page_size = page_size;
	r->pages = (uint32_t)pages;
	r->page_shift = (unsigned)__builtin_ctzll(page_size);
	return 0;
}

void dsm_region_unmap(struct dsm_region *r)
{
	if (r->base) {
		munmap(r->base, r->size);
		munmap(r->alias, r->size);
		if (r->fd >= 0)
			close(r->fd);
	}
	free(r->state);
	memset(r, 0, sizeof(*r));
}

int dsm_region_set(struct dsm_region *r, uint32_t first, uint32_t n,
		   enum dsm_page_state state)
{
	if (first > r->pages || n > r->pages - first) {
		errno = EINVAL;
		return -1;
	}
	if (mprotect(r->base + ((size_t)first << r->page_shift),
		     (size_t)n << r->page_shift, prot_of[state]))
		return -1;
	/* Read by the EU's fault handler while the SU writes it. */
	for (uint32_t i = first; i < first + n; i++)
		__atomic_store_n(&r->state[i], (uint8_t)state,
				 __ATOMIC_RELAXED);
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
	if (mprotect(r->base + ((size_t)page << r->page_shift), r->page_size,
		     prot_of[DSM_PAGE_WRITE])) {
		int e = errno;
		__atomic_store_n(&r->state[page], want, __ATOMIC_RELAXED);
		errno = e;
		return -1;
	}
	return 0;
}
