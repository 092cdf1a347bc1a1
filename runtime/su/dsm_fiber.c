/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_fiber.c - the SU's side of fibers' split-phase operations on
 * shared memory (earth_dsm_fiber.h; docs/architecture.md, "Fibers acquire
 * pages (split phase)"): an acquisition of a range waits for every page
 * of it, one fetch per page whatever the number of fibers and threads
 * waiting for it, then holds the pages (dsm_proto_pin) and signals its
 * slot; a release lets go of them, sends the node's diffs and signals
 * once they are acknowledged; locks, barriers and flags go through the
 * threads' path (su/dsm.c) with a record of their own, which signals a
 * slot where a thread would be resumed; so do allocations (the address
 * stored where the fiber said before the signal) and frees.
 *
 * Every request is checked first: a range inside pages of an allocation,
 * a release of pages the node's fibers hold, an unlock of a lock they
 * hold; a request that fails ends the job naming the fiber that posted
 * it and what to do.
 */
#define EARTH_INTERNAL 1
#include "base/srctab.h"
#include "base/symbols.h"
#include "dsm/proto.h"
#include "dsm/pt.h"
#include "su/dsm_fiber.h"
#include "su/su.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Acquisitions under way at once, at most (each a record until its slot
 * is signalled): past that a program is refused with a message. */
#define ACQ_MAX (1u << 20)

/* One acquisition of a range, waiting for its pages. */
struct acq {
	struct acq *next; /* on its page's list, or the release list */
	uint64_t slot, fiber;
	bool gslot, write;
	uint32_t first, n; /* pages */
	uint32_t at;	   /* the page it waits for */
	uint32_t passes;   /* over its range so far */
};

static struct {
	struct earth_node *n;
	struct acq **wait;  /* per page: acquisitions waiting for it */
	uint32_t wait_hi;   /* every page waited for is below it */
	uint8_t *placed;    /* per page: DSM_PLACED_* (dsm/pt.h) */
	uint16_t *short_by; /* per page: bytes past an allocation's end */
	struct acq *rel_head, *rel_tail; /* releases waiting for acks */
	uint32_t live;			 /* records under way */
	uint64_t acquires, hits, coalesced, releases;
} fs;

/* ---- messages ---- */

static EARTH_COLD _Noreturn void misuse(uint64_t fiber, const char *op,
					const char *fmt, ...)
{
	char msg[512], where[256] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	earth_fiber_fn fn;
	void *addr = (void *)(uintptr_t)fiber;
	memcpy(&fn, &addr, sizeof(fn));
	if (fiber && src_op_where(fn, op, where, sizeof(where)))
		earth_fatal("%s: %s", where, msg);
	const char *name = fiber ? sym_name((uintptr_t)fiber) : NULL;
	if (name)
		earth_fatal("%s: %s (in fiber %s)", op, msg, name);
	earth_fatal("%s: %s (in fiber at %p)", op, msg, addr);
}

const char *su_dsm_fiber_name(uint64_t fiber)
{
	static char buf[256];
	earth_fiber_fn fn;
	void *addr = (void *)(uintptr_t)fiber;
	memcpy(&fn, &addr, sizeof(fn));
	const char *name;
	if (fiber && src_fiber_short(fn, buf, sizeof(buf)))
		return buf;
	if (fiber && (name = sym_name((uintptr_t)fiber)))
		return name;
	snprintf(buf, sizeof(buf), "at %p", addr);
	return buf;
}

static void fire(uint64_t slot, bool gslot, const char *op)
{
	if (gslot)
		su_signal_gslot(fs.n, slot, op, 0);
	else
		su_slot_signal(&su_g, (earth_slot *)(uintptr_t)slot, op);
}

/* ---- set up ---- */

int su_dsm_fiber_open(uint32_t pages)
{
	fs.wait = calloc(pages, sizeof(*fs.wait));
	fs.placed = calloc(pages, 1);
	fs.short_by = calloc(pages, sizeof(*fs.short_by));
	struct dsm_proto *p = su_dsm_proto();
	dsm_g.hold = p->pin;
	dsm_g.shrinking = p->shrinking;
	dsm_g.deferred = p->deferred;
	dsm_g.placed = fs.placed;
	dsm_g.short_by = fs.short_by;
	return fs.wait && fs.placed && fs.short_by ? 0 : -1;
}

void su_dsm_fiber_close(void)
{
	for (uint32_t k = 0; fs.wait && k < fs.wait_hi; k++)
		for (struct acq *a = fs.wait[k], *nx; a; a = nx) {
			nx = a->next;
			free(a);
		}
	for (struct acq *a = fs.rel_head, *nx; a; a = nx) {
		nx = a->next;
		free(a);
	}
	free(fs.wait);
	free(fs.placed);
	free(fs.short_by);
	dsm_g.hold = NULL;
	dsm_g.shrinking = dsm_g.deferred = NULL;
	dsm_g.placed = NULL;
	dsm_g.short_by = NULL;
	memset(&fs, 0, sizeof(fs));
}

void su_dsm_fiber_placed(uint32_t first, uint32_t n, uint32_t tail)
{
	if (!fs.placed || !n)
		return;
	uint32_t last = first + n - 1;
	for (uint32_t k = first; k <= last; k++) {
		__atomic_store_n(
		    &fs.short_by[k],
		    (uint16_t)(k == last ? dsm_g.region.page_size - tail : 0),
		    __ATOMIC_RELAXED);
		__atomic_store_n(&fs.placed[k],
				 k == first ? DSM_PLACED_START : DSM_PLACED_IN,
				 __ATOMIC_RELAXED);
	}
}

int su_dsm_fiber_unplace(uint64_t first)
{
	uint32_t pages = dsm_g.region.pages;
	if (!fs.placed || first >= pages ||
	    fs.placed[first] != DSM_PLACED_START)
		return -1;
	uint32_t k = (uint32_t)first;
	do
		__atomic_store_n(&fs.placed[k], DSM_PLACED_NONE,
				 __ATOMIC_RELAXED);
	while (++k < pages && fs.placed[k] == DSM_PLACED_IN);
	return 0;
}

void su_dsm_fiber_stats(struct dsm_stats *st)
{
	st->f_acquires = fs.acquires;
	st->f_hits = fs.hits;
	st->f_coalesced = fs.coalesced;
	st->f_releases = fs.releases;
	st->f_deferred = su_dsm_proto() ? su_dsm_proto()->deferred_n : 0;
}

/* ---- acquiring a range ---- */

/* The range [addr, addr + len) runs past the end of the allocation
 * that holds page `first` of it: named, with the allocation. */
static EARTH_COLD _Noreturn void past_end(uint64_t fiber, const char *op,
					  uint64_t addr, uint64_t len,
					  uint32_t first)
{
	const struct dsm_region *r = &dsm_g.region;
	uint32_t start = first, end = first + 1; /* the allocation's pages */
	while (start > 0 && fs.placed[start] != DSM_PLACED_START)
		start--;
	while (end < r->pages && fs.placed[end] == DSM_PLACED_IN)
		end++;
	uint64_t from =
	    (uint64_t)(uintptr_t)r->base + ((uint64_t)start << r->page_shift);
	uint64_t bytes =
	    ((uint64_t)(end - start) << r->page_shift) - fs.short_by[end - 1];
	misuse(fiber, op,
	       "the range [%#llx, +%llu) runs %llu bytes past the end of its "
	       "allocation ([%#llx, +%llu)): acquire only inside one "
	       "allocation",
	       (unsigned long long)addr, (unsigned long long)len,
	       (unsigned long long)(addr + len - (from + bytes)),
	       (unsigned long long)from, (unsigned long long)bytes);
}

/* The pages [*first, *first + *n) of range [addr, addr + len) of a
 * request, checked: inside the region, inside one live allocation. */
static void range_of(uint64_t fiber, const char *op, uint64_t addr,
		     uint64_t len, uint32_t *first, uint32_t *n)
{
	const struct dsm_region *r = &dsm_g.region;
	uintptr_t base = (uintptr_t)r->base;
	if (!len || addr < base || addr - base >= r->size ||
	    len > r->size - (addr - base))
		misuse(fiber, op,
		       "the range [%#llx, +%llu) is not inside shared memory "
		       "(earth_dsm_alloc gave [%p, %p)): acquire and release "
		       "only memory from earth_dsm_alloc, and a length of at "
		       "least 1",
		       (unsigned long long)addr, (unsigned long long)len,
		       (void *)r->base, (void *)(r->base + r->size));
	*first = (uint32_t)((addr - base) >> r->page_shift);
	uint32_t last = (uint32_t)((addr - base + len - 1) >> r->page_shift);
	*n = last - *first + 1;
	if (fs.placed[*first] == DSM_PLACED_NONE)
		misuse(fiber, op,
		       "the range [%#llx, +%llu) starts in page %u (at %p), "
		       "which no allocation holds (never given by "
		       "earth_dsm_alloc, or freed): acquire only inside an "
		       "allocation",
		       (unsigned long long)addr, (unsigned long long)len,
		       *first,
		       (void *)(r->base + ((size_t)*first << r->page_shift)));
	for (uint32_t k = *first + 1; k <= last; k++)
		if (fs.placed[k] != DSM_PLACED_IN)
			past_end(fiber, op, addr, len, *first);
	size_t in_last = (size_t)((addr - base + len - 1) & (r->page_size - 1));
	if (in_last >= r->page_size - fs.short_by[last])
		past_end(fiber, op, addr, len, *first);
}

/* Whether page is usable for a's access, asking the protocol for it
 * (a fetch, a claim, a twin) when not: on the first pass for every page,
 * later only for pages with nothing out (a fetch or claim out is asked
 * once). The first page that is not usable takes a on its list
 * (*queued); a wait that joins a fetch or claim out at the first pass is
 * counted as coalesced. */
static bool page_ready(struct acq *a, uint32_t page, bool *queued)
{
	struct dsm_proto *p = su_dsm_proto();
	uint8_t st = dsm_region_state(&dsm_g.region, page);
	if (!dsm_proto_stale(p, page) && dsm_page_allows(st, a->write))
		return true;
	bool out = p->fetching[page] != 0; /* a fetch or claim out */
	if ((!out || !a->passes) &&
	    dsm_proto_access(p, page, a->write, a->passes) == DSM_ACCESS_OK)
		return true;
	if (out && !a->passes)
		fs.coalesced++;
	if (!*queued) {
		*queued = true;
		a->at = page;
		a->next = fs.wait[page];
		fs.wait[page] = a;
		if (page >= fs.wait_hi)
			fs.wait_hi = page + 1;
	}
	return false;
}

/* Tries acquisition a: every page usable in one pass (nothing can change
 * in between: the SU alone changes pages) -> held, slot signalled; else
 * every page not usable asked for at once, a waiting for the first. */
static void acq_try(struct acq *a)
{
	bool queued = false, all = true;
	for (uint32_t k = a->first; k < a->first + a->n; k++)
		all &= page_ready(a, k, &queued);
	a->passes++;
	if (!all)
		return;
	struct dsm_proto *p = su_dsm_proto();
	for (uint32_t k = a->first; k < a->first + a->n; k++)
		if (dsm_proto_pin(p, k))
			misuse(a->fiber, dsm_req_name(DSM_R_F_ACQUIRE),
			       "page %u is held by 65535 acquisitions: "
			       "release ranges before acquiring them again",
			       k);
	fire(a->slot, a->gslot, dsm_req_name(DSM_R_F_ACQUIRE));
	fs.live--;
	free(a);
}

void su_dsm_fiber_page(uint32_t page)
{
	struct acq *a = fs.wait[page];
	fs.wait[page] = NULL;
	while (a) {
		struct acq *next = a->next;
		acq_try(a);
		a = next;
	}
}

static struct acq *acq_new(const struct su_req *r, const char *op)
{
	if (fs.live >= ACQ_MAX)
		misuse(r->a, op,
		       "%u acquisitions and releases of fibers are under way "
		       "on this node: wait for some to fire before posting "
		       "more",
		       ACQ_MAX);
	struct acq *a = calloc(1, sizeof(*a));
	if (!a)
		earth_fatal("shared memory: out of memory");
	fs.live++;
	a->slot = r->slot;
	a->gslot = (r->flags & SU_REQ_GSLOT) != 0;
	a->fiber = r->a;
	return a;
}

static void acquire(const struct su_req *r)
{
	const char *op = dsm_req_name(DSM_R_F_ACQUIRE);
	uint32_t first, n;
	range_of(r->a, op, r->b, r->c >> 1, &first, &n);
	struct acq *a = acq_new(r, op);
	a->first = first;
	a->n = n;
	a->write = r->c & 1;
	fs.acquires++;
	bool waited = false;
	for (uint32_t k = first; k < first + n && !waited; k++)
		if (!dsm_proto_stale(su_dsm_proto(), k) &&
		    dsm_page_allows(dsm_region_state(&dsm_g.region, k),
				    a->write))
			continue;
		else
			waited = true;
	if (!waited)
		fs.hits++;
	acq_try(a);
}

/* ---- releasing ---- */

static void release_range(const struct su_req *r)
{
	const char *op = dsm_req_name(DSM_R_F_RELEASE);
	uint32_t first, n;
	range_of(r->a, op, r->b, r->c, &first, &n);
	struct dsm_proto *p = su_dsm_proto();
	for (uint32_t k = first; k < first + n; k++)
		if (!p->pin[k])
			misuse(r->a, op,
			       "page %u of the range [%#llx, +%llu) is not "
			       "held by any acquisition of this node's fibers "
			       "(released twice, or never acquired): release "
			       "what an earth_dsm_acquire_sync gave, once",
			       k, (unsigned long long)r->b,
			       (unsigned long long)r->c);
	for (uint32_t k = first; k < first + n; k++)
		if (dsm_proto_unpin(p, k) == 1)
			su_dsm_page_came(k);
	fs.releases++;
	if (dsm_proto_release(p) < 0)
		earth_fatal("shared memory: a release failed: %m");
	if (!su_dsm_releasing()) {
		fire(r->slot, (r->flags & SU_REQ_GSLOT) != 0, op);
		return;
	}
	struct acq *a = acq_new(r, op);
	if (fs.rel_tail)
		fs.rel_tail->next = a;
	else
		fs.rel_head = a;
	fs.rel_tail = a;
}

void su_dsm_fiber_acked(void)
{
	struct acq *a;
	while ((a = fs.rel_head)) {
		fs.rel_head = a->next;
		if (!fs.rel_head)
			fs.rel_tail = NULL;
		fire(a->slot, a->gslot, dsm_req_name(DSM_R_F_RELEASE));
		fs.live--;
		free(a);
	}
}

/* ---- locks, barriers, flags ---- */

void su_dsm_fiber_resume(struct dsm_pt *pt)
{
	if (pt->wait_cause == DSM_WAIT_LOCK)
		pt->holds = true; /* the node's fibers hold it: kept */
	if (pt->fout) {
		/* An allocation: its address (NULL when node 0 had no room)
		 * where the fiber said, before the slot's signal publishes
		 * it to the fiber it enables. */
		void *at = pt->result < 0
			       ? NULL
			       : dsm_g.region.base + (size_t)pt->result *
							 dsm_g.region.page_size;
		memcpy((void *)(uintptr_t)pt->fout, &at, sizeof(at));
	}
	fire(pt->fslot, pt->fgslot, "DSM SYNC");
	if (!pt->holds)
		su_dsm_waiter_free(pt);
}

static void sync_op(const struct su_req *r, unsigned req)
{
	static const unsigned as[] = {
	    [DSM_R_F_LOCK] = DSM_R_LOCK,
	    [DSM_R_F_UNLOCK] = DSM_R_UNLOCK,
	    [DSM_R_F_BARRIER] = DSM_R_BARRIER,
	    [DSM_R_F_FLAG_SET] = DSM_R_FLAG_SET,
	    [DSM_R_F_FLAG_WAIT] = DSM_R_FLAG_WAIT,
	    [DSM_R_F_ALLOC] = DSM_R_ALLOC,
	    [DSM_R_F_FREE] = DSM_R_FREE,
	};
	const char *op = dsm_req_name(req);
	struct dsm_pt *pt;
	if (req == DSM_R_F_UNLOCK) {
		pt = su_dsm_lock_holder(r->b);
		if (!pt)
			misuse(r->a, op,
			       "lock %#llx is not held by this node's fibers "
			       "(unlocked twice, or never locked by a fiber): "
			       "unlock once what earth_dsm_lock_sync granted",
			       (unsigned long long)r->b);
		pt->holds = false;
	} else if (req == DSM_R_F_FREE && su_dsm_fiber_unplace(r->b)) {
		misuse(r->a, op, "%p: " SU_DSM_FREE_REFUSED,
		       (void *)(dsm_g.region.base +
				((size_t)r->b << dsm_g.region.page_shift)));
	} else {
		pt = calloc(1, sizeof(*pt));
		if (!pt)
			earth_fatal("shared memory: out of memory");
		pt->fiber = true;
		if (!su_dsm_waiter_take(pt))
			misuse(r->a, op,
			       "%u locks, barriers and flags of this node's "
			       "fibers are waited on or held at once: at most "
			       "%u",
			       DSM_WAITERS_PER_NODE - DSM_THREADS_PER_NODE + 1,
			       DSM_WAITERS_PER_NODE - DSM_THREADS_PER_NODE);
		pt->id = UINT32_MAX; /* no thread */
	}
	pt->fslot = r->slot;
	pt->fgslot = (r->flags & SU_REQ_GSLOT) != 0;
	pt->ffiber = r->a;
	pt->fout = req == DSM_R_F_ALLOC ? r->spare : 0;
	pt->wait_t0 = q_tsc();
	pt->wait_cause = req == DSM_R_F_LOCK	    ? DSM_WAIT_LOCK
			 : req == DSM_R_F_BARRIER   ? DSM_WAIT_BARRIER
			 : req == DSM_R_F_FLAG_WAIT ? DSM_WAIT_FLAG
						    : DSM_WAIT_OTHER;
	su_dsm_sync_req(pt, as[req], r->b, r->c);
}

void su_dsm_fiber_request(struct earth_node *n, const struct su_req *r)
{
	fs.n = n;
	unsigned req = (unsigned)r->n;
	switch (req) {
	case DSM_R_F_ACQUIRE:
		acquire(r);
		return;
	case DSM_R_F_RELEASE:
		release_range(r);
		return;
	case DSM_R_F_LOCK:
	case DSM_R_F_UNLOCK:
	case DSM_R_F_BARRIER:
	case DSM_R_F_FLAG_SET:
	case DSM_R_F_FLAG_WAIT:
	case DSM_R_F_ALLOC:
	case DSM_R_F_FREE:
		sync_op(r, req);
		return;
	default:
		earth_fatal("shared memory: a fiber's request of kind %u", req);
	}
}
