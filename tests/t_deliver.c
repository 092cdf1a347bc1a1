/* SPDX-License-Identifier: MIT */
/*
 * t_deliver.c - messages from a peer that passed wire_check, handled by
 * su_net_deliver against a node's state set up by hand (node 1 of 2, no
 * threads, a transport that takes every message): the cases
 * tests/fuzz/fuzz_deliver.c found, each rejected with status 70 where it
 * had read past the SU's per-peer arrays or overflowed a count.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include "dsm/alloc.h"
#include "dsm/pt.h"
#include "gas/registry.h"
#include "su/dsm_msg.h"
#include "su/su.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool send_full; /* the transport has no room (the peer reads none) */

static int take_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		     const void *payload)
{
	(void)t, (void)h, (void)payload;
	if (peer >= 2)
		abort(); /* a message to a node the job does not have */
	return send_full ? -EAGAIN : 0;
}

static const struct net_ops ops = {.name = "test", .send = take_send};
static struct net net = {
    .ops = &ops, .self = 1, .nodes = 2, .max_payload = WIRE_MAX_PAYLOAD};
static long mem[64] __attribute__((aligned(64))); /* registered */

static void fiber(void *f)
{
	(void)f;
}

static void node_setup(void)
{
	struct earth_node *n = &earth_node_g;
	n->id = 1;
	n->num_nodes = 2;
	n->net = &net;
	su_g.out_head = calloc(2, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(2, sizeof(*su_g.out_tail));
	su_g.owed = calloc(2, sizeof(*su_g.owed));
	su_g.hungry = calloc(2, sizeof(*su_g.hungry));
	su_g.owed_max = 1u << 20;
	n->numa_node = -1;
	cr_assert_eq(unit_links_init(n, Q_MODE_SW, 64), 0);
	cr_assert_eq(su_attach(&su_g, n), 0);
	cr_assert_eq(reg_mem_add(mem, sizeof(mem)), 0);
	reg_fiber_add(fiber);
	*(earth_slot *)(void *)&mem[0] = (earth_slot){1, 1, fiber, mem};
	earth_fatal_set_node(1);
}

static struct wire_hdr from0(enum wire_type t)
{
	struct wire_hdr h = {.magic = WIRE_MAGIC,
			     .version = WIRE_VERSION,
			     .type = (uint8_t)t,
			     .src = 0,
			     .n = 1};
	return h;
}

TestSuite(deliver, .init = node_setup, .timeout = 30);

Test(deliver, good_sync_fires_the_slot)
{
	struct wire_hdr h = from0(W_SYNC);
	h.a = earth_gptr_make(1, &mem[0]).bits;
	cr_assert_null(wire_check(&h, 0, 1, 2));
	su_net_deliver(&earth_node_g, 0, &h, NULL);
	cr_assert_eq(su_g.fibers_ready, 1);
}

/* BLK_DATA, last chunk, whose slot names node 9 of 2: the SYNC for it
 * read su_g.out_head[9] (past the array) and went to a node that does not
 * exist. */
Test(deliver, data_slot_on_a_node_out_of_range_is_rejected,
     .exit_code = EARTH_EXIT_USAGE)
{
	long v = 42;
	struct wire_hdr h = from0(W_BLK_DATA);
	h.flags = WIRE_F_LAST;
	h.len = sizeof(v);
	h.b = (uintptr_t)&mem[8];
	h.a = earth_gptr_make(9, &mem[0]).bits;
	cr_assert_null(wire_check(&h, 0, 1, 2));
	su_net_deliver(&earth_node_g, 0, &h, &v);
}

/* The same through a BLK_REQ whose destination is the receiver itself. */
Test(deliver, move_slot_on_a_node_out_of_range_is_rejected,
     .exit_code = EARTH_EXIT_USAGE)
{
	struct wire_hdr h = from0(W_BLK_REQ);
	h.n = 8;
	h.b = (uintptr_t)&mem[8];
	h.c = earth_gptr_make(1, &mem[16]).bits;
	h.a = earth_gptr_make(200, &mem[0]).bits;
	cr_assert_null(wire_check(&h, 0, 1, 2));
	su_net_deliver(&earth_node_g, 0, &h, NULL);
}

/* INCR of a slot whose count a peer set below 0 (a BLK_DATA over it):
 * INT32_MAX - count overflowed (UBSan) before the check. */
Test(deliver, incr_of_a_negative_count_is_rejected,
     .exit_code = EARTH_EXIT_USAGE)
{
	earth_slot *s = (earth_slot *)(void *)&mem[0];
	s->count = -2000000000;
	struct wire_hdr h = from0(W_INCR);
	h.n = 5;
	h.a = earth_gptr_make(1, s).bits;
	cr_assert_null(wire_check(&h, 0, 1, 2));
	su_net_deliver(&earth_node_g, 0, &h, NULL);
}

/* Shared memory: a peer that keeps fetching a page of this node and reads
 * none of the answers. The pages queued for it count against
 * EARTH_PEER_QUEUE_MB (1 MiB here, 256 pages) like any answer; they did
 * not, and the queue grew without bound. */
Test(deliver, dsm_pages_for_a_peer_that_does_not_read_are_bounded,
     .exit_code = EARTH_EXIT_USAGE)
{
	struct earth_node *n = &earth_node_g;
	char err[256];
	cr_assert_eq(dsm_region_map(&dsm_g.region, NULL, 16 * 4096, 4096,
				    DSM_FAULTS_AUTO, err, sizeof(err)),
		     0, "%s", err);
	dsm_g.self = 1;
	dsm_g.nodes = 2;
	n->dsm_fiber = fiber;
	n->dsm_on = true;
	cr_assert_eq(su_dsm_open(n), 0);
	/* Node 0 places every page on node 1 (this node). */
	struct dsm_placement pl = {0, 16, DSM_PLACE_NODE, 1, 4096};
	struct wire_hdr h = from0(W_DSM);
	h.n = M_PLACED;
	h.len = sizeof(pl);
	cr_assert_null(wire_check(&h, 0, 1, 2));
	su_net_deliver(n, 0, &h, &pl);
	send_full = true;
	for (int i = 0; i < 4096; i++) {
		h = from0(W_DSM);
		h.n = M_FETCH;
		h.a = (uint64_t)(i % 16);
		su_net_deliver(n, 0, &h, NULL);
	}
	cr_assert_fail("4096 pages (16 MiB) queued for a peer that reads none");
}
