/* SPDX-License-Identifier: MIT */
/*
 * req.h - the EU->SU request and the SU->EU ready message, as laid out in
 * the 48-byte payload of a queue message (docs/architecture.md, "Messages").
 */
#ifndef EARTH_REQ_H
#define EARTH_REQ_H

#ifndef EARTH_INTERNAL
#error "req.h is internal to the EARTH runtime"
#endif

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "base/op.h"
#include "queues/q_msg.h"

/* The slot field holds a global slot pointer, not a local earth_slot *. */
#define SU_REQ_GSLOT 0x1u
/* No slot to signal. */
#define SU_REQ_NOSLOT 0x2u
/* INVOKE_REMOTE: the arguments travel in the request itself. */
#define SU_REQ_INLINE 0x4u
#define SU_REQ_INLINE_MAX 32u
/* A whole-message request bound for another node: spare holds the fiber
 * that posted it, for the messages about it (never a head flag: set by
 * the decoder from REQ_WIDE_WHERE, queues/req_line.h). */
#define SU_REQ_WHERE 0x8u

struct su_req {
	uint8_t op;	/* enum su_op */
	uint8_t size;	/* GET/DATA: bytes of the value (1, 2, 4 or 8) */
	uint16_t flags; /* SU_REQ_* */
	int32_t n;	/* INCR_SYNC: increment */
	uint64_t slot;	/* earth_slot * or earth_gslot bits */
	uint64_t a, b, c;
	uint64_t spare;
};
static_assert(sizeof(struct su_req) <= sizeof(((struct q_msg *)0)->w),
	      "a request fits one message");

/* Up to three (fiber, frame) pairs; fiber 0 ends the list. A message
 * whose first fiber is READY_VALUE carries one fiber and the value of the
 * GET_SYNC that made it ready: e[0].frame the value's size, e[1] the
 * (fiber, frame), e[2] (destination, value bits); the EU stores the value,
 * then runs the fiber (su_ready_value, eu_ready_take). */
#define READY_PER_MSG 3
#define READY_VALUE 1u
struct ready_msg {
	struct {
		uint64_t fiber;
		uint64_t frame;
	} e[READY_PER_MSG];
};
static_assert(sizeof(struct ready_msg) == sizeof(((struct q_msg *)0)->w),
	      "ready entries fill one message");

/* A GET/DATA value of `size` bytes (1, 2, 4, else 8: checked when it was
 * posted), moved with one access of its width. */
static inline void req_value_copy(void *dst, const void *src, unsigned size)
{
	switch (size) {
	case 1:
		memcpy(dst, src, 1);
		break;
	case 2:
		memcpy(dst, src, 2);
		break;
	case 4:
		memcpy(dst, src, 4);
		break;
	default:
		memcpy(dst, src, 8);
		break;
	}
}

static inline struct su_req *req_of(struct q_msg *m)
{
	return (struct su_req *)(void *)m->w;
}
static inline struct ready_msg *ready_of(struct q_msg *m)
{
	return (struct ready_msg *)(void *)m->w;
}

#endif /* EARTH_REQ_H */
