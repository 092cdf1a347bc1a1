/* SPDX-License-Identifier: MIT */
/*
 * deliver.c - the SU's side of operations that involve other nodes, as
 * peers send them: handling every message that arrives from another node.
 * Every received field is checked before use: addresses must fall inside
 * this node's registered memory, slots must be aligned and initialised,
 * functions are numbers in the table of threaded functions. Sending:
 * remote.c.
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "gas/registry.h"
#include "base/srctab.h"
#include "base/stamp.h"
#include "su/su.h"
#include "base/trace.h"

#include <stdlib.h>
#include <string.h>

/* ---- the slot a message names ---- */

/* A message this node refuses (net/wire.h): in the source terms of the
 * request behind it when it names one. */
#define refuse(n, h, from, origin, field, role, ...)                           \
	wire_refuse(h, from, (n)->num_nodes, origin, field, role, __VA_ARGS__)

static EARTH_COLD _Noreturn void forged_slot(struct earth_node *n,
					     const earth_slot *s,
					     const struct wire_hdr *h,
					     uint32_t from, uint64_t origin)
{
	refuse(n, h, from, origin, "a", NULL,
	       "slot %p holds fiber %p, which is not a fiber this node armed a "
	       "slot with: a forged or overwritten slot",
	       (const void *)s, (void *)(uintptr_t)s->fiber);
}

/* A slot a message makes fire runs only a fiber this node armed a slot
 * with (gas/registry.h): its fields lie in memory peers may write, so
 * this is checked after the message's own data landed. An uninitialised
 * slot (fiber 0) is left to su_slot_signal's message. */
static inline void check_fiber(struct earth_node *n, const earth_slot *s,
			       const struct wire_hdr *h, uint32_t from,
			       uint64_t origin)
{
	if (q_unlikely(!reg_fiber_known(s->fiber)) && s->fiber)
		forged_slot(n, s, h, from, origin);
}

static EARTH_COLD _Noreturn void not_a_slot(struct earth_node *n,
					    const struct wire_hdr *h,
					    uint32_t from, uint64_t origin)
{
	refuse(n, h, from, origin, "a", NULL,
	       "slot %#llx is not an aligned slot in this node's registered "
	       "memory",
	       (unsigned long long)h->a);
}

static inline __attribute__((always_inline)) earth_slot *
checked_slot(struct earth_node *n, const struct wire_hdr *h, uint32_t from,
	     uint64_t origin)
{
	earth_gslot g = {h->a};
	uint64_t addr = (uintptr_t)earth_gslot_addr(g);
	if (earth_gslot_node(g) != n->id || (addr & 7) ||
	    !reg_mem_cached(&su_g.regs, addr, sizeof(earth_slot)))
		not_a_slot(n, h, from, origin);
	earth_slot *s = (earth_slot *)(uintptr_t)addr;
	check_fiber(n, s, h, from, origin);
	return s;
}

/* A GET's or DATA's value of 1, 2, 4 or 8 bytes in one BLK_DATA, for d,
 * whose slot here fires: it goes to the EU with the fiber
 * (su_ready_value). False: store and signal as usual. */
static bool deliver_value(const struct wire_hdr *h, earth_slot *s, void *d,
			  const void *payload)
{
	if (!s || (h->flags & WIRE_F_PLACED) ||
	    (h->len != 8 && h->len != 4 && h->len != 2 && h->len != 1))
		return false;
	uint64_t v = 0;
	memcpy(&v, payload, h->len);
	return su_ready_value(&su_g, s, d, v, h->len);
}

static EARTH_COLD _Noreturn void slot_node_bad(struct earth_node *n,
					       const struct wire_hdr *h,
					       uint32_t from, uint64_t origin)
{
	refuse(n, h, from, origin, "a", NULL, "slot on node %u of %u",
	       earth_gslot_node((earth_gslot){h->a}), n->num_nodes);
}

/* The slot a message from `from` names in field a, when it is on this
 * node: checked to be an aligned slot in registered memory, else the
 * message is rejected. NULL when the slot is another node's (one of the
 * job's: its SYNC goes there). */
static inline __attribute__((always_inline)) earth_slot *
local_slot(struct earth_node *n, const struct wire_hdr *h, uint32_t from,
	   uint64_t origin)
{
	uint32_t node = earth_gslot_node((earth_gslot){h->a});
	if (node != n->id) {
		if (q_unlikely(node >= n->num_nodes))
			slot_node_bad(n, h, from, origin);
		return NULL;
	}
	return checked_slot(n, h, from, origin);
}

/* Signals the slot of a message's field a: s (from local_slot) here, or
 * a SYNC to the slot's node (with the origin it came with). */
static inline __attribute__((always_inline)) void
signal_of(struct earth_node *n, const struct wire_hdr *h, earth_slot *s,
	  const char *op, uint32_t from, uint64_t origin)
{
	if (s) {
		/* The data just written may have been the slot itself. */
		check_fiber(n, s, h, from, origin);
		su_slot_signal(&su_g, s, op);
	} else {
		su_send_sync(n, h->a, W_SYNC, 1, origin);
	}
}

/* ---- messages from peers ---- */

static EARTH_COLD _Noreturn void
outside_mem(struct earth_node *n, uint64_t addr, uint64_t len, uint32_t from,
	    const struct wire_hdr *h, uint64_t origin, const char *field,
	    const char *role)
{
	refuse(n, h, from, origin, field, role,
	       "[%#llx, +%llu) is outside this node's registered memory; "
	       "memory from malloc or mmap that other nodes read or write "
	       "must be registered with earth_register_memory",
	       (unsigned long long)addr, (unsigned long long)len);
}

static inline void *checked_mem(struct earth_node *n, uint64_t addr,
				uint64_t len, uint32_t from,
				const struct wire_hdr *h, uint64_t origin,
				const char *field, const char *role)
{
	if (q_unlikely(!reg_mem_cached(&su_g.regs, addr, len)))
		outside_mem(n, addr, len, from, h, origin, field, role);
	return (void *)(uintptr_t)addr;
}

static void deliver(struct earth_node *n, uint32_t from,
		    const struct wire_hdr *h, const void *payload)
{
	struct su_state *su = &su_g;
	su->msgs_received++;
	switch (h->type) {
	case W_SYNC: {
		earth_slot *s = checked_slot(n, h, from, h->c);
		su_slot_signal(su, s, "RSYNC"); /* n is 1 (wire_check) */
		return;
	}
	case W_INCR: {
		earth_slot *s = checked_slot(n, h, from, h->c);
		/* (A count below 0 was written by a peer: INT32_MAX minus
		 * it would overflow.) */
		int32_t was = 0;
		if (!s->fiber || !slot_count_add(s, (int32_t)h->n, &was))
			refuse(n, h, from, h->c, "n", NULL,
			       "slot %p uninitialised or negative, or "
			       "count %d + %d overflows",
			       (void *)s, was, h->n);
		return;
	}
	case W_BLK_REQ: {
		EARTH_STAMP_REQ(h->n == 8);
		uint64_t origin = wire_origin(h, payload);
		const void *src = checked_mem(n, h->b, (uint64_t)h->n, from, h,
					      origin, "b", "the source");
		EARTH_STAMP_IF(h->n == 8, STAMP_R_GET);
		earth_gptr dst = {h->c};
		if (earth_gptr_node(dst) >= n->num_nodes)
			refuse(n, h, from, origin, "c", "the destination",
			       "on node %u of %u", earth_gptr_node(dst),
			       n->num_nodes);
		if (earth_gptr_node(dst) == n->id) {
			void *d = checked_mem(
			    n, (uintptr_t)earth_gptr_addr(dst), (uint64_t)h->n,
			    from, h, origin, "c", "the destination");
			earth_slot *s = h->flags & WIRE_F_NOSLOT
					    ? NULL
					    : local_slot(n, h, from, origin);
			memmove(d, src, (size_t)h->n);
			if (!(h->flags & WIRE_F_NOSLOT))
				signal_of(n, h, s, "BLKMOV_SYNC", from, origin);
		} else {
			/* Back to the node that asked: its read ends. */
			su_push_data(n, src, (uint64_t)h->n, dst, h->a,
				     (h->flags & WIRE_F_NOSLOT) |
					 (earth_gptr_node(dst) == from
					      ? WIRE_F_REPLY
					      : 0),
				     origin);
			EARTH_STAMP_IF(h->n == 8, STAMP_R_SENT);
		}
		return;
	}
	case W_BLK_DATA: {
		EARTH_STAMP_IF(h->len == 8, STAMP_REPLY_READ);
		void *d = checked_mem(n, h->b, h->len, from, h, h->c, "b",
				      "the destination");
		bool sig =
		    (h->flags & (WIRE_F_LAST | WIRE_F_NOSLOT)) == WIRE_F_LAST;
		earth_slot *s = sig ? local_slot(n, h, from, h->c) : NULL;
		if (sig && deliver_value(h, s, d, payload)) {
			EARTH_STAMP_IF(h->len == 8, STAMP_SIGNALLED);
			return;
		}
		if (h->len && !(h->flags & WIRE_F_PLACED))
			memcpy(d, payload, h->len);
		if (sig)
			signal_of(n, h, s, "DATA_SYNC", from, h->c);
		EARTH_STAMP_IF(h->len == 8, STAMP_SIGNALLED);
		return;
	}
	case W_INVOKE: {
		const struct earth_tfunc *f = reg_tfunc_at(h->n);
		if (!f || !f->entry)
			earth_fatal(
			    "message INVOKE from node %u rejected: field "
			    "n (function %d is not in this program's "
			    "table: do all nodes run the same binary?)",
			    from, h->n);
		if (h->len != f->args_size || f->args_size > f->frame_size)
			earth_fatal(
			    "message INVOKE from node %u rejected: field "
			    "len (%u bytes of arguments for %s, which "
			    "takes %u)",
			    from, h->len, f->name, f->args_size);
		struct eu_invoke_buf *b = malloc(sizeof(*b) + h->len);
		if (!b)
			earth_fatal("out of memory for an INVOKE from node %u",
				    from);
		b->fn = f;
		if (h->len)
			memcpy(b->args, payload, h->len);
		su_ready_push_new(su, n->invoke_fiber, b);
		return;
	}
	case W_STEAL:
	case W_STEAL_NONE:
	case W_TOKEN:
		su_balance_receive(n, from, h, payload);
		return;
	case W_COLL_UP:
	case W_COLL_DOWN:
		su_coll_receive(n, from, h);
		return;
	case W_PROBE:
	case W_PROBE_ACK:
		su->msgs_received--; /* the detection's own: not counted */
		su_quiet_receive(n, from, h);
		return;
	case W_DSM:
		su_dsm_receive(n, from, h, payload);
		return;
	case W_BEAT: /* the transport's own (ucx takes it): nothing to do */
		su->msgs_received--;
		return;
	case W_SHUTDOWN:
		if (q_unlikely(h->flags & WIRE_F_STUCK))
			su_quiet_receive(n, from, h);
		n->stop_status = h->n;
		/* Pairs with the EU's acquire loads of stop. */
		atomic_store_explicit(&n->stop, true, memory_order_release);
		su->wake_check = true;
		return;
	}
}

/* A message, counted and traced: the time before it was the transport's
 * (receive), its handling is serve; the last data of a read this node
 * asked for ends that read; the slice ends the message's arrow. */
static EARTH_COLD void deliver_observed(struct earth_node *n, uint32_t from,
					const struct wire_hdr *h,
					const void *payload)
{
	/* A shared-memory message's kind rides above its type (trace). */
	uint16_t type = (uint16_t)(h->type == W_DSM
				       ? W_DSM | (unsigned)(h->n & 0xff) << 8
				       : h->type),
		 flags = h->flags;
	uint64_t seq = trace_on ? trace_next_seq_in(from) : 0;
	uint64_t t0 = acct_deliver_begin();
	deliver(n, from, h, payload);
	if (type == W_BLK_DATA && (flags & (WIRE_F_LAST | WIRE_F_REPLY)) ==
				      (WIRE_F_LAST | WIRE_F_REPLY))
		acct_completed(&acct_shared.reads_done);
	uint64_t t1 = acct_deliver_end(t0);
	if (trace_on)
		trace_slice(TRACE_SU, TRACE_RECV, type, from, seq, t0, t1);
}

void *su_net_place(const struct wire_hdr *h)
{
	return reg_mem_cached(&su_g.regs, h->b, h->len)
		   ? (void *)(uintptr_t)h->b
		   : NULL;
}

void su_net_deliver(void *ctx, uint32_t from, const struct wire_hdr *h,
		    const void *payload)
{
	struct earth_node *n = ctx;
	/* For a slot's error found while it is handled (unit/slot.c). */
	uint64_t origin = wire_origin(h, payload);
	if (q_unlikely(origin))
		src_origin_set(origin, from, n->num_nodes);
	if (q_unlikely(acct_on))
		deliver_observed(n, from, h, payload);
	else
		deliver(n, from, h, payload);
	if (q_unlikely(origin))
		src_origin_set(0, 0, 0);
}
