/* SPDX-License-Identifier: MIT */
/*
 * ready.c - fibers made ready travel to an EU three per message, on its
 * own ready ring. When the ring is full they wait in the SU's private
 * overflow list for that EU: the SU never blocks on an EU (the EU may
 * itself be waiting for room in its request ring).
 */
#define EARTH_INTERNAL 1
#include "base/stamp.h"
#include "su/su.h"

#include <errno.h>
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

int su_attach(struct su_state *su, struct earth_node *n)
{
	unsigned k = n->eus ? n->eus : 1;
	su->eus = aligned_alloc(Q_CACHE_LINE, k * sizeof(*su->eus));
	if (!su->eus)
		return -ENOMEM;
	memset(su->eus, 0, k * sizeof(*su->eus));
	for (unsigned i = 0; i < k; i++) {
		su->eus[i].link = &n->link[i];
		su->eus[i].req = &n->link[i].req;
		su->eus[i].ready = &n->link[i].ready;
	}
	su->neus = k;
	su->eu = &su->eus[0];
	return 0;
}

void su_detach(struct su_state *su)
{
	for (unsigned i = 0; i < su->neus; i++)
		free(su->eus[i].rovf);
	free(su->eus);
	su->eus = su->eu = NULL;
	su->neus = 0;
}

struct su_eu *su_eu_of_frame_slow(struct su_state *su, const void *frame)
{
	return &su->eus[unit_frame_eu(&su->regs, frame, su->neus)];
}

struct su_eu *su_eu_new_slow(struct su_state *su)
{
	unsigned k = su->neus, start = su->new_next++ % k;
	struct su_eu *best = NULL;
	uint64_t least = UINT64_MAX;
	for (unsigned j = 0; j < k; j++) {
		struct su_eu *e = &su->eus[(start + j) % k];
		uint64_t load =
		    q_ring_unconsumed(e->ready) + e->rovf_len + (e->rmsg != 0);
		if (load < least) {
			least = load;
			best = e;
		}
	}
	return best;
}

void su_ready_spill(struct su_state *su, earth_fiber_fn fiber, void *frame)
{
	struct su_eu *e = su->eu;
	if (e->rovf_head + e->rovf_len == e->rovf_cap && e->rovf_head) {
		memmove(e->rovf, e->rovf + e->rovf_head,
			e->rovf_len * sizeof(*e->rovf));
		e->rovf_head = 0;
	}
	grow(&e->rovf, &e->rovf_cap, e->rovf_head + e->rovf_len + 1);
	e->rovf[e->rovf_head + e->rovf_len++] =
	    (struct ready_entry){fiber, frame};
	su->ready_overflow++;
}

static unsigned drain_ovf(struct su_eu *e)
{
	unsigned moved = 0;
	while (e->rovf_len) {
		if (!e->rmsg) {
			e->rmsg = q_ring_reserve(e->ready);
			if (!e->rmsg)
				return moved;
			e->rfill = 0;
		}
		struct ready_entry x = e->rovf[e->rovf_head++];
		e->rovf_len--;
		moved++;
		struct ready_msg *r = ready_of(e->rmsg);
		r->e[e->rfill].fiber = (uintptr_t)x.fiber;
		r->e[e->rfill].frame = (uintptr_t)x.frame;
		if (++e->rfill == READY_PER_MSG) {
			q_ring_publish(e->ready, e->rmsg);
			e->rmsg = NULL;
		}
	}
	e->rovf_head = 0;
	return moved;
}

unsigned su_ready_drain_ovf(struct su_state *su)
{
	unsigned moved = 0;
	for (unsigned i = 0; i < su->neus; i++)
		if (su->eus[i].rovf_len)
			moved += drain_ovf(&su->eus[i]);
	return moved;
}

static void flush_one(struct su_eu *e)
{
	if (e->rmsg) {
		struct ready_msg *r = ready_of(e->rmsg);
		if (e->rfill < READY_PER_MSG)
			r->e[e->rfill].fiber = 0;
		q_ring_publish(e->ready, e->rmsg);
		e->rmsg = NULL;
	}
	q_ring_flush(e->ready);
	/* Every fiber those requests made ready is in the ring now (none
	 * spilled): the EU may signal slots, SPAWN and INVOKE itself
	 * (eu/post.c). Release: pairs with the EU's acquire load in
	 * eu_seen_refresh (eu/eu.h). */
	if (e->reqs != e->reqs_pub && !e->rovf_len) {
		e->reqs_pub = e->reqs;
		atomic_store_explicit(&e->link->req_done, e->reqs,
				      memory_order_release);
	}
}

void su_ready_flush(void)
{
	struct su_state *su = &su_g;
	for (unsigned i = 0; i < su->neus; i++)
		flush_one(&su->eus[i]);
	/* The first publish after a remote load's slot was signalled. */
	EARTH_STAMP_IF(earth_stamp_t[STAMP_READY] <
			   earth_stamp_t[STAMP_SIGNALLED],
		       STAMP_READY);
	su->wake_check = true;
}

void su_wake_eu(struct earth_node *n)
{
	/* Dekker with eu_idle: the ring stores published before, then our
	 * look at each EU's state; an EU stores its state, then looks at its
	 * ring. */
	atomic_thread_fence(memory_order_seq_cst);
	su_g.wake_check = false;
	if (su_g.neus <= 1 ||
	    atomic_load_explicit(&n->stop, memory_order_relaxed)) {
		earth_eus_wake(n);
		return;
	}
	/* Several EUs: only those whose ready ring holds something (what
	 * the SU counts as not consumed is never less than what is), or
	 * waits in their overflow list; the others would spin and sleep
	 * again for nothing. A sibling's token wakes a sleeper its own way
	 * (eu/steal.c). */
	for (unsigned i = 0; i < su_g.neus; i++) {
		struct su_eu *e = &su_g.eus[i];
		if (q_ring_unconsumed(e->ready) || e->rovf_len)
			earth_eu_wake(n, i);
	}
}

bool su_eus_asleep(const struct earth_node *n, memory_order mo)
{
	for (unsigned i = 0; i < su_g.neus; i++)
		if (atomic_load_explicit(&n->link[i].word, mo) != UNIT_SLEEPING)
			return false;
	return true;
}

void su_ready_reserve(struct su_state *su, size_t extra)
{
	struct su_eu *e = su->eu;
	if (e->rovf_head && e->rovf_head + e->rovf_len + extra > e->rovf_cap) {
		memmove(e->rovf, e->rovf + e->rovf_head,
			e->rovf_len * sizeof(*e->rovf));
		e->rovf_head = 0;
	}
	grow(&e->rovf, &e->rovf_cap, e->rovf_head + e->rovf_len + extra);
}
