/* SPDX-License-Identifier: MIT */
/*
 * fuzz_deliver.c - libFuzzer target for the handling of messages from
 * peers (su_net_deliver in runtime/su/deliver.c, and what it calls: slots,
 * BLK_DATA and BLK_REQ, SYNC and INCR, INVOKE, TOKEN and STEAL, the
 * collectives, SHUTDOWN) against a live node's state, without threads:
 * earth_node_g and su_g as the node sets them up, a small ready ring the
 * harness empties as the EU would, registered memory (an arena) holding
 * armed slots, and a fake transport whose send drops the message or says
 * it has no room (so messages queue, and answers count against
 * EARTH_PEER_QUEUE_MB).
 *
 * Input: one byte picks this node (of 5), then records of 24 bytes, each
 * a message that passed wire_check, from a peer chosen by the record
 * (fields a, b and c mostly point into the arena or at its slots, on this
 * node or another, sometimes raw; the origin a request carries, field c
 * or a BLK_REQ's payload, sometimes one this program's source table
 * names, sometimes raw), or a local action: the EU posts a
 * collective, a token waits here, the EU takes what is ready. A clean
 * rejection (earth_fatal, built with -DEARTH_FATAL_HOOK) longjmps back and
 * ends the input. Must not crash (ASan, UBSan), hang (libFuzzer's
 * -timeout) or grow without bound (-rss_limit_mb); every fiber made ready
 * must be one the harness armed, or the node's own INVOKE and token
 * fibers; every message sent must go to a node of the job.
 *
 *   make fuzz-deliver  (tests/fuzz/module.mk; part of make test with clang-14)
 */
#define EARTH_INTERNAL 1
#include "base/srctab.h"
#include "base/trace.h"
#include "gas/gmem.h"
#include "gas/registry.h"
#include "su/su.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define NODES 5
#define ARENA (64u * 1024u)
#define NSLOTS 16 /* armed slots at the start of the arena, 32 bytes apart */
#define REC 24

#include "fuzz_node.h"

static unsigned char arena[ARENA] __attribute__((aligned(64)));
static jmp_buf fatal_jmp;
static bool sending_full; /* the fake transport has no room */
static unsigned sent;
static unsigned char *cur_payload; /* the message being delivered's */

static void fiber_a(void *f)
{
	(void)f;
}
static void fiber_b(void *f)
{
	(void)f;
}
static void invoke_fiber(void *f)
{
	(void)f;
}
static void token_gone(void *f)
{
	(void)f;
}

/* A source table (base/srctab.h): origins naming fiber_a are read. */
static const struct earth_src_row src_rows[] EARTH_SRC_ROWS = {
    {fiber_a, 0, "f", "0", 0, "f.tc", 3, -1, 0},
    {fiber_a, 0, "f", "0", "GET_SYNC_L", "f.tc", 4, -1, 0},
    {fiber_a, 0, "f", "0", "BLKMOV_RSYNC", "f.tc", 5, -1, 0},
};

struct small_frame {
	long x[4];
};
static void small_entry(void *f)
{
	(void)f;
}
EARTH_THREADED_FUNCTION(tf_small, small_entry, struct small_frame, 16);
EARTH_THREADED_FUNCTION(tf_noargs, small_entry, struct small_frame, 0);
EARTH_THREADED_FUNCTION(tf_big, small_entry, struct small_frame, 8);

/* Token frames: a frame header before each, as eu/frame.c lays out. */
static struct {
	struct frame_hdr h;
	struct small_frame f;
} token_frames[4];

static void on_fatal(const char *msg)
{
	(void)msg;
	longjmp(fatal_jmp, 1);
}

static int fake_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		     const void *payload)
{
	(void)t;
	if (peer >= NODES || peer == earth_node_g.id ||
	    h->magic != WIRE_MAGIC || (h->len && !payload))
		__builtin_trap();
	if (sending_full)
		return -EAGAIN;
	/* Touch the payload, as a transport copying it would. */
	volatile unsigned char sink = 0;
	for (uint32_t i = 0; i < h->len; i += 509)
		sink ^= ((const unsigned char *)payload)[i];
	(void)sink;
	sent++;
	return 0;
}

static const struct net_ops fake_ops = {.name = "fuzz", .send = fake_send};
static struct net fake_net = {
    .ops = &fake_ops, .nodes = NODES, .max_payload = 4096};

/* What the EU does with the ready ring: takes every entry (without
 * running anything), checks it, frees INVOKE and TOKEN buffers. */
static void check_ready(uint64_t fiber, uint64_t frame)
{
	earth_fiber_fn f = (earth_fiber_fn)(uintptr_t)fiber;
	if (f == invoke_fiber) {
		struct eu_invoke_buf *b = (void *)(uintptr_t)frame;
		if (b->fn != &tf_small && b->fn != &tf_noargs &&
		    b->fn != &tf_big)
			__builtin_trap();
		free(b);
		return;
	}
	if (f == token_gone)
		return;
	/* (The frame may be anything: a peer may write a slot's frame
	 * field, docs/architecture.md, "Threat model".) */
	if (f != fiber_a && f != fiber_b)
		__builtin_trap();
}

static void eu_take(void)
{
	struct q_ring *q = &earth_node_g.link[0].ready;
	su_ready_flush();
	struct q_msg *m;
	while ((m = q_ring_peek(q))) {
		struct ready_msg *r = ready_of(m);
		if (r->e[0].fiber == READY_VALUE) {
			if (r->e[0].frame > 8 ||
			    r->e[2].fiber - (uintptr_t)arena >= ARENA)
				__builtin_trap();
			check_ready(r->e[1].fiber, r->e[1].frame);
		} else {
			for (int i = 0; i < READY_PER_MSG && r->e[i].fiber; i++)
				check_ready(r->e[i].fiber, r->e[i].frame);
		}
		q_ring_release(q);
	}
}

static void setup(uint32_t self)
{
	struct earth_node *n = &earth_node_g;
	memset(n, 0, sizeof(*n));
	memset(&su_g, 0, sizeof(su_g));
	n->id = self;
	n->num_nodes = NODES;
	n->invoke_fiber = invoke_fiber;
	n->token_gone_fiber = token_gone;
	fake_net.self = self;
	n->net = &fake_net;
	su_g.out_head = calloc(NODES, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(NODES, sizeof(*su_g.out_tail));
	su_g.owed = calloc(NODES, sizeof(*su_g.owed));
	su_g.hungry = calloc(NODES, sizeof(*su_g.hungry));
	su_g.owed_max = 256u << 10;
	n->link = &link0;
	if (!su_g.out_head || !su_g.out_tail || !su_g.owed || !su_g.hungry ||
	    q_ring_init(&link0.ready, Q_MODE_SW, 16, 0, -1) ||
	    su_attach(&su_g, n) ||
	    deque_init(&link0.tokens, DEQUE_MIN_CAP, true))
		abort();
	memset(arena, 0, sizeof(arena));
	for (unsigned i = 0; i < NSLOTS; i++) {
		earth_slot *s = (earth_slot *)(void *)(arena + 32 * i);
		s->count = 1 + (int32_t)(i % 3);
		s->reset = (int32_t)(i % 4); /* some one-shot */
		s->fiber = i & 1 ? fiber_b : fiber_a;
		s->frame = arena + 4096 + 64 * i;
	}
	for (unsigned i = 0; i < 4; i++)
		token_frames[i].h = (struct frame_hdr){
		    i & 1 ? &tf_small : &tf_noargs, 0, FRAME_LIVE};
	sending_full = false;
}

static void teardown(void)
{
	eu_take();
	const struct su_eu *e0 = su_g.eu;
	for (size_t i = 0; i < e0->rovf_len; i++) {
		struct ready_entry e = e0->rovf[e0->rovf_head + i];
		check_ready((uintptr_t)e.fiber, (uintptr_t)e.frame);
	}
	for (uint32_t p = 0; p < NODES; p++)
		for (struct su_out_msg *m = su_g.out_head[p], *nx; m; m = nx) {
			nx = m->next;
			su_out_free(m);
		}
	free(su_g.out_head);
	free(su_g.out_tail);
	free(su_g.owed);
	free(su_g.hungry);
	su_detach(&su_g);
	deque_free(&link0.tokens);
	q_ring_fini(&link0.ready);
	free(cur_payload);
	cur_payload = NULL;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* An address field: into the arena (often a slot), on node `node`, or
 * raw bits. */
static uint64_t addr_field(uint8_t sel, uint16_t off, uint32_t node,
			   const uint8_t *raw)
{
	switch (sel & 3) {
	case 0:
		return earth_gptr_make(node, arena + 32 * (off % (NSLOTS + 2)))
		    .bits;
	case 1:
		return earth_gptr_make(node, arena + (off % (ARENA + 64))).bits;
	case 2:
		return earth_gptr_make(node, arena + (off & ~7u) % ARENA).bits;
	default:
		return rd64(raw);
	}
}

/* One record: a message from a peer, or a local action. */
static void one(const uint8_t *r)
{
	struct earth_node *n = &earth_node_g;
	uint32_t self = n->id;
	uint8_t kind = r[0];
	sending_full = r[1] & 0x80;
	if (kind >= 240) { /* local actions */
		switch (kind & 3) {
		case 0: {
			eu_take();
			su_net_drain(n);
			return;
		}
		case 1: { /* the EU posts a collective */
			struct su_req q = {
			    .op = SU_OP_COLL,
			    .size = r[2] & 3,
			    .n = 1 + r[3] % 3,
			    .a = rd64(r + 8),
			    .b = (uintptr_t)(arena + 8192 + (r[4] & 7) * 8),
			    .slot = (uintptr_t)(arena + 32 * (r[5] % NSLOTS)),
			};
			su_coll_post(n, &q);
			return;
		}
		case 2: { /* a token waits on the EU's deque (full: none) */
			unsigned i = r[2] % 4;
			if (deque_push(&link0.tokens, &token_frames[i].f))
				su_balance_token_added(n);
			return;
		}
		default: /* the EU runs its newest token; the SU idles */
			(void)deque_pop(&link0.tokens);
			su_balance_idle(n, true);
			return;
		}
	}
	uint32_t from = (self + 1 + r[1] % (NODES - 1)) % NODES;
	struct wire_hdr h = {
	    .magic = WIRE_MAGIC,
	    .version = WIRE_VERSION,
	    .type = (uint8_t)(1 + kind % (W_TYPE_COUNT_ - 1)),
	    .flags = r[2],
	    .src = (uint16_t)from,
	};
	uint32_t anode = r[3] & 0x40 ? (r[3] >> 3) % NODES : self;
	uint32_t cnode = r[3] & 0x80 ? r[4] % NODES : self;
	uint16_t off = (uint16_t)(r[5] | r[6] << 8);
	int32_t num;
	memcpy(&num, r + 7, 4);
	switch (r[3] & 7) { /* n: small mostly */
	case 0:
	case 1:
		num = 1;
		break;
	case 2:
	case 3:
		num = (int32_t)(num & 0xff);
		break;
	case 4:
		num = (int32_t)(num & 0xffff);
		break;
	}
	h.n = num;
	h.a = addr_field(r[11], (uint16_t)(r[12] | r[13] << 8), anode, r + 16);
	h.b = h.type == W_COLL_UP || h.type == W_COLL_DOWN
		  ? rd64(r + 16)
		  : (uint64_t)(uintptr_t)earth_gptr_addr((earth_gptr){
			addr_field(r[11] >> 2, off, self, r + 16)});
	if (h.type == W_BLK_REQ)
		h.c = addr_field(r[11] >> 4, (uint16_t)(off + r[14]), cnode,
				 r + 16);
	if (h.type == W_COLL_UP || h.type == W_COLL_DOWN) {
		h.n = r[3] & 3;
		h.flags = (uint16_t)(r[2] << 8);
	}
	if (h.type == W_SHUTDOWN)
		h.src = 0, from = 0;
	if (h.type == W_INVOKE || h.type == W_TOKEN)
		h.n = r[15] % 5; /* ids 0-2 exist */
	if (h.type == W_BLK_DATA || h.type == W_INVOKE || h.type == W_TOKEN)
		h.len = r[15] & 0x80 ? r[14] : (uint32_t)r[14] << (r[15] & 7);
	if (h.type == W_BLK_REQ && r[15] & 0x40)
		h.n = (int32_t)((uint32_t)(h.n & 0xffff) * 64);
	/* The request's origin: one the table names (of a node of the job
	 * or not), or raw bits. */
	uint64_t origin = 0;
	if (r[14] & 0x20)
		origin =
		    r[14] & 0x10
			? rd64(r + 16)
			: src_origin_pack(fiber_a, 1 + r[13] % 10, r[13] & 0x10,
					  r[12] & 15, r[1] % (NODES + 2));
	if (h.type == W_SYNC || h.type == W_INCR || h.type == W_BLK_DATA)
		h.c = origin;
	if (h.type == W_BLK_REQ && origin)
		h.len = 8;
	if (from == self || wire_check(&h, from, self, NODES))
		return; /* the transport would have rejected it */
	const void *payload = NULL;
	unsigned char *heap = NULL;
	if (h.len) {
		/* (freed by teardown when a rejection longjmps out) */
		/* An exact-size copy, 8-aligned, so ASan sees any overread. */
		heap = cur_payload = malloc(h.len);
		for (uint32_t i = 0; i < h.len; i++)
			heap[i] = (unsigned char)(r[16 + i % 8] + i);
		if (h.type == W_BLK_REQ)
			memcpy(heap, &origin, 8);
		payload = heap;
	}
	/* The tcp transport received it straight into its destination. */
	if (h.type == W_BLK_DATA && h.len && (r[2] & 0x40) &&
	    su_net_place(&h)) {
		memcpy((void *)(uintptr_t)h.b, heap, h.len);
		h.flags |= WIRE_F_PLACED;
		payload = NULL;
	}
	su_net_deliver(n, from, &h, payload);
	free(heap);
	cur_payload = NULL;
	if (r[1] & 0x40)
		eu_take();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	if (!once) {
		once = true;
		earth_fatal_hook = on_fatal;
		reg_fiber_add(fiber_a);
		reg_fiber_add(fiber_b);
		if (reg_mem_add(arena, sizeof(arena)))
			abort();
	}
	if (size < 1)
		return 0;
	setup(data[0] % NODES);
	data++;
	size--;
	/* A volatile count: longjmp may come back from any record. */
	static size_t i;
	i = 0;
	if (setjmp(fatal_jmp) == 0)
		for (; size - i >= REC && i / REC < 4096; i += REC)
			one(data + i);
	teardown();
	return 0;
}
