/* SPDX-License-Identifier: MIT */
/*
 * fiber_loop.h - the EU's fiber loop, one for every node mode: run main's
 * entry fiber (node 0), then take ready (fiber, frame) pairs from the
 * SU->EU ring and run them until main's frame ends or the job stops; with
 * none there, the fibers the EU's own signals made ready (eu/post.c, dual
 * nodes only), then the newest token of its own (work first: the SU steals
 * the oldest for other nodes, sibling EUs for themselves); with neither,
 * idle (where an EU with siblings steals a sibling's oldest token first).
 *
 * What differs between the modes, the including file names before it
 * includes this one, which defines the loop (static, always inlined) and
 * forgets the names again; single.c includes it twice, once per mode:
 *   EU_LOOP_NAME         the loop's name, called as NAME(n, eu, st)
 *   EU_LOOP_RUN          runs one fiber and what its end calls for, used
 *                        as EU_LOOP_RUN(n, eu, fiber, frame) (dual:
 *                        eu/loop.c, run_fiber; single-core: node/single.c,
 *                        single_fiber, which also does the SU's work)
 *   EU_LOOP_IDLE         nothing ready, waits for work: EU_LOOP_IDLE(n, eu)
 *   EU_LOOP_OWN_SIGNALS  1 where the EU may perform signals itself (a dual
 *                        node, eu_state.local_sig: it keeps its view of
 *                        the SU's performed requests fresh), 0 where it
 *                        never does
 * Names, not function pointers: passed as pointers to an always-inlined
 * function, GCC lays the dual node's loop out worse (the EU's own ready
 * list out of line, the tokens first; docs/design-notes.md, "One fiber
 * loop"). With names, the dual node's loop is the tight one and each
 * single-core mode gets a copy of its own.
 */
#ifndef EARTH_INTERNAL
#error "fiber_loop.h is internal to the EARTH runtime"
#endif
#if !defined(EU_LOOP_NAME) || !defined(EU_LOOP_RUN) ||                         \
    !defined(EU_LOOP_IDLE) || !defined(EU_LOOP_OWN_SIGNALS)
#error "define EU_LOOP_NAME, EU_LOOP_RUN, EU_LOOP_IDLE, EU_LOOP_OWN_SIGNALS"
#endif

#include "base/stamp.h"
#include "eu/eu.h"
#include "eu/observe.h"

static inline __attribute__((always_inline)) void
EU_LOOP_NAME(struct earth_node *n, struct eu_state *eu,
	     const struct eu_start *st)
{
	eu_in_fiber = true;
	if (n->id == 0 && st->main_fn) {
		void *frame = st->main_frame;
		if (!frame) {
			frame = eu_frame_alloc(eu, st->main_fn);
			if (st->size)
				memcpy(frame, st->args, st->size);
		}
		eu->main_frame = frame;
		EU_LOOP_RUN(n, eu, st->main_fn->entry, frame);
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
				EU_LOOP_RUN(n, eu, e.fiber, e.frame);
				if (q_unlikely(acct_on))
					eu_fiber_ended(eu,
						       eu->own_ready_len != 0);
				continue;
			}
			/* Fibers siblings made ready for this EU's frames
			 * (k > 1): after a ready message the SU published
			 * before the sibling handed one over (the sibling
			 * saw it performed: eu_local_ok), so the ring is
			 * looked at again once one is here. */
			struct q_msg *sm;
			if (eu->siblings &&
			    (sm = q_mpsc_peek(&eu->link->sib))) {
				if (q_ring_nonempty(eu->ready))
					continue;
				earth_fiber_fn f =
				    (earth_fiber_fn)(uintptr_t)sm->w[0];
				void *fr = (void *)(uintptr_t)sm->w[1];
				q_mpsc_release(&eu->link->sib);
				EU_LOOP_RUN(n, eu, f, fr);
				if (q_unlikely(acct_on))
					eu_fiber_ended(eu, false);
				continue;
			}
			void *t = deque_pop(eu->tokens);
			if (t) {
				eu_count(&eu->tokens_run, 1);
				EU_LOOP_RUN(n, eu, eu_token_fiber(t), t);
				if (q_unlikely(acct_on))
					eu_fiber_ended(
					    eu, deque_size(eu->tokens) != 0);
				continue;
			}
			eu_in_fiber = false;
			EU_LOOP_IDLE(n, eu);
			eu_in_fiber = true;
			continue;
		}
		struct ready_msg r;
		eu_ready_take(eu, m, &r);
		/* The SU stored its count of performed requests right after
		 * it published this message: a fiber that continues a chain
		 * of SPAWNs or INVOKEs through the SU finds every request
		 * before it performed, and the chain goes on on the EU. */
		if (EU_LOOP_OWN_SIGNALS)
			eu_seen_refresh(eu);
		for (unsigned k = 0; k < READY_PER_MSG && r.e[k].fiber; k++) {
			EARTH_STAMP(STAMP_EU_FETCH);
			EU_LOOP_RUN(n, eu,
				    (earth_fiber_fn)(uintptr_t)r.e[k].fiber,
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
}

#undef EU_LOOP_NAME
#undef EU_LOOP_RUN
#undef EU_LOOP_IDLE
#undef EU_LOOP_OWN_SIGNALS
