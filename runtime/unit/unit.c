/* SPDX-License-Identifier: MIT */
/*
 * unit.c - the node both units share, how one unit wakes the other and
 * blocks, and which EU a frame's fibers run on (unit.h).
 */
#define EARTH_INTERNAL 1
#include "unit/unit.h"
#include "gas/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

struct earth_node earth_node_g;

unsigned unit_frame_eu(struct reg_cache *c, const void *frame, unsigned k)
{
	uintptr_t a = (uintptr_t)frame;
	if (!a || (a & 15) ||
	    !reg_mem_cached(c, a - sizeof(struct frame_hdr),
			    sizeof(struct frame_hdr)))
		return 0;
	const struct frame_hdr *h = (const struct frame_hdr *)frame - 1;
#if defined(__SANITIZE_ADDRESS__)
	if (__asan_region_is_poisoned((void *)h, sizeof(*h)))
		return 0;
#endif
	unsigned o = frame_owner(h);
	return h->magic == FRAME_LIVE && o < k ? o : 0;
}

int unit_links_init(struct earth_node *n, enum q_mode mode, uint32_t slots)
{
	unsigned k = unit_eus(n);
	n->link = aligned_alloc(Q_CACHE_LINE, k * sizeof(*n->link));
	if (!n->link)
		return -ENOMEM;
	memset(n->link, 0, k * sizeof(*n->link));
	for (unsigned i = 0; i < k; i++) {
		struct eu_link *l = &n->link[i];
		int rc = q_ring_init(&l->req, mode, slots,
				     n->opts.hwq_latency_ns, n->numa_node);
		if (!rc)
			rc = q_ring_init(&l->ready, mode, slots,
					 n->opts.hwq_latency_ns, n->numa_node);
		if (rc)
			return rc;
		q_ring_set_batches(&l->ready, 32, EARTH_READY_CREDIT_BATCH);
		if (k > 1) {
			rc = q_mpsc_init(&l->sib, EARTH_SIB_READY_SLOTS);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int unit_tokens_init(struct earth_node *n, size_t max, bool shared)
{
	for (unsigned i = 0; i < unit_eus(n); i++)
		if (deque_init(&n->link[i].tokens, max, shared))
			return -1;
	atomic_init(&n->eus_idle, 0);
	return 0;
}

void unit_links_fini(struct earth_node *n)
{
	if (!n->link)
		return;
	for (unsigned i = 0; i < unit_eus(n); i++) {
		q_ring_fini(&n->link[i].req);
		q_ring_fini(&n->link[i].ready);
		deque_free(&n->link[i].tokens); /* nothing if never set up */
		q_mpsc_fini(&n->link[i].sib);
	}
	free(n->link);
	n->link = NULL;
}

void earth_unit_wait(struct earth_node *n, _Atomic uint32_t *word,
		     uint32_t expected)
{
	/* n->net and su_wordp are set before the units start and not
	 * changed. */
	struct net *t = n->net;
	if (t && t->ops->wait && word == n->su_wordp) {
		t->ops->wait(t, word, expected);
		return;
	}
	earth_futex_wait(word, expected);
}

void earth_su_wake(struct earth_node *n)
{
	if (atomic_load_explicit(n->su_wordp, memory_order_seq_cst) ==
	    UNIT_SLEEPING) {
		atomic_store_explicit(n->su_wordp, UNIT_RUNNING,
				      memory_order_relaxed);
		if (n->net && n->net->ops->wake)
			n->net->ops->wake(n->net);
		else
			earth_futex_wake(n->su_wordp);
	}
}

void earth_eu_wake(struct earth_node *n, unsigned i)
{
	_Atomic uint32_t *w = &n->link[i].word;
	if (atomic_load_explicit(w, memory_order_relaxed) == UNIT_SLEEPING) {
		atomic_store_explicit(w, UNIT_RUNNING, memory_order_relaxed);
		earth_futex_wake(w);
	}
}

void earth_eus_wake(struct earth_node *n)
{
	for (unsigned i = 0; i < (n->eus ? n->eus : 1u); i++)
		earth_eu_wake(n, i);
}
