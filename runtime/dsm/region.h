/* SPDX-License-Identifier: MIT */
/*
 * dsm/region.h - the shared region of a node: one range of addresses,
 * the same on every node of a job (so a pointer into it means the same on
 * all), cut into pages whose protection says what this node may do with
 * each: nothing (invalid: the next access faults), read, or read and write.
 *
 * The node writes a page's contents through a second view of the same
 * memory that is always writable (dsm_region_alias), so that filling a
 * page costs one change of protection (invalid to read), and a page can
 * be filled while the program may not touch it.
 *
 * A page's state is kept by the kernel in one of two ways:
 *  - userfaultfd (where the kernel has minor and write-protect faults on
 *    shared memory, and UFFDIO_CONTINUE's write-protect mode): the view is
 *    mapped readable and writable once; an invalid page is not mapped in
 *    it (MADV_DONTNEED), a read-only one is mapped write-protected
 *    (UFFDIO_CONTINUE, UFFDIO_WRITEPROTECT). An access the state does not
 *    allow raises SIGBUS (UFFD_FEATURE_SIGBUS), with the page-fault error
 *    code in the signal frame as for SIGSEGV. The view stays one kernel
 *    mapping whatever its pages' states.
 *  - page protections (mprotect; SIGSEGV), where the kernel refuses the
 *    above. Each change of protection in the middle of a run of equal
 *    pages splits a kernel mapping in two, and a process has at most
 *    vm.max_map_count mappings: such a region is refused when it could
 *    need more than the process has left (every page in a state other
 *    than its neighbours'), with a message that names the limit and how
 *    to raise it.
 */
#ifndef EARTH_DSM_REGION_H
#define EARTH_DSM_REGION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dsm_page_state {
	DSM_PAGE_INVALID = 0, /* PROT_NONE: any access faults */
	DSM_PAGE_READ = 1,    /* PROT_READ: a write faults */
	DSM_PAGE_WRITE = 2,   /* PROT_READ | PROT_WRITE */
	/* PROT_READ, a page homed on this node: its first write in an
	 * interval makes it writable and is noted (the EU may do it
	 * itself, dsm/pt.h), no twin. */
	DSM_PAGE_HOME = 3,
};

/* Whether an access may run on a page in state st. */
static inline bool dsm_page_allows(uint8_t st, bool write)
{
	return st == DSM_PAGE_WRITE ||
	       (!write && (st == DSM_PAGE_READ || st == DSM_PAGE_HOME));
}

/* How a region's pages fault (EARTH_DSM_FAULTS, in its order). */
enum dsm_region_faults {
	DSM_FAULTS_AUTO = 0,	/* userfaultfd where the kernel has it, else
				 * page protections */
	DSM_FAULTS_UFFD = 1,	/* userfaultfd, or the region is refused */
	DSM_FAULTS_PROTECT = 2, /* page protections */
};

struct dsm_region {
	uint8_t *base;	  /* the program's view: protected page by page */
	uint8_t *alias;	  /* the same memory, always writable: for the node
			   * to fill and read pages whatever their state */
	int fd;		  /* the memory (memfd) */
	int uffd;	  /* its userfaultfd, or -1: page protections */
	int pidfd;	  /* this process, where process_madvise drops pages of
			   * several runs at once (Linux 6.13 and later), or -1 */
	size_t size;	  /* bytes: pages * page_size */
	size_t page_size; /* a multiple of the system's page size */
	uint32_t pages;
	unsigned page_shift;
	uint8_t *state; /* per page: enum dsm_page_state */
	/* Changes of pages' protections or mappings made (one a system
	 * call: dsm_region_set, dsm_region_claim), by the SU and the EUs:
	 * a line of its own, away from the fields the EUs' checks read. */
	_Alignas(64) _Atomic uint64_t changes;
};

/* Maps size bytes (rounded up to pages of page_size bytes, a power of two
 * and a multiple of the system's page) at exactly `at` (never over
 * anything mapped there; NULL: anywhere), every page invalid, and the
 * same memory again anywhere, writable (alias); its pages fault as `how`
 * says. Returns 0, or -1 with a message in err (what, where, what to do). */
int dsm_region_map(struct dsm_region *r, void *at, size_t size,
		   size_t page_size, enum dsm_region_faults how, char *err,
		   size_t errlen);

/* The same, on bytes [shared_off, shared_off + size) of a file another
 * owns (earthrun's job mapping: other nodes map it too and read this
 * node's pages one-sided); fd stays open when the region goes. */
int dsm_region_map_fd(struct dsm_region *r, void *at, size_t size,
		      size_t page_size, enum dsm_region_faults how,
		      int shared_fd, uint64_t shared_off, char *err,
		      size_t errlen);

/* "userfaultfd" or "protections": how r's pages fault. */
static inline const char *dsm_region_faults_name(const struct dsm_region *r)
{
	return r->uffd >= 0 ? "userfaultfd" : "protections";
}

/* Unmaps the region. */
void dsm_region_unmap(struct dsm_region *r);

/* Page's state. The EU's fault handler writes a home page's (its first
 * write in an interval) while the SU reads and writes the others' and
 * that one's: every access is atomic (relaxed: the page's list to the SU
 * orders what matters, dsm/pt.h). */
static inline enum dsm_page_state dsm_region_state(const struct dsm_region *r,
						   uint32_t page)
{
	return (enum dsm_page_state)__atomic_load_n(&r->state[page],
						    __ATOMIC_RELAXED);
}

/* Sets pages first .. first+n-1 to state (their mapping or protection,
 * then their entries). Returns 0, or -1 (EINVAL) when they are not all in
 * the region. A change the kernel refuses (mprotect, madvise or a
 * userfaultfd ioctl failing) ends the node with a message naming the
 * pages (earth_fatal): left as they were, they would fault forever or
 * their writes would go unnoticed. */
int dsm_region_set(struct dsm_region *r, uint32_t first, uint32_t n,
		   enum dsm_page_state state);

/* A run of pages: first .. first + n - 1. */
struct dsm_run {
	uint32_t first, n;
};

/* Runs dsm_region_invalidate takes at most. */
#define DSM_REGION_RUNS 64

/* Sets every page of runs[0 .. nruns) (nruns <= DSM_REGION_RUNS, the runs
 * disjoint) invalid, as dsm_region_set would run by run: under
 * userfaultfd in one system call for all where the kernel has
 * process_madvise (Linux 6.13 and later: r->pidfd), else one a run.
 * Returns 0, or -1 (EINVAL) when a run is not in the region or there are
 * too many; a change the kernel refuses ends the node, as there. */
int dsm_region_invalidate(struct dsm_region *r, const struct dsm_run *runs,
			  uint32_t nruns);

/* Claims page for writing: from state `from` (a home page's
 * DSM_PAGE_HOME) to DSM_PAGE_WRITE, its entry first, by compare-and-swap,
 * then its protection. Of several EUs that fault on the page at once one
 * claims it; the SU's re-protection (its protection, then its entry, and
 * only of a page whose entry says WRITE) cannot fall between a claim's
 * two steps, so a page's entry and protection agree once both are done.
 * Returns 0 when this caller changed it; -1 when the page was not in
 * state from (errno EAGAIN) or its protection could not change (errno
 * from mprotect or UFFDIO_WRITEPROTECT; the entry is from again). */
int dsm_region_claim(struct dsm_region *r, uint32_t page,
		     enum dsm_page_state from);

/* The page that holds addr, or -1 when addr is not in the region. */
static inline long dsm_region_page_of(const struct dsm_region *r,
				      const void *addr)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)r->base;
	return a - b < r->size ? (long)((a - b) >> r->page_shift) : -1;
}

/* Page page through the writable view. */
static inline uint8_t *dsm_region_alias(const struct dsm_region *r,
					uint32_t page)
{
	return r->alias + ((size_t)page << r->page_shift);
}

/* How many mappings this process has, and the most it may have
 * (vm.max_map_count); -1 each where it cannot be read. */
void dsm_map_count(long *have, long *most);

#endif
