/* SPDX-License-Identifier: MIT */
/*
 * ready.c - fibers made ready travel to the EU three per message. When the
 * ring is full they wait in the SU's private overflow list: the SU never
 * blocks on the EU (the EU may itself be waiting for room in the request
 * ring).
 */
#define EARTH_INTERNAL 1
#include "base/stamp.h"
#include "su/su.h"

#include <stdlib.h>
#include <string.h>

static void grow(struct ready_entry **v, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap * 2 : 256;
	while (c < need)
		c *= 2;
	struct ready_entry *p = realloc(*v, c * sizeof(*p));
	if (!p)
		earth_fatal("out of memory: %zu fibers wait for the EU", need);
	*v = p;
	*cap = c;
}

void su_ready_spill(struct su_state *su, earth_fiber_fn fiber, void *frame)
{
	if (su->rovf_head + su->rovf_len == su->rovf_cap && su->rovf_head) {
		memmove(su->rovf, su->rovf + su->rovf_head,
			su->rovf_len * sizeof(*su->rovf));
		su->rovf_head = 0;
	}
	grow(&su->rovf, &su->rovf_cap, su->rovf_head + su->rovf_len + 1);
	su->rovf[su->rovf_head + su->rovf_len++] =
	    (struct ready_entry){fiber, frame};
	su->ready_overflow++;
}

unsigned su_ready_drain_ovf(struct su_state *su)
{
	unsigned moved = 0;
	while (su->rovf_len) {
		if (!su->rmsg) {
			su->rmsg = q_ring_reserve(su->ready);
			if (!su->rmsg)
				return moved;
			su->rfill = 0;
		}
		struct ready_entry e = su->rovf[su->rovf_head++];
		su->rovf_len--;
		moved++;
		struct ready_msg *r = ready_of(su->rmsg);
		r->e[su->rfill].fiber = (uintptr_t)e.fiber;
		r->e[su->rfill].frame = (uintptr_t)e.frame;
		if (++su->rfill == READY_PER_MSG) {
			q_ring_publish(su->ready, su->rmsg);
			su->rmsg = NULL;
		}
	}
	su->rovf_head = 0;
	return moved;
}

void su_ready_flush(void)
{
	struct su_state *su = &su_g;
	if (su->rmsg) {
		struct ready_msg *r = ready_of(su->rmsg);
		if (su->rfill < READY_PER_MSG)
			r->e[su->rfill].fiber = 0;
		q_ring_publish(su->ready, su->rmsg);
		su->rmsg = NULL;
	}
	q_ring_flush(su->ready);
	/* Every fiber those requests made ready is in the ring now (none
	 * spilled): the EU may signal slots, SPAWN and INVOKE itself
	 * (eu/post.c). Release: pairs with the EU's acquire load in
	 * eu_seen_refresh (eu/loop.c). */
	if (su->eu_reqs != su->eu_reqs_pub && !su->rovf_len) {
		su->eu_reqs_pub = su->eu_reqs;
		atomic_store_explicit(&earth_node_g.req_done, su->eu_reqs,
				      memory_order_release);
	}
	/* The first publish after a remote load's slot was signalled. */
	EARTH_STAMP_IF(earth_stamp_t[STAMP_READY] <
			   earth_stamp_t[STAMP_SIGNALLED],
		       STAMP_READY);
	su->wake_check = true;
}

void su_wake_eu(struct earth_node *n)
{
	/* Dekker with eu_idle: the ring stores published before, then our
	 * look at the EU's state; the EU stores its state, then looks at the
	 * ring. */
	atomic_thread_fence(memory_order_seq_cst);
	su_g.wake_check = false;
	if (atomic_load_explicit(&n->eu_word, memory_order_relaxed) ==
	    UNIT_SLEEPING) {
		atomic_store_explicit(&n->eu_word, UNIT_RUNNING,
				      memory_order_relaxed);
		earth_futex_wake(&n->eu_word);
	}
}

void su_ready_reserve(struct su_state *su, size_t extra)
{
	if (su->rovf_head &&
	    su->rovf_head + su->rovf_len + extra > su->rovf_cap) {
		memmove(su->rovf, su->rovf + su->rovf_head,
			su->rovf_len * sizeof(*su->rovf));
		su->rovf_head = 0;
	}
	grow(&su->rovf, &su->rovf_cap, su->rovf_head + su->rovf_len + extra);
}
