/* SPDX-License-Identifier: MIT */
/*
 * req_line.h - EU->SU requests packed several per queue message: the
 * records the EU writes into a message's 48-byte payload (six words) and
 * the SU's decoder, which checks every record before anything uses it
 * (docs/architecture.md, "Messages").
 *
 * Every record starts with a head word:
 *   bits  0-47  compact: the local slot address, or 0 when the slot follows
 *               in the next word (a global slot, or an address beyond 48
 *               bits); wide: the INCR_SYNC increment / INVOKE node (n)
 *   bits 48-55  op (enum su_op)
 *   bits 56-59  value size (GET/DATA: 1, 2, 4 or 8; COLL: its type)
 *   bits 60-62  flags (SU_REQ_GSLOT, SU_REQ_NOSLOT, SU_REQ_INLINE)
 *   bit  63     wide: the record is the whole message, struct su_req's
 *               words 1-5 follow (slot, a, b, c, spare); then bit 47
 *               (REQ_WIDE_WHERE) says spare holds the fiber that posted
 *               the request (SU_REQ_WHERE: one bound for another node)
 *               and bits 32-46 are 0
 * Compact records and their words after the head (the slot word first
 * when the head holds no slot):
 *   SYNC                    -
 *   INCR_SYNC               n
 *   GET_SYNC                a = source gptr, b = destination address
 *   DATA_SYNC               a = value bits,  b = destination gptr
 *   SPAWN, INVOKE           a, b (no slot: the head's slot bits are 0)
 * TOKEN never travels to the SU: the EU keeps tokens on its deque
 * (unit/deque.h), so a TOKEN record is refused like an unknown op.
 * A zero head word ends the message early.
 */
#ifndef EARTH_REQ_LINE_H
#define EARTH_REQ_LINE_H

#include "unit/req.h"

#define REQ_LINE_WORDS Q_MSG_WORDS
#define REQ_ADDR_MASK ((1ull << 48) - 1)
#define REQ_WIDE (1ull << 63)
#define REQ_WIDE_WHERE (1ull << 47)

static inline uint64_t req_head(enum su_op op, unsigned size, unsigned flags,
				uint64_t low)
{
	return low | (uint64_t)op << 48 | (uint64_t)size << 56 |
	       (uint64_t)flags << 60;
}

/* Does a record naming this slot need a word for it after the head? */
static inline unsigned req_slot_words(unsigned flags, uint64_t slot)
{
	return (flags & SU_REQ_GSLOT) || (slot & ~REQ_ADDR_MASK) || !slot;
}

/* What a compact record of each operation may be: its words after the
 * head and the slot word; the value sizes it takes (bit s for size s); the
 * flags it may carry and must carry. No sizes: only wide. */
struct req_form {
	uint8_t args, slotted, flags_ok, flags_req;
	uint16_t sizes;
};
#define REQ_SIZES_VALUE (1u << 1 | 1u << 2 | 1u << 4 | 1u << 8)
static const struct req_form req_forms[SU_OP_COUNT_] = {
    [SU_OP_SYNC] = {0, 1, SU_REQ_GSLOT, 0, 1u},
    [SU_OP_INCR_SYNC] = {1, 1, SU_REQ_GSLOT, 0, 1u},
    [SU_OP_GET_SYNC] = {2, 1, SU_REQ_GSLOT, 0, REQ_SIZES_VALUE},
    [SU_OP_DATA_SYNC] = {2, 1, SU_REQ_GSLOT, 0, REQ_SIZES_VALUE},
    [SU_OP_SPAWN] = {2, 0, SU_REQ_NOSLOT, SU_REQ_NOSLOT, 1u},
    [SU_OP_INVOKE] = {2, 0, SU_REQ_NOSLOT, SU_REQ_NOSLOT, 1u},
};

/* Why a record was refused (req_decode returns the negative index). */
enum req_bad {
	REQ_BAD_OP = 1,
	REQ_BAD_WIDE_POS,
	REQ_BAD_FLAGS,
	REQ_BAD_SIZE,
	REQ_BAD_SLOT,
	REQ_BAD_N,
	REQ_BAD_LENGTH,
};

/*
 * Decodes the record at w[i] (i < REQ_LINE_WORDS) into *r, a copy, so what
 * the SU acts on cannot change under it (r->c and r->spare only for the
 * operations that use them). Returns the record's words, 0 at a zero head
 * (the message ends), or -enum req_bad.
 */
static inline int req_decode_any(const uint64_t *w, unsigned i,
				 struct su_req *r);

static inline int req_decode(const uint64_t *w, unsigned i, struct su_req *r)
{
	uint64_t h = w[i];
	uint64_t x = h & REQ_ADDR_MASK;
	unsigned key = (unsigned)(h >> 48);
	/* The common records: a local slot in the head, no flags. */
	if (q_likely(x && key < 1u << 12)) {
		unsigned op = key & 0xff, size = key >> 8, len;
		r->op = (uint8_t)op;
		r->size = (uint8_t)size;
		r->flags = 0;
		r->n = 0;
		r->slot = x;
		/* c and spare stay unset: only whole-message records (BLKMOV,
		 * remote INVOKE) carry and read them. */
		switch (op) {
		case SU_OP_SYNC:
			if (q_unlikely(size))
				return -REQ_BAD_SIZE;
			return 1;
		case SU_OP_INCR_SYNC:
			if (q_unlikely(size))
				return -REQ_BAD_SIZE;
			if (q_unlikely(i + 2 > REQ_LINE_WORDS))
				return -REQ_BAD_LENGTH;
			if (q_unlikely(w[i + 1] > INT32_MAX))
				return -REQ_BAD_N;
			r->n = (int32_t)w[i + 1];
			return 2;
		case SU_OP_GET_SYNC:
		case SU_OP_DATA_SYNC:
			if (q_unlikely(!((REQ_SIZES_VALUE >> size) & 1)))
				return -REQ_BAD_SIZE;
			len = 3;
			if (q_unlikely(i + len > REQ_LINE_WORDS))
				return -REQ_BAD_LENGTH;
			r->a = w[i + 1];
			r->b = w[i + 2];
			return (int)len;
		default:
			break;
		}
	}
	return req_decode_any(w, i, r);
}

/* Every form, and the refusals. */
static inline int req_decode_any(const uint64_t *w, unsigned i,
				 struct su_req *r)
{
	uint64_t h = w[i];
	if (!h)
		return 0;
	unsigned op = (unsigned)(h >> 48) & 0xff;
	unsigned size = (unsigned)(h >> 56) & 0xf;
	unsigned flags = (unsigned)(h >> 60) & 0x7;
	if (q_unlikely(op == 0 || op >= SU_OP_COUNT_))
		return -REQ_BAD_OP;
	r->op = (uint8_t)op;
	r->size = (uint8_t)size;
	r->flags = (uint16_t)flags;
	if (h & REQ_WIDE) {
		if (q_unlikely(i != 0))
			return -REQ_BAD_WIDE_POS;
		if (q_unlikely((h & REQ_ADDR_MASK & ~REQ_WIDE_WHERE) >> 32))
			return -REQ_BAD_N;
		if (h & REQ_WIDE_WHERE)
			r->flags |= SU_REQ_WHERE;
		r->n = (int32_t)(uint32_t)h;
		r->slot = w[1];
		r->a = w[2];
		r->b = w[3];
		r->c = w[4];
		r->spare = w[5];
		return REQ_LINE_WORDS;
	}
	const struct req_form *f = &req_forms[op];
	if (q_unlikely(!f->sizes))
		return -REQ_BAD_OP; /* only wide */
	if (q_unlikely(!((f->sizes >> size) & 1)))
		return -REQ_BAD_SIZE;
	if (q_unlikely((flags & ~f->flags_ok) ||
		       (flags & f->flags_req) != f->flags_req))
		return -REQ_BAD_FLAGS;
	uint64_t x = h & REQ_ADDR_MASK;
	if (q_unlikely(x && (flags || !f->slotted)))
		return -REQ_BAD_SLOT;
	unsigned k = i + 1;
	unsigned len = 1u + f->args + (f->slotted && !x);
	if (q_unlikely(i + len > REQ_LINE_WORDS))
		return -REQ_BAD_LENGTH;
	r->n = 0;
	r->c = r->spare = 0;
	r->slot = x;
	if (f->slotted && !x)
		r->slot = w[k++];
	if (op == SU_OP_INCR_SYNC) {
		if (q_unlikely(w[k] > INT32_MAX))
			return -REQ_BAD_N;
		r->n = (int32_t)w[k];
	} else if (f->args) {
		r->a = w[k];
		r->b = w[k + 1];
	}
	return (int)len;
}

#endif /* EARTH_REQ_LINE_H */
