/* SPDX-License-Identifier: MIT */
/*
 * earth_dsm_fiber.h - shared memory (earth_dsm.h) from fibers: split-phase
 * operations that never block and never fault. A fiber asks for the pages
 * of a range it will touch (earth_dsm_acquire_sync) and ends; the slot
 * fires when the node's SU has made every page of the range usable
 * (fetched from its home, twinned for a write), while the EU runs other
 * fibers. From then until the node's fibers release the range
 * (earth_dsm_release_sync), the pages stay usable: an invalidation a
 * lock, barrier or flag brings meanwhile waits for the release, and a
 * release by anyone on the node keeps them writable. Locks, barriers and
 * flags are split-phase too, each firing a slot (the _rsync forms signal
 * a slot elsewhere, an earth_gslot). Fibers share their node's interval
 * and vector time with its program threads (earth_dsm.h): a node is one
 * process of the protocol.
 *
 * The rules: touch shared memory only inside a range acquired (for write
 * when it writes) and not yet released; release every range once, before
 * the lock, barrier or flag that publishes its writes (the release sends
 * them to their homes and fires when they are acknowledged); unlock a
 * lock once per lock (fibers of a node hold a lock together: any of them
 * may unlock it). A request that breaks a rule (a range outside any
 * allocation, a release of pages no acquisition holds, an unlock of a
 * lock the node's fibers do not hold) ends the job naming the fiber that
 * posted it. Called only from fibers of a program that runs under
 * earth_dsm_main (shared memory mapped).
 *
 * docs/architecture.md, "Fibers acquire pages (split phase)".
 */
#ifndef EARTH_DSM_FIBER_H
#define EARTH_DSM_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "earth.h"
#include "earth_dsm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum earth_dsm_mode { EARTH_DSM_READ = 0, EARTH_DSM_WRITE = 1 };

/* Pages [p, p + len) usable (written too with EARTH_DSM_WRITE), then
 * slot signalled; held until released. When every page is usable now
 * (a hit) the EU signals at once, with no request to the SU. */
void earth_dsm_acquire_sync(const void *p, size_t len, enum earth_dsm_mode mode,
			    earth_slot *slot);
void earth_dsm_acquire_rsync(const void *p, size_t len,
			     enum earth_dsm_mode mode, earth_gslot slot);
/* Lets go of [p, p + len) (acquired before) and releases the node's
 * writes: slot signalled once their homes acknowledged them. */
void earth_dsm_release_sync(const void *p, size_t len, earth_slot *slot);
void earth_dsm_release_rsync(const void *p, size_t len, earth_gslot slot);

/* Lock (slot when granted), unlock (slot when the release went out),
 * barrier with count participants (threads and fiber operations alike:
 * slot when all came), flag set and wait. */
void earth_dsm_lock_sync(earth_dsm_lock_t lock, earth_slot *slot);
void earth_dsm_lock_rsync(earth_dsm_lock_t lock, earth_gslot slot);
void earth_dsm_unlock_sync(earth_dsm_lock_t lock, earth_slot *slot);
void earth_dsm_barrier_sync(earth_dsm_barrier_t b, unsigned count,
			    earth_slot *slot);
void earth_dsm_barrier_rsync(earth_dsm_barrier_t b, unsigned count,
			     earth_gslot slot);
void earth_dsm_flag_set_sync(earth_dsm_flag_t f, earth_slot *slot);
void earth_dsm_flag_wait_sync(earth_dsm_flag_t f, earth_slot *slot);
void earth_dsm_flag_wait_rsync(earth_dsm_flag_t f, earth_gslot slot);

/* earth_dsm_alloc and earth_dsm_free, split phase: the address goes to
 * *result (NULL when the job's shared memory has no room) before slot is
 * signalled; memory freed, then slot signalled. */
void earth_dsm_alloc_sync(size_t size, enum earth_dsm_place place, unsigned arg,
			  void **result, earth_slot *slot);
void earth_dsm_free_sync(void *p, earth_slot *slot);

/*
 * The inline check (what the compiler emits before an access it cannot
 * prove covered, and what a test asserts): whether the page holding p is
 * usable now for a read (write false) or a write, from the byte the node
 * keeps per page. No call. A page an acquisition holds always answers
 * true; one whose invalidation waits for a release answers true too (its
 * holder may still use it) - the check does not replace the acquire.
 */
struct earth_dsm_view {
	uintptr_t base, size;
	unsigned page_shift;
	const volatile uint8_t *state; /* 0 invalid, 1 read, 2 write, 3 home */
};
extern struct earth_dsm_view earth_dsm_view_;

static inline bool earth_dsm_usable(const void *p, bool write)
{
	uintptr_t off = (uintptr_t)p - earth_dsm_view_.base;
	if (off >= earth_dsm_view_.size)
		return false;
	/* The SU changes states while fibers run: an atomic byte load (a
	 * plain load on x86-64; data-race free for the sanitizers). */
	uint8_t st = __atomic_load_n(
	    &earth_dsm_view_.state[off >> earth_dsm_view_.page_shift],
	    __ATOMIC_RELAXED);
	return st == 2 || (!write && (st == 1 || st == 3));
}

#ifdef __cplusplus
}
#endif

#endif /* EARTH_DSM_FIBER_H */
