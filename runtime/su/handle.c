/* SPDX-License-Identifier: MIT */
/*
 * handle.c - the SU performs one request: move the data, then signal the
 * slot. The data stores precede the ready message's release store, so a
 * fiber made ready by a signal sees the data (docs/architecture.md,
 * "Ordering"). The EU checked this node's memory a request names (the
 * GET's source, the DATA's destination, both ends of a BLKMOV, a global
 * slot here) against registered memory when it posted it (eu/post.c), in
 * the fiber's terms: the SU performs its own EU's requests as they are.
 */
#define EARTH_INTERNAL 1
#include "su/su.h"

#include <stdint.h>
#include <string.h>

static inline bool is_local(struct earth_node *n, uint64_t gptr_bits)
{
	return earth_gptr_node((earth_gptr){gptr_bits}) == n->id;
}

static inline void *local_addr(uint64_t bits)
{
	return earth_gptr_addr((earth_gptr){bits});
}

static inline void signal_slot(struct earth_node *n, const struct su_req *r)
{
	const char *op = su_op_names[r->op];
	if (q_unlikely((r->flags & SU_REQ_GSLOT) && !is_local(n, r->slot))) {
		su_signal_gslot(n, r->slot, op, su_origin(n, r));
		return;
	}
	su_slot_signal(&su_g, su_slot_resolve(n, r, op), op);
}

void su_get_done(struct earth_node *n, const struct su_req *r, const void *src)
{
	void *dst = (void *)(uintptr_t)r->b;
	if (q_unlikely((r->flags & SU_REQ_GSLOT) && !is_local(n, r->slot))) {
		su_copy_value(dst, src, r->size);
		su_signal_gslot(n, r->slot, "GET_SYNC", su_origin(n, r));
		return;
	}
	earth_slot *s = su_slot_resolve(n, r, "GET_SYNC");
	uint64_t v = 0;
	su_copy_value(&v, src, r->size);
	if (!su_ready_value(&su_g, s, dst, v, r->size)) {
		su_copy_value(dst, &v, r->size);
		su_slot_signal(&su_g, s, "GET_SYNC");
	}
}

void su_handle(struct earth_node *n, const struct su_req *r)
{
	struct su_state *su = &su_g;
	su->handled++;
	switch (r->op) {
	case SU_OP_SYNC:
		signal_slot(n, r);
		return;
	case SU_OP_INCR_SYNC: {
		if ((r->flags & SU_REQ_GSLOT) && !is_local(n, r->slot)) {
			su_remote_sync(n, r);
			return;
		}
		earth_slot *s = su_slot_resolve(n, r, "INCR_SYNC");
		slot_incr(s, r->n, "INCR_SYNC");
		return;
	}
	case SU_OP_SPAWN:
		su_ready_spawn(su, (earth_fiber_fn)(uintptr_t)r->a,
			       (void *)(uintptr_t)r->b);
		return;
	case SU_OP_GET_SYNC:
		if (q_unlikely(!is_local(n, r->a))) {
			su_remote_get(n, r);
			return;
		}
		su_get_done(n, r, local_addr(r->a));
		return;
	case SU_OP_DATA_SYNC:
		if (q_unlikely(!is_local(n, r->b))) {
			su_remote_data(n, r);
			return;
		}
		su_copy_value(local_addr(r->b), &r->a, r->size);
		signal_slot(n, r);
		return;
	case SU_OP_BLKMOV_SYNC:
		if (q_unlikely(!is_local(n, r->a) || !is_local(n, r->b))) {
			su_remote_blkmov(n, r);
			return;
		}
		memmove(local_addr(r->b), local_addr(r->a), (size_t)r->c);
		signal_slot(n, r);
		return;
	case SU_OP_INVOKE: {
		const struct earth_tfunc *f = (const void *)(uintptr_t)r->a;
		su_ready_push(su, f->entry, (void *)(uintptr_t)r->b);
		return;
	}
	case SU_OP_INVOKE_REMOTE:
		su_remote_invoke(n, r);
		return;
	case SU_OP_COLL:
		su_coll_post(n, r);
		return;
	case SU_OP_DSM:
		su_dsm_request(n, r);
		return;
	default:
		earth_fatal("SU: request with unknown operation %u", r->op);
	}
}
