/* SPDX-License-Identifier: MIT */
/*
 * ucx.c - the transport over UCX (UCP active messages): shared memory,
 * TCP, InfiniBand/RoCE, whichever lanes UCX picks (UCX_TLS,
 * UCX_NET_DEVICES pass through).
 *
 * Ownership: the context and worker (UCS_THREAD_MODE_SINGLE) are made by
 * net_ucx_open on the earth_run thread before the SU starts; from then on
 * only the SU thread touches them (poll, send, flush, wait), and fini
 * after it ended. Other threads only write the wake eventfd.
 *
 * Messages: every wire message is one active message (AM_MSG) whose UCP
 * header is the wire header and whose data is the payload, sent with
 * UCP_AM_SEND_FLAG_REPLY so that the receiver learns the endpoint it came
 * from. The AM callbacks run inside ucp_worker_progress and only queue:
 * each peer has a FIFO of received messages that poll hands to the SU in
 * order (outside progress, so the SU may send while handling them).
 * Eager payloads stay in UCX's buffer until delivered (UCS_INPROGRESS,
 * then ucp_am_data_release); a rendezvous BLK_DATA payload is received
 * with ucp_am_recv_data_nbx straight into its destination when `place`
 * finds one, else into a copy; its queue entry waits for that receive.
 *
 * Proof: a peer's first active message must be AM_PROOF, an HMAC with the
 * job secret over both nodes' numbers and the nonces on their cards
 * (ucx_boot.c); nothing else from it is delivered before. A message
 * whose reply endpoint is not this node's endpoint to the node it claims
 * to be from, one before the proof, a malformed proof or BYE and a second
 * proof are dropped and reported, naming the peer; a wrong proof stops
 * the node, naming it.
 *
 * Faults: endpoints use UCP_ERR_HANDLING_MODE_PEER. A peer that fails
 * without having said BYE (ending cleanly) stops this node naming it.
 * Ending: as over tcp, once SHUTDOWN was sent or seen, flush sends
 * everything (5 s at most); fini says BYE to every peer, flushes the
 * worker and closes the endpoints.
 * Details: docs/architecture.md, "Between nodes: ucx".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "base/settings.h"
#include "net/shm_layout.h"
#include "net/ucx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <ucs/config/global_opts.h>
#include <unistd.h>

#define BLK_CHUNK (1u << 20) /* BLK_DATA payload per message */
#define IMM_MAX 8192u	     /* larger payloads never try an inline send */
#define REF_MIN 4096u	     /* send_ref: smaller payloads are copied */
#define PEND_MAX (4u << 20)  /* copied bytes in flight per peer */
#define END_DRAIN_NS 5000000000ull
#define LOST_GRACE_NS 500000000ull /* a BYE may still be queued */
#define BYE_GRACE_NS 5000000000ull /* for node 0's SHUTDOWN after a BYE */
#define CLOSE_NS 2000000000ull
#define PROGRESS_MAX 64	  /* progress calls per poll */
#define PIDFD_EVERY 1024u /* polls between looks at the peers' pidfds */
/* What an epoll event is: the wake eventfd, the worker, a peer's pidfd. */
#define EV_WAKE 0u
#define EV_WORKER 1u
#define EV_PEER 2u

/* A received message waiting in its peer's FIFO. */
struct ucx_msg {
	struct ucx_msg *next;
	struct wire_hdr h;
	void *data;    /* payload (NULL when placed or empty) */
	void *release; /* UCX's buffer, for ucp_am_data_release */
	void *own;     /* our copy, to free */
	void *req;     /* a rendezvous receive still in flight */
	bool pending;  /* its payload is still arriving */
	struct ucx_net *t;
};

/* What AM_RKEY's header says: the sender's exposed global segment; the
 * data is its packed rkey (none when len is 0). */
struct ucx_rkey_hdr {
	uint32_t magic, node;
	uint64_t base, len;
};

/* A one-sided read or write in flight, then done (its callback waits for
 * poll). */
struct ucx_rma {
	struct ucx_rma *next;
	struct ucx_net *t;
	net_rma_done_fn done;
	void *arg;
	uint32_t peer;
	bool write;
};

/* A send whose buffers UCX still uses. */
struct ucx_send {
	struct ucx_net *t;
	uint32_t peer, copied;
	struct wire_hdr h;
	unsigned char data[]; /* the copied payload */
};

struct ucx_peer {
	ucp_ep_h ep;
	int pidfd; /* watched instead of UCX's peer failure handling */
	bool proven, bye, lost, exited;
	ucs_status_t lost_status;
	uint64_t lost_ns; /* when the error came */
	uint64_t out_bytes;
	struct ucx_msg *head, *tail;
	struct ucx_net *t;
	uint32_t id;
	/* Its global segment, readable one-sided (rkey unpacked once). */
	bool rkey_in, rma_lane;
	ucp_rkey_h rkey;
	uint64_t rbase, rlen;
};

struct ucx_net {
	struct net base;
	ucp_context_h ctx;
	ucp_worker_h worker;
	struct ucx_peer *peer;
	struct ucx_boot boot;
	struct ucx_card *mine;
	int epfd, wakefd, efd;
	bool ending;
	bool armable; /* the worker's event fd works */
	uint32_t proofs_in;
	uint64_t bye_deadline;
	uint32_t bye_peer;
	unsigned rr; /* next peer to deliver from */
	uint32_t ready_msgs;
	uint32_t rejected; /* messages dropped before or without a proof */
	uint32_t pidfds;   /* peers watched through a pidfd */
	unsigned polls;
	_Atomic uint32_t su_word;
	uint64_t recv_direct, recv_copied, sent_ref, sent_copied;
	struct ucx_msg *free_msgs;
	char lanes[512];
	/* One-sided reads: this node's segment registered once, the peers'
	 * keys received, the reads done whose callbacks poll runs. */
	ucp_mem_h memh;
	bool seg_by_ucx; /* memh allocated by UCX (map_segment) */
	struct ucx_rkey_hdr rkey_hdr;
	uint32_t rkeys_in;
	struct ucx_rma *done_head, *done_tail;
	struct ucx_rma *free_rma; /* records of finished reads, reused */
	uint32_t rma_out;	  /* reads and writes UCX has not finished */
	uint64_t rma_reads;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- proofs ---- */

/* The proof node `from` gives node `to`. */
static void proof_mac(const struct ucx_net *t, uint32_t from, uint32_t to,
		      uint8_t mac[NET_MAC_LEN])
{
	ucx_proof_mac(&t->boot, t->base.nodes, t->mine->gmem_seg, from, to,
		      mac);
}

/* Reports an active message dropped (the first 8 of them): what it was,
 * from whom, why. */
static void __attribute__((format(printf, 2, 3)))
dropped(struct ucx_net *t, const char *fmt, ...)
{
	if (t->rejected++ >= 8)
		return;
	char why[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "earth: node %u: ucx: dropped %s\n", t->base.self, why);
}

/* Which peer an active message came from: the node it claims (claim),
 * when the reply endpoint UCX gives is ours to that node; else reports
 * and returns UINT32_MAX. */
static uint32_t sender(struct ucx_net *t, uint32_t claim,
		       const ucp_am_recv_param_t *param, const char *what)
{
	if (claim < t->base.nodes && claim != t->base.self &&
	    (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) &&
	    param->reply_ep == t->peer[claim].ep)
		return claim;
	dropped(t,
		"%s claiming to come from node %u: not from this job's "
		"endpoint to that node",
		what, claim);
	return UINT32_MAX;
}

/* Which peer sent a PROOF or BYE (what) of hlen header and len data
 * bytes, its header copied into *pr; reports and returns UINT32_MAX when
 * it is malformed (naming the node whose endpoint it came on, if any) or
 * not from the node it names. */
static uint32_t proof_sender(struct ucx_net *t, struct ucx_proof *pr,
			     const void *header, size_t hlen, size_t len,
			     const ucp_am_recv_param_t *param, const char *what)
{
	if (hlen == sizeof(*pr) && !len) {
		memcpy(pr, header, sizeof(*pr));
		return sender(t, pr->node, param, what);
	}
	char from[48] = "an endpoint of no node of this job";
	for (uint32_t k = 0; k < t->base.nodes; k++)
		if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) &&
		    t->peer[k].ep && param->reply_ep == t->peer[k].ep)
			snprintf(from, sizeof(from), "node %u", k);
	dropped(t,
		"%s from %s: malformed (%zu header bytes and %zu data "
		"bytes, not %zu and 0)",
		what, from, hlen, len, sizeof(*pr));
	return UINT32_MAX;
}

static ucs_status_t on_proof(void *arg, const void *header, size_t hlen,
			     void *data, size_t len,
			     const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	(void)data;
	struct ucx_proof pr;
	uint32_t p = proof_sender(t, &pr, header, hlen, len, param, "a proof");
	if (p == UINT32_MAX)
		return UCS_OK;
	if (t->peer[p].proven) {
		dropped(t, "a second proof from node %u", p);
		return UCS_OK;
	}
	uint8_t want[NET_MAC_LEN];
	proof_mac(t, p, t->base.self, want);
	if (pr.magic != UCX_CARD_MAGIC || pr.nodes != t->base.nodes ||
	    !net_proof_equal(pr.mac, want))
		earth_fatal("ucx: node %u failed the proof of the job secret "
			    "(another EARTH_JOB_SECRET, or not this job's "
			    "node): refused",
			    p);
	t->peer[p].proven = true;
	t->proofs_in++;
	return UCS_OK;
}

static ucs_status_t on_bye(void *arg, const void *header, size_t hlen,
			   void *data, size_t len,
			   const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	(void)data;
	struct ucx_proof pr;
	uint32_t p = proof_sender(t, &pr, header, hlen, len, param, "a BYE");
	if (p == UINT32_MAX)
		return UCS_OK;
	if (!t->peer[p].proven) {
		dropped(t, "a BYE from node %u before its proof", p);
		return UCS_OK;
	}
	t->peer[p].bye = true;
	/* Node 0's SHUTDOWN may still be on its way from node 0. */
	if (!t->ending && !t->bye_deadline && p != 0) {
		t->bye_deadline = mono_ns() + BYE_GRACE_NS;
		t->bye_peer = p;
	}
	return UCS_OK;
}

static ucs_status_t on_rkey(void *arg, const void *header, size_t hlen,
			    void *data, size_t len,
			    const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	struct ucx_rkey_hdr rh;
	if (hlen != sizeof(rh) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
		return UCS_OK;
	memcpy(&rh, header, sizeof(rh));
	uint32_t p = sender(t, rh.node, param, "a memory key");
	if (p == UINT32_MAX || !t->peer[p].proven || t->peer[p].rkey_in)
		return UCS_OK;
	struct ucx_peer *pp = &t->peer[p];
	uint64_t seg = t->mine->gmem_seg;
	uint64_t want = GMEM_BASE + (uint64_t)p * seg;
	if (rh.magic != UCX_CARD_MAGIC ||
	    (rh.len && (rh.base != want || rh.len != seg || !len)))
		earth_fatal("ucx: node %u offered a memory key for something "
			    "other than its global memory segment",
			    p);
	if (rh.len) {
		ucs_status_t st = ucp_ep_rkey_unpack(pp->ep, data, &pp->rkey);
		if (st != UCS_OK)
			earth_fatal("ucx: cannot unpack node %u's memory key: "
				    "%s",
				    p, ucs_status_string(st));
		pp->rbase = rh.base;
		pp->rlen = rh.len;
	}
	pp->rkey_in = true;
	t->rkeys_in++;
	return UCS_OK;
}

/* ---- receiving ---- */

static struct ucx_msg *msg_new(struct ucx_net *t)
{
	struct ucx_msg *m = t->free_msgs;
	if (m)
		t->free_msgs = m->next;
	else if (!(m = malloc(sizeof(*m))))
		earth_fatal("ucx: out of memory for a received message");
	memset(m, 0, sizeof(*m));
	m->t = t;
	return m;
}

static void msg_free(struct ucx_net *t, struct ucx_msg *m)
{
	if (m->release)
		ucp_am_data_release(t->worker, m->release);
	free(m->own);
	m->next = t->free_msgs;
	t->free_msgs = m;
}

static void enqueue(struct ucx_peer *pp, struct ucx_msg *m)
{
	if (pp->tail)
		pp->tail->next = m;
	else
		pp->head = m;
	pp->tail = m;
	if (!m->pending)
		pp->t->ready_msgs++;
}

static void recv_done(void *req, ucs_status_t st, size_t len, void *user)
{
	struct ucx_msg *m = user;
	(void)len;
	if (st != UCS_OK && st != UCS_ERR_CANCELED)
		earth_fatal("ucx: receiving a block from node %u failed: %s",
			    m->h.src, ucs_status_string(st));
	m->pending = false;
	m->req = NULL;
	m->t->ready_msgs++;
	ucp_request_free(req);
}

static ucs_status_t on_msg(void *arg, const void *header, size_t hlen,
			   void *data, size_t len,
			   const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	struct wire_hdr h;
	if (hlen != sizeof(h)) {
		dropped(t, "a message with a %zu-byte header", hlen);
		return UCS_OK;
	}
	memcpy(&h, header, sizeof(h));
	uint32_t p = sender(t, h.src, param, "a message");
	if (p == UINT32_MAX)
		return UCS_OK;
	struct ucx_peer *pp = &t->peer[p];
	if (!pp->proven) {
		dropped(t, "a message from node %u before its proof", p);
		return UCS_OK;
	}
	if (t->ending) /* after the end, what arrives no longer matters */
		return UCS_OK;
	const char *bad = wire_check(&h, p, t->base.self, t->base.nodes);
	if (!bad && h.len != len)
		bad = "len (differs from the payload's size)";
	if (bad)
		earth_fatal("message from node %u rejected: field %s", p, bad);
	struct ucx_msg *m = msg_new(t);
	m->h = h;
	if (!len) {
		enqueue(pp, m);
		return UCS_OK;
	}
	if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
		void *dst = h.type == W_BLK_DATA && t->base.place
				? t->base.place(&h)
				: NULL;
		if (dst) {
			m->h.flags |= WIRE_F_PLACED;
			t->recv_direct += len;
		} else {
			if (!(m->own = malloc(len)))
				earth_fatal("ucx: out of memory for a %zu-byte "
					    "message from node %u",
					    len, p);
			dst = m->data = m->own;
			if (h.type == W_BLK_DATA)
				t->recv_copied += len;
		}
		m->pending = true;
		ucp_request_param_t rp;
		memset(&rp, 0, sizeof(rp));
		rp.op_attr_mask =
		    UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
		rp.cb.recv_am = recv_done;
		rp.user_data = m;
		ucs_status_ptr_t sp =
		    ucp_am_recv_data_nbx(t->worker, data, dst, len, &rp);
		if (UCS_PTR_IS_ERR(sp))
			earth_fatal("ucx: cannot receive a block from node "
				    "%u: %s",
				    p, ucs_status_string(UCS_PTR_STATUS(sp)));
		if (!sp)
			m->pending = false;
		else
			m->req = sp;
		enqueue(pp, m);
		return UCS_OK;
	}
	if (h.type == W_BLK_DATA)
		t->recv_copied += len;
	if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
		m->data = m->release = data; /* kept until delivered */
		enqueue(pp, m);
		return UCS_INPROGRESS;
	}
	if (!(m->own = malloc(len)))
		earth_fatal("ucx: out of memory for a %zu-byte message from "
			    "node %u",
			    len, p);
	memcpy(m->own, data, len);
	m->data = m->own;
	enqueue(pp, m);
	return UCS_OK;
}

/* ---- faults ---- */

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	struct ucx_peer *pp = arg;
	(void)ep;
	if (!pp->lost) {
		pp->lost = true;
		pp->lost_status = st;
		pp->lost_ns = mono_ns();
	}
}

/* Peer p's process ended (its pidfd became readable). */
static void peer_exited(struct ucx_net *t, uint32_t p)
{
	struct ucx_peer *pp = &t->peer[p];
	if (pp->pidfd < 0)
		return;
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, pp->pidfd, NULL);
	close(pp->pidfd);
	pp->pidfd = -1;
	t->pidfds--;
	pp->exited = true;
	on_ep_error(pp, pp->ep, UCS_ERR_CONNECTION_RESET);
}

/* Looks at the pidfds of the peers watched so, without blocking. */
static void pidfd_check(struct ucx_net *t)
{
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct pollfd q = {t->peer[p].pidfd, POLLIN, 0};
		if (q.fd >= 0 && poll(&q, 1, 0) == 1)
			peer_exited(t, p);
	}
}

/* A peer lost without a BYE while the job runs: the node stops. */
static void fault_check(struct ucx_net *t)
{
	if (t->ending)
		return;
	uint64_t now = 0;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		if (!pp->lost || pp->bye)
			continue;
		if (!now)
			now = mono_ns();
		if (now - pp->lost_ns < LOST_GRACE_NS)
			continue;
		if (pp->exited)
			earth_fatal("ucx: lost node %u: its process ended "
				    "before the job did",
				    p);
		earth_fatal("ucx: lost node %u (%s): it died or cannot be "
			    "reached",
			    p, ucs_status_string(pp->lost_status));
	}
	if (t->bye_deadline) {
		if (!now)
			now = mono_ns();
		if (now > t->bye_deadline)
			earth_fatal("ucx: node %u ended, but node 0's "
				    "SHUTDOWN did not come within 5 s",
				    t->bye_peer);
	}
}

/* ---- sending ---- */

static void send_done(void *req, ucs_status_t st, void *user)
{
	struct ucx_send *s = user;
	struct ucx_net *t = s->t;
	(void)st; /* a failure is the endpoint's: on_ep_error names it */
	t->peer[s->peer].out_bytes -= s->copied;
	t->base.sends_out--;
	free(s);
	ucp_request_free(req);
}

static int send_msg(struct ucx_net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload, bool ref)
{
	struct ucx_peer *pp = &t->peer[peer];
	if (h->type == W_SHUTDOWN)
		t->ending = true;
	if (pp->lost)
		return 0; /* fault_check names it */
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	if (h->len <= IMM_MAX) {
		/* Header and payload are ours only for this call: done now,
		 * or copied below. */
		rp.op_attr_mask |= UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
		ucs_status_ptr_t sp = ucp_am_send_nbx(
		    pp->ep, AM_MSG, h, sizeof(*h), payload, h->len, &rp);
		if (!sp) {
			if (h->type == W_BLK_DATA)
				t->sent_copied += h->len;
			return 0;
		}
		rp.op_attr_mask &= ~(uint32_t)UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
	}
	bool copy = !ref || h->len < REF_MIN;
	uint32_t copied = copy ? h->len : 0;
	if (copied && pp->out_bytes && pp->out_bytes + copied > PEND_MAX)
		return -EAGAIN;
	struct ucx_send *s = malloc(sizeof(*s) + copied);
	if (!s)
		return -EAGAIN;
	s->t = t;
	s->peer = peer;
	s->copied = copied;
	s->h = *h;
	if (copied)
		memcpy(s->data, payload, copied);
	rp.op_attr_mask |=
	    UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.send = send_done;
	rp.user_data = s;
	ucs_status_ptr_t sp = ucp_am_send_nbx(
	    pp->ep, AM_MSG, &s->h, sizeof(s->h),
	    copy ? (const void *)s->data : payload, h->len, &rp);
	if (h->type == W_BLK_DATA) {
		if (copy)
			t->sent_copied += h->len;
		else
			t->sent_ref += h->len;
	}
	if (!sp || UCS_PTR_IS_ERR(sp)) {
		/* Done already, or the endpoint failed (named by
		 * fault_check). */
		free(s);
		return 0;
	}
	pp->out_bytes += copied;
	t->base.sends_out++;
	return 0;
}

static int ucx_send(struct net *nt, uint32_t peer, const struct wire_hdr *h,
		    const void *payload)
{
	return send_msg((struct ucx_net *)nt, peer, h, payload, false);
}

static int ucx_send_ref(struct net *nt, uint32_t peer, const struct wire_hdr *h,
			const void *payload)
{
	return send_msg((struct ucx_net *)nt, peer, h, payload, true);
}

/* ---- progress and delivery ---- */

static void progress(struct ucx_net *t)
{
	for (int i = 0; i < PROGRESS_MAX && ucp_worker_progress(t->worker); i++)
		;
}

static unsigned deliver_some(struct ucx_net *t, void *ctx,
			     net_deliver_fn deliver, unsigned budget)
{
	unsigned done = 0;
	uint32_t nodes = t->base.nodes;
	while (done < budget && t->ready_msgs) {
		bool any = false;
		for (uint32_t k = 0; k < nodes && done < budget; k++) {
			uint32_t p = (t->rr + k) % nodes;
			struct ucx_peer *pp = &t->peer[p];
			struct ucx_msg *m = pp->head;
			if (!m || m->pending)
				continue;
			pp->head = m->next;
			if (!pp->head)
				pp->tail = NULL;
			t->ready_msgs--;
			if (!t->ending)
				deliver(ctx, p, &m->h, m->data);
			msg_free(t, m);
			done++;
			any = true;
		}
		t->rr = (t->rr + 1) % nodes;
		if (!any)
			break;
	}
	return done;
}

/* A record back to the free list. */
static void rma_free(struct ucx_net *t, struct ucx_rma *r)
{
	r->next = t->free_rma;
	t->free_rma = r;
}

/* The callbacks of the one-sided reads that finished (outside progress:
 * they may send); how many. */
static unsigned rma_run_done(struct ucx_net *t)
{
	unsigned k = 0;
	for (; t->done_head; k++) {
		struct ucx_rma *r = t->done_head;
		t->done_head = r->next;
		if (!t->done_head)
			t->done_tail = NULL;
		net_rma_done_fn done = r->done;
		void *arg = r->arg;
		rma_free(t, r);
		done(arg);
	}
	return k;
}

static unsigned ucx_poll(struct net *nt, void *ctx, net_deliver_fn deliver,
			 unsigned budget)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	progress(t);
	/* Finished reads count as work done (their slots were signalled):
	 * the SU hands what they made ready to the EU. */
	unsigned k = t->done_head ? rma_run_done(t) : 0;
	if (q_unlikely(t->pidfds) && ++t->polls % PIDFD_EVERY == 0)
		pidfd_check(t);
	fault_check(t);
	return k + deliver_some(t, ctx, deliver, budget);
}

/* A read UCX has not finished counts as pending: the SU keeps
 * progressing the worker until it finishes instead of sleeping (over
 * tcp the answer is taken in by our progress; woken by the event fd it
 * came a wake-up later). */
static bool ucx_pending(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	progress(t);
	return t->ready_msgs != 0 || t->done_head || t->rma_out;
}

/* After the end: progress until every send is out (5 s at most). */
static void end_drain(struct ucx_net *t)
{
	uint64_t deadline = mono_ns() + END_DRAIN_NS;
	while (t->base.sends_out) {
		ucp_worker_progress(t->worker);
		if (mono_ns() > deadline) {
			fprintf(stderr,
				"earth: node %u: ucx transport: could not send "
				"everything at the end within 5 s\n",
				t->base.self);
			return;
		}
	}
}

static void ucx_flush(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	ucp_worker_progress(t->worker);
	if (q_unlikely(t->ending))
		end_drain(t);
}

static void ucx_blk_bytes(struct net *nt, struct net_blk_bytes *b)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	b->recv_direct = t->recv_direct;
	b->recv_copied = t->recv_copied;
	b->sent_ref = t->sent_ref;
	b->sent_copied = t->sent_copied;
}

/* ---- sleeping and waking the SU ---- */

static _Atomic uint32_t *ucx_su_word(struct net *nt)
{
	return &((struct ucx_net *)nt)->su_word;
}

/* SU thread: progress until nothing is left, arm the worker, sleep on its
 * event fd and the wake eventfd. Wakes every second while the job runs
 * (UCX detects failed peers only while progressed) and by the BYE
 * deadline. */
static void ucx_wait(struct net *nt, _Atomic uint32_t *word, uint32_t expected)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	while (ucp_worker_progress(t->worker))
		;
	if (t->ready_msgs || t->done_head || t->rma_out ||
	    atomic_load_explicit(word, memory_order_seq_cst) != expected)
		return;
	int ms = 1000;
	if (t->armable) {
		ucs_status_t st = ucp_worker_arm(t->worker);
		if (st == UCS_ERR_BUSY)
			return; /* something came: progress again */
		if (st != UCS_OK)
			ms = 1;
	} else {
		ms = 1;
	}
	if (t->base.sends_out && ms > 10)
		ms = 10;
	if (t->bye_deadline && !t->ending) {
		uint64_t now = mono_ns();
		uint64_t left = t->bye_deadline > now
				    ? (t->bye_deadline - now) / 1000000 + 1
				    : 0;
		if (left < (uint64_t)ms)
			ms = (int)left;
	}
	struct epoll_event ev[8];
	int k = epoll_wait(t->epfd, ev, 8, ms);
	for (int i = 0; i < k; i++) {
		uint64_t what = ev[i].data.u64;
		if (what == EV_WAKE) {
			uint64_t v;
			ssize_t r = read(t->wakefd, &v, sizeof(v));
			(void)r;
		} else if (what >= EV_PEER) {
			peer_exited(t, (uint32_t)(what - EV_PEER));
		}
	}
	fault_check(t);
}

/* Any thread: the SU's word was just set to running. */
static void ucx_wake(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	uint64_t one = 1;
	ssize_t r = write(t->wakefd, &one, sizeof(one));
	(void)r; /* EAGAIN: the counter is full, so the SU wakes anyway */
}

/* ---- the end (earth_run thread, after the SU thread ended) ---- */

/* Progresses until every request in req (n of them) is done or the
 * deadline passed; clears the finished ones. */
static void wait_reqs(struct ucx_net *t, void **req, uint32_t n,
		      uint64_t deadline)
{
	for (;;) {
		bool busy = false;
		for (uint32_t i = 0; i < n; i++) {
			if (!req[i])
				continue;
			if (ucp_request_check_status(req[i]) ==
			    UCS_INPROGRESS) {
				busy = true;
				continue;
			}
			ucp_request_free(req[i]);
			req[i] = NULL;
		}
		if (!busy || mono_ns() > deadline)
			return;
		ucp_worker_progress(t->worker);
	}
}

static void send_byes(struct ucx_net *t, void **req)
{
	struct ucx_proof bye;
	memset(&bye, 0, sizeof(bye));
	bye.magic = UCX_CARD_MAGIC;
	bye.node = t->base.self;
	bye.nodes = t->base.nodes;
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		req[p] = NULL;
		if (p == t->base.self || !pp->ep || pp->lost)
			continue;
		ucs_status_ptr_t sp = ucp_am_send_nbx(
		    pp->ep, AM_BYE, &bye, sizeof(bye), NULL, 0, &rp);
		if (!UCS_PTR_IS_ERR(sp))
			req[p] = sp;
	}
	wait_reqs(t, req, t->base.nodes, mono_ns() + CLOSE_NS);
}

static void close_eps(struct ucx_net *t, void **req)
{
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	ucs_status_ptr_t fl = ucp_worker_flush_nbx(t->worker, &rp);
	if (fl && !UCS_PTR_IS_ERR(fl)) {
		void *one[1] = {fl};
		wait_reqs(t, one, 1, mono_ns() + CLOSE_NS);
		if (one[0]) {
			ucp_request_cancel(t->worker, one[0]);
			ucp_request_free(one[0]);
		}
	}
	/* Flushed: the data is out; a forced close waits for no peer. */
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		req[p] = NULL;
		if (!t->peer[p].ep)
			continue;
		ucs_status_ptr_t sp = ucp_ep_close_nbx(t->peer[p].ep, &rp);
		t->peer[p].ep = NULL;
		if (sp && !UCS_PTR_IS_ERR(sp))
			req[p] = sp;
	}
	wait_reqs(t, req, t->base.nodes, mono_ns() + CLOSE_NS);
	for (uint32_t p = 0; p < t->base.nodes; p++)
		if (req[p])
			ucp_request_free(req[p]);
}

static void ucx_fini(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	uint32_t nodes = t->base.nodes;
	if (t->worker && t->peer) {
		void **req = calloc(nodes, sizeof(*req));
		for (uint32_t p = 0; p < nodes; p++)
			if (t->peer[p].rkey) {
				ucp_rkey_destroy(t->peer[p].rkey);
				t->peer[p].rkey = NULL;
			}
		if (req) {
			if (t->ending)
				send_byes(t, req);
			close_eps(t, req);
			free(req);
		}
		for (uint32_t p = 0; p < nodes; p++) {
			struct ucx_peer *pp = &t->peer[p];
			while (pp->head) {
				struct ucx_msg *m = pp->head;
				pp->head = m->next;
				if (m->req) {
					ucp_request_cancel(t->worker, m->req);
					continue; /* UCX still owns it */
				}
				msg_free(t, m);
			}
		}
	}
	while (t->free_msgs) {
		struct ucx_msg *m = t->free_msgs;
		t->free_msgs = m->next;
		free(m);
	}
	while (t->done_head) {
		struct ucx_rma *r = t->done_head;
		t->done_head = r->next;
		free(r);
	}
	while (t->free_rma) {
		struct ucx_rma *r = t->free_rma;
		t->free_rma = r->next;
		free(r);
	}
	if (t->worker)
		ucp_worker_destroy(t->worker);
	if (t->memh)
		ucp_mem_unmap(t->ctx, t->memh);
	if (t->ctx)
		ucp_cleanup(t->ctx);
	ucx_boot_fini(&t->boot, nodes);
	for (uint32_t p = 0; p < nodes; p++)
		if (t->peer[p].pidfd >= 0)
			close(t->peer[p].pidfd);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->wakefd >= 0)
		close(t->wakefd);
	free(t->mine);
	free(t->peer);
	free(t);
}

/* net_ops.describe: the lanes UCX chose to each peer, from
 * ucp_ep_print_info (the lines naming a lane's transport and device). */
static void ucx_describe(struct net *nt, char *buf, size_t len)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	/* Whose mapping peers read global memory from: UCX's (over shared
	 * memory with loads), or ours registered (through a lane). */
	snprintf(buf, len, "%s%s", t->lanes,
		 !t->memh	 ? ""
		 : t->seg_by_ucx ? "; global memory allocated by UCX"
				 : "; global memory registered");
}

/* ---- one-sided reads and writes ---- */

static const char *ucx_fail(const char *what, ucs_status_t st)
{
	static char buf[300];
	snprintf(buf, sizeof(buf),
		 "ucx transport: %s: %s (check UCX_TLS / UCX_NET_DEVICES; "
		 "ucx_info -d lists what this host has)",
		 what, ucs_status_string(st));
	return buf;
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
		earth_fatal("ucx: a one-sided %s node %u failed: %s",
			    r->write ? "write to" : "read from", r->peer,
			    ucs_status_string(st));
	t->base.sends_out--;
	t->rma_out--;
	ucp_request_free(req);
	rma_queue(t, r);
}

/* Peer p's exposed segment, reached through a lane that accesses its
 * memory itself, holds [raddr, raddr + len): a record for the access
 * (else NULL: the caller sends a message instead). */
static struct ucx_rma *rma_new(struct ucx_net *t, uint32_t peer, uint64_t raddr,
			       uint64_t len, net_rma_done_fn done, void *arg,
			       bool write)
{
	struct ucx_peer *pp = &t->peer[peer];
	if (!pp->rkey || !pp->rma_lane || pp->lost || raddr < pp->rbase ||
	    len > pp->rlen || raddr - pp->rbase > pp->rlen - len)
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

static int ucx_rma_get(struct net *nt, uint32_t peer, void *dst, uint64_t raddr,
		       uint64_t len, net_rma_done_fn done, void *arg)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	struct ucx_rma *r = rma_new(t, peer, raddr, len, done, arg, false);
	if (!r)
		return -1;
	ucp_request_param_t rp;
	rma_param(&rp, r);
	ucs_status_ptr_t sp =
	    ucp_get_nbx(pp->ep, dst, (size_t)len, raddr, pp->rkey, &rp);
	if (UCS_PTR_IS_ERR(sp)) {
		rma_free(t, r);
		return -1;
	}
	t->rma_reads++;
	rma_started(t, r, sp);
	return 0;
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
static int ucx_rma_put(struct net *nt, uint32_t peer, const void *src,
		       uint64_t raddr, uint64_t len, net_rma_done_fn done,
		       void *arg)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	struct ucx_peer *pp = &t->peer[peer];
	struct ucx_rma *r = rma_new(t, peer, raddr, len, done, arg, true);
	if (!r)
		return -1;
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	ucs_status_ptr_t sp =
	    ucp_put_nbx(pp->ep, src, (size_t)len, raddr, pp->rkey, &rp);
	if (UCS_PTR_IS_ERR(sp)) {
		rma_free(t, r);
		return -1; /* nothing started: the endpoint failed */
	}
	if (sp)
		ucp_request_free(sp);
	rma_param(&rp, r);
	sp = ucp_ep_flush_nbx(pp->ep, &rp);
	if (UCS_PTR_IS_ERR(sp))
		earth_fatal("ucx: a one-sided write to node %u failed: %s",
			    peer, ucs_status_string(UCS_PTR_STATUS(sp)));
	rma_started(t, r, sp);
	return 0;
}

/* net_ops.rma_ptr: where UCX mapped peer's segment here when it unpacked
 * its key (ucp_rkey_ptr: over shared memory a posix or sysv segment the
 * peer's UCX allocated, mapped whole), checked at both ends; NULL over
 * lanes that cannot (tcp, cma: memory registered rather than allocated). */
static void *ucx_rma_ptr(struct net *nt, uint32_t peer)
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

/* Registers [base, base + len) once and sends every peer its key; waits
 * (progressing) until every peer's key came (EARTH_CONNECT_TIMEOUT). */
static const char *ucx_rma_expose(struct net *nt, void *base, uint64_t len,
				  bool *taken)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	uint32_t nodes = t->base.nodes;
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
	void **req = calloc(nodes, sizeof(*req));
	if (!req) {
		if (packed)
			ucp_rkey_buffer_release(packed);
		return "out of memory";
	}
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
	const char *e = NULL;
	for (uint32_t p = 0; p < nodes && !e; p++) {
		if (p == t->base.self)
			continue;
		ucs_status_ptr_t sp =
		    ucp_am_send_nbx(t->peer[p].ep, AM_RKEY, &t->rkey_hdr,
				    sizeof(t->rkey_hdr), packed, plen, &rp);
		if (UCS_PTR_IS_ERR(sp))
			e = ucx_fail("sending the global memory key",
				     UCS_PTR_STATUS(sp));
		else
			req[p] = sp;
	}
	double tmo = earth_setting_real(EARTH_SET_CONNECT_TIMEOUT);
	uint64_t deadline = mono_ns() + (uint64_t)(tmo * 1e9);
	wait_reqs(t, req, nodes, deadline);
	for (uint32_t p = 0; p < nodes; p++)
		if (req[p]) {
			ucp_request_cancel(t->worker, req[p]);
			ucp_request_free(req[p]);
			if (!e)
				e = "ucx transport: our memory key did not "
				    "reach every node in time";
		}
	free(req);
	if (packed)
		ucp_rkey_buffer_release(packed);
	while (!e && t->rkeys_in < nodes - 1) {
		ucp_worker_progress(t->worker);
		fault_check(t);
		if (mono_ns() > deadline)
			e = "ucx transport: not every node's memory key came "
			    "in time (EARTH_CONNECT_TIMEOUT)";
	}
	return e;
}

static const struct net_ops ucx_ops = {
    .name = "ucx",
    .send = ucx_send,
    .send_ref = ucx_send_ref,
    .flush = ucx_flush,
    .poll = ucx_poll,
    .pending = ucx_pending,
    .su_word = ucx_su_word,
    .fini = ucx_fini,
    .wait = ucx_wait,
    .wake = ucx_wake,
    .blk_bytes = ucx_blk_bytes,
    .describe = ucx_describe,
    .rma_expose = ucx_rma_expose,
    .rma_get = ucx_rma_get,
    .rma_put = ucx_rma_put,
    .rma_ptr = ucx_rma_ptr,
};

/* ---- opening (earth_run thread) ---- */

/* This host's boot id and this process's pid namespace: processes with
 * the same see each other's pids. */
static void host_id(char *out, size_t len)
{
	char boot[40] = "";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, boot, sizeof(boot) - 1);
		boot[k > 0 ? k : 0] = 0;
		close(fd);
	}
	boot[strcspn(boot, "\n")] = 0;
	struct stat st;
	unsigned long long ns = 0;
	if (!stat("/proc/self/ns/pid", &st))
		ns = (unsigned long long)st.st_ino;
	memset(out, 0, len);
	snprintf(out, len, "%s:%llx", boot, ns);
}

static const char *make_worker(struct ucx_net *t)
{
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK)
		return ucx_fail("reading UCX's configuration", st);
	/* A dead peer is noticed within a second or two over every lane
	 * (UCX_KEEPALIVE_INTERVAL, when given, wins). */
	if (!getenv("UCX_KEEPALIVE_INTERVAL"))
		ucp_config_modify(cfg, "KEEPALIVE_INTERVAL", "1s");
	ucp_params_t pp;
	memset(&pp, 0, sizeof(pp));
	pp.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	pp.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
	pp.name = "earth";
	st = ucp_init(&pp, cfg, &t->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) {
		t->ctx = NULL;
		return ucx_fail("ucp_init", st);
	}
	ucp_worker_params_t wp;
	memset(&wp, 0, sizeof(wp));
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	st = ucp_worker_create(t->ctx, &wp, &t->worker);
	if (st != UCS_OK) {
		t->worker = NULL;
		return ucx_fail("ucp_worker_create", st);
	}
	static const struct {
		unsigned id;
		ucp_am_recv_callback_t cb;
	} h[] = {{AM_MSG, on_msg},
		 {AM_PROOF, on_proof},
		 {AM_BYE, on_bye},
		 {AM_RKEY, on_rkey}};
	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		ucp_am_handler_param_t ap;
		memset(&ap, 0, sizeof(ap));
		ap.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
				UCP_AM_HANDLER_PARAM_FIELD_CB |
				UCP_AM_HANDLER_PARAM_FIELD_ARG;
		ap.id = h[i].id;
		ap.cb = h[i].cb;
		ap.arg = t;
		st = ucp_worker_set_am_recv_handler(t->worker, &ap);
		if (st != UCS_OK)
			return ucx_fail("setting an active message handler",
					st);
	}
	t->armable = ucp_worker_get_efd(t->worker, &t->efd) == UCS_OK;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->epfd < 0 || t->wakefd < 0)
		return "ucx transport: cannot make the descriptors to sleep on";
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EV_WAKE};
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->wakefd, &ev))
		return "ucx transport: epoll_ctl failed";
	ev.data.u64 = EV_WORKER;
	if (t->armable && epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->efd, &ev))
		t->armable = false;
	ucp_address_t *addr;
	size_t alen;
	st = ucp_worker_get_address(t->worker, &addr, &alen);
	if (st != UCS_OK)
		return ucx_fail("ucp_worker_get_address", st);
	if (alen > UCX_ADDR_MAX) {
		ucp_worker_release_address(t->worker, addr);
		return "ucx transport: the worker's address is too long (limit "
		       "the lanes with UCX_TLS / UCX_NET_DEVICES)";
	}
	t->mine = calloc(1, sizeof(*t->mine) + alen);
	if (!t->mine) {
		ucp_worker_release_address(t->worker, addr);
		return "out of memory";
	}
	t->mine->magic = UCX_CARD_MAGIC;
	t->mine->node = t->base.self;
	t->mine->nodes = t->base.nodes;
	t->mine->addr_len = (uint32_t)alen;
	memcpy(t->mine->addr, addr, alen);
	ucp_worker_release_address(t->worker, addr);
	net_random(t->mine->nonce, NET_NONCE_LEN);
	t->mine->pid = (int32_t)getpid();
	host_id(t->mine->host, sizeof(t->mine->host));
	return net_gmem_seg(&t->mine->gmem_seg);
}

/* The lanes of the endpoint to the first peer, from ucp_ep_print_info. */
/* What ucp_ep_print_info says of ep, malloc'd (NULL when out of memory). */
static char *ep_info(ucp_ep_h ep)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f)
		return NULL;
	ucp_ep_print_info(ep, f);
	fclose(f);
	return text;
}

/* For each peer, whether UCX has a lane that reads its memory itself
 * (cma, verbs: "rma" in the lane list); without one UCX emulates a read
 * with an active message the peer's worker answers, slower than asking
 * its SU: such reads go as messages. */
static void note_rma_lanes(struct ucx_net *t)
{
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		if (p == t->base.self)
			continue;
		char *text = ep_info(t->peer[p].ep);
		bool rma = false;
		for (char *l = text ? strtok(text, "\n") : NULL; l && !rma;
		     l = strtok(NULL, "\n"))
			rma = strstr(l, "lane[") && strstr(l, " rma");
		t->peer[p].rma_lane = rma;
		free(text);
	}
}

static void note_lanes(struct ucx_net *t)
{
	uint32_t p = t->base.self == 0 ? 1 : 0;
	note_rma_lanes(t);
	char *text = ep_info(t->peer[p].ep);
	if (!text)
		return;
	size_t at = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *l = strstr(line, "lane[");
		if (!l || at + 4 >= sizeof(t->lanes))
			continue;
		while (*l && *l != ':')
			l++;
		if (*l)
			l++;
		while (*l == ' ')
			l++;
		int k = snprintf(t->lanes + at, sizeof(t->lanes) - at, "%s%s",
				 at ? "; " : "", l);
		if (k > 0)
			at += (size_t)k;
		if (at >= sizeof(t->lanes))
			at = sizeof(t->lanes) - 1;
	}
	free(text);
	/* One space between words (UCX aligns its columns). */
	size_t w = 0;
	for (size_t r = 0; t->lanes[r]; r++)
		if (t->lanes[r] != ' ' || (w && t->lanes[w - 1] != ' '))
			t->lanes[w++] = t->lanes[r];
	t->lanes[w] = 0;
}

/* Names the nodes whose proof did not come in time. */
static const char *unproven(const struct ucx_net *t)
{
	static char msg[200];
	uint32_t first = UINT32_MAX, n = 0;
	for (uint32_t p = 0; p < t->base.nodes; p++)
		if (p != t->base.self && !t->peer[p].proven) {
			first = first == UINT32_MAX ? p : first;
			n++;
		}
	snprintf(msg, sizeof(msg),
		 "ucx transport: node %u%s did not prove itself in time "
		 "(EARTH_CONNECT_TIMEOUT; see its errors)",
		 first, n > 1 ? " and others" : "");
	return msg;
}

/* Creates the endpoints, sends every peer our proof and progresses until
 * every peer proved itself (EARTH_CONNECT_TIMEOUT). */
static const char *connect_all(struct ucx_net *t)
{
	uint32_t self = t->base.self, nodes = t->base.nodes;
	for (uint32_t p = 0; p < nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		pp->t = t;
		pp->id = p;
		if (p == self)
			continue;
		ucp_ep_params_t ep;
		memset(&ep, 0, sizeof(ep));
		ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
				UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
				UCP_EP_PARAM_FIELD_ERR_HANDLER;
		ep.address = (const ucp_address_t *)t->boot.card[p]->addr;
		ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
		ep.err_handler.cb = on_ep_error;
		ep.err_handler.arg = pp;
		ucs_status_t st = ucp_ep_create(t->worker, &ep, &pp->ep);
		const struct ucx_card *c = t->boot.card[p];
		if (st == UCS_ERR_UNREACHABLE && c->host[0] &&
		    !strncmp(c->host, t->mine->host, sizeof(c->host))) {
			/* Lanes without UCX's peer failure detection
			 * (shared memory in UCX 1.13): the peer runs on
			 * this host, watch its process instead. */
			pp->pidfd = pidfd_open((pid_t)c->pid, 0);
			struct epoll_event ev = {.events = EPOLLIN,
						 .data.u64 = EV_PEER + p};
			if (pp->pidfd < 0 ||
			    epoll_ctl(t->epfd, EPOLL_CTL_ADD, pp->pidfd, &ev))
				return "ucx transport: cannot watch a peer's "
				       "process (pidfd_open: Linux 5.3 or "
				       "later needed)";
			t->pidfds++;
			ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
			st = ucp_ep_create(t->worker, &ep, &pp->ep);
		}
		if (st != UCS_OK) {
			pp->ep = NULL;
			return ucx_fail("ucp_ep_create", st);
		}
	}
	/* Each proof is sent from its own copy: a header must live until
	 * its send completes. */
	void **req = calloc(nodes, sizeof(*req));
	struct ucx_proof *pr = calloc(nodes, sizeof(*pr));
	if (!req || !pr) {
		free(req);
		free(pr);
		return "out of memory";
	}
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	const char *e = NULL;
	for (uint32_t p = 0; p < nodes && !e; p++) {
		if (p == self)
			continue;
		pr[p].magic = UCX_CARD_MAGIC;
		pr[p].node = self;
		pr[p].nodes = nodes;
		proof_mac(t, self, p, pr[p].mac);
		ucs_status_ptr_t sp =
		    ucp_am_send_nbx(t->peer[p].ep, AM_PROOF, &pr[p],
				    sizeof(pr[p]), NULL, 0, &rp);
		if (UCS_PTR_IS_ERR(sp))
			e = ucx_fail("sending our proof", UCS_PTR_STATUS(sp));
		else
			req[p] = sp;
	}
	double tmo = earth_setting_real(EARTH_SET_CONNECT_TIMEOUT);
	uint64_t deadline = mono_ns() + (uint64_t)(tmo * 1e9);
	if (!e)
		wait_reqs(t, req, nodes, deadline);
	for (uint32_t p = 0; p < nodes; p++)
		if (req[p]) {
			ucp_request_cancel(t->worker, req[p]);
			ucp_request_free(req[p]);
			if (!e)
				e = "ucx transport: our proof did not reach "
				    "every node in time "
				    "(EARTH_CONNECT_TIMEOUT)";
		}
	net_forget(pr, nodes * sizeof(*pr));
	free(pr);
	free(req);
	if (e)
		return e;
	while (t->proofs_in < nodes - 1) {
		ucp_worker_progress(t->worker);
		for (uint32_t p = 0; p < nodes; p++)
			if (t->peer[p].lost && !t->peer[p].proven)
				return "ucx transport: a peer failed before "
				       "proving itself (see its errors)";
		if (mono_ns() > deadline)
			return unproven(t);
	}
	note_lanes(t);
	return NULL;
}

/* connect_all with UCX's own error messages muted (unless UCX_LOG_LEVEL
 * asks for more): endpoints are tried with peer failure detection first,
 * and UCX reports each lane without it (shared memory in UCX 1.13) as an
 * error, here and at the peer, before this node falls back; a real
 * failure is reported by this node. */
static const char *connect_quietly(struct ucx_net *t)
{
	ucs_log_level_t lv = ucs_global_opts.log_component.log_level;
	if (lv <= UCS_LOG_LEVEL_WARN && lv >= UCS_LOG_LEVEL_ERROR)
		ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_FATAL;
	const char *e = connect_all(t);
	ucs_global_opts.log_component.log_level = lv;
	return e;
}

struct net *net_ucx_open(uint32_t self, uint32_t nodes, const char **err)
{
	*err = NULL;
	if (nodes < 2)
		return NULL;
	struct ucx_net *t = calloc(1, sizeof(*t));
	if (t)
		t->peer = calloc(nodes, sizeof(*t->peer));
	if (!t || !t->peer) {
		free(t);
		*err = "out of memory";
		return NULL;
	}
	t->base.ops = &ucx_ops;
	t->base.self = self;
	t->base.nodes = nodes;
	/* Rendezvous BLK_DATA payloads go straight to their destination. */
	t->base.max_payload = BLK_CHUNK;
	t->epfd = t->wakefd = t->efd = -1;
	for (uint32_t p = 0; p < nodes; p++)
		t->peer[p].pidfd = -1;
	const char *e = make_worker(t);
	if (!e)
		e = ucx_boot_exchange(self, nodes, t->mine,
				      sizeof(*t->mine) + t->mine->addr_len,
				      &t->boot);
	if (!e)
		e = connect_quietly(t);
	if (e) {
		*err = e;
		ucx_fini(&t->base);
		return NULL;
	}
	return &t->base;
}
