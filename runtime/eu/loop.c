/* SPDX-License-Identifier: MIT */
/*
 * loop.c - the EU thread of a dual node: the fiber loop (eu/fiber_loop.h,
 * shared with single-core nodes) with what a fiber's end calls for here
 * (its combined signals performed, its requests sent) and the idle wait:
 * spin, then block until the SU wakes it. Also the INVOKE trampoline.
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "eu/observe.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct eu_state eu_first;
struct eu_state *eu_rest;
__thread struct eu_state *eu_self __attribute__((tls_model("initial-exec"))) =
    &eu_first;

__thread bool eu_in_fiber __attribute__((tls_model("initial-exec")));
__thread earth_fiber_fn eu_cur_fiber __attribute__((tls_model("initial-exec")));
earth_fiber_fn *eu_cur_fiber_at;

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

/* A fiber, then what its end calls for (the loop's EU_LOOP_RUN). */
static inline __attribute__((always_inline)) void
run_fiber(struct earth_node *n, struct eu_state *eu, earth_fiber_fn fiber,
	  void *frame)
{
	(void)n;
	eu_cur_fiber = fiber;
	if (q_unlikely(acct_on))
		eu_fiber_observed(fiber, frame);
	else
		fiber(frame);
	eu_count(&eu->fibers_run, 1);
	if (q_unlikely(eu->posted))
		eu_fiber_posted(eu);
	/* Signals combine within a fiber (post.c, signal_here): the next
	 * fiber's first signal is performed at once. */
	eu->comb_slot = NULL;
}

/* Nothing ready: spin, then block until the SU wakes us (the loop's
 * EU_LOOP_IDLE). With siblings (k > 1, steal.c): a sibling's token first,
 * then counted idle, stealing again while it spins, and asleep only when
 * no sibling's deque holds a token after the count says so. */
EARTH_COLD void eu_idle(struct earth_node *n, struct eu_state *eu)
{
	bool sibs = eu->siblings;
	if (sibs && eu_steal_into(n, eu))
		return;
	uint64_t t0 = q_tsc();
	uint64_t deadline = t0 + n->spin_ticks;
	unsigned i = 0;
	bool yielding = false; /* earth_idle_pause */
	if (trace_on)
		trace_idle(TRACE_EU);
	if (sibs)
		eu_idle_enter(n);
	for (;;) {
		if (q_ring_peek(eu->ready) ||
		    atomic_load_explicit(&n->stop, memory_order_acquire) ||
		    (sibs && q_mpsc_peek(&eu->link->sib)))
			goto out;
		if (eu->ovf_len) {
			eu_ovf_drain(eu);
		} else if ((++i & 7) == 0) {
			if (sibs && eu_steal_into(n, eu))
				goto out;
			if ((i & 63) == 0 && q_tsc() > deadline)
				break;
		}
		earth_idle_pause(n, t0, i, &yielding);
	}
	/* Block. Dekker with su_ready_flush: we store SLEEPING then look at
	 * the ring; the SU stores the ring then looks at our state. With
	 * siblings, Dekker with eu_token_pushed too: we count ourselves
	 * asleep, fence, then look at their deques; and with
	 * eu_ready_elsewhere: it publishes on our sibling list, fences,
	 * then looks at our word. */
	atomic_store_explicit(&eu->link->word, UNIT_SLEEPING,
			      memory_order_seq_cst);
	bool fenced = !sibs || eu_sleep_begin(n);
	atomic_thread_fence(memory_order_seq_cst);
	/* An SU dozing while we computed (su/loop.c, su_try_sleep) wakes to see
	 * the node idle: it looks for a stuck job and sleeps on its own. */
	if (n->su_doze)
		earth_su_wake(n);
	if (!q_ring_nonempty(eu->ready) &&
	    !atomic_load_explicit(&n->stop, memory_order_acquire) &&
	    !(sibs && (eu_sib_tokens(n, eu) || q_mpsc_peek(&eu->link->sib)))) {
		eu_count(&eu->sleeps, 1);
		if (q_likely(fenced))
			earth_futex_wait(&eu->link->word, UNIT_SLEEPING);
		else /* a sibling's push may go unseen: look again soon */
			earth_futex_wait_ns(&eu->link->word, UNIT_SLEEPING,
					    EU_SIB_RECHECK_NS);
	}
	atomic_store_explicit(&eu->link->word, UNIT_RUNNING,
			      memory_order_seq_cst);
	/* The SU may have gone to sleep seeing us asleep: wake it (Dekker
	 * with su_try_sleep). */
	atomic_thread_fence(memory_order_seq_cst);
	earth_su_wake(n);
	if (sibs) {
		eu_sleep_end(n);
		/* Woken for a sibling's token, or it was there: take it
		 * before leaving idle (eu_idle_leave would wake another
		 * sleeper for it). */
		(void)eu_steal_into(n, eu);
	}
out:
	if (sibs)
		eu_idle_leave(n, eu);
	if (n->timing)
		eu_count(&eu->idle_ticks, q_tsc() - t0);
	if (acct_on)
		eu_idle_observed(t0);
}

/* The loop (eu/fiber_loop.h) of a dual node. */
#define EU_LOOP_NAME eu_loop
#define EU_LOOP_RUN run_fiber
#define EU_LOOP_IDLE eu_idle
#define EU_LOOP_OWN_SIGNALS 1
#include "eu/fiber_loop.h"

void eu_invoke_trampoline(void *buf)
{
	struct eu_invoke_buf *b = buf;
	const struct earth_tfunc *f = b->fn;
	struct eu_state *eu = eu_self;
	void *frame = eu_frame_alloc(eu, f);
	if (f->args_size)
		memcpy(frame, b->args, f->args_size);
	free(b);
	eu_cur_fiber = f->entry;
	f->entry(frame);
}

void eu_token_gone(void *frame)
{
	eu_frame_free(eu_self, frame);
}

/* Main's frame ended here on a node of several EUs: the others stop too
 * (they check stop in their loops and before they sleep: stored, then
 * their sleep words looked at, the Dekker pair of eu_idle). */
static EARTH_COLD void eu_stop_siblings(struct earth_node *n)
{
	atomic_store_explicit(&n->stop, true, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	earth_eus_wake(n);
}

void *eu_thread(void *arg)
{
	struct eu_start *st = arg;
	struct earth_node *n = st->node;
	struct eu_state *eu = eu_at(st->index);
	eu_self = eu;
	earth_pin_cpu(n->eu_cpus ? n->eu_cpus[st->index] : n->eu_cpu);
	/* The stuck report names EU 0's last fiber. */
	if (st->index == 0)
		eu_cur_fiber_at = &eu_cur_fiber;

	if (acct_on) {
		acct_me = acct_eu_of(st->index);
		acct_me->mark = n->start_tsc;
	}
	trace_eu_start(st->index);
	eu_loop(n, eu, st);
	if (eu->main_done && n->eus > 1)
		eu_stop_siblings(n);
	/* Pairs with the SU's acquire load of shutdown. */
	atomic_store_explicit(&n->shutdown, true, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	earth_su_wake(n);
	return NULL;
}
