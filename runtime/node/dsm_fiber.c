/* SPDX-License-Identifier: MIT */
/*
 * node/dsm_fiber.c - fibers' split-phase operations on shared memory
 * (earth_dsm_fiber.h): each checks what the EU can check (a fiber of a
 * shared-memory program, a slot) and posts one request (SU_OP_DSM,
 * DSM_R_F_*) that the SU performs (su/dsm_fiber.c) and answers by
 * signalling the slot; the page table the inline check reads.
 */
#define EARTH_INTERNAL 1
#include "earth_dsm_fiber.h"

#include "dsm/proto.h"
#include "dsm/pt.h"
#include "eu/eu.h"
#include "node/node.h"

struct earth_dsm_view earth_dsm_view_;

/* Acquisitions an EU found every page of usable (no request): every EU
 * of the node adds. */
static _Atomic uint64_t eu_hits;

/* Ranges of at most this many pages may be hits (the EU's work stays
 * short); longer ones go to the SU. */
#define HIT_PAGES_MAX 64

void node_dsm_fiber_stats(struct dsm_stats *st)
{
	uint64_t h = atomic_load_explicit(&eu_hits, memory_order_relaxed);
	st->f_acquires += h;
	st->f_hits += h;
	st->f_hits_eu = h;
}

/* Every page of [p, p + len) usable now and the range inside one
 * allocation: held (the SU never takes it away until the release), true;
 * else nothing held, false (the SU decides, and names a bad range). */
static bool hit(const void *p, size_t len, bool write)
{
	uintptr_t off = (uintptr_t)p - earth_dsm_view_.base;
	if (!dsm_g.hold || !len || off >= earth_dsm_view_.size ||
	    len > earth_dsm_view_.size - off)
		return false;
	uint32_t first = (uint32_t)(off >> earth_dsm_view_.page_shift);
	uint32_t last =
	    (uint32_t)((off + len - 1) >> earth_dsm_view_.page_shift);
	size_t in_last = (off + len - 1) & (dsm_g.region.page_size - 1);
	if (last - first >= HIT_PAGES_MAX ||
	    in_last >=
		dsm_g.region.page_size -
		    __atomic_load_n(&dsm_g.short_by[last], __ATOMIC_RELAXED))
		return false;
	for (uint32_t k = first; k <= last; k++) {
		uint8_t pl =
		    __atomic_load_n(&dsm_g.placed[k], __ATOMIC_RELAXED);
		if ((k == first ? pl == DSM_PLACED_NONE
				: pl != DSM_PLACED_IN) ||
		    !dsm_hold_try(dsm_g.hold, dsm_g.shrinking, dsm_g.deferred,
				  dsm_g.region.state, k, write)) {
			while (k-- > first)
				atomic_fetch_sub(&dsm_g.hold[k], 1);
			return false;
		}
	}
	atomic_fetch_add_explicit(&eu_hits, 1, memory_order_relaxed);
	return true;
}

void node_dsm_fiber_open(void)
{
	earth_dsm_view_.base = (uintptr_t)dsm_g.region.base;
	earth_dsm_view_.size = dsm_g.region.size;
	earth_dsm_view_.page_shift = dsm_g.region.page_shift;
	earth_dsm_view_.state = dsm_g.region.state;
}

static void check(const char *op, const void *slot)
{
	EU_CHECK_IN_FIBER(op);
	if (q_unlikely(!earth_dsm_view_.state))
		eu_misuse(op, "no shared memory in this program: run it under "
			      "earth_dsm_main (earth_dsm.h)");
	if (q_unlikely(!slot))
		eu_misuse(op, "a null slot");
	eu_dsm_faults_on();
}

static void check_g(const char *op, earth_gslot slot)
{
	check(op, (void *)(uintptr_t)1);
	if (q_unlikely(earth_gslot_node(slot) >= dsm_g.nodes ||
		       !earth_gslot_addr(slot)))
		eu_misuse(op, "a global slot naming no slot of a node of the "
			      "job (earth_slot_global)");
}

static uint64_t mode_len(const char *op, size_t len, enum earth_dsm_mode mode)
{
	if (q_unlikely(mode != EARTH_DSM_READ && mode != EARTH_DSM_WRITE))
		eu_misuse(op,
			  "mode %d is neither EARTH_DSM_READ nor "
			  "EARTH_DSM_WRITE",
			  (int)mode);
	if (q_unlikely((int64_t)len < 0))
		eu_misuse(op,
			  "a negative length (%lld bytes): acquire a count of "
			  "1 element or more",
			  (long long)len);
	if (q_unlikely(len >= (size_t)1 << 62))
		eu_misuse(op,
			  "a length of %zu bytes, more than shared memory "
			  "holds (EARTH_DSM_MB)",
			  len);
	return (uint64_t)len << 1 | (mode == EARTH_DSM_WRITE);
}

void earth_dsm_acquire_sync(const void *p, size_t len, enum earth_dsm_mode mode,
			    earth_slot *slot)
{
	const char *op = "earth_dsm_acquire_sync";
	check(op, slot);
	uint64_t lm = mode_len(op, len, mode);
	if (hit(p, len, mode == EARTH_DSM_WRITE)) {
		earth_sync(slot);
		return;
	}
	eu_post_dsm_fiber(DSM_R_F_ACQUIRE, (uintptr_t)slot, false, (uintptr_t)p,
			  lm, 0);
}

void earth_dsm_acquire_rsync(const void *p, size_t len,
			     enum earth_dsm_mode mode, earth_gslot slot)
{
	const char *op = "earth_dsm_acquire_rsync";
	check_g(op, slot);
	uint64_t lm = mode_len(op, len, mode);
	if (hit(p, len, mode == EARTH_DSM_WRITE)) {
		earth_rsync(slot);
		return;
	}
	eu_post_dsm_fiber(DSM_R_F_ACQUIRE, slot.bits, true, (uintptr_t)p, lm,
			  0);
}

void earth_dsm_release_sync(const void *p, size_t len, earth_slot *slot)
{
	check("earth_dsm_release_sync", slot);
	eu_post_dsm_fiber(DSM_R_F_RELEASE, (uintptr_t)slot, false, (uintptr_t)p,
			  len, 0);
}

void earth_dsm_release_rsync(const void *p, size_t len, earth_gslot slot)
{
	check_g("earth_dsm_release_rsync", slot);
	eu_post_dsm_fiber(DSM_R_F_RELEASE, slot.bits, true, (uintptr_t)p, len,
			  0);
}

void earth_dsm_lock_sync(earth_dsm_lock_t lock, earth_slot *slot)
{
	check("earth_dsm_lock_sync", slot);
	node_dsm_check_object("earth_dsm_lock_sync", "lock", lock);
	eu_post_dsm_fiber(DSM_R_F_LOCK, (uintptr_t)slot, false, lock, 0, 0);
}

void earth_dsm_lock_rsync(earth_dsm_lock_t lock, earth_gslot slot)
{
	check_g("earth_dsm_lock_rsync", slot);
	node_dsm_check_object("earth_dsm_lock_rsync", "lock", lock);
	eu_post_dsm_fiber(DSM_R_F_LOCK, slot.bits, true, lock, 0, 0);
}

void earth_dsm_unlock_sync(earth_dsm_lock_t lock, earth_slot *slot)
{
	check("earth_dsm_unlock_sync", slot);
	node_dsm_check_object("earth_dsm_unlock_sync", "lock", lock);
	eu_post_dsm_fiber(DSM_R_F_UNLOCK, (uintptr_t)slot, false, lock, 0, 0);
}

static void barrier_count(const char *op, unsigned count)
{
	if (q_unlikely(!count ||
		       count > (uint64_t)dsm_g.nodes * DSM_WAITERS_PER_NODE))
		eu_misuse(op, "a barrier count of %u (1 to %u)", count,
			  dsm_g.nodes * DSM_WAITERS_PER_NODE);
}

void earth_dsm_barrier_sync(earth_dsm_barrier_t b, unsigned count,
			    earth_slot *slot)
{
	const char *op = "earth_dsm_barrier_sync";
	check(op, slot);
	barrier_count(op, count);
	node_dsm_check_object(op, "barrier", b);
	eu_post_dsm_fiber(DSM_R_F_BARRIER, (uintptr_t)slot, false, b, count, 0);
}

void earth_dsm_barrier_rsync(earth_dsm_barrier_t b, unsigned count,
			     earth_gslot slot)
{
	const char *op = "earth_dsm_barrier_rsync";
	check_g(op, slot);
	barrier_count(op, count);
	node_dsm_check_object(op, "barrier", b);
	eu_post_dsm_fiber(DSM_R_F_BARRIER, slot.bits, true, b, count, 0);
}

void earth_dsm_flag_set_sync(earth_dsm_flag_t f, earth_slot *slot)
{
	check("earth_dsm_flag_set_sync", slot);
	node_dsm_check_object("earth_dsm_flag_set_sync", "flag", f);
	eu_post_dsm_fiber(DSM_R_F_FLAG_SET, (uintptr_t)slot, false, f, 0, 0);
}

void earth_dsm_flag_wait_sync(earth_dsm_flag_t f, earth_slot *slot)
{
	check("earth_dsm_flag_wait_sync", slot);
	node_dsm_check_object("earth_dsm_flag_wait_sync", "flag", f);
	eu_post_dsm_fiber(DSM_R_F_FLAG_WAIT, (uintptr_t)slot, false, f, 0, 0);
}

void earth_dsm_flag_wait_rsync(earth_dsm_flag_t f, earth_gslot slot)
{
	check_g("earth_dsm_flag_wait_rsync", slot);
	node_dsm_check_object("earth_dsm_flag_wait_rsync", "flag", f);
	eu_post_dsm_fiber(DSM_R_F_FLAG_WAIT, slot.bits, true, f, 0, 0);
}

void earth_dsm_alloc_sync(size_t size, enum earth_dsm_place place, unsigned arg,
			  void **result, earth_slot *slot)
{
	const char *op = "earth_dsm_alloc_sync";
	check(op, slot);
	if (q_unlikely(!result || ((uintptr_t)result & (sizeof(void *) - 1))))
		eu_misuse(op,
			  "result %p is not where a pointer can go: pass "
			  "the address of a void * (or T *) of the fiber's "
			  "frame",
			  (void *)result);
	if (q_unlikely(!node_dsm_place_ok(place, arg)))
		eu_misuse(op,
			  "placement %d with argument %u: a placement of "
			  "earth_dsm.h (EARTH_DSM_CYCLIC takes pages per block "
			  "> 0, EARTH_DSM_NODE a node below %u)",
			  (int)place, arg, dsm_g.nodes);
	if (q_unlikely(size == 0 || size > dsm_g.region.size))
		eu_misuse(op,
			  "%zu bytes: from 1 byte to the shared region's %zu "
			  "(EARTH_DSM_MB)",
			  size, (size_t)dsm_g.region.size);
	eu_post_dsm_fiber(DSM_R_F_ALLOC, (uintptr_t)slot, false, size,
			  (uint64_t)place | (uint64_t)arg << 8,
			  (uintptr_t)result);
}

void earth_dsm_free_sync(void *p, earth_slot *slot)
{
	const char *op = "earth_dsm_free_sync";
	check(op, slot);
	long page = dsm_region_page_of(&dsm_g.region, p);
	if (q_unlikely(page < 0 ||
		       ((uintptr_t)p & (dsm_g.region.page_size - 1))))
		eu_misuse(op, "%p is not memory from earth_dsm_alloc", p);
	eu_post_dsm_fiber(DSM_R_F_FREE, (uintptr_t)slot, false, (uint64_t)page,
			  0, 0);
}
