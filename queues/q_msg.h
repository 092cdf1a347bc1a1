/* SPDX-License-Identifier: MIT */
/*
 * q_msg.h - the 64-byte message every EU<->SU queue carries: one cache line,
 * so a message crosses cores in a single line transfer.
 */
#ifndef Q_MSG_H
#define Q_MSG_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "q_arch.h"

#define Q_MSG_WORDS 6

struct q_msg {
	/* hwq and mpsc: sequence number of the message in this slot, stored
	 * last with release; pairs with the consumer's acquire load. Unused by
	 * the software ring, whose indices carry that role. */
	_Atomic uint64_t seq;
	uint64_t stamp;		 /* hwq latency model: TSC at enqueue */
	uint64_t w[Q_MSG_WORDS]; /* payload: 48 bytes                 */
} q_aligned_line;

static_assert(sizeof(struct q_msg) == Q_CACHE_LINE, "one message per line");
static_assert(offsetof(struct q_msg, w) % 16 == 0, "payload in 16-byte pairs");

/* Two payload words stored as one (an SSE2 store): fewer stores per
 * message, each of which leaves the core behind the slot's. */
typedef uint64_t q_words2 __attribute__((vector_size(16), may_alias));

#endif /* Q_MSG_H */
