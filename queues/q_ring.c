/* SPDX-License-Identifier: MIT */
/*
 * q_ring.c - set-up and slow paths of the SPSC ring (see q_ring.h).
 */
#include "q_ring.h"

#include <errno.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>

/* Slots on `*node` when libnuma can; else page-aligned heap and *node = -1. */
static void *alloc_slots(size_t bytes, int *node)
{
	void *mem = NULL;
	if (*node >= 0 && numa_available() >= 0 && *node <= numa_max_node()) {
		mem = numa_alloc_onnode(bytes, *node);
		if (mem)
			return mem;
	}
	*node = -1;
	if (posix_memalign(&mem, 4096, bytes) != 0)
		return NULL;
	return mem;
}

int q_ring_init(struct q_ring *q, enum q_mode mode, uint32_t capacity,
		uint32_t latency_ns, int numa_node)
{
	if (capacity < 8 || (capacity & (capacity - 1)) ||
	    (mode != Q_MODE_SW && mode != Q_MODE_HWQ))
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	size_t bytes = (size_t)capacity * sizeof(struct q_msg);
	struct q_msg *slots = alloc_slots(bytes, &numa_node);
	if (!slots)
		return -ENOMEM;
	memset(slots, 0, bytes);
	uint64_t lat = 0;
	if (mode == Q_MODE_HWQ && latency_ns)
		lat = (uint64_t)(latency_ns * q_tsc_per_ns() + 0.5);
	q->capacity = capacity;
	q->numa_node = numa_node;
	q->p.slots = q->c.slots = slots;
	q->p.mask = q->c.mask = capacity - 1;
	q->p.mode = q->c.mode = mode;
	q->p.lat = q->c.lat = lat;
	q->p.limit = capacity;
	q->p.pub_batch = capacity / 8 < 32 ? capacity / 8 : 32;
	q->c.credit_batch = capacity / 8;
	atomic_init(&q->tail_pub, 0);
	atomic_init(&q->head_pub, 0);
	return 0;
}

void q_ring_set_batches(struct q_ring *q, uint32_t pub, uint32_t credit)
{
	if (pub >= 1 && pub <= q->capacity)
		q->p.pub_batch = pub;
	if (credit >= 1 && credit <= q->capacity)
		q->c.credit_batch = credit;
}

void q_ring_fini(struct q_ring *q)
{
	if (!q->p.slots)
		return;
	size_t bytes = (size_t)q->capacity * sizeof(struct q_msg);
	if (q->numa_node >= 0)
		numa_free(q->p.slots, bytes);
	else
		free(q->p.slots);
	q->p.slots = q->c.slots = NULL;
}

bool q_ring_refill_(struct q_ring *q)
{
	/* Pairs with the release store in q_ring_return_credits: the consumer
	 * has finished reading every slot below head. */
	uint64_t head =
	    atomic_load_explicit(&q->head_pub, memory_order_acquire);
	q->p.limit = head + q->capacity;
	return q->p.tail < q->p.limit;
}

void q_ring_return_credits(struct q_ring *q)
{
	q->c.returned = q->c.head;
	/* Pairs with the acquire load in q_ring_refill_. */
	atomic_store_explicit(&q->head_pub, q->c.head, memory_order_release);
}
