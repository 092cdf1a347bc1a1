/* SPDX-License-Identifier: MIT */
/*
 * tcp.c - the transport between hosts: one TCP connection per pair of
 * nodes, driven by an io_uring ring on the SU thread. The connections come
 * from the rendezvous (tcp_rendezvous.c), which hands them over with
 * tcp_data_start.
 *
 * Data (SU thread): the ring is created on first use by the SU (SINGLE_ISSUER
 * and DEFER_TASKRUN tie it to that thread), one multishot receive per peer
 * into a ring of provided buffers, messages appended per peer and sent with
 * one send per peer per flush. On a DEFER_TASKRUN ring the rest of a large
 * block payload is received straight into its destination with recvmsg
 * (direct_pass says why that keeps each stream in order). An empty poll
 * reads memory only: the kernel raises IORING_SQ_TASKRUN when it has
 * completions to run, and only then (or every EVENTS_EVERY polls, as a
 * safety net) does poll enter the kernel.
 * The SU sleeps in io_uring_enter (net_ops.wait); the EU and other threads
 * wake it through an eventfd the ring reads (net_ops.wake).
 *
 * Ending: the job ends with node 0's SHUTDOWN. Once a node sent or received
 * it, flush waits (5 s at most) until everything queued is sent, and fini
 * sends a BYE record, half-closes and reads to EOF. A connection that ends
 * without a BYE before that is a dead peer: the node stops naming it.
 * Details: docs/architecture.md, "Between nodes: tcp".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "base/settings.h"
#include "net/stream.h"
#include "net/tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_COUNT 128u	       /* provided receive buffers (power of two) */
#define BUF_SIZE (32u * 1024u) /* bytes each */
#define BUF_GROUP 0
#define PEND_MAX (1u << 20)	 /* queued bytes per peer before -EAGAIN */
#define BLK_CHUNK (1u << 20)	 /* BLK_DATA payload per message */
#define REF_MIN 4096u		 /* send_ref: smaller payloads are copied */
#define DIRECT_MIN (16u * 1024u) /* payload left to receive in place */
#define DIRECT_MAX (BUF_COUNT * BUF_SIZE) /* received so per peer per pass */
#define IOV_BATCH 64			  /* pieces per sendmsg */
#define RING_SQ 256u
#define RING_CQ 4096u
#define EVENTS_EVERY 1024u /* polls between forced get_events */
#define END_DRAIN_NS 5000000000ull

enum { UD_RECV = 1, UD_SEND, UD_WAKE };
/* After an early BYE between two nodes other than node 0, node 0's
 * SHUTDOWN must arrive within this (early_bye). */
#define TCP_BYE_GRACE_NS 5000000000ull
#define UD(kind, peer) ((uint64_t)(kind) << 32 | (uint64_t)(peer))

/* Bytes to send: copied ones in p, and block-move payloads referenced
 * where they lie (send_ref), each sent after the copied byte `at`. */
struct tcp_buf {
	unsigned char *p;
	size_t len, cap;
	struct tcp_ext {
		size_t at;
		const unsigned char *p;
		size_t len;
	} * ext;
	size_t next, ext_cap, ext_bytes;
};

static inline size_t buf_bytes(const struct tcp_buf *b)
{
	return b->len + b->ext_bytes;
}

static inline void buf_clear(struct tcp_buf *b)
{
	b->len = b->next = b->ext_bytes = 0;
}

struct tcp_peer {
	int fd;
	bool recv_armed;
	bool gone;	/* closed after its BYE or after the job ended */
	bool sending;	/* fly is in a send */
	bool flowing;	/* its bytes came lately: the socket may hold more */
	bool bye_noted; /* its BYE was looked at (early_bye) */
	/* Bytes sent to it so far, and what stall_check last saw of them
	 * while a send was in flight (and when): a send that makes no
	 * progress for EARTH_PEER_STALL_S means the peer stopped reading. */
	uint64_t sent, stall_sent, stall_ns;
	struct tcp_buf pend, fly;
	size_t fly_off;	   /* bytes of fly sent, copied and referenced */
	struct msghdr msg; /* fly from fly_off, when it references payloads */
	struct iovec iov[IOV_BATCH];
	struct wire_stream in;
};

struct tcp_net {
	struct net base;
	struct tcp_peer *peer;
	int efd;
	uint64_t efd_val;
	bool efd_armed;
	bool ring_ok, defer, need_submit;
	bool ending; /* SHUTDOWN sent or received */
	/* A peer other than node 0 said BYE before this node saw node 0's
	 * SHUTDOWN (allowed: the SHUTDOWN may still be on its way on another
	 * connection): the job must end by then (CLOCK_MONOTONIC ns; 0 while
	 * no such BYE), or the peer that said it is named. */
	uint64_t bye_deadline;
	uint32_t bye_peer;
	uint64_t stall_limit_ns; /* EARTH_PEER_STALL_S */
	bool flowing;		 /* some peer is */
	unsigned polls;
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	_Atomic uint32_t su_word;
	void *ctx; /* the deliver callback's */
	net_deliver_fn deliver;
	unsigned delivered;
	uint64_t sent_ref, sent_copied; /* BLK_DATA payload bytes */
	uint64_t events_calls; /* statistics for the tests and the docs */
};

/* ---- the ring (SU thread) ---- */

static struct io_uring_sqe *get_sqe(struct tcp_net *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	if (!sqe) {
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
		if (!sqe)
			earth_fatal("tcp transport: the io_uring submission "
				    "queue stays full");
	}
	t->need_submit = true;
	return sqe;
}

static void submit(struct tcp_net *t)
{
	if (!t->need_submit)
		return;
	t->need_submit = false;
	int r = io_uring_submit(&t->ring);
	if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
		earth_fatal("tcp transport: io_uring_submit: %s", strerror(-r));
	if (r < 0)
		t->need_submit = true;
}

static void arm_recv(struct tcp_net *t, uint32_t p)
{
	struct io_uring_sqe *sqe = get_sqe(t);
	io_uring_prep_recv_multishot(sqe, t->peer[p].fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BUF_GROUP;
	io_uring_sqe_set_data64(sqe, UD(UD_RECV, p));
	t->peer[p].recv_armed = true;
}

static void recycle(struct tcp_net *t, unsigned bid)
{
	io_uring_buf_ring_add(t->br, t->bufs + (size_t)bid * BUF_SIZE, BUF_SIZE,
			      (unsigned short)bid,
			      io_uring_buf_ring_mask(BUF_COUNT), 0);
	io_uring_buf_ring_advance(t->br, 1);
}

static void ring_setup(struct tcp_net *t)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		  IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_CQSIZE;
	p.cq_entries = RING_CQ;
	int r = io_uring_queue_init_params(RING_SQ, &t->ring, &p);
	t->defer = r == 0;
	if (r == -EINVAL) { /* a kernel before 6.1: plain flags */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = RING_CQ;
		r = io_uring_queue_init_params(RING_SQ, &t->ring, &p);
	}
	if (r < 0)
		earth_fatal(
		    "tcp transport: cannot create the io_uring ring: %s",
		    strerror(-r));
	size_t brb = BUF_COUNT * sizeof(struct io_uring_buf);
	t->br = mmap(NULL, brb, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->bufs =
	    mmap(NULL, (size_t)BUF_COUNT * BUF_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->br == MAP_FAILED || t->bufs == MAP_FAILED)
		earth_fatal("tcp transport: out of memory for receive buffers");
	struct io_uring_buf_reg reg;
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)t->br;
	reg.ring_entries = BUF_COUNT;
	reg.bgid = BUF_GROUP;
	r = io_uring_register_buf_ring(&t->ring, &reg, 0);
	if (r < 0)
		earth_fatal("tcp transport: cannot register the provided "
			    "buffer ring (Linux 5.19 or later needed): %s",
			    strerror(-r));
	io_uring_buf_ring_init(t->br);
	for (unsigned i = 0; i < BUF_COUNT; i++)
		io_uring_buf_ring_add(t->br, t->bufs + (size_t)i * BUF_SIZE,
				      BUF_SIZE, (unsigned short)i,
				      io_uring_buf_ring_mask(BUF_COUNT),
				      (int)i);
	io_uring_buf_ring_advance(t->br, BUF_COUNT);
	t->ring_ok = true;
	for (uint32_t q = 0; q < t->base.nodes; q++)
		if (q != t->base.self && !t->peer[q].gone)
			arm_recv(t, q);
	submit(t);
}

static inline void ensure_ring(struct tcp_net *t)
{
	if (q_unlikely(!t->ring_ok))
		ring_setup(t);
}

/* ---- sending ---- */

/* The bytes of b from offset off (copied and referenced ones in order) as
 * at most max iovecs; how many. */
static int buf_iov(const struct tcp_buf *b, size_t off, struct iovec *iov,
		   int max)
{
	int k = 0;
	size_t pos = 0, in = 0; /* in b's stream; in b->p */
	for (size_t e = 0; k < max; e++) {
		size_t in_end = e < b->next ? b->ext[e].at : b->len;
		size_t seg = in_end - in;
		if (off < pos + seg) {
			size_t skip = off > pos ? off - pos : 0;
			iov[k++] = (struct iovec){b->p + in + skip, seg - skip};
		}
		pos += seg;
		in = in_end;
		if (e == b->next || k == max)
			break;
		size_t el = b->ext[e].len;
		if (off < pos + el) {
			size_t skip = off > pos ? off - pos : 0;
			iov[k++] = (struct iovec){(void *)(b->ext[e].p + skip),
						  el - skip};
		}
		pos += el;
	}
	return k;
}

static void start_send(struct tcp_net *t, uint32_t p)
{
	struct tcp_peer *pp = &t->peer[p];
	if (!pp->sending) {
		struct tcp_buf tmp = pp->fly;
		pp->fly = pp->pend;
		pp->pend = tmp;
		buf_clear(&pp->pend);
		pp->fly_off = 0;
	}
	struct io_uring_sqe *sqe = get_sqe(t);
	if (!pp->fly.next) {
		io_uring_prep_send(sqe, pp->fd, pp->fly.p + pp->fly_off,
				   pp->fly.len - pp->fly_off, MSG_NOSIGNAL);
	} else {
		memset(&pp->msg, 0, sizeof(pp->msg));
		pp->msg.msg_iov = pp->iov;
		pp->msg.msg_iovlen =
		    (size_t)buf_iov(&pp->fly, pp->fly_off, pp->iov, IOV_BATCH);
		io_uring_prep_sendmsg(sqe, pp->fd, &pp->msg, MSG_NOSIGNAL);
	}
	io_uring_sqe_set_data64(sqe, UD(UD_SEND, p));
	if (!pp->sending)
		t->base.sends_out++;
	pp->sending = true;
}

/* The send in flight to pp ended (done, failed, or the peer is gone). */
static void send_done(struct tcp_net *t, struct tcp_peer *pp)
{
	pp->sending = false;
	t->base.sends_out--;
	buf_clear(&pp->fly);
	pp->fly_off = 0;
}

/* Appends a message for peer: all of it copied, or (ref) the header and
 * padding copied and the payload referenced. */
static int append(struct tcp_net *t, uint32_t peer, const struct wire_hdr *h,
		  const void *payload, bool ref)
{
	struct tcp_peer *pp = &t->peer[peer];
	if (h->type == W_SHUTDOWN)
		t->ending = true;
	if (pp->gone) /* it ended the job cleanly: nothing more to say */
		return 0;
	/* Bytes to copy: a referenced payload costs no buffer, so it never
	 * counts towards PEND_MAX (refused, the SU would queue a copy). */
	size_t need = wire_msg_bytes(h->len) - (ref ? h->len : 0);
	if (pp->pend.len && pp->pend.len + need > PEND_MAX)
		return -EAGAIN;
	if (ref) {
		struct tcp_buf *b = &pp->pend;
		if (b->next == b->ext_cap) {
			size_t c = b->ext_cap ? b->ext_cap * 2 : 16;
			struct tcp_ext *ne = realloc(b->ext, c * sizeof(*ne));
			if (!ne)
				return -EAGAIN;
			b->ext = ne;
			b->ext_cap = c;
		}
	}
	if (pp->pend.len + need > pp->pend.cap) {
		size_t cap = pp->pend.cap ? pp->pend.cap : 4096;
		while (cap < pp->pend.len + need)
			cap *= 2;
		unsigned char *np = realloc(pp->pend.p, cap);
		if (!np)
			return -EAGAIN;
		pp->pend.p = np;
		pp->pend.cap = cap;
	}
	unsigned char *at = pp->pend.p + pp->pend.len;
	memcpy(at, h, sizeof(*h));
	if (ref) {
		struct tcp_buf *b = &pp->pend;
		b->ext[b->next++] =
		    (struct tcp_ext){b->len + sizeof(*h), payload, h->len};
		b->ext_bytes += h->len;
		memset(at + sizeof(*h), 0, need - sizeof(*h));
		t->sent_ref += h->len;
	} else {
		if (h->len)
			memcpy(at + sizeof(*h), payload, h->len);
		memset(at + sizeof(*h) + h->len, 0, need - sizeof(*h) - h->len);
		if (h->type == W_BLK_DATA)
			t->sent_copied += h->len;
	}
	pp->pend.len += need;
	return 0;
}

static int tcp_send(struct net *nt, uint32_t peer, const struct wire_hdr *h,
		    const void *payload)
{
	return append((struct tcp_net *)nt, peer, h, payload, false);
}

/* A block move's payload is sent from where it lies, without a copy. */
static int tcp_send_ref(struct net *nt, uint32_t peer, const struct wire_hdr *h,
			const void *payload)
{
	return append((struct tcp_net *)nt, peer, h, payload,
		      h->type == W_BLK_DATA && h->len >= REF_MIN);
}

/* ---- receiving ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Peer p said BYE (it ends cleanly and sends nothing more) while this node
 * has not seen the job end. Node 0 ends the job and says SHUTDOWN before
 * its BYE on the same connection, so a BYE from node 0, or to node 0,
 * before that is a peer leaving a running job. Between two other nodes it
 * may come first: node 0's SHUTDOWN to this node is then on its way, and
 * must arrive within TCP_BYE_GRACE_NS.
 */
static EARTH_COLD void early_bye(struct tcp_net *t, uint32_t p)
{
	if (t->base.self == 0 || p == 0)
		earth_fatal_peer(
		    "tcp transport: node %u ended its connection (BYE) "
		    "before the job ended: it left a running job "
		    "(a broken or hostile peer)",
		    p);
	if (!t->bye_deadline) {
		t->bye_deadline = now_ns() + TCP_BYE_GRACE_NS;
		t->bye_peer = p;
	}
}

/* The job did not end in time after an early BYE (SU thread). */
static EARTH_COLD void bye_overdue(struct tcp_net *t)
{
	earth_fatal_peer(
	    "tcp transport: node %u ended its connection (BYE) %.0f s "
	    "ago, but node 0 has not ended the job: node %u left a "
	    "running job (a broken or hostile peer)",
	    t->bye_peer, TCP_BYE_GRACE_NS / 1e9, t->bye_peer);
}

static inline void bye_check(struct tcp_net *t, struct tcp_peer *pp, uint32_t p)
{
	if (q_unlikely(pp->in.bye) && !t->ending && !pp->bye_noted) {
		pp->bye_noted = true;
		early_bye(t, p);
	}
}

/*
 * Every peer with a send in flight made progress since the last look, or
 * has had none for less than the stall limit; else it stopped reading (or
 * its host did) and is named. Called every EVENTS_EVERY polls and when
 * the SU waits or wakes with sends in flight (SU thread).
 */
static EARTH_COLD void stall_check(struct tcp_net *t)
{
	uint64_t now = now_ns();
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (!pp->sending || pp->gone || pp->sent != pp->stall_sent ||
		    !pp->stall_ns) {
			pp->stall_sent = pp->sent;
			pp->stall_ns = now;
			continue;
		}
		if (now - pp->stall_ns > t->stall_limit_ns)
			earth_fatal_peer(
			    "tcp transport: node %u has not read what "
			    "this node sends it for %.0f s: it stopped "
			    "or hangs (EARTH_PEER_STALL_S sets how long "
			    "to wait)",
			    p, (double)(now - pp->stall_ns) / 1e9);
	}
}

static EARTH_COLD void peer_lost(struct tcp_net *t, uint32_t p, int err)
{
	struct tcp_peer *pp = &t->peer[p];
	if (pp->gone)
		return;
	if (pp->in.bye && !t->ending)
		bye_check(t, pp, p);
	if (pp->in.bye || t->ending) {
		pp->gone = true;
		buf_clear(&pp->pend);
		return;
	}
	/* The kernel's timeouts set in tcp_data_start: ETIMEDOUT, or the last
	 * soft error (no route) while the link was down. */
	if (err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH)
		earth_fatal_peer(
		    "tcp transport: node %u has not %s for %.0f s: %s "
		    "(EARTH_PEER_STALL_S sets how long to wait)",
		    p,
		    pp->sending ? "read what this node sends it" : "answered",
		    (double)t->stall_limit_ns / 1e9,
		    pp->sending ? "it stopped or hangs, or its host "
				  "or the link to it is down"
				: "its host or the link to it is down");
	earth_fatal_peer(
	    "tcp transport: lost the connection to node %u (%s): it "
	    "exited or was killed before the job ended",
	    p, err ? strerror(err) : "closed by the peer");
}

static void on_message(void *ctx, uint32_t from, const struct wire_hdr *h,
		       const void *payload)
{
	struct tcp_net *t = ctx;
	if (h->type == W_SHUTDOWN)
		t->ending = true;
	t->deliver(t->ctx, from, h, payload);
}

/* Where a BLK_DATA payload goes: its destination, once it is known to lie
 * in registered memory (the SU checks it again on delivery). Outside it,
 * a message that carries its request's origin is refused in the source
 * terms of that request; one without is refused by the stream. */
static void *tcp_place(void *ctx, uint32_t from, const struct wire_hdr *h)
{
	struct tcp_net *t = ctx;
	void *d = t->base.place ? t->base.place(h) : NULL;
	if (!d && t->base.place && h->c)
		wire_refuse(h, from, t->base.nodes, h->c, "b",
			    "the destination",
			    "[%#llx, +%u) is outside this node's registered "
			    "memory; memory from malloc or mmap that other "
			    "nodes read or write must be registered with "
			    "earth_register_memory",
			    (unsigned long long)h->b, h->len);
	return d;
}

static void on_recv(struct tcp_net *t, uint32_t p, int res, unsigned flags)
{
	struct tcp_peer *pp = &t->peer[p];
	if (!(flags & IORING_CQE_F_MORE))
		pp->recv_armed = false;
	if (res > 0) {
		unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
		/* After the end, what arrives no longer matters. */
		if (!pp->gone && !t->ending) {
			const char *bad = wire_stream_feed(
			    &pp->in, t->bufs + (size_t)bid * BUF_SIZE,
			    (size_t)res, on_message, t, &t->delivered);
			if (bad)
				earth_fatal("message from node %u rejected: "
					    "field %s",
					    p, bad);
			bye_check(t, pp, p);
			pp->flowing = t->flowing = true;
		}
		recycle(t, bid);
	} else if (res == 0) {
		peer_lost(t, p, 0);
	} else if (res != -ENOBUFS) {
		peer_lost(t, p, -res);
	}
	if (!pp->recv_armed && !pp->gone && res != 0)
		arm_recv(t, p);
}

static void on_send(struct tcp_net *t, uint32_t p, int res)
{
	struct tcp_peer *pp = &t->peer[p];
	if (res < 0 && res != -EINTR && res != -EAGAIN) {
		send_done(t, pp);
		peer_lost(t, p, -res);
		return;
	}
	if (res > 0) {
		pp->fly_off += (size_t)res;
		pp->sent += (uint64_t)res;
	}
	if (pp->gone) {
		send_done(t, pp);
		return;
	}
	if (pp->fly_off < buf_bytes(&pp->fly)) { /* short send: the rest */
		start_send(t, p);
		return;
	}
	send_done(t, pp);
	if (pp->pend.len)
		start_send(t, p);
}

/* Handles completions until none is left or `budget` messages went out. */
static void reap(struct tcp_net *t, unsigned budget)
{
	while (t->delivered < budget) {
		struct io_uring_cqe *cqe;
		unsigned head;
		io_uring_for_each_cqe(&t->ring, head, cqe) break;
		if (!cqe)
			break;
		uint64_t ud = cqe->user_data;
		int res = cqe->res;
		unsigned flags = cqe->flags;
		io_uring_cq_advance(&t->ring, 1);
		uint32_t p = (uint32_t)ud;
		switch (ud >> 32) {
		case UD_RECV:
			on_recv(t, p, res, flags);
			break;
		case UD_SEND:
			on_send(t, p, res);
			break;
		case UD_WAKE:
			t->efd_armed = false;
			break;
		}
	}
}

/* Does the kernel hold completions that only io_uring_enter posts? */
static inline bool kernel_has_work(struct tcp_net *t)
{
	return t->defer &&
	       (IO_URING_READ_ONCE(*t->ring.sq.kflags) & IORING_SQ_TASKRUN);
}

/*
 * Receives what peer p's stream places next (the rest of a block payload,
 * its padding, the next header: wire_stream_direct) straight from the
 * socket, until the socket runs dry, the job ends, `budget` messages went
 * out or DIRECT_MAX bytes came (no more than the receive buffers hold: the
 * rest of the SU's work waits no longer than on the copying path). Returns
 * whether it stopped with more to receive that way. SU thread, from
 * direct_pass only.
 */
static bool recv_direct(struct tcp_net *t, uint32_t p, unsigned budget)
{
	struct tcp_peer *pp = &t->peer[p];
	struct iovec iov[2];
	size_t got = 0;
	while (t->delivered < budget && got < DIRECT_MAX && !t->ending &&
	       wire_stream_direct(&pp->in, DIRECT_MIN, iov)) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
		size_t want = iov[0].iov_len + iov[1].iov_len;
		ssize_t k = recvmsg(pp->fd, &m, MSG_DONTWAIT);
		if (k <= 0) {
			if (k == 0 || (errno != EAGAIN && errno != EINTR))
				peer_lost(t, p, k ? errno : 0);
			return false;
		}
		const char *bad = wire_stream_direct_done(
		    &pp->in, (size_t)k, on_message, t, &t->delivered);
		if (bad)
			earth_fatal("message from node %u rejected: field %s",
				    p, bad);
		bye_check(t, pp, p);
		if ((size_t)k < want)
			return false;
		got += (size_t)k;
	}
	return wire_stream_direct(&pp->in, DIRECT_MIN, iov) != 0;
}

/*
 * Block payloads straight into place, on a DEFER_TASKRUN ring: for each
 * peer whose bytes came lately, or every peer when `arrived` (the kernel
 * has task work: something came). The invariant that keeps each stream in
 * order: a direct receive happens only when no completion carrying a
 * peer's bytes waits unhandled, that is when the CQ is empty and has not
 * overflowed, with no io_uring_enter between that check and the receive.
 * It holds because with DEFER_TASKRUN the kernel reads a socket for the
 * multishot receive only inside this thread's io_uring_enter (its retries
 * are task work that only GETEVENTS runs; liburing 2.3's submit asks for
 * GETEVENTS whenever IORING_SQ_TASKRUN is up) and posts what it read
 * before that call returns: the socket then holds the stream's next bytes,
 * and the multishot receive later finds them gone (-EAGAIN: it stays
 * armed and posts nothing) or the bytes after them. Without DEFER_TASKRUN
 * task work runs at any system call's return: no direct receive there.
 * SU thread.
 */
static void direct_pass(struct tcp_net *t, bool arrived, unsigned budget)
{
	if ((!arrived && !t->flowing) || !t->defer || t->ending ||
	    io_uring_cq_ready(&t->ring) ||
	    (IO_URING_READ_ONCE(*t->ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW))
		return;
	t->flowing = false;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (p == t->base.self || pp->gone || (!arrived && !pp->flowing))
			continue;
		pp->flowing = recv_direct(t, p, budget);
		t->flowing |= pp->flowing;
	}
}

static unsigned tcp_poll(struct net *nt, void *ctx, net_deliver_fn deliver,
			 unsigned budget)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	ensure_ring(t);
	if (q_unlikely(t->bye_deadline) && !t->ending &&
	    now_ns() > t->bye_deadline)
		bye_overdue(t);
	t->ctx = ctx;
	t->deliver = deliver;
	t->delivered = 0;
	/* Before the kernel's receives take what came into buffers. A flag
	 * raised after this look waits for the next poll, which receives
	 * directly first too. */
	bool tw = kernel_has_work(t);
	direct_pass(t, tw, budget);
	bool every = q_unlikely(++t->polls % EVENTS_EVERY == 0);
	if (every && t->base.sends_out)
		stall_check(t);
	if (t->need_submit || tw || every) {
		if (t->defer) {
			t->need_submit = false;
			t->events_calls++;
			int r = io_uring_submit_and_get_events(&t->ring);
			if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
				earth_fatal("tcp transport: io_uring_enter: %s",
					    strerror(-r));
		} else {
			submit(t);
		}
	}
	if (io_uring_cq_ready(&t->ring))
		reap(t, budget);
	submit(t); /* re-armed receives, follow-up sends */
	/* The rest of payloads whose first bytes these completions held. */
	direct_pass(t, false, budget);
	return t->delivered;
}

static bool tcp_pending(struct net *nt)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	return t->ring_ok &&
	       (io_uring_cq_ready(&t->ring) || kernel_has_work(t));
}

/* After the end: send what is queued (5 s at most), dropping what comes. */
static void end_drain(struct tcp_net *t)
{
	uint64_t deadline = 0;
	for (;;) {
		bool busy = false;
		for (uint32_t p = 0; p < t->base.nodes; p++) {
			struct tcp_peer *pp = &t->peer[p];
			if (p == t->base.self || pp->gone)
				continue;
			if (!pp->sending && pp->pend.len)
				start_send(t, p);
			busy |= pp->sending;
		}
		if (!busy)
			return;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t now =
		    (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (!deadline)
			deadline = now + END_DRAIN_NS;
		if (now > deadline) {
			fprintf(stderr,
				"earth: node %u: tcp transport: could "
				"not send everything at the end within "
				"5 s\n",
				t->base.self);
			return;
		}
		struct __kernel_timespec to = {0, 100000000};
		struct io_uring_cqe *cqe;
		t->need_submit = false;
		io_uring_submit_and_wait_timeout(&t->ring, &cqe, 1, &to, NULL);
		t->delivered = 0;
		reap(t, ~0u);
	}
}

static void tcp_flush(struct net *nt)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	ensure_ring(t);
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (pp->pend.len && !pp->sending && !pp->gone &&
		    p != t->base.self)
			start_send(t, p);
	}
	submit(t);
	if (q_unlikely(t->ending))
		end_drain(t);
}

/* net_ops.blk_bytes: the SU thread, or any once it ended. */
static void tcp_blk_bytes(struct net *nt, struct net_blk_bytes *b)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	memset(b, 0, sizeof(*b));
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		b->recv_direct += t->peer[p].in.direct;
		b->recv_copied += t->peer[p].in.copied;
	}
	b->sent_ref = t->sent_ref;
	b->sent_copied = t->sent_copied;
}

/* ---- sleeping and waking the SU ---- */

static _Atomic uint32_t *tcp_su_word(struct net *nt)
{
	return &((struct tcp_net *)nt)->su_word;
}

/* SU thread, from su_try_sleep (via earth_futex_wait): block in the ring
 * until a completion, a wake through the eventfd included. */
static void tcp_wait(struct net *nt, _Atomic uint32_t *word, uint32_t expected)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	ensure_ring(t);
	if (!t->efd_armed) {
		struct io_uring_sqe *sqe = get_sqe(t);
		io_uring_prep_read(sqe, t->efd, &t->efd_val, sizeof(t->efd_val),
				   0);
		io_uring_sqe_set_data64(sqe, UD(UD_WAKE, 0));
		t->efd_armed = true;
	}
	/* A waker stores the word before it writes the eventfd: seeing it
	 * changed here, or the eventfd readable in the ring, is enough. */
	if (atomic_load_explicit(word, memory_order_seq_cst) != expected) {
		submit(t);
		return;
	}
	t->need_submit = false;
	t->events_calls++;
	if (t->base.sends_out)
		stall_check(t);
	if ((q_unlikely(t->bye_deadline) && !t->ending) || t->base.sends_out) {
		/* Wake by the deadline to name the peer (tcp_poll), and every
		 * second while sends are in flight (stall_check). */
		uint64_t now = now_ns();
		uint64_t left = 1000000000u;
		if (t->bye_deadline && !t->ending)
			left =
			    t->bye_deadline > now ? t->bye_deadline - now : 0;
		if (t->base.sends_out && left > 1000000000u)
			left = 1000000000u;
		struct __kernel_timespec ts = {
		    .tv_sec = (long long)(left / 1000000000u),
		    .tv_nsec = (long long)(left % 1000000000u)};
		struct io_uring_cqe *cqe;
		io_uring_submit_and_wait_timeout(&t->ring, &cqe, 1, &ts, NULL);
		return;
	}
	io_uring_submit_and_wait(&t->ring, 1);
}

/* Any thread: the SU's word was just set to running. */
static void tcp_wake(struct net *nt)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	uint64_t one = 1;
	ssize_t r = write(t->efd, &one, sizeof(one));
	(void)r; /* EAGAIN: the counter is full, so the SU wakes anyway */
}

/* ---- the end (earth_run thread, after the SU thread ended) ---- */

static void tcp_fini(struct net *nt)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	uint32_t self = t->base.self, nodes = t->base.nodes;
	if (t->ring_ok)
		io_uring_queue_exit(&t->ring);
	/* A clean end: BYE, half-close, read to EOF (so that closing does
	 * not reset a connection with data still unread), 2 s at most. */
	struct pollfd *pf = calloc(nodes, sizeof(*pf));
	int npf = 0;
	for (uint32_t p = 0; p < nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (p == self || pp->fd < 0)
			continue;
		if (t->ending && !pp->gone) {
			struct wire_hdr bye;
			memset(&bye, 0, sizeof(bye));
			bye.magic = WIRE_BYE_MAGIC;
			bye.version = WIRE_VERSION;
			bye.src = (uint16_t)self;
			struct timeval tv = {1, 0};
			setsockopt(pp->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				   sizeof(tv));
			ssize_t r =
			    send(pp->fd, &bye, sizeof(bye), MSG_NOSIGNAL);
			(void)r;
			shutdown(pp->fd, SHUT_WR);
			if (pf)
				pf[npf++] = (struct pollfd){pp->fd, POLLIN, 0};
		}
	}
	struct timespec t0, tn;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char sink[4096];
	while (npf > 0) {
		clock_gettime(CLOCK_MONOTONIC, &tn);
		long ms = 2000 - ((tn.tv_sec - t0.tv_sec) * 1000 +
				  (tn.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0 || poll(pf, (nfds_t)npf, (int)ms) <= 0)
			break;
		for (int i = 0; i < npf; i++) {
			if (!pf[i].revents)
				continue;
			ssize_t r =
			    recv(pf[i].fd, sink, sizeof(sink), MSG_DONTWAIT);
			if (r == 0 ||
			    (r < 0 && errno != EAGAIN && errno != EINTR)) {
				pf[i--] = pf[--npf];
			}
		}
	}
	free(pf);
	for (uint32_t p = 0; p < nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (pp->fd >= 0)
			close(pp->fd);
		free(pp->pend.p);
		free(pp->fly.p);
		free(pp->pend.ext);
		free(pp->fly.ext);
		wire_stream_fini(&pp->in);
	}
	if (t->br && t->br != MAP_FAILED)
		munmap(t->br, BUF_COUNT * sizeof(struct io_uring_buf));
	if (t->bufs && t->bufs != MAP_FAILED)
		munmap(t->bufs, (size_t)BUF_COUNT * BUF_SIZE);
	if (t->efd >= 0)
		close(t->efd);
	free(t->peer);
	free(t);
}

/* Single-interrupt node (node/irq.c): each peer's socket raises sig on
 * thread tid when data arrives (O_ASYNC, F_SETSIG, F_SETOWN_EX); the
 * kernel falls back to SIGIO when the real-time queue is full. tid 0
 * turns it off. The node's thread. */
static void tcp_irq(struct net *nt, int pid, int tid, int sig)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	(void)pid;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct tcp_peer *pp = &t->peer[p];
		if (p == t->base.self || pp->gone || pp->fd < 0)
			continue;
		int fl = fcntl(pp->fd, F_GETFL);
		if (fl < 0)
			continue;
		if (tid > 0) {
			struct f_owner_ex own = {F_OWNER_TID, tid};
			if (fcntl(pp->fd, F_SETSIG, sig) != 0 ||
			    fcntl(pp->fd, F_SETOWN_EX, &own) != 0 ||
			    fcntl(pp->fd, F_SETFL, fl | O_ASYNC) != 0)
				earth_fatal("tcp transport: cannot make the "
					    "socket of node %u raise a signal: "
					    "%s",
					    p, strerror(errno));
		} else {
			fcntl(pp->fd, F_SETFL, fl & ~O_ASYNC);
		}
	}
}

static const struct net_ops tcp_ops = {
    .name = "tcp",
    .send = tcp_send,
    .send_ref = tcp_send_ref,
    .flush = tcp_flush,
    .poll = tcp_poll,
    .pending = tcp_pending,
    .su_word = tcp_su_word,
    .fini = tcp_fini,
    .wait = tcp_wait,
    .wake = tcp_wake,
    .irq = tcp_irq,
    .blk_bytes = tcp_blk_bytes,
};

/* ---- from the rendezvous (earth_run thread) ---- */

struct net *tcp_data_new(uint32_t self, uint32_t nodes)
{
	struct tcp_net *t = calloc(1, sizeof(*t));
	if (t)
		t->peer = calloc(nodes, sizeof(*t->peer));
	if (!t || !t->peer) {
		free(t);
		return NULL;
	}
	t->efd = -1;
	bool ok = true;
	for (uint32_t p = 0; p < nodes; p++) {
		t->peer[p].fd = -1;
		if (p != self &&
		    wire_stream_init(&t->peer[p].in, p, self, nodes))
			ok = false;
		t->peer[p].in.place = tcp_place;
	}
	t->base.ops = &tcp_ops;
	t->base.self = self;
	t->base.nodes = nodes;
	/* BLK_DATA payloads go straight to their destination: large chunks
	 * cost no buffer (other messages stay below WIRE_MAX_PAYLOAD). */
	t->base.max_payload = BLK_CHUNK;
	t->stall_limit_ns =
	    (uint64_t)(earth_setting_real(EARTH_SET_PEER_STALL_S) * 1e9);
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!ok || t->efd < 0) {
		tcp_fini(&t->base);
		return NULL;
	}
	return &t->base;
}

/*
 * A peer whose host or link went away sends no FIN or RST: the kernel
 * finds it within the stall limit. With something unacknowledged, TCP
 * gives up after TCP_USER_TIMEOUT; with nothing to send, keepalive probes
 * (after a quiet half of the limit, then every second; the user timeout
 * decides when unanswered probes end the connection). Both are the
 * kernel's: an idle node keeps sleeping. The receive then completes with
 * ETIMEDOUT (peer_lost). A shorter outage is survived: with few segments
 * in flight, retransmissions do not back off for their first six tries
 * (TCP_THIN_LINEAR_TIMEOUTS), so a link back after 2-3 s is used within
 * a second instead of at the next doubled timeout.
 */
static void link_timeouts(int fd, uint64_t stall_ns)
{
	uint64_t ms = stall_ns / 1000000u;
	unsigned ut = ms < 1 ? 1 : ms > INT32_MAX ? INT32_MAX : (unsigned)ms;
	int one = 1, intvl = 1, cnt = (int)(ut / 1000u) + 1, proto = 0;
	socklen_t pl = sizeof(proto);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &pl) ||
	    proto != IPPROTO_TCP)
		return; /* a socket pair made by a test */
	int idle = (int)(ut / 2000u);
	idle = idle < 1 ? 1 : idle > 32767 ? 32767 : idle;
	cnt = cnt > 127 ? 127 : cnt;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS, &one,
		       sizeof(one)))
		earth_fatal("tcp transport: setting a connection's keepalive "
			    "and timeout: %s",
			    strerror(errno));
}

void tcp_data_start(struct net *nt, const int *fd)
{
	struct tcp_net *t = (struct tcp_net *)nt;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		t->peer[p].fd = fd[p];
		if (fd[p] >= 0)
			link_timeouts(fd[p], t->stall_limit_ns);
	}
}
