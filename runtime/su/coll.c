/* SPDX-License-Identifier: MIT */
/*
 * coll.c - barrier and allreduce over the nodes of a job, performed by
 * the SUs on a binary tree rooted at node 0 (children of i: 2i+1, 2i+2):
 * a node combines its own value with its children's, sends the result up,
 * and the root's final value comes back down; each node writes it and
 * signals its slot. One collective is in progress per node at a time, so
 * the collectives are numbered and every message is checked against the
 * number, kind and type this node expects.
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "su/su.h"

#include <stdio.h>
#include <string.h>

enum { COLL_BARRIER = 0, COLL_INT = 1, COLL_LONG = 2, COLL_DOUBLE = 3 };

static const char *type_name(unsigned t)
{
	static const char *const n[] = {"barrier", "int", "long", "double"};
	return t < 4 ? n[t] : "?";
}

static uint64_t combine(unsigned type, unsigned op, uint64_t a, uint64_t b)
{
	if (type == COLL_BARRIER)
		return 0;
	if (type == COLL_DOUBLE) {
		double x, y, r;
		memcpy(&x, &a, 8);
		memcpy(&y, &b, 8);
		r = op == EARTH_SUM   ? x + y
		    : op == EARTH_MIN ? (x < y ? x : y)
				      : (x > y ? x : y);
		memcpy(&a, &r, 8);
		return a;
	}
	int64_t x = (int64_t)a, y = (int64_t)b, r;
	if (type == COLL_INT) {
		x = (int32_t)x;
		y = (int32_t)y;
	}
	if (op == EARTH_SUM)
		r = (int64_t)((uint64_t)x + (uint64_t)y);
	else
		r = op == EARTH_MIN ? (x < y ? x : y) : (x > y ? x : y);
	if (type == COLL_INT)
		r = (int32_t)r;
	return (uint64_t)r;
}

static unsigned nkids(const struct earth_node *n)
{
	uint64_t c1 = 2ull * n->id + 1;
	return (c1 < n->num_nodes) + (c1 + 1 < n->num_nodes);
}

/* First contribution fixes kind and type; later ones must agree. */
static void join(unsigned type, unsigned op, uint64_t value, const char *who)
{
	struct su_coll *c = &su_g.coll;
	if (!c->started) {
		c->started = true;
		c->type = (uint8_t)type;
		c->op = (uint8_t)op;
		c->acc = value;
		return;
	}
	if (c->type != type || c->op != op)
		earth_fatal("collective %u: %s posted a %s (op %u) where this "
			    "node has a %s (op %u): every node must post the "
			    "same collectives in the same order",
			    c->seq, who, type_name(type), op,
			    type_name(c->type), c->op);
	c->acc = combine(type, op, c->acc, value);
}

static void finish(struct earth_node *n, uint64_t value)
{
	struct su_coll *c = &su_g.coll;
	if (c->type == COLL_INT) {
		int32_t v = (int32_t)value;
		memcpy((void *)(uintptr_t)c->result, &v, 4);
	} else if (c->type != COLL_BARRIER) {
		memcpy((void *)(uintptr_t)c->result, &value, 8);
	}
	uint32_t seq = c->seq;
	for (uint64_t k = 2ull * n->id + 1;
	     k < n->num_nodes && k <= 2ull * n->id + 2; k++) {
		struct wire_hdr h = {.type = W_COLL_DOWN,
				     .n = (int32_t)seq,
				     .b = value,
				     .flags = (uint16_t)((c->type | c->op << 4)
							 << WIRE_F_COLL_SHIFT)};
		su_net_send(n, (uint32_t)k, &h, NULL);
	}
	earth_slot *slot = c->slot;
	memset(c, 0, sizeof(*c));
	c->seq = seq + 1;
	if (acct_on)
		acct_completed(&acct_shared.colls_done);
	su_slot_signal(&su_g, slot, "COLLECTIVE");
}

/* Everything below this node is in: go up, or finish at the root. */
static void progress(struct earth_node *n)
{
	struct su_coll *c = &su_g.coll;
	if (!c->local_in || c->kids_in < nkids(n) || c->sent_up)
		return;
	if (n->id == 0) {
		finish(n, c->acc);
		return;
	}
	struct wire_hdr h = {
	    .type = W_COLL_UP,
	    .n = (int32_t)c->seq,
	    .b = c->acc,
	    .flags = (uint16_t)((c->type | c->op << 4) << WIRE_F_COLL_SHIFT)};
	su_net_send(n, (n->id - 1) / 2, &h, NULL);
	c->sent_up = true;
}

void su_coll_post(struct earth_node *n, const struct su_req *r)
{
	struct su_coll *c = &su_g.coll;
	if (c->local_in)
		earth_fatal(
		    "collective %u: this node posted a second collective "
		    "before the first completed; wait for its slot",
		    c->seq);
	join(r->size, (unsigned)r->n, r->a, "this node");
	c->local_in = true;
	c->result = r->b;
	c->slot = su_slot_resolve(n, r, "COLLECTIVE");
	progress(n);
}

void su_coll_receive(struct earth_node *n, uint32_t from,
		     const struct wire_hdr *h)
{
	struct su_coll *c = &su_g.coll;
	unsigned tag = h->flags >> WIRE_F_COLL_SHIFT;
	unsigned type = tag & 0xf, op = tag >> 4;
	if ((uint32_t)h->n != c->seq || type > COLL_DOUBLE ||
	    (type != COLL_BARRIER && (op < EARTH_SUM || op > EARTH_MAX)))
		earth_fatal("message %s from node %u rejected: field n/flags "
			    "(collective %d of type %u, this node is at "
			    "collective %u)",
			    wire_type_name(h->type), from, h->n, type, c->seq);
	if (h->type == W_COLL_UP) {
		if (from != 2 * n->id + 1 && from != 2 * n->id + 2)
			earth_fatal("message COLL_UP from node %u rejected: "
				    "field src (not a child of node %u)",
				    from, n->id);
		char who[32];
		snprintf(who, sizeof(who), "node %u", from);
		join(type, op, h->b, who);
		c->kids_in++;
		progress(n);
		return;
	}
	if (n->id == 0 || from != (n->id - 1) / 2 || !c->sent_up)
		earth_fatal(
		    "message COLL_DOWN from node %u rejected: field src "
		    "(not this node's parent, or nothing was sent up)",
		    from);
	if (type != c->type || op != c->op)
		earth_fatal("message COLL_DOWN from node %u rejected: field "
			    "flags (kind differs from this node's)",
			    from);
	finish(n, h->b);
}
