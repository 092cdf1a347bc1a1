/* SPDX-License-Identifier: MIT */
/*
 * deque.h - an EU's tokens: a Chase-Lev work-stealing deque of frame
 * pointers, with the C11 orders of Le, Pop, Cohen and Zappa Nardelli
 * ("Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP
 * 2013). One owner (the EU) pushes and pops at the bottom, newest first;
 * any other thread (a sibling EU, the SU, or on a single-core node a signal
 * handler between two instructions of the owner) steals the oldest at the
 * top.
 *
 * Growth. The circular array starts at DEQUE_MIN_CAP entries and doubles
 * when full, up to `max` entries (EARTH_TOKEN_DEQUE_MAX); a push beyond it
 * fails and the caller reports the error. A thief may still read an array
 * the owner replaced, so replaced arrays live until deque_free: with
 * doubling they add up to less than the current one.
 *
 * Thieves elsewhere or not. A deque made with `shared` true may be stolen
 * from by another thread (the sibling EUs of a node of k > 1, eu/steal.c;
 * the SU of a dual node that has peers): the owner's pop then uses the
 * paper's orders below. Without (a one-node dual job of one EU, whose SU
 * never steals; a single-core node, whose thief is the owner's own thread,
 * its SU work or a signal handler between two of its instructions), the
 * owner's pop is plain loads and stores kept in program order by a compiler
 * barrier: no XCHG and no CAS, even for the last item.
 *
 * Orders. push publishes the slot with a release store of bottom (the
 * paper's release fence plus relaxed store: the same code on x86, and a
 * pairing ThreadSanitizer sees); a thief that took an item also sees what
 * the owner wrote into the frame before pushing it. Where the paper puts a
 * seq_cst fence (pop, between storing bottom and loading top; steal,
 * between loading top and bottom), these accesses are seq_cst operations
 * instead: the pop's store an exchange, one XCHG on x86 where the paper
 * has a store and an MFENCE, the steal's loads plain loads; ThreadSanitizer
 * does not model fences.
 */
#ifndef EARTH_DEQUE_H
#define EARTH_DEQUE_H

#ifndef EARTH_INTERNAL
#error "unit/deque.h is internal to the EARTH runtime"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queues/q_arch.h"
#include "base/base.h"

#define DEQUE_MIN_CAP 1024

struct deque_array {
	int64_t mask;		   /* capacity - 1, capacity a power of two */
	struct deque_array *older; /* the array this one replaced */
	_Atomic(void *) slot[];
};

struct deque {
	/* Thieves' end: CAS by thieves and by the owner taking the last. */
	_Atomic int64_t top q_aligned_line;
	/* Owner's end, and the array: stored by the owner only. */
	_Atomic int64_t bottom q_aligned_line;
	_Atomic(struct deque_array *) array;
	int64_t max; /* most entries; owner and init only */
	bool shared; /* a thief may run on another thread; set at init */
};

/* Sets up an empty deque holding at most max (a power of two, at least
 * DEQUE_MIN_CAP) items; shared: thieves may run on threads other than the
 * owner's. Returns 0, or -1 out of memory or on a bad max. */
int deque_init(struct deque *d, size_t max, bool shared) EARTH_HIDDEN;
/* Frees the arrays; no thread may use d any more. */
void deque_free(struct deque *d) EARTH_HIDDEN;
/* Owner: the array is full; doubles it. False at max or out of memory. */
bool deque_grow(struct deque *d) EARTH_HIDDEN;
/* Any thread: the oldest item, or NULL when the deque looked empty.
 * Retries when it lost a race for an item, so NULL means it saw the
 * deque empty. */
void *deque_steal(struct deque *d) EARTH_HIDDEN;

/* Owner: pushes x (not NULL) at the bottom if the array has room; false,
 * having done nothing, when it must grow first (no call). */
static inline bool deque_push_now(struct deque *d, void *x)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
	struct deque_array *a =
	    atomic_load_explicit(&d->array, memory_order_relaxed);
	if (q_unlikely(b - t > a->mask))
		return false;
	atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_relaxed);
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
	return true;
}

/* Owner: pushes x (not NULL) at the bottom. False when the deque holds
 * max items already (or growing it ran out of memory). */
static inline bool deque_push(struct deque *d, void *x)
{
	return deque_push_now(d, x) || (deque_grow(d) && deque_push_now(d, x));
}

/* Owner, thieves on other threads: the paper's pop. */
static inline void *deque_pop_shared(struct deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
	struct deque_array *a =
	    atomic_load_explicit(&d->array, memory_order_relaxed);
	atomic_exchange_explicit(&d->bottom, b, memory_order_seq_cst);
	int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
	if (q_unlikely(t > b)) { /* empty */
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
		return NULL;
	}
	void *x =
	    atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
	if (t == b) { /* the last one: race the thieves for it */
		if (!atomic_compare_exchange_strong_explicit(
			&d->top, &t, t + 1, memory_order_seq_cst,
			memory_order_relaxed))
			x = NULL;
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
	}
	return x;
}

/* Owner: the newest item, or NULL when empty. Without a thief on another
 * thread, a steal can only come between two of this thread's instructions:
 * one before the store of bottom sees the item and takes it (top moves
 * past b: empty here), one after sees top == bottom and takes nothing, so
 * even the last item needs no CAS; leaving top where it is, bottom == top
 * says empty. */
static inline void *deque_pop(struct deque *d)
{
	if (q_unlikely(d->shared))
		return deque_pop_shared(d);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
	struct deque_array *a =
	    atomic_load_explicit(&d->array, memory_order_relaxed);
	atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
	if (q_unlikely(t > b)) { /* empty */
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
		return NULL;
	}
	return atomic_load_explicit(&a->slot[b & a->mask],
				    memory_order_relaxed);
}

/* Any thread: how many items the deque held a moment ago (exact for the
 * owner between its own operations when no thief runs). */
static inline size_t deque_size(struct deque *d)
{
	int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	return b > t ? (size_t)(b - t) : 0;
}

#endif /* EARTH_DEQUE_H */
