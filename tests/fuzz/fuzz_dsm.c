/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dsm.c - libFuzzer target for the SU's side of shared memory across
 * nodes (runtime/su/dsm*.c and what they call in runtime/dsm/: the
 * protocol, the managers of locks, barriers and flags, the allocator, the
 * write notices, the diffs): every W_DSM message kind from a peer, and the
 * requests of this node's program threads, against a live node's state
 * without threads. The node's region is mapped small (PAGES pages of
 * PAGE bytes, anywhere), dsm_g is set up as node/dsm.c sets it (a thread
 * table of two functions, globals in a buffer of the harness), and before
 * the input's records the job is brought to a state where it has pages
 * (placed block, cyclic and first touch) and program threads: on node 0
 * main (the harness's record) allocates and creates threads through the
 * request path, on another node node 0's GLOBALS, PLACED and CREATE
 * messages arrive. The threads are records the harness owns, never run:
 * a request posts them (as their EU would), and the ready ring, which the
 * harness drains as the EU would, brings them back.
 *
 * Input: one byte picks this node (of NODES), then records of REC bytes,
 * each a W_DSM message that passed wire_check from a peer the record
 * picks (kind n from the record; fields a, b and c mostly valid: pages of
 * the region, objects of a node that made NOBJ of each kind, slots of
 * threads; sometimes raw; a payload made to fit the kind: vector times,
 * write notices that follow what the harness sent before, diffs, pages,
 * placements; sometimes the wrong size or raw), a peer's answer to a
 * message this node sent (a page for a fetch, an acknowledgement for a
 * diff, a grant for a lock, barrier or flag, a placement for an
 * allocation, a home for a claim), or a thread's request (a fault, a
 * lock, a barrier, ..., its end). A clean rejection (earth_fatal, built
 * with -DEARTH_FATAL_HOOK) longjmps back and ends the input.
 *
 * Must not crash (ASan, UBSan), hang (libFuzzer's -timeout) or grow
 * without bound (-rss_limit_mb; every allocation the input made is freed
 * at the end by su_dsm_close and the harness's teardown: one left after an
 * input that was not refused is a leak, and traps); every fiber made
 * ready must be the node's dsm fiber with a record of the harness that
 * waits (never twice for one request), or a thread a CREATE made; an
 * allocation's answer must be a page of the region or an errno; every
 * message sent must go to another node of the job and be a DSM message
 * of a known kind. After a rejection the allocations the interrupted
 * handler left unreachable are freed by the harness (a real node exits).
 *
 * tests/fuzz/corpus-dsm/ holds the cases it found (each refused now)
 * and seed-node<k>: 80 records of threads' requests and the peers'
 * answers on node k, none refused, for the fuzzer to start deep.
 *
 *   make fuzz-dsm  (tests/fuzz/module.mk; part of make test with clang-14)
 */
#define EARTH_INTERNAL 1
#include "base/trace.h"
#include "dsm/alloc.h"
#include "dsm/pt.h"
#include "gas/gmem.h"
#include "su/dsm_msg.h"
#include "su/su.h"

#include <earth_dsm.h>
#include <errno.h>
#include <sanitizer/allocator_interface.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define NODES 3
#define PAGES 32u
#define PAGE 4096u
#define NOBJ 4 /* locks, barriers and flags each node made */
#define REC 16
#define MAXT 16	    /* threads the harness knows on this node */
#define SENT_LOG 16 /* messages this node sent, for answers */

#include "fuzz_node.h"

/* fuzz_dsm_fiber.c sets it: a request record with r[1] & 0x80 is a
 * fiber's split-phase request instead of a thread's. */
#ifndef FUZZ_FIBERS
#define FUZZ_FIBERS 0
#endif

/* ---- allocations of one input ---- */

/* Every block the input allocated and has not freed (ASan's hooks; the
 * harness is one thread). Open addressing; no allocation in here. */
#define LIVE_CAP (1u << 16)
static const volatile void *live[LIVE_CAP];
static unsigned nlive;
static bool tracking;
static const volatile void *const TOMB = (const volatile void *)1;

static unsigned live_hash(const volatile void *p)
{
	return (unsigned)(((uintptr_t)p >> 4) * 0x9E3779B1u) & (LIVE_CAP - 1);
}

static void on_malloc(const volatile void *p, size_t size)
{
	(void)size;
	if (!tracking || !p)
		return;
	if (nlive >= LIVE_CAP / 2)
		__builtin_trap(); /* grows without bound */
	unsigned i = live_hash(p);
	while (live[i] && live[i] != TOMB)
		i = (i + 1) & (LIVE_CAP - 1);
	live[i] = p;
	nlive++;
}

static void on_free(const volatile void *p)
{
	if (!tracking || !p)
		return;
	unsigned i = live_hash(p);
	while (live[i]) {
		if (live[i] == p) {
			live[i] = TOMB;
			nlive--;
			return;
		}
		i = (i + 1) & (LIVE_CAP - 1);
	}
}

/* ---- the node ---- */

static jmp_buf fatal_jmp;
static bool sending_full;
static unsigned char *cur_payload;
static uint8_t gdata[96], gbss[40]; /* the program's globals */
static struct dsm_pt main_rec;	    /* node 0's main */

static void dsm_fiber(void *frame)
{
	(void)frame;
}
static void fn_a(void) {}
static void fn_b(void) {}
static const struct earth_dsm_fn fns[2] = {{fn_a}, {fn_b}};

/* The threads of this node the harness knows: running (may post a
 * request) or waiting for the answer to one. */
enum { T_RUN, T_WAIT };
static struct {
	struct dsm_pt *pt;
	int state;
	unsigned req;  /* the request it waits on */
	uint64_t obj;  /* its lock, barrier or flag */
	uint64_t held; /* a lock it holds, + 1 (0: none) */
	bool armed;    /* the SU sent the request (not held) */
} th[MAXT];
static unsigned nth;
static uint32_t created;	    /* node 0: threads created, main included */
static uint32_t allocs[8], nallocs; /* allocations made, not freed */

/* What this node sent, for answers. */
static struct {
	uint32_t to;
	bool answered;
	struct wire_hdr h;
} sent_log[SENT_LOG];
static unsigned nsent;

/* What peers told this node of their intervals: the last seq of each. */
static uint32_t model_vt[NODES];

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
	    h->magic != WIRE_MAGIC || (h->len && !payload) ||
	    h->type != W_DSM || h->n < 1 || h->n >= M_COUNT_ ||
	    h->len > WIRE_MAX_PAYLOAD || (h->n == M_PAGE && h->len != PAGE))
		__builtin_trap();
	if (sending_full)
		return -EAGAIN;
	volatile unsigned char sink = 0;
	for (uint32_t i = 0; i < h->len; i += 509)
		sink ^= ((const unsigned char *)payload)[i];
	(void)sink;
	sent_log[nsent % SENT_LOG].to = peer;
	sent_log[nsent % SENT_LOG].answered = false;
	sent_log[nsent % SENT_LOG].h = *h;
	nsent++;
	return 0;
}

static const struct net_ops fake_ops = {.name = "fuzz", .send = fake_send};
static struct net fake_net = {
    .ops = &fake_ops, .nodes = NODES, .max_payload = WIRE_MAX_PAYLOAD};

static int known(const struct dsm_pt *pt)
{
	for (unsigned i = 0; i < nth; i++)
		if (th[i].pt == pt)
			return (int)i;
	return -1;
}

/* ---- fibers' split-phase requests (FUZZ_FIBERS) ---- */

/* Records of fibers that post requests with a slot of their own, as a
 * fiber of the EU would (earth_dsm_fiber.h): idle (may post), or waiting
 * for its slot; after an acquisition it holds the range until it releases
 * it, after a lock the lock until it unlocks it. */
#define MAXF 8
enum { F_IDLE, F_WAIT };
static struct fib {
	earth_slot slot;
	int state;
	unsigned req;	    /* the request it waits on */
	uint64_t addr, len; /* the range it holds (len 0: none) */
	bool write;	    /* ... for writing */
	uint64_t obj;	    /* the lock, barrier or flag it asked for */
	uint64_t lock;	    /* a lock it holds, + 1 (0: none) */
	void *out;	    /* an allocation's address, stored by the SU */
} fb[MAXF];

/* Set once memory was freed or placed anew, or a release named a range
 * no record holds: what the records hold may then be taken (a program's
 * bug), and check_held stops. */
static bool held_unsure;

/* The fiber every record's slot names (registered: a fiber this node
 * armed a slot with). */
static void fslot_fiber(void *frame)
{
	(void)frame;
}

/* Every page of each range a record holds allows its access: nothing
 * takes a page from a fiber that acquired it before it releases it. */
static void check_held(void)
{
	const struct dsm_region *g = &dsm_g.region;
	for (unsigned i = 0; i < MAXF && !held_unsure; i++) {
		if (!fb[i].len || fb[i].state != F_IDLE)
			continue;
		uint64_t off = fb[i].addr - (uintptr_t)g->base;
		for (uint64_t k = off / PAGE; k <= (off + fb[i].len - 1) / PAGE;
		     k++)
			if (!dsm_page_allows(dsm_region_state(g, (uint32_t)k),
					     fb[i].write))
				__builtin_trap();
	}
}

/* Record f's slot fired: it waited, and what it asked for holds. */
static void fib_fired(struct fib *f)
{
	if (f->state != F_WAIT)
		__builtin_trap(); /* fired twice, or unasked */
	f->state = F_IDLE;
	switch (f->req) {
	case DSM_R_F_ACQUIRE:
		/* Checked by check_held at every record; for writing, the
		 * fiber writes its first and last byte (diffs at the
		 * release). */
		check_held();
		if (f->write && !held_unsure) {
			volatile uint8_t *p = (uint8_t *)(uintptr_t)f->addr;
			p[0] = (uint8_t)(p[0] + 1);
			p[f->len - 1] = (uint8_t)(f - fb + 1);
		}
		break;
	case DSM_R_F_LOCK:
		f->lock = f->obj + 1;
		break;
	case DSM_R_F_ALLOC: {
		uintptr_t a = (uintptr_t)f->out,
			  base = (uintptr_t)dsm_g.region.base;
		if (!a)
			break;
		if (a < base || a >= base + PAGES * PAGE || (a - base) % PAGE)
			__builtin_trap(); /* an allocation outside */
		if (nallocs < 8)
			allocs[nallocs++] = (uint32_t)((a - base) / PAGE);
		break;
	}
	default:
		break;
	}
}

/* A fiber the SU made ready: the dsm fiber, with a thread of the
 * harness that waits, or one a CREATE made; or a record's slot fired. */
static void check_ready(uint64_t fiber, uint64_t frame)
{
	if ((earth_fiber_fn)(uintptr_t)fiber == fslot_fiber) {
		struct fib *f = (struct fib *)(uintptr_t)frame;
		if (f < fb || f >= fb + MAXF)
			__builtin_trap();
		fib_fired(f);
		return;
	}
	if ((earth_fiber_fn)(uintptr_t)fiber != dsm_fiber)
		__builtin_trap();
	struct dsm_pt *pt = (struct dsm_pt *)(uintptr_t)frame;
	int i = known(pt);
	if (i >= 0) {
		if (th[i].state != T_WAIT)
			__builtin_trap(); /* made ready twice */
		if (th[i].req == DSM_R_ALLOC &&
		    !(pt->result >= -4095 && pt->result < (int64_t)PAGES))
			__builtin_trap(); /* an allocation outside */
		if (th[i].req == DSM_R_LOCK)
			th[i].held = th[i].obj + 1;
		if (th[i].req == DSM_R_ALLOC && pt->result >= 0 && nallocs < 8)
			allocs[nallocs++] = (uint32_t)pt->result;
		th[i].state = T_RUN;
		return;
	}
	/* A new thread: made here by a CREATE (calloc'd, its stack mapped:
	 * ASan reads it). */
	uint32_t self = earth_node_g.id;
	if ((pt->fn != fn_a && pt->fn != fn_b) || pt->id % NODES != self ||
	    pt->slot != pt->id / NODES || !pt->t.map || nth == MAXT)
		__builtin_trap();
	th[nth].pt = pt;
	th[nth].state = T_RUN;
	th[nth].held = 0;
	nth++;
}

static void eu_take(void)
{
	struct q_ring *q = &earth_node_g.link[0].ready;
	su_ready_flush();
	su_ready_drain_ovf(&su_g);
	struct q_msg *m;
	while ((m = q_ring_peek(q))) {
		struct ready_msg *r = ready_of(m);
		if (r->e[0].fiber == READY_VALUE)
			__builtin_trap();
		for (int i = 0; i < READY_PER_MSG && r->e[i].fiber; i++)
			check_ready(r->e[i].fiber, r->e[i].frame);
		q_ring_release(q);
		su_ready_drain_ovf(&su_g);
	}
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* After a message from node `from` (or a request: this node): a
 * thread whose wait for a grant or an allocation ended in it was let go
 * by the node that manages the object, or allocated by node 0 (a node's
 * own managers answer through messages to itself, which a message may
 * set off: this node too). */
static void answered_by(uint32_t from)
{
	uint32_t self = earth_node_g.id;
	for (unsigned i = 0; i < nth; i++) {
		struct dsm_pt *pt = th[i].pt;
		if (th[i].state != T_WAIT)
			continue;
		bool waits = false;
		uint32_t who = self;
		switch (th[i].req) {
		case DSM_R_LOCK:
		case DSM_R_BARRIER:
		case DSM_R_FLAG_WAIT:
			waits = pt->wait_req != 0;
			who = (uint32_t)(th[i].obj >> 16);
			break;
		case DSM_R_ALLOC:
			waits = pt->waits != 0;
			who = 0;
			break;
		default:
			continue;
		}
		if (waits) {
			th[i].armed = true;
		} else if (th[i].armed) {
			th[i].armed = false;
			/* (An object of this node: its grant is a message
			 * to itself, which any message may set off.) */
			if (who != self && from != who && from != self)
				__builtin_trap();
		}
	}
}

/* ---- payloads ---- */

static uint8_t pl[WIRE_MAX_PAYLOAD];

static void put32(size_t *at, uint32_t v)
{
	memcpy(pl + *at, &v, 4);
	*at += 4;
}

/* A vector time at pl + *at: what peers told us, perturbed by s. */
static void put_vt(size_t *at, uint8_t s)
{
	for (uint32_t k = 0; k < NODES; k++)
		put32(at, s & (1u << k) ? model_vt[k] + (s >> 5) : model_vt[k]);
}

/* Pages a lock's grant carries (GRANT_PAGES) at pl + *at: one or two of
 * the region, sometimes a count or a page out of range. */
static void put_pages(size_t *at, uint8_t s)
{
	uint32_t n = 1 + (s & 1);
	put32(at, s & 0x80 ? GRANT_PAGES_MAX + 1 : n);
	for (uint32_t i = 0; i < n; i++)
		put32(at, s & 0x40 ? PAGES + i : (s >> 2) % PAGES);
	memset(pl + *at, s, (size_t)n * PAGE);
	*at += (size_t)n * PAGE;
}

/* Write notices at pl + *at: intervals of nodes other than this one
 * that follow what the harness told it (seq model_vt + 1), sometimes
 * repeated, after a gap, of this node, or with pages out of order. */
static void put_notices(size_t *at, const uint8_t *r, uint32_t *nvt)
{
	uint32_t self = earth_node_g.id;
	uint32_t count = r[0] & 3;
	put32(at, count);
	memcpy(nvt, model_vt, sizeof(model_vt));
	for (uint32_t i = 0; i < count; i++) {
		uint8_t s = r[1 + i];
		uint32_t node = (self + 1 + (s & 1)) % NODES;
		bool wrong = (r[0] & 0xe0) == 0xe0;
		if (wrong && (s & 0x18) == 0x18)
			node = s & 0x20 ? self : NODES;
		uint32_t seq = node < NODES ? nvt[node] + 1 : 1;
		if (wrong && (s & 0xc0) == 0xc0)
			seq = s & 0x20 ? seq + 1 : seq - 1;
		/* Up to 3 pages, ascending, of the region (unless wrong). */
		uint32_t np = 0, pages[3];
		for (uint32_t k = 0, pg = r[4 + i] % PAGES; k < ((s >> 1) & 3u);
		     k++, pg += 1 + (r[5] >> k & 3)) {
			if (pg < PAGES || wrong)
				pages[np++] = pg;
		}
		uint16_t nd = (uint16_t)node, z = 0;
		memcpy(pl + *at, &nd, 2);
		memcpy(pl + *at + 2, &z, 2);
		*at += 4;
		put32(at, seq);
		put32(at, np);
		for (uint32_t k = 0; k < np; k++)
			put32(at, wrong && (s & 0xe0) == 0xa0 ? pages[k] + 40
							      : pages[k]);
		if (node < NODES && seq > nvt[node])
			nvt[node] = seq;
	}
}

/* ---- one input ---- */

static void deliver(uint32_t from, struct wire_hdr *h, size_t len)
{
	uint32_t self = earth_node_g.id;
	h->magic = WIRE_MAGIC;
	h->version = WIRE_VERSION;
	h->type = W_DSM;
	h->src = (uint16_t)from;
	h->len = (uint32_t)len;
	if (from == self || wire_check(h, from, self, NODES))
		return; /* the transport would have refused it */
	const void *payload = NULL;
	if (len) {
		/* An exact-size copy, so ASan sees any overread. */
		cur_payload = malloc(len);
		memcpy(cur_payload, pl, len);
		payload = cur_payload;
	}
	su_net_deliver(&earth_node_g, from, h, payload);
	free(cur_payload);
	cur_payload = NULL;
	answered_by(from);
}

/* A message from peer `from`, as the record says. */
static void message(const uint8_t *r)
{
	uint32_t self = earth_node_g.id;
	uint32_t from = (self + 1 + (r[1] & 1)) % NODES;
	if (r[1] & 2 && self != 0)
		from = 0;
	struct wire_hdr h = {0};
	unsigned kind = 1 + r[0] % M_COUNT_; /* M_COUNT_: unknown */
	h.n = (int32_t)kind;
	if (kind == M_FREE || kind == M_PLACED)
		held_unsure = true;
	uint32_t onode = r[2] & 0x80 ? (r[2] >> 4) % NODES : self;
	uint64_t obj = (uint64_t)onode << 16 |
		       ((r[2] & 0x0c) == 0x0c ? r[2] & 7 : 1 + (r[2] & 3));
	uint64_t page = r[2] % (PAGES + 2);
	uint64_t slot = r[3] & 0x80 ? r[3] : r[3] % 8;
	size_t at = 0;
	uint32_t nvt[NODES];
	memcpy(nvt, model_vt, sizeof(nvt));
	switch (kind) {
	case M_FETCH:
	case M_FREE:
		h.a = page;
		break;
	case M_CLAIM:
		h.a = page;
		h.b = r[3] & 3;
		break;
	case M_HOME:
		h.a = page;
		h.b = r[3] % (NODES + 1) == NODES ? DSM_HOME_NONE
						  : r[3] % (NODES + 1);
		break;
	case M_PAGE:
		h.a = page;
		at = r[5] & 0x40 ? r[6] : PAGE;
		memset(pl, r[7], at);
		break;
	case M_DIFF: {
		h.a = page;
		/* Runs: offset, count - 1, bytes; inside the page mostly. */
		uint32_t off = (uint32_t)r[6] * 16;
		for (unsigned k = 0; k < 1 + (r[5] & 3); k++) {
			uint32_t cnt = 1 + (r[7 + k] & 31);
			if (r[5] & 0x40)
				off = (uint32_t)r[7 + k] << 5, cnt = PAGE;
			uint16_t o = (uint16_t)off, c = (uint16_t)(cnt - 1);
			memcpy(pl + at, &o, 2);
			memcpy(pl + at + 2, &c, 2);
			at += 4;
			memset(pl + at, r[8], cnt);
			at += cnt;
			off += cnt + (r[9] & 7);
		}
		break;
	}
	case M_ACK:
		break;
	case M_LOCK:
	case M_FLAG_WAIT:
		h.a = obj;
		h.b = slot;
		put_vt(&at, r[4]);
		if (r[5] & 0x40)
			at -= 4;
		break;
	case M_UNLOCK:
	case M_FLAG_SET:
		h.a = obj;
		h.b = slot;
		put_notices(&at, r + 8, nvt);
		break;
	case M_BARRIER: {
		h.a = obj;
		h.b = slot;
		/* (a count past the job's threads now and then) */
		uint64_t count = 1 + (r[4] & 7), past = r[4] >> 7;
		h.c = count | past << 32;
		put_vt(&at, r[5]);
		put_notices(&at, r + 8, nvt);
		break;
	}
	case M_FLAG_CLEAR:
		h.a = obj;
		break;
	case M_GRANT:
		h.a = (r[4] % 3) | (r[4] & 0x80 ? GRANT_COLLECT : 0) |
		      (r[4] & 0x40 ? GRANT_PAGES : 0) |
		      (r[4] & 0x20 ? GRANT_MORE : 0);
		h.b = slot;
		h.c = obj;
		if (h.a & GRANT_PAGES)
			put_pages(&at, r[6]);
		put_notices(&at, r + 8, nvt);
		if (h.a & GRANT_COLLECT)
			put_vt(&at, r[5]);
		if (h.a & GRANT_MORE) { /* other slots, their count (or not) */
			uint32_t m = r[7] & 3;
			for (uint32_t i = 0; i < m; i++)
				put32(&at, (slot + 1 + i) % 8);
			put32(&at, r[7] & 0x80 ? r[7] : m);
		}
		break;
	case M_ALLOC: /* bytes */
		h.a = (uint64_t)(r[4] % (PAGES + 4)) * PAGE -
		      (r[4] & 0x80 ? r[7] : 0);
		h.b = (uint64_t)(r[5] & 3) | (uint64_t)(r[6] % 4) << 8;
		h.c = slot;
		break;
	case M_PLACED: {
		uint32_t first = r[4] % PAGES, n = 1 + r[6] % (PAGES - first);
		if (r[5] & 0x40)
			n = r[6];
		put32(&at, first);
		put32(&at, n);
		put32(&at, r[5] & 7);
		put32(&at, r[7] % 4);
		put32(&at, r[5] & 0x80 ? (uint32_t)r[8] << 8 : PAGE - r[8]);
		break;
	}
	case M_ALLOCATED:
		h.a = r[4] & 0x80 ? ~0ull : r[4] % (PAGES + 2);
		h.b = r[5] & 0x80 ? rd64(r + 8) : r[5] % 16;
		h.c = slot;
		break;
	case M_GLOBALS:
		h.a = r[4];
		h.b = r[5] % 3;
		at = r[6] % 100;
		memset(pl, r[7], at);
		break;
	case M_CREATE:
		h.a = r[4] % 3;
		h.b = r[5] & 0x80 ? r[5] : self + NODES * (r[5] % 8);
		put_notices(&at, r + 8, nvt);
		break;
	case M_DONE:
		h.b = r[4];
		put_notices(&at, r + 8, nvt);
		break;
	}
	if (r[1] & 0x80) { /* raw fields */
		h.a = r[3] & 0x40 ? rd64(r + 8) : h.a;
		h.b = r[3] & 0x20 ? rd64(r + 8) ^ r[7] : h.b;
		h.c = r[3] & 0x10 ? rd64(r + 8) >> (r[7] & 63) : h.c;
	}
	if ((r[5] & 0xa0) == 0xa0) { /* raw payload */
		at = r[6];
		for (size_t i = 0; i < at; i++)
			pl[i] = (uint8_t)(r[8 + i % 8] + i);
	}
	deliver(from, &h, at);
	/* Accepted: the peer's intervals are this node's now. */
	memcpy(model_vt, nvt, sizeof(nvt));
}

/* The answer of the peer a message this node sent went to. */
static void answer(const uint8_t *r)
{
	unsigned logged = nsent < SENT_LOG ? nsent : SENT_LOG, open = 0;
	unsigned back[SENT_LOG];
	for (unsigned j = 0; j < logged; j++) {
		unsigned k = (nsent - 1 - j) % SENT_LOG;
		if ((r[2] & 0xe0) == 0xe0 || !sent_log[k].answered)
			back[open++] = k;
	}
	if (!open)
		return;
	unsigned k = back[r[2] % open];
	sent_log[k].answered = true;
	uint32_t to = sent_log[k].to, self = earth_node_g.id;
	const struct wire_hdr *s = &sent_log[k].h;
	struct wire_hdr h = {0};
	size_t at = 0;
	uint32_t nvt[NODES];
	memcpy(nvt, model_vt, sizeof(nvt));
	switch (s->n) {
	case M_FETCH:
		h.n = M_PAGE;
		h.a = s->a;
		at = PAGE;
		memset(pl, r[3], at);
		break;
	case M_DIFF:
		h.n = M_ACK;
		break;
	case M_LOCK:
	case M_BARRIER:
	case M_FLAG_WAIT:
		h.n = M_GRANT;
		h.a = s->n == M_LOCK ? 0 : s->n == M_BARRIER ? 1 : 2;
		h.b = s->b;
		h.c = s->a;
		if (s->n == M_LOCK && r[3] & 2) {
			h.a |= GRANT_PAGES;
			put_pages(&at, r[5]);
		}
		put_notices(&at, r + 8, nvt);
		if (s->n == M_BARRIER && r[3] & 1) {
			h.a |= GRANT_COLLECT;
			put_vt(&at, r[4]);
		}
		break;
	case M_ALLOC: {
		/* Node 0 places the run (anywhere: over pages in use too),
		 * then answers. */
		struct wire_hdr p = {.n = M_PLACED};
		held_unsure = true;
		uint32_t first = r[3] % PAGES;
		uint32_t n = (uint32_t)((s->a + PAGE - 1) / PAGE);
		if (n > PAGES - first)
			n = PAGES - first;
		put32(&at, first);
		put32(&at, n ? n : 1);
		put32(&at, (uint32_t)(s->b & 0xff));
		put32(&at, (uint32_t)(s->b >> 8));
		put32(&at, (uint32_t)(s->a % PAGE ? s->a % PAGE : PAGE));
		deliver(0, &p, at);
		at = 0;
		h.n = M_ALLOCATED;
		h.a = first;
		h.c = s->c;
		break;
	}
	case M_CLAIM:
		h.n = M_HOME;
		h.a = s->a;
		h.b = s->b ? (r[3] & 1 ? self : (self + 1) % NODES)
			   : DSM_HOME_NONE;
		break;
	default:
		return;
	}
	deliver(to, &h, at);
	memcpy(model_vt, nvt, sizeof(nvt));
}

static void post(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
{
	struct su_req q = {.op = SU_OP_DSM,
			   .n = (int32_t)req,
			   .a = (uintptr_t)pt,
			   .b = b,
			   .c = c};
	su_dsm_request(&earth_node_g, &q);
	answered_by(earth_node_g.id);
}

/* An allocation's fields as the record says: *b its bytes, *c its
 * placement and argument. */
static void alloc_fields(const uint8_t *r, uint64_t *b, uint64_t *c)
{
	*b = (1 + r[5] % PAGES) * PAGE - r[7] % PAGE;
	uint64_t place = r[6] & 3, arg = 0;
	if (place == DSM_PLACE_CYCLIC)
		arg = 1 + (r[7] & 3);
	if (place == DSM_PLACE_NODE)
		arg = r[7] % NODES;
	*c = place | arg << 8;
}

/* What a free names: the first page of an allocation made (taken off
 * the list), or any page (raw). */
static uint64_t free_page(const uint8_t *r, bool raw)
{
	if (!nallocs || raw)
		return r[5] % PAGES;
	unsigned k = r[5] % nallocs;
	uint64_t b = allocs[k];
	allocs[k] = allocs[--nallocs];
	return b;
}

/* A request of a running thread of this node, as its EU would post it
 * (the EU's own checks passed). */
static void request(const uint8_t *r)
{
	uint32_t self = earth_node_g.id;
	unsigned run[MAXT], nrun = 0;
	for (unsigned i = 0; i < nth; i++)
		if (th[i].state == T_RUN)
			run[nrun++] = i;
	if (!nrun)
		return;
	unsigned i = run[r[2] % nrun];
	struct dsm_pt *pt = th[i].pt;
	/* Threads' kinds only (fibers' split-phase kinds, DSM_R_F_*, come
	 * with a slot, which these records do not have). */
	unsigned req = 1 + r[3] % (DSM_R_F_ACQUIRE - 1);
	uint32_t onode = r[4] & 0x80 ? (r[4] >> 4) % NODES : self;
	uint64_t obj = (uint64_t)onode << 16 | (1 + (r[4] & 3));
	uint64_t b = 0, c = 0;
	switch (req) {
	case DSM_R_FAULT:
		b = r[5] % PAGES;
		c = r[6] & 1;
		break;
	case DSM_R_LOCK:
	case DSM_R_UNLOCK:
		/* A thread that holds a lock unlocks it (mostly). */
		if ((r[6] & 0xc0) == 0xc0) { /* any lock */
			b = obj;
		} else if (th[i].held) {
			req = DSM_R_UNLOCK;
			b = th[i].held - 1;
		} else {
			req = DSM_R_LOCK;
			b = obj;
		}
		if (req == DSM_R_UNLOCK)
			th[i].held = 0;
		break;
	case DSM_R_FLAG_SET:
	case DSM_R_FLAG_WAIT:
	case DSM_R_FLAG_CLEAR:
		b = obj;
		break;
	case DSM_R_BARRIER:
		b = obj;
		c = 1 + r[5] % 6;
		break;
	case DSM_R_ALLOC:
		alloc_fields(r, &b, &c);
		break;
	case DSM_R_FREE: /* what an allocation returned (mostly) */
		held_unsure = true;
		b = free_page(r, (r[6] & 0xc0) == 0xc0);
		break;
	case DSM_R_CREATE:
		if (self != 0 || created / NODES >= 8)
			return;
		b = r[5] % 2;
		c = created++;
		break;
	case DSM_R_END:
		if (pt == &main_rec)
			return; /* main ends the job instead */
		/* The EU unmapped its stack; the SU frees the record. */
		dsm_thread_destroy(&pt->t);
		pt->t.finished = 1;
		th[i] = th[--nth];
		post(pt, req, 0, 0);
		return;
	case DSM_R_WAIT_END:
		if (self != 0 || pt != &main_rec)
			return;
		b = r[5] % created;
		break;
	}
	th[i].state = T_WAIT;
	th[i].req = req;
	th[i].obj = b;
	th[i].armed = false;
	post(pt, req, b, c);
}

/* A split-phase request of a fiber of this node (a record of fb), with
 * its slot, as the EU would post it: mostly a range inside an allocation,
 * a release of what the record holds, an unlock of its lock. */
static void fiber_request(const uint8_t *r)
{
	struct fib *f = &fb[r[2] % MAXF];
	if (f->state != F_IDLE)
		return;
	uint32_t self = earth_node_g.id;
	bool raw = (r[6] & 0xc0) == 0xc0;
	unsigned req =
	    DSM_R_F_ACQUIRE + r[3] % (DSM_R_F_FREE + 1 - DSM_R_F_ACQUIRE);
	uint32_t onode = r[4] & 0x80 ? (r[4] >> 4) % NODES : self;
	uint64_t obj = (uint64_t)onode << 16 | (1 + (r[4] & 3));
	uintptr_t base = (uintptr_t)dsm_g.region.base;
	uint64_t b = 0, c = 0, spare = 0;
	if (!raw && (req == DSM_R_F_ACQUIRE || req == DSM_R_F_RELEASE))
		req = f->len ? DSM_R_F_RELEASE : DSM_R_F_ACQUIRE;
	if (!raw && (req == DSM_R_F_LOCK || req == DSM_R_F_UNLOCK))
		req = f->lock ? DSM_R_F_UNLOCK : DSM_R_F_LOCK;
	switch (req) {
	case DSM_R_F_ACQUIRE: {
		if (f->len && !raw)
			return;
		uint64_t len = 1 + ((r[8] | (uint64_t)r[9] << 8) % (3 * PAGE));
		b = base + (r[5] % PAGES) * PAGE + (r[7] * 16u) % PAGE;
		if (raw)
			b = r[7] & 1 ? rd64(r + 8) : b - PAGE;
		c = len << 1 | (r[6] & 1);
		if (!f->len) {
			f->addr = b;
			f->len = len;
			f->write = r[6] & 1;
		}
		break;
	}
	case DSM_R_F_RELEASE:
		b = f->addr;
		c = f->len;
		if (raw || !f->len) {
			b = base + (r[5] % PAGES) * PAGE;
			c = 1 + r[7];
			held_unsure = true;
		}
		f->len = 0; /* (its pages let go of at the post) */
		break;
	case DSM_R_F_LOCK:
		b = obj;
		break;
	case DSM_R_F_UNLOCK:
		b = f->lock && !raw ? f->lock - 1 : obj;
		if (b == f->lock - 1)
			f->lock = 0;
		break;
	case DSM_R_F_BARRIER:
		b = obj;
		c = 1 + r[5] % 6;
		break;
	case DSM_R_F_FLAG_SET:
	case DSM_R_F_FLAG_WAIT:
		b = obj;
		break;
	case DSM_R_F_ALLOC:
		alloc_fields(r, &b, &c);
		f->out = NULL;
		spare = (uintptr_t)&f->out;
		break;
	case DSM_R_F_FREE:
		held_unsure = true;
		b = free_page(r, raw);
		break;
	}
	f->slot = (earth_slot){.count = 1, .fiber = fslot_fiber, .frame = f};
	f->state = F_WAIT;
	f->req = req;
	f->obj = b;
	struct su_req q = {.op = SU_OP_DSM,
			   .n = (int32_t)req,
			   .slot = (uintptr_t)&f->slot,
			   .a = (uintptr_t)fslot_fiber,
			   .b = b,
			   .c = c,
			   .spare = spare};
	su_dsm_request(&earth_node_g, &q);
	answered_by(self);
}

static void one(const uint8_t *r)
{
	sending_full = r[1] & 0x40;
	if (r[0] < 0xc0)
		message(r);
	else if (r[0] < 0xd8)
		answer(r);
	else if (r[0] < 0xf8 && FUZZ_FIBERS && r[1] & 0x80)
		fiber_request(r);
	else if (r[0] < 0xf8)
		request(r);
	else
		su_net_drain(&earth_node_g);
	if (r[1] & 0x20)
		eu_take();
	if (FUZZ_FIBERS)
		check_held();
}

/* ---- set up, tear down ---- */

static void setup(uint32_t self)
{
	struct earth_node *n = &earth_node_g;
	memset(n, 0, sizeof(*n));
	memset(&su_g, 0, sizeof(su_g));
	n->id = self;
	n->num_nodes = NODES;
	fake_net.self = self;
	n->net = &fake_net;
	n->dsm_fiber = dsm_fiber;
	n->dsm_on = true;
	su_g.out_head = calloc(NODES, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(NODES, sizeof(*su_g.out_tail));
	su_g.owed = calloc(NODES, sizeof(*su_g.owed));
	su_g.hungry = calloc(NODES, sizeof(*su_g.hungry));
	su_g.owed_max = 256u << 10;
	n->link = &link0;
	if (!su_g.out_head || !su_g.out_tail || !su_g.owed || !su_g.hungry ||
	    q_ring_init(&link0.ready, Q_MODE_SW, 16, 0, -1) ||
	    su_attach(&su_g, n))
		abort();
	sending_full = false;
	nsent = 0;
	nth = 0;
	created = 1;
	nallocs = 0;
	memset(model_vt, 0, sizeof(model_vt));
	memset(th, 0, sizeof(th));
	memset(fb, 0, sizeof(fb));
	held_unsure = false;

	/* dsm_g as node/dsm.c sets it (the region stays mapped). */
	struct dsm_region region = dsm_g.region;
	memset(&dsm_g, 0, sizeof(dsm_g));
	dsm_g.region = region;
	memset(region.alias, 0, region.size);
	dsm_g.self = self;
	dsm_g.nodes = NODES;
	dsm_g.stack_size = 16u << 10;
	dsm_g.fns = fns;
	dsm_g.nfns = 2;
	dsm_g.data = gdata;
	dsm_g.data_len = sizeof(gdata);
	dsm_g.bss = gbss;
	dsm_g.bss_len = sizeof(gbss);
	atomic_store(&dsm_g.nlocks, NOBJ);
	atomic_store(&dsm_g.nbarriers, NOBJ);
	atomic_store(&dsm_g.nflags, NOBJ);
	dsm_g.created = 1;
	memset(&main_rec, 0, sizeof(main_rec));
	if (self == 0) {
		dsm_g.main_pt = &main_rec;
		th[nth].pt = &main_rec;
		th[nth++].state = T_RUN;
	}
	if (su_dsm_open(n))
		abort();
}

/* The job's start: pages placed block, cyclic and first touch, and
 * threads on this node. */
static void start(void)
{
	uint32_t self = earth_node_g.id;
	static const uint64_t allocs[][2] = {
	    {16 * PAGE, DSM_PLACE_BLOCK},
	    {8 * PAGE, DSM_PLACE_CYCLIC | 1u << 8},
	    {8 * PAGE - 100, DSM_PLACE_FIRST},
	};
	if (self == 0) {
		for (unsigned i = 0; i < 3; i++) {
			th[0].state = T_WAIT;
			th[0].req = DSM_R_ALLOC;
			th[0].armed = false;
			post(&main_rec, DSM_R_ALLOC, allocs[i][0],
			     allocs[i][1]);
			/* Every node says it has the homes (placement i + 1).
			 */
			for (uint32_t k = 1; k < NODES; k++) {
				struct wire_hdr a = {.n = M_PLACED_ACK,
						     .a = i + 1};
				deliver(k, &a, 0);
			}
			eu_take();
		}
		for (unsigned i = 0; i < 6; i++) {
			th[0].state = T_WAIT;
			th[0].req = DSM_R_CREATE;
			th[0].armed = false;
			post(&main_rec, DSM_R_CREATE, i & 1, created++);
			eu_take();
		}
		if (th[0].state != T_RUN || nth != 3)
			__builtin_trap();
		return;
	}
	struct wire_hdr h = {.n = M_GLOBALS};
	memset(pl, 7, sizeof(gdata));
	deliver(0, &h, sizeof(gdata));
	uint32_t first = 0;
	for (unsigned i = 0; i < 3; i++) {
		size_t at = 0;
		uint32_t pages = (uint32_t)((allocs[i][0] + PAGE - 1) / PAGE);
		put32(&at, first);
		put32(&at, pages);
		put32(&at, (uint32_t)(allocs[i][1] & 0xff));
		put32(&at, (uint32_t)(allocs[i][1] >> 8));
		put32(&at, (uint32_t)(allocs[i][0] - (pages - 1) * PAGE));
		h = (struct wire_hdr){.n = M_PLACED};
		deliver(0, &h, at);
		first += pages;
	}
	for (unsigned k = 0; k < 2; k++) {
		size_t at = 0;
		put32(&at, 0);
		h = (struct wire_hdr){
		    .n = M_CREATE, .a = k, .b = self + k * NODES};
		deliver(0, &h, at);
	}
	eu_take();
	if (nth != 2)
		__builtin_trap();
}

static void teardown(void)
{
	su_dsm_close();
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
	q_ring_fini(&link0.ready);
	free(cur_payload);
	cur_payload = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	if (!once) {
		once = true;
		earth_fatal_hook = on_fatal;
		reg_fiber_add(fslot_fiber);
		char err[256];
		if (dsm_region_map(&dsm_g.region, NULL, PAGES * PAGE, PAGE,
				   DSM_FAULTS_AUTO, err, sizeof(err)) ||
		    !__sanitizer_install_malloc_and_free_hooks(on_malloc,
							       on_free))
			abort();
	}
	if (size < 1)
		return 0;
	memset((void *)live, 0, sizeof(live));
	nlive = 0;
	tracking = true;
	setup(data[0] % NODES);
	data++;
	size--;
	/* Volatile across longjmp: set before, read after. */
	static size_t i;
	static bool refused;
	i = 0;
	refused = false;
	if (setjmp(fatal_jmp) == 0) {
		start();
		for (; size - i >= REC && i / REC < 1024; i += REC)
			one(data + i);
		eu_take();
	} else {
		refused = true;
	}
	teardown();
	/* What is left: leaks. After a rejection, the handler it ended
	 * left them unreachable (a real node exits): freed here. */
	tracking = false;
	if (nlive && !refused)
		__builtin_trap();
	for (unsigned k = 0; k < LIVE_CAP; k++)
		if (live[k] && live[k] != TOMB)
			free((void *)(uintptr_t)live[k]);
	return 0;
}
