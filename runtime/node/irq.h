/* SPDX-License-Identifier: MIT */
/*
 * irq.h - interrupts of a single-interrupt node (irq.c): a real-time
 * signal raised when messages arrive runs the SU's work for them on the
 * node's one thread, between two instructions of whatever fiber runs.
 *
 * Safety. The thread is inside a runtime critical section whenever it is
 * not running a fiber's code (irq_defer = 1): the handler then only notes
 * irq_pending, and the thread handles arrivals at its next safe point. In
 * a fiber the handler does the work itself, calling only async-signal-safe
 * code: it never allocates (spilled ready fibers have room reserved ahead,
 * queued replies come from a fixed pool), and a message whose handling
 * might allocate (INVOKE, TOKEN, STEAL, collectives, large or tcp replies)
 * is copied into a preallocated deferral buffer, it and every later one,
 * in order, for the next safe point. No arrival is lost: the handler and
 * the safe points always rescan every peer (a real-time signal queue that
 * overflowed falls back to SIGIO, handled the same way).
 */
#ifndef EARTH_IRQ_H
#define EARTH_IRQ_H

#ifndef EARTH_INTERNAL
#error "irq.h is internal to the EARTH runtime"
#endif

#include <signal.h>

#include "base/crit.h"
#include "node/node.h"

/* Set by a deferred handler; the next safe point polls the transport. */
extern __thread volatile sig_atomic_t irq_pending EARTH_HIDDEN
    __attribute__((tls_model("initial-exec")));

/* The node's thread, before its first fiber, after one su_step (which
 * creates the transport's state on this thread): install the handlers,
 * publish this thread to the transport. Returns false (after printing why)
 * when the transport cannot interrupt: the node then polls at fiber ends. */
bool irq_start(struct earth_node *n) EARTH_HIDDEN;
/* The node's thread, after its last fiber: withdraw, block the signals
 * (what is still queued dies with the thread), restore the handlers. */
void irq_stop(struct earth_node *n) EARTH_HIDDEN;

/* Any thread, after it published an inbox message and fenced: interrupt
 * the node's thread (at most one such signal in flight). */
void irq_raise_local(void) EARTH_HIDDEN;

/* A safe point (irq_defer = 1): deferred messages first, then, if the
 * handler deferred or stopped early, a full poll. Returns work done. */
unsigned irq_safe_point(struct earth_node *n) EARTH_HIDDEN;
/* Anything for irq_safe_point to do? */
bool irq_backlog(void) EARTH_HIDDEN;

/* The interrupt counters of struct earth_stats (EU thread, or after the
 * node ended). */
void irq_stats_fill(struct earth_stats *st) EARTH_HIDDEN;

/* Around a fiber's code: interrupts may run the SU's work now. */
static inline void irq_fiber_enter(struct earth_node *n)
{
	irq_defer = 0;
	atomic_signal_fence(memory_order_seq_cst);
	while (q_unlikely(irq_pending)) {
		irq_defer = 1;
		atomic_signal_fence(memory_order_seq_cst);
		irq_safe_point(n);
		irq_defer = 0;
		atomic_signal_fence(memory_order_seq_cst);
	}
}

static inline void irq_fiber_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	irq_defer = 1;
	atomic_signal_fence(memory_order_seq_cst);
}

#endif /* EARTH_IRQ_H */
