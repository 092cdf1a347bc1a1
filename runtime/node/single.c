/* SPDX-License-Identifier: MIT */
/*
 * single.c - the one thread of a single-core node: it runs the EU's
 * fiber loop (eu/fiber_loop.h, the dual node's too) and does the SU's work
 * itself (su_step, the same function the SU thread of a dual node calls).
 * The EU still posts every operation into the request ring; the thread
 * handles the ring when the fiber ends. Tokens go to the EU's deque as on
 * a dual node: the thread runs the newest when nothing is ready, its SU
 * work steals the oldest for other nodes.
 *   single-poll:      after each fiber and when idle: requests, inbox,
 *                     arrivals (a full su_step).
 *   single-interrupt: after each fiber: requests and inbox only; arrivals
 *                     raise a signal whose handler does their SU work in
 *                     the middle of the running fiber (node/irq.h), or at
 *                     the next safe point inside the runtime.
 * Idle, the thread spins (single-poll only) and then blocks on the SU's
 * futex word, where peers and other threads wake it.
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "eu/observe.h"
#include "node/irq.h"
#include "su/su.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The SU's work for what the EU posted: the whole request ring, and the
 * requests that spilled while it was full. Its time, when it did some,
 * is the SU's busy time (earth_stats), as a dual node's SU thread counts
 * it. */
static inline unsigned single_su(struct earth_node *n, struct eu_state *eu,
				 bool poll_net)
{
	uint64_t t0 = q_unlikely(n->timing) ? q_tsc() : 0;
	unsigned k = 0, step;
	for (;;) {
		step = su_step(n, poll_net);
		k += step;
		if (q_unlikely(eu->ovf_len))
			eu_ovf_drain(eu);
		else if (q_likely(step < EARTH_SU_BATCH))
			break;
		poll_net = false;
	}
	if (q_unlikely(n->timing) && k)
		su_g.busy_ticks += q_tsc() - t0;
	return k;
}

/* A fiber, then the SU work its end calls for. irq is a constant in each
 * caller (each mode's loop). */
static inline void single_fiber(struct earth_node *n, struct eu_state *eu,
				earth_fiber_fn fiber, void *frame, bool irq)
{
	eu_cur_fiber = fiber;
	if (irq)
		irq_fiber_enter(n);
	if (q_unlikely(acct_on))
		eu_fiber_observed(fiber, frame);
	else
		fiber(frame);
	if (irq)
		irq_fiber_leave();
	eu_count(&eu->fibers_run, 1);
	eu_post_flush(eu);
	if (q_unlikely(eu->ovf_len))
		eu_ovf_drain(eu);
	if (irq && q_unlikely(irq_backlog()))
		irq_safe_point(n);
	/* An interrupt-driven node polls only for arrivals, and for the
	 * completions of its sends while any are in flight (tcp). */
	single_su(n, eu, !irq || (n->net && n->net->sends_out));
}

/* Nothing ready. */
static EARTH_COLD void single_idle(struct earth_node *n, struct eu_state *eu,
				   bool irq)
{
	uint64_t t0 = q_tsc();
	struct net *t = n->net;
	if (trace_on) {
		trace_idle(TRACE_EU);
		trace_idle(TRACE_SU);
	}
	if (irq)
		irq_pending = 1; /* a full poll before sleeping */
	if ((irq ? irq_safe_point(n) : 0) + single_su(n, eu, true) ||
	    q_ring_peek(eu->ready))
		goto out;
	if (!irq) {
		uint64_t deadline = t0 + n->spin_ticks;
		for (unsigned i = 1;; i++) {
			if (single_su(n, eu, true) || q_ring_peek(eu->ready) ||
			    atomic_load_explicit(&n->stop,
						 memory_order_acquire))
				goto out;
			if ((i & 63) == 0 && q_tsc() > deadline)
				break;
			su_idle_step(n, false);
			if (n->oversubscribed)
				sched_yield();
			else
				q_cpu_relax();
		}
	}
	/* Block. Peers and other threads store RUNNING into the SU's word
	 * after they made work visible and fenced (Dekker, as su_try_sleep);
	 * the signal is muted meanwhile, the futex wake is enough. */
	su_idle_step(n, true); /* never sleep without asking for work */
	bool held =
	    su_quiet_idle(n, !q_ring_nonempty(eu->ready) && !eu->ovf_len &&
				 !(irq && irq_backlog()));
	su_publish_counters(&su_g);
	if (irq && t && t->ops->irq_arm)
		t->ops->irq_arm(t, false);
	atomic_store_explicit(n->su_wordp, UNIT_SLEEPING, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	if (!q_ring_nonempty(eu->ready) && !su_has_pending(n) && !eu->ovf_len &&
	    !(irq && irq_backlog()) &&
	    !atomic_load_explicit(&n->stop, memory_order_acquire)) {
		eu_count(&eu->sleeps, 1);
		su_g.sleeps++; /* both units' work waits */
		if (held)      /* another thread: ask again soon */
			earth_futex_wait_ns(n->su_wordp, UNIT_SLEEPING,
					    SU_QUIET_RECHECK_NS);
		else
			earth_unit_wait(n, n->su_wordp, UNIT_SLEEPING);
	}
	atomic_store_explicit(n->su_wordp, UNIT_RUNNING, memory_order_relaxed);
	if (irq && t && t->ops->irq_arm) {
		t->ops->irq_arm(t, true);
		irq_pending = 1; /* the next safe point polls */
	}
out:
	if (n->timing)
		eu_count(&eu->idle_ticks, q_tsc() - t0);
	if (acct_on)
		eu_idle_observed(t0);
}

/* The loop (eu/fiber_loop.h), a copy per mode (irq a constant in each).
 * The EU performs no signal itself here (eu_state.local_sig): no own
 * ready list. */
#define EU_LOOP_NAME single_loop_poll
#define EU_LOOP_RUN(n, eu, fiber, frame)                                       \
	single_fiber(n, eu, fiber, frame, false)
#define EU_LOOP_IDLE(n, eu) single_idle(n, eu, false)
#define EU_LOOP_OWN_SIGNALS 0
#include "eu/fiber_loop.h"

#define EU_LOOP_NAME single_loop_irq
#define EU_LOOP_RUN(n, eu, fiber, frame) single_fiber(n, eu, fiber, frame, true)
#define EU_LOOP_IDLE(n, eu) single_idle(n, eu, true)
#define EU_LOOP_OWN_SIGNALS 0
#include "eu/fiber_loop.h"

void *eu_single_thread(void *arg)
{
	struct eu_start *st = arg;
	struct earth_node *n = st->node;
	earth_pin_cpu(n->eu_cpu);
	eu_cur_fiber_at = &eu_cur_fiber;
	if (acct_on)
		acct_me->mark = acct_su.mark = n->start_tsc;
	bool irq = n->opts.node_mode == EARTH_MODE_SINGLE_IRQ;
	if (irq) {
		su_step(n, true); /* the transport's state, on this thread */
		irq = irq_start(n);
	}
	if (irq)
		single_loop_irq(n, &eu_first, st);
	else
		single_loop_poll(n, &eu_first, st);
	if (irq)
		irq_stop(n);
	atomic_store_explicit(&n->shutdown, true, memory_order_release);
	/* What the last fibers posted, then the end of the job. */
	for (unsigned i = 0; i < 1024 && single_su(n, &eu_first, false); i++)
		;
	if (n->net)
		su_end_job(n);
	su_publish_counters(&su_g);
	return NULL;
}
