/* SPDX-License-Identifier: MIT */
/*
 * crit.h - critical sections against the interrupts of a single-interrupt
 * node (node/irq.h). While irq_defer is 1 the node's signal handler only
 * notes what arrived and the thread handles it at its next safe point;
 * while it is 0 (a fiber's code runs) the handler does the SU's work
 * itself. Code that takes a lock the handler also takes (the registry)
 * runs inside irq_crit_enter/leave.
 */
#ifndef EARTH_CRIT_H
#define EARTH_CRIT_H

#ifndef EARTH_INTERNAL
#error "base/crit.h is internal to the EARTH runtime"
#endif

#include <signal.h>
#include <stdatomic.h>

/* 1 while the node's thread is outside fiber code (handler defers);
 * defined in crit.c, 1 on every thread until the node's thread runs a
 * fiber. */
extern __thread volatile sig_atomic_t irq_defer
    __attribute__((visibility("hidden"), tls_model("initial-exec")));

/* A critical section inside runtime code that a fiber calls (a lock the
 * handler also takes): the handler only notes what arrived; the next
 * fiber boundary handles it. Nests; any thread (a no-op off the node's
 * single-interrupt thread: the flag is only read there). */
static inline int irq_crit_enter(void)
{
	int was = irq_defer;
	irq_defer = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static inline void irq_crit_leave(int was)
{
	atomic_signal_fence(memory_order_seq_cst);
	irq_defer = was;
}

#endif /* EARTH_CRIT_H */
