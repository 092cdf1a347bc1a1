/* SPDX-License-Identifier: MIT */
/*
 * q_ring.h - single-producer single-consumer ring of 64-byte messages with
 * two synchronization protocols chosen at run time behind one API:
 *
 *  Q_MODE_SW   the EARTH-MANNA software queue: head/tail indices in shared
 *              memory; each side caches the other's index and rereads it only
 *              when the ring looks full/empty; the tail is published in
 *              batches (and on q_ring_flush), the head in batches.
 *  Q_MODE_HWQ  a hardware-FIFO emulation: each slot carries its sequence
 *              number, so the consumer never reads a shared index; the
 *              producer spends credits and never reads consumer state on the
 *              fast path; credits come back in batches. Optional delivery
 *              latency: a message is invisible until L ns after its enqueue.
 *
 * Producer: m = q_ring_reserve(q) (NULL when full); fill m->w;
 * q_ring_publish(q, m); q_ring_flush(q) when a batch ends. Consumer: m =
 * q_ring_peek(q) (NULL when empty); read m->w; q_ring_release(q). Each of the
 * two sides must be used by one thread at a time.
 */
#ifndef Q_RING_H
#define Q_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "q_msg.h"

enum q_mode { Q_MODE_SW = 0, Q_MODE_HWQ = 1 };

struct q_ring {
	struct {		/* producer's own line */
		uint64_t tail;	/* next position to fill */
		uint64_t limit; /* tail may reach this: head seen + capacity */
		uint64_t published; /* SW: last value stored to tail_pub */
		struct q_msg *slots;
		uint64_t mask;
		uint64_t lat; /* HWQ: delivery latency in TSC ticks */
		uint32_t mode;
		uint32_t pub_batch;
	} p q_aligned_line;
	struct {		   /* consumer's own line */
		uint64_t head;	   /* next position to read */
		uint64_t avail;	   /* SW: tail_pub last seen */
		uint64_t returned; /* last value stored to head_pub */
		struct q_msg *slots;
		uint64_t mask;
		uint64_t lat;
		uint32_t mode;
		uint32_t credit_batch;
	} c q_aligned_line;
	/* SW: written by the producer with release; pairs with the consumer's
	 * acquire in q_ring_peek. */
	_Atomic uint64_t tail_pub q_aligned_line;
	/* Both modes: consumer's head (the credits), release; pairs with the
	 * producer's acquire in q_ring_refill_. */
	_Atomic uint64_t head_pub q_aligned_line;
	uint64_t capacity;
	int numa_node;
};

/*
 * Allocates the slots (on `numa_node` if >= 0) for `capacity` messages
 * (a power of two >= 8). latency_ns applies to Q_MODE_HWQ only.
 * Returns 0 or -EINVAL/-ENOMEM. Before either side runs.
 */
int q_ring_init(struct q_ring *q, enum q_mode mode, uint32_t capacity,
		uint32_t latency_ns, int numa_node);
void q_ring_fini(struct q_ring *q);

/* Overrides the batch sizes (>= 1, <= capacity): the producer publishes its
 * SW tail every `pub` messages, the consumer returns credits every `credit`.
 * Before either side runs. */
void q_ring_set_batches(struct q_ring *q, uint32_t pub, uint32_t credit);

/* Producer slow path: reload the consumer's head. */
bool q_ring_refill_(struct q_ring *q);
/* Consumer slow path: hand all consumed slots back. */
void q_ring_return_credits(struct q_ring *q);

/* Consumer (SW): a batch became visible; start fetching its lines at once
 * so their transfers from the producer's core overlap. */
static inline void q_ring_prefetch_(struct q_ring *q)
{
	uint64_t end =
	    q->c.avail - q->c.head > 16 ? q->c.head + 16 : q->c.avail;
	for (uint64_t i = q->c.head + 1; i < end; i++)
		__builtin_prefetch(&q->c.slots[i & q->c.mask], 0, 3);
}

/* Producer: a free slot, or NULL when the ring is full. */
static inline struct q_msg *q_ring_reserve(struct q_ring *q)
{
	if (q_unlikely(q->p.tail >= q->p.limit) && !q_ring_refill_(q))
		return NULL;
	return &q->p.slots[q->p.tail & q->p.mask];
}

/* Producer: the next slot while credits last, else NULL (no call; the
 * caller takes q_ring_reserve's path). */
static inline struct q_msg *q_ring_reserve_now(struct q_ring *q)
{
	if (q_unlikely(q->p.tail >= q->p.limit))
		return NULL;
	return &q->p.slots[q->p.tail & q->p.mask];
}

/* Producer: makes the SW tail visible now. True if it published
 * messages the consumer could not see before. */
static inline bool q_ring_flush(struct q_ring *q)
{
	if (q->p.published != q->p.tail) {
		q->p.published = q->p.tail;
		/* Pairs with the acquire load of tail_pub in q_ring_peek: the
		 * payloads stored before are visible once the tail is. */
		atomic_store_explicit(&q->tail_pub, q->p.tail,
				      memory_order_release);
		return true;
	}
	return false;
}

/* Producer: m (from q_ring_reserve) is complete. True if the consumer may
 * see messages now that it could not before (HWQ: always; SW: when a
 * batch ended). */
static inline bool q_ring_publish(struct q_ring *q, struct q_msg *m)
{
	uint64_t pos = q->p.tail++;
#ifndef Q_RING_PREFETCH_AHEAD
#define Q_RING_PREFETCH_AHEAD 32
#endif
	/* Take ownership of a slot we will fill soon: the consumer read it a
	 * lap ago, so its line must come back; start that transfer now rather
	 * than stall the store buffer on it later (PREFETCHW). */
	if (Q_RING_PREFETCH_AHEAD)
		__builtin_prefetch(
		    &q->p.slots[(pos + Q_RING_PREFETCH_AHEAD) & q->p.mask], 1,
		    3);
	if (q->p.mode == Q_MODE_HWQ) {
		if (q->p.lat)
			m->stamp = q_tsc();
		/* Pairs with the acquire load of seq in q_ring_peek. */
		atomic_store_explicit(&m->seq, pos + 1, memory_order_release);
		q->p.published = q->p.tail;
		return true;
	}
	if (q->p.tail - q->p.published >= q->p.pub_batch)
		return q_ring_flush(q);
	return false;
}

/* Consumer: the next message, or NULL when none has arrived. */
static inline struct q_msg *q_ring_peek(struct q_ring *q)
{
	struct q_msg *m = &q->c.slots[q->c.head & q->c.mask];
	if (q->c.mode == Q_MODE_HWQ) {
		/* Pairs with the release store of seq in q_ring_publish. */
		if (atomic_load_explicit(&m->seq, memory_order_acquire) !=
		    q->c.head + 1)
			goto empty;
		if (q_unlikely(q->c.lat) && q_tsc() - m->stamp < q->c.lat)
			return NULL;
		return m;
	}
	if (q->c.head == q->c.avail) {
		/* Pairs with the release store of tail_pub in q_ring_flush. */
		q->c.avail =
		    atomic_load_explicit(&q->tail_pub, memory_order_acquire);
		if (q->c.head == q->c.avail)
			goto empty;
		q_ring_prefetch_(q);
	}
	return m;
empty:
	if (q->c.returned != q->c.head)
		q_ring_return_credits(q);
	return NULL;
}

/* Consumer: has a message been published, due or not (HWQ latency is
 * ignored)? For the last look before blocking. */
static inline bool q_ring_nonempty(struct q_ring *q)
{
	if (q->c.mode == Q_MODE_HWQ) {
		struct q_msg *m = &q->c.slots[q->c.head & q->c.mask];
		/* Pairs with the release store of seq in q_ring_publish. */
		return atomic_load_explicit(&m->seq, memory_order_acquire) ==
		       q->c.head + 1;
	}
	/* Pairs with the release store of tail_pub in q_ring_flush. */
	return atomic_load_explicit(&q->tail_pub, memory_order_acquire) !=
	       q->c.head;
}

/* Consumer: done with the message q_ring_peek returned. */
static inline void q_ring_release(struct q_ring *q)
{
	q->c.head++;
	if (q->c.head - q->c.returned >= q->c.credit_batch)
		q_ring_return_credits(q);
}

/* Producer: messages published but maybe not yet consumed (an upper bound). */
static inline uint64_t q_ring_unconsumed(struct q_ring *q)
{
	return q->p.tail -
	       atomic_load_explicit(&q->head_pub, memory_order_relaxed);
}

#endif /* Q_RING_H */
