/* SPDX-License-Identifier: MIT */
/*
 * t_backlog.c - a node whose EU is behind takes no more messages from its
 * peers: while more than EARTH_READY_BACKLOG_MAX ready fibers wait beyond
 * the ready ring (INVOKEs and TOKENs from peers each add one, with their
 * arguments), the SU leaves the transport unpolled, so a peer that sends
 * faster than the EU can run its work fills its own transport instead of
 * this node's memory. White-box: an SU with a transport that counts its
 * polls, stepped by hand (no threads).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "node/node.h"

TestSuite(backlog, .timeout = 30);

static unsigned polls;

static int fake_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		     const void *payload)
{
	(void)t, (void)peer, (void)h, (void)payload;
	return 0;
}
static void fake_flush(struct net *t)
{
	(void)t;
}
static unsigned fake_poll(struct net *t, void *ctx, net_deliver_fn deliver,
			  unsigned budget)
{
	(void)t, (void)ctx, (void)deliver, (void)budget;
	polls++;
	return 0;
}
static bool fake_pending(struct net *t)
{
	(void)t;
	return false;
}
static _Atomic uint32_t fake_word;
static _Atomic uint32_t *fake_su_word(struct net *t)
{
	(void)t;
	return &fake_word;
}
static void fake_fini(struct net *t)
{
	(void)t;
}
static const struct net_ops fake_ops = {
    .name = "fake",
    .send = fake_send,
    .flush = fake_flush,
    .poll = fake_poll,
    .pending = fake_pending,
    .su_word = fake_su_word,
    .fini = fake_fini,
};

static void nothing(void *frame)
{
	(void)frame;
}

Test(backlog, a_full_backlog_stops_taking_messages)
{
	struct earth_node *n = &earth_node_g;
	static struct net fake = {.ops = &fake_ops, .self = 0, .nodes = 2};
	memset(n, 0, sizeof(*n));
	memset(&su_g, 0, sizeof(su_g));
	n->num_nodes = 2;
	n->net = &fake;
	n->su_wordp = &n->su_word;
	n->numa_node = -1;
	cr_assert_eq(unit_links_init(n, Q_MODE_SW, 8), 0);
	cr_assert_eq(su_attach(&su_g, n), 0);
	cr_assert_eq(q_mpsc_init(&n->inbox, 8), 0);
	su_g.out_head = calloc(2, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(2, sizeof(*su_g.out_tail));
	su_g.owed = calloc(2, sizeof(*su_g.owed));
	su_g.hungry = calloc(2, sizeof(*su_g.hungry));

	/* A short backlog: the transport is polled. */
	su_ready_spill(&su_g, nothing, NULL);
	polls = 0;
	su_step(n, true);
	cr_assert_eq(polls, 1, "polled %u times with 1 fiber waiting", polls);

	/* More than EARTH_READY_BACKLOG_MAX waiting (the ring, 8 slots, is
	 * full): not polled, step after step. */
	for (unsigned i = 0; i < EARTH_READY_BACKLOG_MAX + 64; i++)
		su_ready_spill(&su_g, nothing, NULL);
	polls = 0;
	for (int i = 0; i < 3; i++)
		su_step(n, true);
	cr_assert_eq(polls, 0, "polled %u times with %zu fibers waiting", polls,
		     su_g.eu->rovf_len);

	/* The EU caught up: polled again. */
	su_g.eu->rovf_len = 0;
	su_step(n, true);
	cr_assert_eq(polls, 1, "not polled once the backlog drained");

	free(su_g.out_head);
	free(su_g.out_tail);
	free(su_g.owed);
	free(su_g.hungry);
	su_detach(&su_g);
	unit_links_fini(n);
	q_mpsc_fini(&n->inbox);
}
