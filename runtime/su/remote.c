/* SPDX-License-Identifier: MIT */
/*
 * remote.c - the SU's side of operations that involve other nodes:
 * turning requests with remote operands into messages, queueing messages a
 * peer has no room for (never blocking), and handling what peers send.
 * Every received field is checked before use: addresses must fall inside
 * this node's registered memory, slots must be aligned and initialised,
 * functions are numbers in the table of threaded functions. GET, DATA and
 * BLKMOV whose remote operands all lie in another node's global segment
 * mapped here (the direct table, gas/gmem.h, EARTH_REMOTE=direct: every
 * operand under earthrun's shared mapping, the sources of reads where the
 * transport maps the peer's segment) are served by this SU itself: a copy
 * through the mapping, then the slot is signalled (a remote slot by a SYNC
 * message), like a memory-mapped network interface. Over a transport that
 * reads peers' global memory one-sided (net_ops.rma_get: ucx), a GET and a
 * BLKMOV from another node's global memory into this node not mapped here
 * are read so; the completion, run by the transport's poll, signals the
 * slot. Where it also writes it (net_ops.rma_put), a DATA and a BLKMOV
 * from this node into another node's global memory are written so; the
 * completion comes once the data is in that node's memory, and only then
 * is the slot signalled (a SYNC to the destination's or another node's
 * slot leaves only then, so it arrives after the data).
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "gas/gmem.h"
#include "gas/registry.h"
#include "base/srctab.h"
#include "base/stamp.h"
#include "su/su.h"
#include "base/trace.h"

#include <stdlib.h>
#include <string.h>

/* ---- sending ---- */

/* Queues a message for peer: its payload copied, or with `ref` only a
 * reference to it (a block-move chunk, which stays put until the move's
 * slot is signalled: copying 64 KiB chunks into fresh memory while the
 * ring was full cost up to 300 us each, page faults in a VM). */
/* An answer to something peer asked of this node: the data of its
 * BLK_REQ (GET_SYNC, BLKMOV_SYNC) or the answer to its STEAL. */
static inline bool is_answer(const struct wire_hdr *h)
{
	return (h->type == W_BLK_DATA && (h->flags & WIRE_F_REPLY)) ||
	       h->type == W_STEAL_NONE || h->type == W_TOKEN;
}

/* The answers queued for peer outgrew EARTH_PEER_QUEUE_MB: it keeps
 * asking and does not read. */
static EARTH_COLD void owed_too_much(uint32_t peer, uint64_t bytes)
{
	earth_fatal("node %u does not read its answers: %llu MiB of them are "
		    "queued here for it (EARTH_PEER_QUEUE_MB allows %llu): a "
		    "stalled or hostile peer",
		    peer, (unsigned long long)(bytes >> 20),
		    (unsigned long long)(su_g.owed_max >> 20));
}

static void queue_out(struct su_state *su, uint32_t peer,
		      const struct wire_hdr *h, const void *payload, bool ref)
{
	size_t bytes = sizeof(struct su_out_msg) + (ref ? 0 : h->len);
	struct su_out_msg *m = su_out_alloc(bytes);
	if (!m)
		earth_fatal("out of memory queueing a message for node %u",
			    peer);
	m->owed = 0;
	if (is_answer(h)) {
		m->owed = (uint32_t)bytes;
		su->owed[peer] += bytes;
		if (q_unlikely(su->owed[peer] > su->owed_max))
			owed_too_much(peer, su->owed[peer]);
	}
	m->next = NULL;
	m->h = *h;
	m->ref = ref ? payload : NULL;
	if (!ref && h->len)
		memcpy(m->payload, payload, h->len);
	if (ref)
		su->queued_ref += h->len;
	else
		su->queued_copied += h->len;
	if (su->out_tail[peer])
		su->out_tail[peer]->next = m;
	else
		su->out_head[peer] = m;
	su->out_tail[peer] = m;
	su->out_pending++;
}

/* A message left (statistics or trace on): the request being handled
 * needed another node; the send is a slice, the start of the message's
 * arrow. */
static EARTH_COLD void sent_observed(uint32_t peer, const struct wire_hdr *h,
				     uint64_t t0)
{
	acct_su.sent = true;
	if (trace_on)
		trace_slice(TRACE_SU, TRACE_SEND, h->type, peer,
			    trace_next_seq_out(peer), t0, q_tsc());
}

/* Another node's memory was accessed one-sided (statistics on): the
 * request was remote; `read`: it was a read into this node, now done. */
static EARTH_COLD void direct_observed(bool read)
{
	acct_su.sent = true;
	if (read)
		acct_completed(&acct_shared.reads_done);
}

void su_net_send(struct earth_node *n, uint32_t peer, struct wire_hdr *h,
		 const void *payload)
{
	struct su_state *su = &su_g;
	uint64_t t0 = q_unlikely(acct_on) ? q_tsc() : 0;
	h->magic = WIRE_MAGIC;
	h->version = WIRE_VERSION;
	h->src = (uint16_t)n->id;
	su->msgs_sent++;
	if (su->out_head[peer] ||
	    n->net->ops->send(n->net, peer, h, payload) != 0)
		queue_out(su, peer, h, payload, false);
	if (q_unlikely(t0))
		sent_observed(peer, h, t0);
}

/* Sends a message whose payload may be taken from where it lies
 * (net_ops.send_ref) when the transport can, else copied by send. */
static int net_send_where(struct earth_node *n, uint32_t peer,
			  const struct wire_hdr *h, const void *payload,
			  bool ref)
{
	if (ref && n->net->ops->send_ref)
		return n->net->ops->send_ref(n->net, peer, h, payload);
	return n->net->ops->send(n->net, peer, h, payload);
}

/* A block-move chunk whose source stays put until the move's slot is
 * signalled (after every chunk arrived): the transport may send it from
 * there, and when it has no room now the queue keeps a reference. */
static void net_send_chunk(struct earth_node *n, uint32_t peer,
			   struct wire_hdr *h, const void *payload)
{
	struct su_state *su = &su_g;
	uint64_t t0 = q_unlikely(acct_on) ? q_tsc() : 0;
	h->magic = WIRE_MAGIC;
	h->version = WIRE_VERSION;
	h->src = (uint16_t)n->id;
	su->msgs_sent++;
	if (su->out_head[peer] || net_send_where(n, peer, h, payload, true))
		queue_out(su, peer, h, payload, true);
	if (q_unlikely(t0))
		sent_observed(peer, h, t0);
}

unsigned su_net_drain(struct earth_node *n)
{
	struct su_state *su = &su_g;
	unsigned sent = 0;
	for (uint32_t p = 0; p < n->num_nodes && su->out_pending; p++) {
		struct su_out_msg *m;
		while ((m = su->out_head[p])) {
			if (net_send_where(n, p, &m->h,
					   m->ref ? m->ref : m->payload,
					   m->ref))
				break;
			su->out_head[p] = m->next;
			if (!m->next)
				su->out_tail[p] = NULL;
			su->owed[p] -= m->owed;
			su_out_free(m);
			su->out_pending--;
			sent++;
		}
	}
	return sent;
}

uint64_t su_origin(struct earth_node *n, const struct su_req *r)
{
	if (!(r->flags & SU_REQ_WHERE))
		return 0;
	earth_fiber_fn fn;
	uintptr_t f = (uintptr_t)r->spare;
	memcpy(&fn, &f, sizeof(fn));
	return src_origin_pack(fn, r->op, r->flags & SU_REQ_GSLOT, r->size,
			       n->id);
}

static void send_sync(struct earth_node *n, uint64_t gslot, enum wire_type t,
		      int32_t count, uint64_t origin)
{
	struct wire_hdr h = {
	    .type = (uint8_t)t, .n = count, .a = gslot, .c = origin};
	su_net_send(n, earth_gslot_node((earth_gslot){gslot}), &h, NULL);
}

/* Pushes len bytes at local src to dst (another node), then the slot. */
static void push_data(struct earth_node *n, const void *src, uint64_t len,
		      earth_gptr dst, uint64_t gslot, unsigned flags,
		      uint64_t origin)
{
	uint32_t peer = earth_gptr_node(dst);
	uint64_t off = 0;
	do {
		uint64_t max = n->net->max_payload;
		uint64_t chunk = len - off > max ? max : len - off;
		struct wire_hdr h = {
		    .type = W_BLK_DATA,
		    .len = (uint32_t)chunk,
		    .a = gslot,
		    .b = (uintptr_t)earth_gptr_addr(dst) + off,
		    .c = origin,
		    .flags = (uint16_t)(flags |
					(off + chunk == len ? WIRE_F_LAST : 0)),
		};
		net_send_chunk(n, peer, &h, (const char *)src + off);
		off += chunk;
	} while (off < len);
}

/* ---- signalling a slot named by a global slot pointer ---- */

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

void su_signal_gslot(struct earth_node *n, uint64_t gslot, const char *op,
		     uint64_t origin)
{
	earth_gslot g = {gslot};
	if (earth_gslot_node(g) == n->id) {
		earth_slot *s = earth_gslot_addr(g);
		if (q_unlikely(!s))
			earth_fatal("%s: null slot", op);
		su_slot_signal(&su_g, s, op);
	} else {
		send_sync(n, gslot, W_SYNC, 1, origin);
	}
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
		send_sync(n, h->a, W_SYNC, 1, origin);
	}
}

/* ---- requests with remote operands (from su_handle) ---- */

static uint64_t slot_bits(struct earth_node *n, const struct su_req *r)
{
	if (r->flags & SU_REQ_GSLOT)
		return r->slot;
	return earth_gptr_make(n->id, (void *)(uintptr_t)r->slot).bits;
}

void su_remote_sync(struct earth_node *n, const struct su_req *r)
{
	if (r->op == SU_OP_INCR_SYNC)
		send_sync(n, r->slot, W_INCR, r->n, su_origin(n, r));
	else
		send_sync(n, r->slot, W_SYNC, 1, su_origin(n, r));
}

/* A GET_SYNC or BLKMOV_SYNC read one-sided by the transport
 * (net_ops.rma_get), until its data is here. */
struct rma_read {
	struct earth_node *n;
	struct su_req r;
	bool blk;     /* BLKMOV_SYNC: signal the slot; else GET: the value */
	uint64_t val; /* GET: the value read */
};

static void rma_read_done(void *arg)
{
	struct rma_read *rd = arg;
	if (acct_on)
		direct_observed(true);
	if (rd->blk)
		su_signal_gslot(rd->n, slot_bits(rd->n, &rd->r), "BLKMOV_SYNC",
				su_origin(rd->n, &rd->r));
	else
		su_get_done(rd->n, &rd->r, &rd->val);
	free(rd);
}

/* Reads len bytes of src (another node's global memory) into dst
 * one-sided when the transport can; false if it cannot (nothing done). */
static bool rma_read(struct earth_node *n, const struct su_req *r,
		     earth_gptr src, void *dst, uint64_t len, bool blk)
{
	struct net *t = n->net;
	if (!t || !t->ops->rma_get || earth_gptr_node(src) == n->id)
		return false;
	struct rma_read *rd = malloc(sizeof(*rd));
	if (!rd)
		return false;
	rd->n = n;
	rd->r = *r;
	rd->blk = blk;
	rd->val = 0;
	if (t->ops->rma_get(t, earth_gptr_node(src), blk ? dst : &rd->val,
			    (uintptr_t)earth_gptr_addr(src), len, rma_read_done,
			    rd) == 0)
		return true;
	free(rd);
	return false;
}

/* Sends BLK_REQ h with the origin of its request as its payload. */
static void send_req(struct earth_node *n, uint32_t peer, struct wire_hdr *h,
		     uint64_t origin)
{
	h->len = origin ? (uint32_t)sizeof(origin) : 0;
	su_net_send(n, peer, h, origin ? &origin : NULL);
}

void su_remote_get(struct earth_node *n, const struct su_req *r)
{
	EARTH_STAMP(STAMP_SU_FETCH);
	earth_gptr src = {r->a};
	const void *p =
	    gmem_direct_ptr(earth_gptr_node(src),
			    (uintptr_t)earth_gptr_addr(src), r->size, false);
	if (p) {
		if (acct_on)
			direct_observed(true);
		su_get_done(n, r, p);
		return;
	}
	if (rma_read(n, r, src, NULL, r->size, false)) {
		EARTH_STAMP(STAMP_SU_SENT);
		return;
	}
	struct wire_hdr h = {
	    .type = W_BLK_REQ,
	    .n = r->size,
	    .a = slot_bits(n, r),
	    .b = (uintptr_t)earth_gptr_addr(src),
	    .c = earth_gptr_make(n->id, (void *)(uintptr_t)r->b).bits,
	};
	send_req(n, earth_gptr_node(src), &h, su_origin(n, r));
	EARTH_STAMP(STAMP_SU_SENT);
}

/* A DATA_SYNC or BLKMOV_SYNC written one-sided by the transport
 * (net_ops.rma_put) into another node's global memory, until the data is
 * there. */
struct rma_write {
	struct earth_node *n;
	uint64_t gslot;
	const char *op;
	uint64_t origin; /* the posting fiber (wire.h), for a refused SYNC */
	uint64_t val; /* a DATA's value (its request ends with its handling) */
};

static void rma_write_done(void *arg)
{
	struct rma_write *w = arg;
	if (acct_on)
		direct_observed(false);
	su_signal_gslot(w->n, w->gslot, w->op, w->origin);
	free(w);
}

/* Writes len bytes at src (this node's memory, unchanged until the slot
 * is signalled, or a value of at most 8 bytes) into dst (another node's
 * global memory) one-sided when the transport can, then signals gslot;
 * false if it cannot (nothing done). */
static bool rma_write(struct earth_node *n, const void *src, uint64_t len,
		      earth_gptr dst, uint64_t gslot, const char *op,
		      uint64_t origin)
{
	struct net *t = n->net;
	if (!t || !t->ops->rma_put)
		return false;
	struct rma_write *w = malloc(sizeof(*w));
	if (!w)
		return false;
	w->n = n;
	w->gslot = gslot;
	w->op = op;
	w->origin = origin;
	if (len <= sizeof(w->val)) {
		w->val = 0;
		memcpy(&w->val, src, len);
		src = &w->val;
	}
	if (t->ops->rma_put(t, earth_gptr_node(dst), src,
			    (uintptr_t)earth_gptr_addr(dst), len,
			    rma_write_done, w) == 0)
		return true;
	free(w);
	return false;
}

/* A write into another node that touches the global-memory range but does
 * not lie inside that node's own segment (past its end, or in another
 * node's segment through a pointer naming this one) is refused here,
 * before anything leaves: no node has memory there for it. */
static void check_gmem_dst(const char *op, earth_gptr dst, uint64_t len)
{
	const struct gmem_state *g = &gmem_g;
	uint64_t a = (uintptr_t)earth_gptr_addr(dst);
	uint32_t node = earth_gptr_node(dst);
	uint64_t s = GMEM_BASE + (uint64_t)node * g->seg;
	bool past =
	    g->seg && a >= s && a - s < g->seg && len > g->seg - (a - s);
	if (q_likely(!past && !gmem_misplaced(node, a)))
		return; /* inside, or not global memory: the owner checks it */
	earth_fatal("%s: [%#llx, +%llu) on node %u is not inside node %u's "
		    "global memory segment [%#llx, %#llx): refused before "
		    "sending (a pointer past the end of an earth_galloc "
		    "block or array, or made with the wrong node)",
		    op, (unsigned long long)a, (unsigned long long)len, node,
		    node, (unsigned long long)s,
		    (unsigned long long)(s + g->seg));
}

void su_remote_data(struct earth_node *n, const struct su_req *r)
{
	earth_gptr dst = {r->b};
	void *p =
	    gmem_direct_ptr(earth_gptr_node(dst),
			    (uintptr_t)earth_gptr_addr(dst), r->size, true);
	if (p) {
		su_copy_value(p, &r->a, r->size);
		if (acct_on)
			direct_observed(false);
		su_signal_gslot(n, slot_bits(n, r), "DATA_SYNC",
				su_origin(n, r));
		return;
	}
	check_gmem_dst("DATA_SYNC", dst, r->size);
	if (rma_write(n, &r->a, r->size, dst, slot_bits(n, r), "DATA_SYNC",
		      su_origin(n, r)))
		return;
	push_data(n, &r->a, r->size, dst, slot_bits(n, r), 0, su_origin(n, r));
}

/* Where this end of a move lies here: local, or in a segment mapped
 * here (write: the destination); NULL if neither. */
static inline void *direct_end(struct earth_node *n, earth_gptr g, uint64_t len,
			       bool write)
{
	if (earth_gptr_node(g) == n->id)
		return earth_gptr_addr(g);
	return gmem_direct_ptr(earth_gptr_node(g),
			       (uintptr_t)earth_gptr_addr(g), len, write);
}

void su_remote_blkmov(struct earth_node *n, const struct su_req *r)
{
	earth_gptr src = {r->a}, dst = {r->b};
	void *s = gmem_g.direct ? direct_end(n, src, r->c, false) : NULL;
	void *d = s ? direct_end(n, dst, r->c, true) : NULL;
	if (d) {
		memmove(d, s, (size_t)r->c);
		if (acct_on)
			direct_observed(earth_gptr_node(src) != n->id &&
					earth_gptr_node(dst) == n->id);
		su_signal_gslot(n, slot_bits(n, r), "BLKMOV_SYNC",
				su_origin(n, r));
		return;
	}
	if (earth_gptr_node(src) == n->id) {
		/* Into another node's global memory: one-sided. */
		check_gmem_dst("BLKMOV_SYNC", dst, r->c);
		if (rma_write(n, earth_gptr_addr(src), r->c, dst,
			      slot_bits(n, r), "BLKMOV_SYNC", su_origin(n, r)))
			return;
		push_data(n, earth_gptr_addr(src), r->c, dst, slot_bits(n, r),
			  0, su_origin(n, r));
		return;
	}
	/* From another node's global memory into this node: one-sided. */
	if (earth_gptr_node(dst) == n->id &&
	    rma_read(n, r, src, earth_gptr_addr(dst), r->c, true))
		return;
	if (r->c > INT32_MAX)
		earth_fatal("BLKMOV_SYNC: %llu bytes from node %u: moves from "
			    "another node are limited to 2 GiB each",
			    (unsigned long long)r->c, earth_gptr_node(src));
	struct wire_hdr h = {
	    .type = W_BLK_REQ,
	    .n = (int32_t)r->c,
	    .a = slot_bits(n, r),
	    .b = (uintptr_t)earth_gptr_addr(src),
	    .c = dst.bits,
	};
	send_req(n, earth_gptr_node(src), &h, su_origin(n, r));
}

void su_remote_invoke(struct earth_node *n, const struct su_req *r)
{
	const struct earth_tfunc *f = (const void *)(uintptr_t)r->a;
	int32_t id = reg_tfunc_id(f);
	if (id < 0)
		earth_fatal(
		    "INVOKE: %s is not in the table of threaded "
		    "functions (define it with EARTH_THREADED_FUNCTION)",
		    f->name);
	struct wire_hdr h = {.type = W_INVOKE, .n = id, .len = f->args_size};
	if (r->flags & SU_REQ_INLINE) {
		/* the arguments in slot, b, c, spare (see req.h) */
		uint64_t w[4] = {r->slot, r->b, r->c, r->spare};
		if (f->args_size > sizeof(w))
			earth_fatal("INVOKE: %u bytes of inline arguments",
				    f->args_size);
		su_net_send(n, (uint32_t)r->n, &h, w);
		return;
	}
	void *args = (void *)(uintptr_t)r->b;
	su_net_send(n, (uint32_t)r->c, &h, args);
	free(args);
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
			push_data(n, src, (uint64_t)h->n, dst, h->a,
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
		su_ready_push(su, n->invoke_fiber, b);
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
	uint16_t type = h->type, flags = h->flags;
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
