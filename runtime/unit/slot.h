/* SPDX-License-Identifier: MIT */
/*
 * slot.h - the count of a sync slot, as both units change it. The SU
 * signals every slot a request, an answer from another node or another
 * thread names; the EU signals slots of its own node itself when it may
 * (eu/post.c, eu_local_ok). Both do it with one compare-and-swap on
 * `count` (acq_rel), so a signal from either side is exact and a fiber
 * made ready by the last of them sees what every earlier signaller stored
 * before its signal. The slot's other fields are written once, by
 * earth_slot_init, before any signal can reach it; plain loads.
 */
#ifndef EARTH_UNIT_SLOT_H
#define EARTH_UNIT_SLOT_H

#ifndef EARTH_INTERNAL
#error "unit/slot.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "earth.h"
#include "gas/registry.h"

/* A bad signal: misaligned, never initialised, or a one-shot slot that
 * already fired. Ends the job naming the operation. */
_Noreturn void slot_invalid(const earth_slot *s, const char *op) EARTH_HIDDEN
    __attribute__((cold));
/* A slot fired with a fiber this node never armed a slot with. */
_Noreturn void slot_forged(const earth_slot *s, const char *op) EARTH_HIDDEN
    __attribute__((cold));

/* INCR_SYNC that would take the count past INT32_MAX (or from below 0). */
_Noreturn void slot_incr_overflow(const earth_slot *s, int32_t count, int32_t n,
				  const char *op) EARTH_HIDDEN
    __attribute__((cold));

/* Up to k (>= 1) signals at once, as k single ones would leave the count:
 * as many as the count takes before it fires (all k when it stays above
 * zero). Returns how many it took; *fired when they fired the slot (the
 * count reloaded from reset; the caller makes the fiber ready, then takes
 * the rest, which a one-shot slot refuses). */
static inline __attribute__((always_inline)) uint64_t
slot_count_take(earth_slot *s, uint64_t k, bool *fired, const char *op)
{
	int32_t c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
	int32_t nc;
	do {
		if (q_unlikely(c <= 0))
			slot_invalid(s, op);
		nc = k < (uint32_t)c ? c - (int32_t)k : s->reset;
	} while (!__atomic_compare_exchange_n(
	    &s->count, &c, nc, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	/* c > 0 here: as unsigned, zero-extended for free. */
	*fired = k >= (uint32_t)c;
	return *fired ? (uint32_t)c : k;
}

/* One signal: counts down; returns true when it fired the slot (the count
 * reloaded from reset; the caller makes the fiber ready, after
 * slot_checked_fiber). */
static inline __attribute__((always_inline)) bool
slot_count_down(earth_slot *s, const char *op)
{
	if (q_unlikely(((uintptr_t)s & 7) || !s->fiber))
		slot_invalid(s, op);
	bool fired;
	slot_count_take(s, 1, &fired, op);
	return fired;
}

/* The signal that fires the slot when its count is 1 now: true when it
 * did (count reloaded), false otherwise (nothing changed). */
static inline bool slot_fire_if_last(earth_slot *s)
{
	int32_t one = 1;
	return __atomic_compare_exchange_n(&s->count, &one, s->reset, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* INCR_SYNC: adds n (>= 1). False, changing nothing, when the count is
 * below 0 or would pass INT32_MAX; *was holds the count it saw. */
static inline bool slot_count_add(earth_slot *s, int32_t n, int32_t *was)
{
	int32_t c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
	do {
		if (c < 0 || n > INT32_MAX - c) {
			*was = c;
			return false;
		}
	} while (!__atomic_compare_exchange_n(
	    &s->count, &c, c + n, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	*was = c;
	return true;
}

/* INCR_SYNC from this node's fibers (either unit). */
static inline void slot_incr(earth_slot *s, int32_t n, const char *op)
{
	int32_t was;
	if (q_unlikely(((uintptr_t)s & 7) || !s->fiber))
		slot_invalid(s, op);
	if (q_unlikely(!slot_count_add(s, n, &was)))
		slot_incr_overflow(s, was, n, op);
}

/* The fiber of a slot that fired, once checked against the fibers this
 * node armed slots with (a slot lies in memory other nodes may write). */
static inline earth_fiber_fn slot_checked_fiber(const earth_slot *s,
						const char *op)
{
	earth_fiber_fn f = s->fiber;
	if (q_unlikely(!reg_fiber_known(f)))
		slot_forged(s, op);
	return f;
}

#endif /* EARTH_UNIT_SLOT_H */
