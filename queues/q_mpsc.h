/* SPDX-License-Identifier: MIT */
/*
 * q_mpsc.h - bounded multi-producer single-consumer queue of 64-byte
 * messages (per-slot sequence numbers; producers claim a position with one
 * compare-and-swap on the tail). Used where several threads feed one SU.
 *
 * Producer (any thread): m = q_mpsc_reserve(q) (NULL when full); fill m->w;
 * q_mpsc_publish(q, m). Consumer (one thread): m = q_mpsc_peek(q); read;
 * q_mpsc_release(q).
 */
#ifndef Q_MPSC_H
#define Q_MPSC_H

#include <stdbool.h>

#include "q_msg.h"

struct q_mpsc {
	/* Read-only after init. */
	struct q_msg *slots;
	uint64_t mask;
	uint64_t capacity;
	/* Claimed by producers with a relaxed CAS: the ordering comes from the
	 * slot's seq (acquire in reserve, release in publish/release). */
	_Atomic uint64_t tail q_aligned_line;
	uint64_t head q_aligned_line; /* consumer only */
};

/* capacity: power of two >= 2. Returns 0, -EINVAL or -ENOMEM. */
int q_mpsc_init(struct q_mpsc *q, uint32_t capacity);
void q_mpsc_fini(struct q_mpsc *q);

/* Any thread: a claimed slot, or NULL when the queue is full. The claim
 * is final: the caller must fill and publish it. */
static inline struct q_msg *q_mpsc_reserve(struct q_mpsc *q)
{
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	for (;;) {
		struct q_msg *m = &q->slots[pos & q->mask];
		/* Pairs with the consumer's release in q_mpsc_release: the
		 * slot's previous message has been read. */
		uint64_t seq =
		    atomic_load_explicit(&m->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(
				&q->tail, &pos, pos + 1, memory_order_relaxed,
				memory_order_relaxed))
				return m;
		} else if (dif < 0) {
			return NULL;
		} else {
			pos = atomic_load_explicit(&q->tail,
						   memory_order_relaxed);
		}
	}
}

/* Producer: m is filled. */
static inline void q_mpsc_publish(struct q_mpsc *q, struct q_msg *m)
{
	(void)q;
	uint64_t seq = atomic_load_explicit(&m->seq, memory_order_relaxed);
	/* Pairs with the acquire load in q_mpsc_peek. */
	atomic_store_explicit(&m->seq, seq + 1, memory_order_release);
}

/* Consumer: the next message or NULL. */
static inline struct q_msg *q_mpsc_peek(struct q_mpsc *q)
{
	struct q_msg *m = &q->slots[q->head & q->mask];
	/* Pairs with the release store in q_mpsc_publish. */
	if (atomic_load_explicit(&m->seq, memory_order_acquire) != q->head + 1)
		return NULL;
	return m;
}

/* Consumer: done with the message from q_mpsc_peek. */
static inline void q_mpsc_release(struct q_mpsc *q)
{
	struct q_msg *m = &q->slots[q->head & q->mask];
	/* Pairs with the acquire load in q_mpsc_reserve. */
	atomic_store_explicit(&m->seq, q->head + q->capacity,
			      memory_order_release);
	q->head++;
}

#endif /* Q_MPSC_H */
