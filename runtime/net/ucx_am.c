/* SPDX-License-Identifier: MIT */
/*
 * ucx_am.c - the ucx transport's active-message path (SU thread): sending
 * and receiving wire messages, the peers' proofs and BYEs, peer faults,
 * poll, sleeping and waking the SU, flush. Opening and closing: ucx.c.
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
 * Faults: a peer that fails without having said BYE (ending cleanly)
 * stops this node naming it.
 * Ending: as over tcp, once SHUTDOWN was sent or seen, flush sends
 * everything (5 s at most).
 * Details: docs/architecture.md, "Between nodes: ucx".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "net/ucx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define IMM_MAX 8192u	    /* larger payloads never try an inline send */
#define REF_MIN 4096u	    /* send_ref: smaller payloads are copied */
#define PEND_MAX (4u << 20) /* copied bytes in flight per peer */
#define END_DRAIN_NS 5000000000ull
#define LOST_GRACE_NS 500000000ull /* a BYE may still be queued */
#define BYE_GRACE_NS 5000000000ull /* for node 0's SHUTDOWN after a BYE */
#define PROGRESS_MAX 64		   /* progress calls per poll */
#define PIDFD_EVERY 1024u /* polls between looks at the peers' pidfds */
#define BEAT_EVERY 64u	  /* polls between looks at the clock (beat_check) */

/* A send whose buffers UCX still uses. */
struct ucx_send {
	struct ucx_net *t;
	uint32_t peer, copied;
	struct wire_hdr h;
	unsigned char data[]; /* the copied payload */
};

/* ---- proofs ---- */

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

uint32_t ucx_sender(struct ucx_net *t, uint32_t claim,
		    const ucp_am_recv_param_t *param, const char *what)
{
	if (claim < t->base.nodes && claim != t->base.self &&
	    (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) &&
	    param->reply_ep == t->peer[claim].ep) {
		t->peer[claim].heard++;
		return claim;
	}
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
		return ucx_sender(t, pr->node, param, what);
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

ucs_status_t ucx_on_proof(void *arg, const void *header, size_t hlen,
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
	ucx_proof_of(t, p, t->base.self, want);
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

ucs_status_t ucx_on_bye(void *arg, const void *header, size_t hlen, void *data,
			size_t len, const ucp_am_recv_param_t *param)
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
		t->bye_deadline = ucx_mono_ns() + BYE_GRACE_NS;
		t->bye_peer = p;
	}
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

void ucx_msg_free(struct ucx_net *t, struct ucx_msg *m)
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
		earth_fatal_peer(
		    "ucx: receiving a block from node %u failed: %s", m->h.src,
		    ucs_status_string(st));
	m->pending = false;
	m->req = NULL;
	m->t->ready_msgs++;
	ucp_request_free(req);
}

ucs_status_t ucx_on_msg(void *arg, const void *header, size_t hlen, void *data,
			size_t len, const ucp_am_recv_param_t *param)
{
	struct ucx_net *t = arg;
	struct wire_hdr h;
	if (hlen != sizeof(h)) {
		dropped(t, "a message with a %zu-byte header", hlen);
		return UCS_OK;
	}
	memcpy(&h, header, sizeof(h));
	uint32_t p = ucx_sender(t, h.src, param, "a message");
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
	if (h.type == W_BEAT) /* heard (ucx_sender): all it says */
		return UCS_OK;
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

void ucx_on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	struct ucx_peer *pp = arg;
	(void)ep;
	if (!pp->lost) {
		pp->lost = true;
		pp->lost_status = st;
		pp->lost_ns = ucx_mono_ns();
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
	ucx_on_ep_error(pp, pp->ep, UCS_ERR_CONNECTION_RESET);
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

void ucx_fault_check(struct ucx_net *t)
{
	if (t->ending)
		return;
	uint64_t now = 0;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		if (!pp->lost || pp->bye)
			continue;
		if (!now)
			now = ucx_mono_ns();
		if (now - pp->lost_ns < LOST_GRACE_NS)
			continue;
		if (pp->exited)
			earth_fatal_peer("ucx: lost node %u: its process ended "
					 "before the job did",
					 p);
		earth_fatal_peer("ucx: lost node %u (%s): it died or cannot be "
				 "reached",
				 p, ucs_status_string(pp->lost_status));
	}
	if (t->bye_deadline) {
		if (!now)
			now = ucx_mono_ns();
		if (now > t->bye_deadline)
			earth_fatal_peer("ucx: node %u ended, but node 0's "
					 "SHUTDOWN did not come within 5 s",
					 t->bye_peer);
	}
}

/*
 * Link loss: a peer's host or the link to it gone says nothing (UCX 1.13's
 * tcp lanes report no error for minutes, its keepalive included). Every
 * beat_ns, a peer that sent anything since the last look was heard now;
 * one not heard for longer than the stall limit is named; a link this
 * node sent nothing on since the last look carries a W_BEAT, so a quiet
 * but live peer is heard at least every two looks. SU thread (poll and
 * wait, which wakes for the next look).
 */
static int send_msg(struct ucx_net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload, bool ref);

static EARTH_COLD void beat_check(struct ucx_net *t, uint64_t now)
{
	t->beat_next = now + t->beat_ns;
	if (t->ending)
		return;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		if (p == t->base.self || !pp->proven || pp->lost || pp->bye)
			continue;
		if (pp->heard != pp->heard_seen || !pp->heard_ns) {
			pp->heard_seen = pp->heard;
			pp->heard_ns = now;
		} else if (now - pp->heard_ns > t->stall_ns) {
			earth_fatal_peer(
			    "ucx: lost node %u: nothing heard from it "
			    "for %.1f s: its host or the link to it is "
			    "down (EARTH_PEER_STALL_S sets how long "
			    "to wait)",
			    p, (double)(now - pp->heard_ns) / 1e9);
		}
		if (pp->said == pp->said_seen) {
			struct wire_hdr h = {.magic = WIRE_MAGIC,
					     .version = WIRE_VERSION,
					     .type = W_BEAT,
					     .src = (uint16_t)t->base.self};
			send_msg(t, p, &h, NULL, false);
		}
		pp->said_seen = pp->said;
	}
}

static inline void beat_due(struct ucx_net *t)
{
	uint64_t now = ucx_mono_ns();
	if (q_unlikely(now >= t->beat_next))
		beat_check(t, now);
}

/* ---- sending ---- */

static void send_done(void *req, ucs_status_t st, void *user)
{
	struct ucx_send *s = user;
	struct ucx_net *t = s->t;
	(void)st; /* a failure is the endpoint's: ucx_on_ep_error names it */
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
	pp->said++;
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

int ucx_send(struct net *nt, uint32_t peer, const struct wire_hdr *h,
	     const void *payload)
{
	return send_msg((struct ucx_net *)nt, peer, h, payload, false);
}

int ucx_send_ref(struct net *nt, uint32_t peer, const struct wire_hdr *h,
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
			ucx_msg_free(t, m);
			done++;
			any = true;
		}
		t->rr = (t->rr + 1) % nodes;
		if (!any)
			break;
	}
	return done;
}

/* The callbacks of the one-sided reads that finished (ucx_rma.c queues
 * them; run outside progress: they may send); how many. */
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
		ucx_rma_free(t, r);
		done(arg);
	}
	return k;
}

unsigned ucx_poll(struct net *nt, void *ctx, net_deliver_fn deliver,
		  unsigned budget)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	progress(t);
	/* Finished reads count as work done (their slots were signalled):
	 * the SU hands what they made ready to the EU. */
	unsigned k = t->done_head ? rma_run_done(t) : 0;
	if (q_unlikely(t->pidfds) && ++t->polls % PIDFD_EVERY == 0)
		pidfd_check(t);
	if (q_unlikely(++t->beat_polls % BEAT_EVERY == 0))
		beat_due(t);
	ucx_fault_check(t);
	return k + deliver_some(t, ctx, deliver, budget);
}

/* A read UCX has not finished counts as pending: the SU keeps
 * progressing the worker until it finishes instead of sleeping (over
 * tcp the answer is taken in by our progress; woken by the event fd it
 * came a wake-up later). */
bool ucx_pending(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	progress(t);
	return t->ready_msgs != 0 || t->done_head || t->rma_out;
}

/* After the end: progress until every send is out (5 s at most). */
static void end_drain(struct ucx_net *t)
{
	uint64_t deadline = ucx_mono_ns() + END_DRAIN_NS;
	while (t->base.sends_out) {
		ucp_worker_progress(t->worker);
		if (ucx_mono_ns() > deadline) {
			fprintf(stderr,
				"earth: node %u: ucx transport: could not send "
				"everything at the end within 5 s\n",
				t->base.self);
			return;
		}
	}
}

void ucx_flush(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	ucp_worker_progress(t->worker);
	if (q_unlikely(t->ending))
		end_drain(t);
}

void ucx_blk_bytes(struct net *nt, struct net_blk_bytes *b)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	b->recv_direct = t->recv_direct;
	b->recv_copied = t->recv_copied;
	b->sent_ref = t->sent_ref;
	b->sent_copied = t->sent_copied;
}

/* ---- sleeping and waking the SU ---- */

_Atomic uint32_t *ucx_su_word(struct net *nt)
{
	return &((struct ucx_net *)nt)->su_word;
}

/* SU thread: progress until nothing is left, arm the worker, sleep on its
 * event fd and the wake eventfd. Wakes for the next beat_check (every
 * quarter second at most while the job runs; UCX detects failed peers only
 * while progressed too) and by the BYE deadline. */
void ucx_wait(struct net *nt, _Atomic uint32_t *word, uint32_t expected)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	while (ucp_worker_progress(t->worker))
		;
	if (t->ready_msgs || t->done_head || t->rma_out ||
	    atomic_load_explicit(word, memory_order_seq_cst) != expected)
		return;
	beat_due(t);
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
	if (!t->ending) { /* wake for the next beat_check */
		uint64_t now = ucx_mono_ns();
		uint64_t left =
		    t->beat_next > now ? (t->beat_next - now) / 1000000 + 1 : 0;
		if (left < (uint64_t)ms)
			ms = (int)left;
	}
	if (t->bye_deadline && !t->ending) {
		uint64_t now = ucx_mono_ns();
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
	ucx_fault_check(t);
}

/* Any thread: the SU's word was just set to running. */
void ucx_wake(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	uint64_t one = 1;
	ssize_t r = write(t->wakefd, &one, sizeof(one));
	(void)r; /* EAGAIN: the counter is full, so the SU wakes anyway */
}
