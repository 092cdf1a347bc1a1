/* SPDX-License-Identifier: MIT */
/*
 * emu.c - the emulated network (emu.h): a decorator around the transport
 * net_open chose. send() copies the message into a per-peer FIFO stamped
 * with the time it may leave: the peer's link is busy for (header +
 * payload) bytes at the set bandwidth after the previous message, then the
 * added latency runs. poll() and flush() hand every message whose time has
 * come to the real transport, in order, stopping at the first one it has
 * no room for. While anything waits, pending() says so: the SU keeps
 * polling instead of sleeping. W_SHUTDOWN ends the job, so from then on
 * nothing is held back, nor once the SU ends (end); fini, on another
 * thread, sends nothing. Only the SU thread sends, polls and flushes (net.h).
 */
#define EARTH_INTERNAL 1
#include "net/emu.h"
#include "base/settings.h"

#include <errno.h>
#include <math.h> /* isfinite, a macro: no libm */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct emu_msg {
	struct emu_msg *next;
	uint64_t due_ns; /* CLOCK_MONOTONIC time it may go to the transport */
	struct wire_hdr h;
	unsigned char payload[];
};

struct emu_peer {
	struct emu_msg *head, *tail;
	uint64_t link_free_ns; /* when this peer's emulated link is idle */
};

struct emu_net {
	struct net base;
	struct net_ops ops; /* inner's optional ops decide which we offer */
	struct net *inner;
	uint64_t lat_ns;
	double ns_per_byte; /* 0: unlimited bandwidth */
	struct emu_peer *peer;
	uint64_t held; /* messages waiting in the FIFOs */
	bool draining; /* W_SHUTDOWN sent: release everything at once */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int emu_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload)
{
	struct emu_net *e = (struct emu_net *)t;
	struct emu_msg *m = malloc(sizeof(*m) + h->len);
	if (!m)
		return -EAGAIN; /* the SU keeps it and retries */
	uint64_t now = now_ns();
	struct emu_peer *p = &e->peer[peer];
	uint64_t start = p->link_free_ns > now ? p->link_free_ns : now;
	uint64_t wire =
	    (uint64_t)((double)(sizeof(*h) + h->len) * e->ns_per_byte + 0.5);
	p->link_free_ns = start + wire;
	m->due_ns = p->link_free_ns + e->lat_ns;
	m->next = NULL;
	m->h = *h;
	if (h->len)
		memcpy(m->payload, payload, h->len);
	if (p->tail)
		p->tail->next = m;
	else
		p->head = m;
	p->tail = m;
	e->held++;
	if (h->type == W_SHUTDOWN)
		e->draining = true;
	return 0;
}

/* Hands due messages to the transport; returns how many went. */
static unsigned release(struct emu_net *e)
{
	if (!e->held)
		return 0;
	uint64_t now = e->draining ? UINT64_MAX : now_ns();
	unsigned went = 0;
	for (uint32_t q = 0; q < e->base.nodes; q++) {
		struct emu_peer *p = &e->peer[q];
		struct emu_msg *m;
		while ((m = p->head) && m->due_ns <= now) {
			if (e->inner->ops->send(e->inner, q, &m->h, m->payload))
				break; /* no room: keep it, and the order */
			p->head = m->next;
			if (!p->head)
				p->tail = NULL;
			free(m);
			e->held--;
			went++;
		}
	}
	return went;
}

static void emu_flush(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	release(e);
	e->inner->ops->flush(e->inner);
}

static unsigned emu_poll(struct net *t, void *ctx, net_deliver_fn deliver,
			 unsigned budget)
{
	struct emu_net *e = (struct emu_net *)t;
	if (release(e))
		e->inner->ops->flush(e->inner);
	e->inner->place = t->place;
	return e->inner->ops->poll(e->inner, ctx, deliver, budget);
}

static bool emu_pending(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	return e->held || e->inner->ops->pending(e->inner);
}

static _Atomic uint32_t *emu_su_word(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	return e->inner->ops->su_word(e->inner);
}

static void emu_wait(struct net *t, _Atomic uint32_t *word, uint32_t expected)
{
	struct emu_net *e = (struct emu_net *)t;
	e->inner->ops->wait(e->inner, word, expected);
}

static void emu_wake(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	e->inner->ops->wake(e->inner);
}

static void emu_blk_bytes(struct net *t, struct net_blk_bytes *b)
{
	struct emu_net *e = (struct emu_net *)t;
	e->inner->ops->blk_bytes(e->inner, b);
}

static void emu_describe(struct net *t, char *buf, size_t len)
{
	struct emu_net *e = (struct emu_net *)t;
	e->inner->ops->describe(e->inner, buf, len);
}

/* The SU ends: the job is over, so nothing waits for its time. */
static void emu_end(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	e->draining = true;
	release(e);
	e->inner->ops->flush(e->inner);
	if (e->inner->ops->end)
		e->inner->ops->end(e->inner);
}

/* Not the SU's thread: what is still held (the inner transport had no
 * room before the SU's end gave up) is dropped, never sent from here. */
static void emu_fini(struct net *t)
{
	struct emu_net *e = (struct emu_net *)t;
	for (uint32_t q = 0; q < e->base.nodes; q++) {
		struct emu_msg *m = e->peer[q].head;
		while (m) {
			struct emu_msg *next = m->next;
			free(m);
			m = next;
		}
	}
	e->inner->ops->fini(e->inner);
	free(e->peer);
	free(e);
}

struct net *net_emu_wrap(struct net *inner, uint64_t lat_ns, double bw_mbps)
{
	struct emu_net *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->peer = calloc(inner->nodes, sizeof(*e->peer));
	if (!e->peer) {
		free(e);
		return NULL;
	}
	e->inner = inner;
	e->lat_ns = lat_ns;
	e->ns_per_byte = bw_mbps > 0 ? 1000.0 / bw_mbps : 0;
	e->ops = (struct net_ops){
	    .name = "emulated",
	    .send = emu_send,
	    .flush = emu_flush,
	    .poll = emu_poll,
	    .pending = emu_pending,
	    .su_word = emu_su_word,
	    .fini = emu_fini,
	    .end = emu_end,
	    .wait = inner->ops->wait ? emu_wait : NULL,
	    .wake = inner->ops->wake ? emu_wake : NULL,
	    .blk_bytes = inner->ops->blk_bytes ? emu_blk_bytes : NULL,
	    .describe = inner->ops->describe ? emu_describe : NULL,
	};
	e->base.ops = &e->ops;
	e->base.self = inner->self;
	e->base.nodes = inner->nodes;
	e->base.max_payload = inner->max_payload;
	return &e->base;
}

/* ---- settings ---- */

static char emu_err[256];

int net_emu_config(uint64_t *lat_ns, double *bw_mbps, const char **err)
{
	*lat_ns = 0;
	*bw_mbps = 0;
	/* Read again here, through the table (base/settings.c), so that the
	 * emulation can be configured without a node (tests/t_netemu.c). */
	_Static_assert(EMU_MAX_LATENCY_NS == 10000000000ull,
		       "EARTH_NET_LATENCY_NS's range");
	if (earth_setting_load(EARTH_SET_NET_LATENCY_NS, emu_err,
			       sizeof(emu_err)) ||
	    earth_setting_load(EARTH_SET_NET_BW_MBPS, emu_err,
			       sizeof(emu_err))) {
		*err = emu_err;
		return -1;
	}
	*lat_ns = earth_setting_u64(EARTH_SET_NET_LATENCY_NS);
	*bw_mbps = earth_setting_real(EARTH_SET_NET_BW_MBPS);
	return 0;
}

struct net *net_emu_from_env(struct net *inner, const char **err)
{
	if (!inner)
		return NULL;
	uint64_t lat;
	double bw;
	if (net_emu_config(&lat, &bw, err)) {
		inner->ops->fini(inner);
		return NULL;
	}
	if (!lat && bw == 0)
		return inner;
	struct net *e = net_emu_wrap(inner, lat, bw);
	if (!e) {
		inner->ops->fini(inner);
		*err = "out of memory setting up the emulated network "
		       "(EARTH_NET_LATENCY_NS, EARTH_NET_BW_MBPS)";
	}
	return e;
}
