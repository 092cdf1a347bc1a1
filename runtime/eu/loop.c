/* SPDX-License-Identifier: MIT */
/*
 * loop.c - the EU thread: run main's entry fiber, then take ready
 * (fiber, frame) pairs from the SU->EU ring and run them until main's frame
 * ends; with none there, the fibers its own signals made ready (eu/post.c),
 * then the newest token of its own (work first: the SU steals the oldest
 * for other nodes). With neither it spins, then
 * blocks until the SU wakes it.
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "eu/observe.h"
#include "base/stamp.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct eu_state eu_g;

__thread bool eu_in_fiber __attribute__((tls_model("initial-exec")));
__thread earth_fiber_fn eu_cur_fiber __attribute__((tls_model("initial-exec")));

/* Requests still with the SU: has it performed them (eu_local_ok)? Pairs
 * with the release store in su_ready_flush. */
static inline __attribute__((always_inline)) void
eu_seen_refresh(struct eu_state *eu)
{
	if (eu->req_posted != eu->req_seen)
		eu->req_seen = atomic_load_explicit(&earth_node_g.req_done,
						    memory_order_acquire);
}

/* END_THREAD of a fiber that posted requests, or while some wait. */
static inline __attribute__((always_inline)) void
eu_fiber_posted(struct eu_state *eu)
{
	/* Its combined signals are performed, and what it posted leaves
	 * now: its last, partly filled message, and the SW tail. */
	eu_comb_perform(eu);
	eu_post_flush(eu);
	if (q_unlikely(eu->ovf_len))
		eu_ovf_drain(eu);
	eu_seen_refresh(eu);
	eu->posted = eu->ovf_len || eu->req_posted != eu->req_seen;
}

static inline __attribute__((always_inline)) void
run_fiber(struct eu_state *eu, earth_fiber_fn fiber, void *frame)
{
	eu_cur_fiber = fiber;
	if (q_unlikely(acct_on))
		eu_fiber_observed(fiber, frame);
	else
		fiber(frame);
	eu->fibers_run++;
	if (q_unlikely(eu->posted))
		eu_fiber_posted(eu);
	/* Signals combine within a fiber (post.c, signal_here): the next
	 * fiber's first signal is performed at once. */
	eu->comb_slot = NULL;
}

/* Nothing ready: spin, then block until the SU wakes us. */
static EARTH_COLD void eu_idle(struct earth_node *n, struct eu_state *eu)
{
	uint64_t t0 = q_tsc();
	uint64_t deadline = t0 + n->spin_ticks;
	unsigned i = 0;
	bool yielding = false; /* earth_idle_pause */
	if (trace_on)
		trace_idle(TRACE_EU);
	for (;;) {
		if (q_ring_peek(eu->ready) ||
		    atomic_load_explicit(&n->stop, memory_order_acquire))
			goto out;
		if (eu->ovf_len) {
			eu_ovf_drain(eu);
		} else if ((++i & 63) == 0 && q_tsc() > deadline) {
			break;
		}
		earth_idle_pause(n, t0, i, &yielding);
	}
	/* Block. Dekker with su_ready_flush: we store SLEEPING then look at
	 * the ring; the SU stores the ring then looks at our state. */
	atomic_store_explicit(&n->eu_word, UNIT_SLEEPING, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	/* An SU dozing while we computed (su/loop.c, su_try_sleep) wakes to see
	 * the node idle: it looks for a stuck job and sleeps on its own. */
	if (n->su_doze)
		earth_su_wake(n);
	if (!q_ring_nonempty(eu->ready) &&
	    !atomic_load_explicit(&n->stop, memory_order_acquire)) {
		eu->sleeps++;
		earth_futex_wait(&n->eu_word, UNIT_SLEEPING);
	}
	atomic_store_explicit(&n->eu_word, UNIT_RUNNING, memory_order_seq_cst);
	/* The SU may have gone to sleep seeing us asleep: wake it (Dekker
	 * with su_try_sleep). */
	atomic_thread_fence(memory_order_seq_cst);
	earth_su_wake(n);
out:
	if (n->timing)
		eu->idle_ticks += q_tsc() - t0;
	if (acct_on)
		eu_idle_observed(t0);
}

void eu_invoke_trampoline(void *buf)
{
	struct eu_invoke_buf *b = buf;
	const struct earth_tfunc *f = b->fn;
	struct eu_state *eu = &eu_g;
	void *frame = eu_frame_alloc(eu, f);
	if (f->args_size)
		memcpy(frame, b->args, f->args_size);
	free(b);
	eu_cur_fiber = f->entry;
	f->entry(frame);
}

void eu_token_gone(void *frame)
{
	eu_frame_free(&eu_g, frame);
}

void *eu_thread(void *arg)
{
	struct eu_start *st = arg;
	struct earth_node *n = st->node;
	struct eu_state *eu = &eu_g;
	earth_pin_cpu(n->eu_cpu);

	eu_in_fiber = true;
	if (acct_on)
		acct_eu.mark = n->start_tsc;
	if (n->id == 0) {
		void *frame = eu_frame_alloc(eu, st->main_fn);
		if (st->size)
			memcpy(frame, st->args, st->size);
		eu->main_frame = frame;
		run_fiber(eu, st->main_fn->entry, frame);
		if (acct_on)
			eu_fiber_ended(eu, false);
	}

	/* Node 0 runs until main's frame ends; every node until node 0 says
	 * the job ended (stop; pairs with the SU's release store). */
	while (!eu->main_done &&
	       !atomic_load_explicit(&n->stop, memory_order_acquire)) {
		struct q_msg *m = q_ring_peek(eu->ready);
		if (q_unlikely(!m)) {
			/* Fibers the EU made ready itself: after every ready
			 * message the SU published before (ordering rules;
			 * one not yet due under an HWQ latency too), before
			 * tokens. */
			if (eu->own_ready_len && !q_ring_nonempty(eu->ready)) {
				struct eu_ready e =
				    eu->own_ready[eu->own_ready_head];
				eu->own_ready_head = (eu->own_ready_head + 1) &
						     (eu->own_ready_cap - 1);
				eu->own_ready_len--;
				run_fiber(eu, e.fiber, e.frame);
				if (q_unlikely(acct_on))
					eu_fiber_ended(eu,
						       eu->own_ready_len != 0);
				continue;
			}
			void *t = deque_pop(eu->tokens);
			if (t) {
				eu->tokens_run++;
				run_fiber(eu, eu_token_fiber(t), t);
				if (q_unlikely(acct_on))
					eu_fiber_ended(
					    eu, deque_size(eu->tokens) != 0);
				continue;
			}
			eu_in_fiber = false;
			eu_idle(n, eu);
			eu_in_fiber = true;
			continue;
		}
		struct ready_msg r;
		eu_ready_take(eu, m, &r);
		/* The SU stored its count of performed requests right after
		 * it published this message: a fiber that continues a chain
		 * of SPAWNs or INVOKEs through the SU finds every request
		 * before it performed, and the chain goes on on the EU. */
		eu_seen_refresh(eu);
		for (unsigned k = 0; k < READY_PER_MSG && r.e[k].fiber; k++) {
			EARTH_STAMP(STAMP_EU_FETCH);
			run_fiber(eu, (earth_fiber_fn)(uintptr_t)r.e[k].fiber,
				  (void *)(uintptr_t)r.e[k].frame);
			if (q_unlikely(acct_on))
				eu_fiber_ended(eu, k + 1 < READY_PER_MSG &&
						       r.e[k + 1].fiber);
			if (q_unlikely(eu->main_done))
				break;
		}
	}
	eu_in_fiber = false;
	eu_cur_fiber = NULL;
	/* Pairs with the SU's acquire load of shutdown. */
	atomic_store_explicit(&n->shutdown, true, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	earth_su_wake(n);
	return NULL;
}
