/* SPDX-License-Identifier: MIT */
/*
 * remote.c - the SU's side of operations that involve other nodes, as
 * this node sends them: turning requests with remote operands into
 * messages, queueing messages a peer has no room for (never blocking).
 * What peers send is handled by deliver.c. GET, DATA and
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
#include "su/dsm_msg.h"
#include "su/su.h"
#include "base/trace.h"

#include <stdlib.h>
#include <string.h>

/* ---- sending ---- */

/* An answer to something peer asked of this node: the data of its
 * BLK_REQ (GET_SYNC, BLKMOV_SYNC), the answer to its STEAL, a page it
 * fetched, the acknowledgement of its diff, a first-touch page's home. */
static inline bool is_answer(const struct wire_hdr *h)
{
	return (h->type == W_BLK_DATA && (h->flags & WIRE_F_REPLY)) ||
	       h->type == W_STEAL_NONE || h->type == W_TOKEN ||
	       (h->type == W_DSM &&
		(h->n == M_PAGE || h->n == M_ACK || h->n == M_HOME));
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

/* Queues a message for peer: its payload copied, or with `ref` only a
 * reference to it (a block-move chunk, which stays put until the move's
 * slot is signalled: copying 64 KiB chunks into fresh memory while the
 * ring was full cost up to 300 us each, page faults in a VM). */
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
		trace_slice(
		    TRACE_SU, TRACE_SEND,
		    (uint16_t)(h->type == W_DSM
				   ? W_DSM | (unsigned)(h->n & 0xff) << 8
				   : h->type),
		    peer, trace_next_seq_out(peer), t0, q_tsc());
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

void su_push_data(struct earth_node *n, const void *src, uint64_t len,
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
		su_send_sync(n, gslot, W_SYNC, 1, origin);
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
		su_send_sync(n, r->slot, W_INCR, r->n, su_origin(n, r));
	else
		su_send_sync(n, r->slot, W_SYNC, 1, su_origin(n, r));
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
	su_push_data(n, &r->a, r->size, dst, slot_bits(n, r), 0,
		     su_origin(n, r));
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
		su_push_data(n, earth_gptr_addr(src), r->c, dst,
			     slot_bits(n, r), 0, su_origin(n, r));
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
