/* SPDX-License-Identifier: MIT */
/*
 * ucx_rma.c - the ucx transport's one-sided access to global memory:
 * this node's segment mapped by UCX or registered once (map_segment) and
 * its key sent to every peer (rma_expose), the peers' keys received
 * (AM_RKEY), reads (rma_get) and writes (rma_put) of a peer's segment
 * through a lane that accesses its memory itself, and a peer's segment
 * mapped here (rma_ptr); the same for this node's copy of shared memory
 * across nodes, a second registration (dsm_expose), whose pages peers
 * read one-sided (dsm_get). UCX's callbacks only queue a finished access;
 * poll (ucx_am.c) runs its completion outside progress, since it may
 * send. Opening and closing: ucx.c.
 * Details: docs/architecture.md, "Between nodes: ucx".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "base/settings.h"
#include "net/shm_layout.h"
#include "net/ucx.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucp/api/ucp.h>

/* Peer p's key for the memory rh names (what), unpacked into *key with
 * where that memory lies (none when rh->len is 0); *in and *count say it
 * came. bad: rh names memory p may not offer. */
static void key_take(struct ucx_net *t, uint32_t p,
		     const struct ucx_rkey_hdr *rh, void *data, bool bad,
		     const char *what, ucp_rkey_h *key, uint64_t *base,
		     uint64_t *rlen, bool *in, uint32_t *count)
{
	if (bad)
		earth_fatal("ucx: node %u offered a memory key for something "
			    "other than %s",
			    p, what);
	if (rh->len) {
		ucs_status_t st = ucp_ep_rkey_unpack(t->peer[p].ep, data, key);
		if (st != UCS_OK)
			earth_fatal("ucx: cannot unpack node %u's key for %s: "
				    "%s",
				    p, what, ucs_status_string(st));
		*base = rh->base;
		*rlen = rh->len;
	}
	*in = true;
	(*count)++;
}

ucs_status_t ucx_on_rkey(void *arg, const void *header, size_t hlen, void *data,
			 size_t len, const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	struct ucx_rkey_hdr rh;
	if (hlen != sizeof(rh) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
		return UCS_OK;
	memcpy(&rh, header, sizeof(rh));
	uint32_t p = ucx_sender(t, rh.node, param, "a memory key");
	if (p == UINT32_MAX || !t->peer[p].proven)
		return UCS_OK;
	struct ucx_peer *pp = &t->peer[p];
	if (rh.magic == UCX_DSM_MAGIC) {
		/* Where it lies is the peer's business (its own mapping);
		 * its length, every node's, is checked once this node's is
		 * known (ucx_dsm_expose). */
		if (!pp->dsm_key_in)
			key_take(t, p, &rh, data,
				 rh.len &&
				     (!len || rh.base > UINT64_MAX - rh.len),
				 "its copy of shared memory", &pp->dsm_rkey,
				 &pp->dsm_rbase, &pp->dsm_rlen, &pp->dsm_key_in,
				 &t->dsm_keys_in);
		return UCS_OK;
	}
	if (!pp->rkey_in) {
		uint64_t seg = t->mine->gmem_seg;
		uint64_t want = GMEM_BASE + (uint64_t)p * seg;
		key_take(
		    t, p, &rh, data,
		    rh.magic != UCX_CARD_MAGIC ||
			(rh.len && (rh.base != want || rh.len != seg || !len)),
		    "its global memory segment", &pp->rkey, &pp->rbase,
		    &pp->rlen, &pp->rkey_in, &t->rkeys_in);
	}
	return UCS_OK;
}

static void rma_queue(struct ucx_net *t, struct ucx_rma *r)
{
	r->next = NULL;
	if (t->done_tail)
		t->done_tail->next = r;
	else
		t->done_head = r;
	t->done_tail = r;
}

static void rma_cb(void *req, ucs_status_t st, void *user);

/* Request parameters whose completion is r's (rma_cb). */
static void rma_param(ucp_request_param_t *rp, struct ucx_rma *r)
{
	memset(rp, 0, sizeof(*rp));
	rp->op_attr_mask =
	    UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp->cb.send = rma_cb;
	rp->user_data = r;
}

/* The operation that completes r started: done at once (no request),
 * or out until rma_cb. */
static void rma_started(struct ucx_net *t, struct ucx_rma *r,
			ucs_status_ptr_t sp)
{
	if (!sp) {
		rma_queue(t, r);
	} else {
		t->base.sends_out++;
		t->rma_out++;
	}
}

static void rma_cb(void *req, ucs_status_t st, void *user)
{
	struct ucx_rma *r = user;
	struct ucx_net *t = r->t;
	if (st != UCS_OK)
		earth_fatal_peer("ucx: a one-sided %s node %u failed: %s",
				 r->write ? "write to" : "read from", r->peer,
				 ucs_status_string(st));
	t->base.sends_out--;
	t->rma_out--;
	ucp_request_free(req);
	rma_queue(t, r);
}

/* Peer p's exposed memory [rbase, rbase + rlen) under key, reached
 * through a lane that accesses its memory itself, holds [raddr, raddr +
 * len): a record for the access (else NULL: the caller sends a message
 * instead). */
static struct ucx_rma *rma_new(struct ucx_net *t, uint32_t peer, ucp_rkey_h key,
			       uint64_t rbase, uint64_t rlen, uint64_t raddr,
			       uint64_t len, net_rma_done_fn done, void *arg,
			       bool write)
{
	struct ucx_peer *pp = &t->peer[peer];
	if (!key || !pp->rma_lane || pp->lost || raddr < rbase || len > rlen ||
	    raddr - rbase > rlen - len)
		return NULL;
	struct ucx_rma *r = t->free_rma;
	if (r)
		t->free_rma = r->next;
	else if (!(r = malloc(sizeof(*r))))
		return NULL;
	r->t = t;
	r->done = done;
	r->arg = arg;
	r->peer = peer;
	r->write = write;
	return r;
}

/* Starts reading [raddr, raddr + len) of peer's memory under key
 * (exposed: [rbase, rbase + rlen)) into dst: 0, or -1 (nothing
 * started). */
static int rma_read(struct ucx_net *t, uint32_t peer, ucp_rkey_h key,
		    uint64_t rbase, uint64_t rlen, void *dst, uint64_t raddr,
		    uint64_t len, net_rma_done_fn done, void *arg)
{
	struct ucx_rma *r =
	    rma_new(t, peer, key, rbase, rlen, raddr, len, done, arg, false);
	if (!r)
		return -1;
	ucp_request_param_t rp;
	rma_param(&rp, r);
	ucs_status_ptr_t sp =
	    ucp_get_nbx(t->peer[peer].ep, dst, (size_t)len, raddr, key, &rp);
	if (UCS_PTR_IS_ERR(sp)) {
		ucx_rma_free(t, r);
		return -1;
	}
	t->rma_reads++;
	rma_started(t, r, sp);
	return 0;
}

int ucx_rma_get(struct net *nt, uint32_t peer, void *dst, uint64_t raddr,
		uint64_t len, net_rma_done_fn done, void *arg)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	return rma_read(t, peer, pp->rkey, pp->rbase, pp->rlen, dst, raddr, len,
			done, arg);
}

/* net_ops.dsm_get: a page of peer's copy of shared memory, as rma_get
 * (only over a lane that reads peer's memory itself: a read UCX emulates
 * with a message peer's worker answers is no better than asking its
 * SU). */
int ucx_dsm_get(struct net *nt, uint32_t peer, void *dst, uint64_t off,
		uint64_t len, net_rma_done_fn done, void *arg)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	if (peer == t->base.self || off > pp->dsm_rlen)
		return -1;
	return rma_read(t, peer, pp->dsm_rkey, pp->dsm_rbase, pp->dsm_rlen, dst,
			pp->dsm_rbase + off, len, done, arg);
}

/* A write is done when its data is in the peer's memory, not when UCX
 * is done with the source (all a put's own completion says: ucp.h,
 * ucp_put_nbx). So the put goes without a callback (its request is freed
 * at once; UCX still carries it out) and is followed by ucp_ep_flush_nbx,
 * which completes once every RMA operation issued on the endpoint before
 * it is "completed both at the origin and at the target" (ucp.h,
 * ucp_ep_flush_nbx); that flush's completion is the write's. A fence
 * would not do: ucp_worker_fence only orders RMA and atomic operations
 * among themselves and says nothing of active messages, which may take
 * another lane; so a SYNC that must follow the data is sent by the layer
 * above from the completion. The source stays valid until then (the
 * caller's contract), which also covers the put itself. */
int ucx_rma_put(struct net *nt, uint32_t peer, const void *src, uint64_t raddr,
		uint64_t len, net_rma_done_fn done, void *arg)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	struct ucx_rma *r = rma_new(t, peer, pp->rkey, pp->rbase, pp->rlen,
				    raddr, len, done, arg, true);
	if (!r)
		return -1;
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	ucs_status_ptr_t sp =
	    ucp_put_nbx(pp->ep, src, (size_t)len, raddr, pp->rkey, &rp);
	if (UCS_PTR_IS_ERR(sp)) {
		ucx_rma_free(t, r);
		return -1; /* nothing started: the endpoint failed */
	}
	if (sp)
		ucp_request_free(sp);
	rma_param(&rp, r);
	sp = ucp_ep_flush_nbx(pp->ep, &rp);
	if (UCS_PTR_IS_ERR(sp))
		earth_fatal_peer("ucx: a one-sided write to node %u failed: %s",
				 peer, ucs_status_string(UCS_PTR_STATUS(sp)));
	rma_started(t, r, sp);
	return 0;
}

/* net_ops.rma_ptr: where UCX mapped peer's segment here when it unpacked
 * its key (ucp_rkey_ptr: over shared memory a posix or sysv segment the
 * peer's UCX allocated, mapped whole), checked at both ends; NULL over
 * lanes that cannot (tcp, cma: memory registered rather than allocated). */
void *ucx_rma_ptr(struct net *nt, uint32_t peer)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	void *lo, *hi;
	if (peer == t->base.self || !pp->rkey || !pp->rlen ||
	    ucp_rkey_ptr(pp->rkey, pp->rbase, &lo) != UCS_OK ||
	    ucp_rkey_ptr(pp->rkey, pp->rbase + pp->rlen - 1, &hi) != UCS_OK ||
	    (uintptr_t)hi - (uintptr_t)lo != pp->rlen - 1)
		return NULL;
	return lo;
}

/* Did UCX map the segment where gmem placed it, all of it? */
static bool segment_at(ucp_mem_h memh, void *base, uint64_t len)
{
	ucp_mem_attr_t at;
	memset(&at, 0, sizeof(at));
	at.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
	return ucp_mem_query(memh, &at) == UCS_OK && at.address == base &&
	       at.length >= len;
}

/* Maps this node's global segment [base, base + len) for peers' reads:
 * allocated by UCX at that very address (UCP_MEM_MAP_ALLOCATE | FIXED:
 * over shared memory a posix segment the peers map and read with loads,
 * no system call and no work by this node's SU), else, where UCX cannot
 * place it there, the segment gmem mapped registered as it is (peers'
 * reads then go through a lane such as cma, or are carried out by this
 * node's worker). Nothing is in the segment yet (gmem_expose runs right
 * after gmem_open). */
static const char *map_segment(struct ucx_net *t, void *base, uint64_t len,
			       bool *taken)
{
	ucp_mem_map_params_t mp;
	memset(&mp, 0, sizeof(mp));
	mp.field_mask =
	    UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
	    UCP_MEM_MAP_PARAM_FIELD_PROT | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
	mp.address = base;
	mp.length = (size_t)len;
	/* Peers read and write it one-sided: any of its bytes, which a
	 * message through this node's SU could write too (the whole segment
	 * is registered memory); a slot in it fires only by a message, whose
	 * checks look at the slot then. */
	mp.prot = UCP_MEM_MAP_PROT_LOCAL_READ | UCP_MEM_MAP_PROT_LOCAL_WRITE |
		  UCP_MEM_MAP_PROT_REMOTE_READ | UCP_MEM_MAP_PROT_REMOTE_WRITE;
	mp.flags = UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED;
	ucs_status_t st = UCS_ERR_UNSUPPORTED;
	if (munmap(base, (size_t)len) == 0) {
		*taken = true; /* gmem's mapping is gone */
		st = ucp_mem_map(t->ctx, &mp, &t->memh);
		if (st == UCS_OK && !segment_at(t->memh, base, len)) {
			ucp_mem_unmap(t->ctx, t->memh);
			st = UCS_ERR_NO_MEMORY;
		}
		if (st == UCS_OK) {
			t->seg_by_ucx = true;
			return NULL;
		}
		/* Back to gmem's own mapping (the range is ours). */
		void *p = mmap(base, (size_t)len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				   MAP_FIXED_NOREPLACE,
			       -1, 0);
		if (p != base) {
			if (p != MAP_FAILED)
				munmap(p, (size_t)len);
			t->memh = NULL;
			return "ucx transport: global memory could not be "
			       "mapped again after UCX could not allocate it "
			       "(another thread mapped into its range?)";
		}
		*taken = false;
	}
	mp.flags = 0;
	st = ucp_mem_map(t->ctx, &mp, &t->memh);
	if (st != UCS_OK) {
		t->memh = NULL;
		return ucx_fail("registering global memory", st);
	}
	return NULL;
}

/* Sends every peer hdr and the packed key (plen bytes; none: NULL, 0),
 * then waits (progressing) until *keys_in counts every peer's
 * (EARTH_CONNECT_TIMEOUT). NULL, or what went wrong. */
static const char *keys_swap(struct ucx_net *t, const struct ucx_rkey_hdr *hdr,
			     const void *packed, size_t plen,
			     const uint32_t *keys_in)
{
	uint32_t nodes = t->base.nodes;
	void **req = calloc(nodes, sizeof(*req));
	if (!req)
		return "out of memory";
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
	const char *e = NULL;
	for (uint32_t p = 0; p < nodes && !e; p++) {
		if (p == t->base.self)
			continue;
		ucs_status_ptr_t sp =
		    ucp_am_send_nbx(t->peer[p].ep, AM_RKEY, hdr, sizeof(*hdr),
				    packed, plen, &rp);
		if (UCS_PTR_IS_ERR(sp))
			e = ucx_fail("sending a memory key",
				     UCS_PTR_STATUS(sp));
		else
			req[p] = sp;
	}
	double tmo = earth_setting_real(EARTH_SET_CONNECT_TIMEOUT);
	uint64_t deadline = ucx_mono_ns() + (uint64_t)(tmo * 1e9);
	ucx_wait_reqs(t, req, nodes, deadline);
	for (uint32_t p = 0; p < nodes; p++)
		if (req[p]) {
			ucp_request_cancel(t->worker, req[p]);
			ucp_request_free(req[p]);
			if (!e)
				e = "ucx transport: our memory key did not "
				    "reach every node in time";
		}
	free(req);
	while (!e && *keys_in < nodes - 1) {
		ucp_worker_progress(t->worker);
		ucx_fault_check(t);
		if (ucx_mono_ns() > deadline)
			e = "ucx transport: not every node's memory key came "
			    "in time (EARTH_CONNECT_TIMEOUT)";
	}
	return e;
}

/* Registers [base, base + len) once and sends every peer its key; waits
 * (progressing) until every peer's key came (EARTH_CONNECT_TIMEOUT). */
const char *ucx_rma_expose(struct net *nt, void *base, uint64_t len,
			   bool *taken)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	void *packed = NULL;
	size_t plen = 0;
	if (base && len) {
		const char *e = map_segment(t, base, len, taken);
		if (e)
			return e;
		ucs_status_t st;
		st = ucp_rkey_pack(t->ctx, t->memh, &packed, &plen);
		if (st != UCS_OK)
			return ucx_fail("packing the global memory key", st);
	}
	t->rkey_hdr = (struct ucx_rkey_hdr){UCX_CARD_MAGIC, t->base.self,
					    packed ? (uintptr_t)base : 0,
					    packed ? len : 0};
	const char *e = keys_swap(t, &t->rkey_hdr, packed, plen, &t->rkeys_in);
	if (packed)
		ucp_rkey_buffer_release(packed);
	return e;
}

/* net_ops.dsm_expose: this node's copy of shared memory registered as it
 * is (memory the region made: no pages are touched, none pinned over the
 * lanes that read another process's memory, cma and tcp) for peers to
 * read; its key sent to every peer as the global segment's is. A node
 * that cannot register it says so with an empty key (peers then fetch
 * its pages by message). */
const char *ucx_dsm_expose(struct net *nt, void *base, uint64_t len)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	void *packed = NULL;
	size_t plen = 0;
	ucp_mem_map_params_t mp;
	memset(&mp, 0, sizeof(mp));
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			UCP_MEM_MAP_PARAM_FIELD_LENGTH |
			UCP_MEM_MAP_PARAM_FIELD_PROT;
	mp.address = base;
	mp.length = (size_t)len;
	mp.prot = UCP_MEM_MAP_PROT_LOCAL_READ | UCP_MEM_MAP_PROT_LOCAL_WRITE |
		  UCP_MEM_MAP_PROT_REMOTE_READ;
	if (base && len && ucp_mem_map(t->ctx, &mp, &t->dsm_memh) == UCS_OK &&
	    ucp_rkey_pack(t->ctx, t->dsm_memh, &packed, &plen) != UCS_OK)
		packed = NULL;
	t->dsm_hdr = (struct ucx_rkey_hdr){UCX_DSM_MAGIC, t->base.self,
					   packed ? (uintptr_t)base : 0,
					   packed ? len : 0};
	const char *e =
	    keys_swap(t, &t->dsm_hdr, packed, plen, &t->dsm_keys_in);
	if (packed)
		ucp_rkey_buffer_release(packed);
	for (uint32_t p = 0; p < t->base.nodes && !e; p++)
		if (t->peer[p].dsm_rlen && t->peer[p].dsm_rlen != len)
			earth_fatal("ucx: node %u offered a key for %llu bytes "
				    "of shared memory, and this node's region "
				    "has %llu (EARTH_DSM_MB must be the same "
				    "on every node)",
				    p, (unsigned long long)t->peer[p].dsm_rlen,
				    (unsigned long long)len);
	return e;
}
