/* SPDX-License-Identifier: MIT */
/*
 * su/dsm.c - the SU's part of shared memory across nodes (earth_dsm.h):
 * it runs this node's side of the protocol (dsm/proto.h), manages the
 * locks, barriers and flags this node made (dsm/sync.h), and on node 0
 * the region's allocator and the threads' creation and end. Program
 * threads ask through their EU (dsm/pt.h, SU_OP_DSM); nodes speak through
 * W_DSM messages (su/dsm_msg.h).
 *
 * Everything a message says is checked before use: pages of the region,
 * homes as this node knows them, objects this node made, slots of
 * threads that wait for that, ids that fit, payloads of the right size;
 * a message that fails stops the job naming the field (net/wire.h).
 */
#define EARTH_INTERNAL 1
#include "base/settings.h"
#include "dsm/alloc.h"
#include "dsm/diff.h"
#include "dsm/proto.h"
#include "dsm/pt.h"
#include "dsm/sync.h"
#include "su/dsm_fiber.h"
#include "su/dsm_msg.h"
#include "su/su.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const msg_names[M_COUNT_] = {
    [M_FETCH] = "DSM FETCH",
    [M_PAGE] = "DSM PAGE",
    [M_DIFF] = "DSM DIFF",
    [M_ACK] = "DSM ACK",
    [M_LOCK] = "DSM LOCK",
    [M_UNLOCK] = "DSM UNLOCK",
    [M_BARRIER] = "DSM BARRIER",
    [M_FLAG_SET] = "DSM FLAG_SET",
    [M_FLAG_WAIT] = "DSM FLAG_WAIT",
    [M_FLAG_CLEAR] = "DSM FLAG_CLEAR",
    [M_GRANT] = "DSM GRANT",
    [M_ALLOC] = "DSM ALLOC",
    [M_PLACED] = "DSM PLACED",
    [M_ALLOCATED] = "DSM ALLOCATED",
    [M_FREE] = "DSM FREE",
    [M_GLOBALS] = "DSM GLOBALS",
    [M_CREATE] = "DSM CREATE",
    [M_DONE] = "DSM DONE",
    [M_CLAIM] = "DSM CLAIM",
    [M_HOME] = "DSM HOME",
    [M_PLACED_ACK] = "DSM PLACED_ACK",
    [M_NOTICES] = "DSM NOTICES",
};

/* A message kept for later, its payload after it. */
struct kept {
	struct kept *next;
	uint32_t from;
	struct wire_hdr h;
	uint8_t payload[];
};
struct kept_list {
	struct kept *head, *tail;
	uint32_t n;
};

/* A thread's request held until this node's release completes (its
 * diffs acknowledged): what comes after a release leaves after it. */
struct held {
	struct dsm_pt *pt;
	unsigned req;
	uint64_t b, c;
};

/* A lock's pages pretwinned at its next grant here (lock_pages_note):
 * at most this many a lock, for this many locks at once. */
#define LOCK_PAGES_MAX 8
#define LOCK_PAGES_SETS 64

static struct {
	struct earth_node *n;
	struct dsm_proto p;
	struct dsm_sync sync;	/* the objects this node made */
	struct dsm_alloc alloc; /* node 0 */
	struct dsm_pt **pwait;	/* per page: threads waiting for it */
	struct dsm_pt *by_slot[DSM_WAITERS_PER_NODE];
	struct held *held;
	size_t nheld, held_cap;
	uint32_t *sent; /* [mgr * nodes + k]: what node mgr has of our log */
	uint32_t *told; /* node 0: [node * nodes + k], told at CREATE */
	uint8_t *buf;	/* one payload being built */
	/* Notices that take more than one message: all of them, and the
	 * NOTICES message being cut from them (encode_since). */
	uint8_t *big, *cut;
	size_t big_cap;
	/* Lock grants between hosts carry up to grant_pages pages homed here
	 * that their notices name; a grant that came with some: its pages
	 * (u32 numbers, then the bytes) from node carry_from, while its
	 * notices are learnt (op_refresh takes them). */
	uint32_t grant_pages, ncarry, carry_from;
	const uint8_t *carry;
	uint64_t grant_pages_sent;
	/* Per lock this node took lately (a small table, by the lock's id):
	 * the copies of other nodes' pages that the critical section it
	 * released last wrote, pretwinned when the lock is granted here
	 * again (at most lock_pretwin, EARTH_DSM_LOCK_PRETWIN). */
	struct lock_pages {
		uint64_t lock;
		uint32_t n;
		uint32_t page[LOCK_PAGES_MAX];
	} lockpg[LOCK_PAGES_SETS];
	uint32_t lock_pretwin;
	uint32_t ended; /* node 0: threads ended */
	uint8_t *done;	/* node 0: per thread id, ended */
	/* Node 0: allocations waiting for every node to have their homes. */
	struct placing {
		struct placing *next;
		uint64_t id;
		uint32_t acks, first, from;
		uint64_t slot;
		uint8_t *acked; /* per node: said it has the homes */
	} * placing;
	uint64_t place_seq;
	struct dsm_pt *end_waiter;
	uint32_t end_want;
	bool globals_sent;
	bool said_no_room; /* node 0: an allocation got NULL (said once) */
	uint64_t msgs[M_COUNT_];
	/* The grants of one barrier's or flag's sweep (gathering: mgr_go
	 * while dsm_sync lets its waiters go), one message a node: per node,
	 * the first waiter's grant, then the slots of the others
	 * (GRANT_MORE); sent by grants_flush. */
	bool gathering;
	struct grant_batch {
		uint8_t *msg; /* NULL: none gathered; else len bytes, then
			       * room for the others' slots and their count */
		size_t len;
		uint64_t a, slot, id;
		uint32_t nmore;
	} * batch;
	/* Statistics (the protocol keeps its own). */
	uint64_t notice_bytes, barrier_msgs, lock_local, lock_remote;
	uint64_t fetch_direct;
	/* Per node: this node's diffs to it not yet acknowledged; requests
	 * that went out behind such diffs instead of waiting for their
	 * acknowledgements (early_sends). */
	uint32_t *diff_to;
	uint64_t early_sends;
	uint64_t msgs_net; /* of the messages, to other nodes */
	/* Pages being read one-sided through the transport (dsm_get), and
	 * records of finished ones, reused. */
	struct rfetch {
		struct rfetch *next;
		uint32_t home, page;
		uint8_t data[];
	} * rfree;
	uint64_t wait_ticks[DSM_WAIT_CAUSES_];
	/* Barriers made here, the episode under way (made at first use):
	 * per node, the threads arrived and the least vector time they
	 * sent. An episode every node of the job reached lets every node
	 * drop the notices that least vector time covers: each holds them
	 * (a node's vector time only grows), so no grant needs them again;
	 * a request sent with an older vector time is answered from the
	 * oldest notice still held (since()), which its node has. */
	struct bar_ep {
		uint32_t *arrived, *least;
	} * bar[DSM_OBJECTS_PER_NODE];
	bool collect_now; /* the grants being sent end such an episode */
	const uint32_t *collect_to;
	uint32_t *vt_tmp; /* since()'s */
	/* Messages to this node itself, and whether they are being
	 * handled. */
	struct kept_list local;
	bool draining;
	/* Per page: fetches and diffs that came before this node heard it
	 * is the page's home (a first-touch page it claimed: the claimant
	 * hears of it from node 0, others may hear first). */
	struct kept_list *early;
	uint32_t early_hi; /* every page with messages kept is below it */
	/* While first writes claimed ahead wait for their homes
	 * (dsm_proto claims_out): the threads' requests, and the messages
	 * that bring an acquire's notices, put off until the last answer. */
	bool claim_ahead;
	struct su_req *parked;
	size_t nparked, parked_cap;
	struct kept_list after_claims;
	/* The most payload a DSM message carries: the transport's
	 * (net_msg_max: a quarter of a ring over shm), at most BUF_CAP.
	 * Notices, carried pages and globals are cut to it, a diff that exceeds
	 * it goes in parts (op_diff); a page always fits (node_dsm_open refuses
	 * pages that do not). */
	size_t cap;
	uint8_t *dpart;	    /* a part of a diff, cap bytes */
	uint32_t early_max; /* messages kept for a page not yet homed */
} sd;

#define BUF_CAP WIRE_MAX_PAYLOAD

/* ---- a lock's pages, pretwinned at its next grant here ---- */

static struct lock_pages *lock_pages_of(uint64_t lock)
{
	uint64_t h = lock * 0x9e3779b97f4a7c15ull;
	return &sd.lockpg[h >> 58 & (LOCK_PAGES_SETS - 1)];
}

/* An unlock of lock, before its release: the copies it wrote. */
static void lock_pages_note(uint64_t lock)
{
	if (!sd.lock_pretwin)
		return;
	struct lock_pages *l = lock_pages_of(lock);
	l->lock = lock;
	l->n = 0;
	for (uint32_t i = 0; i < sd.p.ndirty && l->n < sd.lock_pretwin; i++) {
		uint32_t pg = sd.p.dirty_list[i];
		if (sd.p.twin[pg])
			l->page[l->n++] = pg;
	}
}

/* Lock granted here, its notices learnt: those copies twinned and
 * writable again where they are still valid (dsm_proto_pretwin). */
static void lock_pages_pretwin(uint64_t lock)
{
	struct lock_pages *l = lock_pages_of(lock);
	if (!l->n || l->lock != lock)
		return;
	for (uint32_t i = 0; i < l->n; i++)
		dsm_proto_pretwin(&sd.p, l->page[i]);
}

/* ---- refusing a message ---- */

static EARTH_COLD _Noreturn void bad(const struct wire_hdr *h, uint32_t from,
				     const char *field, const char *why)
{
	unsigned what = (unsigned)h->n;
	wire_refuse(
	    h, from, sd.n->num_nodes, 0, field, NULL, "shared-memory %s: %s",
	    what < M_COUNT_ && msg_names[what] ? msg_names[what] : "?", why);
}

/* ---- sending ---- */

static void keep(struct kept_list *l, uint32_t from, const struct wire_hdr *h,
		 const void *payload)
{
	struct kept *m = malloc(sizeof(*m) + h->len);
	if (!m)
		earth_fatal("shared memory: out of memory");
	m->next = NULL;
	m->from = from;
	m->h = *h;
	if (h->len)
		memcpy(m->payload, payload, h->len);
	if (l->tail)
		l->tail->next = m;
	else
		l->head = m;
	l->tail = m;
	l->n++;
}

static void receive(uint32_t from, const struct wire_hdr *h,
		    const void *payload);

static void send_to(uint32_t node, unsigned what, uint64_t a, uint64_t b,
		    uint64_t c, const void *payload, size_t len)
{
	struct wire_hdr h = {.type = W_DSM,
			     .n = (int32_t)what,
			     .len = (uint32_t)len,
			     .a = a,
			     .b = b,
			     .c = c};
	sd.msgs[what]++;
	if (node != sd.n->id) {
		sd.msgs_net++;
		su_net_send(sd.n, node, &h, payload);
		return;
	}
	/* To this node: handled once the handler that sends it is done,
	 * as a message from another node would be (never inside it), on a
	 * copy of the payload. */
	h.src = (uint16_t)node;
	keep(&sd.local, node, &h, payload);
}

/* The messages to this node, handled in order (request and message
 * handlers end with it). */
static void drain_local(void)
{
	if (sd.draining)
		return;
	sd.draining = true;
	struct kept *m;
	while ((m = sd.local.head)) {
		sd.local.head = m->next;
		if (!sd.local.head)
			sd.local.tail = NULL;
		receive(m->from, &m->h, m->payload);
		free(m);
	}
	sd.draining = false;
}

static void resume(struct dsm_pt *pt, int64_t result)
{
	if (pt->wait_t0) {
		sd.wait_ticks[pt->wait_cause] += q_tsc() - pt->wait_t0;
		pt->wait_t0 = 0;
	}
	pt->result = result;
	if (pt->fiber) {
		su_dsm_fiber_resume(pt);
		return;
	}
	su_ready_push(&su_g, sd.n->dsm_fiber, pt);
}

/* A vector time a node sent (or we recorded) raised to what every node
 * holds: intervals a barrier let every node drop (GRANT_COLLECT) are held
 * by all, whatever an older vector time says. Into sd.vt_tmp. */
static const uint32_t *since(const uint32_t *vt)
{
	for (uint32_t k = 0; k < sd.n->num_nodes; k++) {
		uint32_t floor = sd.p.log.log[k].first - 1;
		sd.vt_tmp[k] = vt[k] > floor ? vt[k] : floor;
	}
	return sd.vt_tmp;
}

/* The notices a holder of vector time vt lacks (this node's own up to
 * own_upto, dsm_log_encode_since), for node `to`: written into sd.buf at
 * off, leaving tail bytes after them; their bytes. Notices that take more
 * room go ahead in NOTICES messages of whole intervals, the last part
 * here: messages between two nodes arrive in order, so `to` has learnt
 * them all when it handles this one (learning them early only
 * invalidates early). */
static size_t encode_since(const uint32_t *vt, size_t off, uint32_t to,
			   uint32_t own_upto, size_t tail)
{
	const uint32_t *from = since(vt);
	size_t len = dsm_log_size_since(&sd.p.log, from, own_upto);
	size_t room = sd.cap - off - tail;
	if (len == (size_t)-2)
		earth_fatal("shared memory: node %u lacks write notices every "
			    "node dropped at a barrier",
			    to);
	sd.notice_bytes += len;
	if (len <= room)
		return dsm_log_encode_since(&sd.p.log, from, own_upto,
					    sd.buf + off, room);
	if (len > sd.big_cap) {
		uint8_t *b = realloc(sd.big, len);
		if (!b)
			earth_fatal("shared memory: out of memory");
		sd.big = b;
		sd.big_cap = len;
	}
	dsm_log_encode_since(&sd.p.log, from, own_upto, sd.big, len);
	size_t at = 4;
	while (4 + (len - at) > room) {
		size_t n = dsm_notice_cut(sd.big, len, &at, sd.cut, sd.cap);
		if (n == 4)
			earth_fatal(
			    "shared memory: an interval's write notices "
			    "exceed a message (%zu bytes)",
			    sd.cap);
		send_to(to, M_NOTICES, 0, 0, 0, sd.cut, n);
	}
	return dsm_notice_cut(sd.big, len, &at, sd.buf + off, room);
}

/* The notices node `to` lacks by what we sent it, appended to sd.buf at
 * off, with every interval of this node's own: a release's request goes
 * once its diffs are acknowledged, or behind them to the one node they
 * all went to (behind_diffs). What `to` has then is our vector time. */
static size_t notices_for(uint32_t to, size_t off)
{
	uint32_t *vt = sd.sent + (size_t)to * sd.n->num_nodes;
	size_t w = encode_since(vt, off, to, UINT32_MAX, 0);
	memcpy(vt, sd.p.log.vt, sd.n->num_nodes * sizeof(uint32_t));
	return w;
}

/* ---- the protocol's sends ---- */

/* A page read one-sided from its home's copy is there: handled as the
 * PAGE the home would have sent (from the transport's poll, as a
 * message is). */
static void rfetch_done(void *arg)
{
	struct rfetch *f = arg;
	struct wire_hdr h = {.magic = WIRE_MAGIC,
			     .version = WIRE_VERSION,
			     .type = W_DSM,
			     .src = (uint16_t)f->home,
			     .n = M_PAGE,
			     .len = (uint32_t)dsm_g.region.page_size,
			     .a = f->page};
	receive(f->home, &h, f->data);
	f->next = sd.rfree;
	sd.rfree = f;
	drain_local();
}

/* Starts reading page from its home's copy through the transport
 * (net_ops.dsm_get: the SU does not wait; the transport's poll ends
 * it); false when it cannot. */
static bool rfetch_start(uint32_t home, uint32_t page)
{
	struct net *t = sd.n->net;
	size_t ps = dsm_g.region.page_size;
	if (!t || !t->ops->dsm_get)
		return false;
	struct rfetch *f = sd.rfree;
	if (f)
		sd.rfree = f->next;
	else if (!(f = malloc(sizeof(*f) + ps)))
		return false;
	f->home = home;
	f->page = page;
	if (t->ops->dsm_get(t, home, f->data, (uint64_t)page * ps, ps,
			    rfetch_done, f)) {
		f->next = sd.rfree;
		sd.rfree = f;
		return false;
	}
	return true;
}

static void op_fetch(void *ctx, uint32_t home, uint32_t page)
{
	(void)ctx;
	/* On one host the home's copy is read one-sided, as the PAGE the
	 * home would send, handled after this handler like one; unless a
	 * diff of this node is out, which must reach its home first (the
	 * FETCH message queues behind it). */
	if (dsm_g.peer_base && !sd.p.diffs_out) {
		size_t ps = dsm_g.region.page_size;
		struct wire_hdr h = {.magic = WIRE_MAGIC,
				     .version = WIRE_VERSION,
				     .type = W_DSM,
				     .src = (uint16_t)home,
				     .n = M_PAGE,
				     .len = (uint32_t)ps,
				     .a = page};
		keep(&sd.local, home, &h,
		     dsm_g.peer_base + home * dsm_g.peer_seg +
			 (size_t)page * ps);
		sd.fetch_direct++;
		return;
	}
	/* Between hosts, read one-sided by the transport where it can, on
	 * the same condition. */
	if (!sd.p.diffs_out && home != sd.n->id && rfetch_start(home, page)) {
		sd.fetch_direct++;
		return;
	}
	send_to(home, M_FETCH, page, 0, 0, NULL, 0);
}

/* A diff to its home, in parts where it exceeds a message (b = 1: more
 * parts follow; the home applies each and acknowledges the last). */
static void op_diff(void *ctx, uint32_t home, uint32_t page, const void *d,
		    size_t len)
{
	(void)ctx;
	sd.diff_to[home]++;
	if (len <= sd.cap) {
		send_to(home, M_DIFF, page, 0, 0, d, len);
		return;
	}
	struct dsm_diff_cutter c;
	dsm_diff_cut_init(&c, d, len);
	size_t n;
	while ((n = dsm_diff_cut(&c, sd.dpart, sd.cap))) {
		send_to(home, M_DIFF, page, c.at < len, 0, sd.dpart, n);
	}
}

/* On one host: page's home copy into dst, read one-sided as op_fetch
 * does, on the same conditions (an acquire's refresh, dsm/proto.h). */
static bool op_refresh(void *ctx, uint32_t home, uint32_t page, void *dst)
{
	(void)ctx;
	size_t ps = dsm_g.region.page_size;
	if (sd.p.diffs_out || home == sd.n->id)
		return false;
	/* A page the grant being learnt carried (its home's copy when the
	 * manager granted: every notice the grant carries, its diffs
	 * there). */
	for (uint32_t i = 0; i < sd.ncarry && home == sd.carry_from; i++) {
		uint32_t pg;
		memcpy(&pg, sd.carry + 4 * (size_t)i, 4);
		if (pg == page) {
			memcpy(dst, sd.carry + 4 * (size_t)sd.ncarry + i * ps,
			       ps);
			return true;
		}
	}
	if (!dsm_g.peer_base)
		return false;
	memcpy(dst, dsm_g.peer_base + home * dsm_g.peer_seg + (size_t)page * ps,
	       ps);
	sd.fetch_direct++;
	return true;
}

static void op_claim(void *ctx, uint32_t page, bool write)
{
	(void)ctx;
	send_to(0, M_CLAIM, page, write, 0, NULL, 0);
}

static const struct dsm_proto_ops proto_ops = {op_fetch, op_diff, op_claim,
					       op_refresh};

/* Pages homed here that the notices in sd.buf[0, len) name in intervals
 * of nodes other than `node` (those it invalidates), at most the setting's
 * and what fits after them: put before the notices (GRANT_PAGES), with
 * their count and numbers; the payload's new length. */
static size_t carry_pages(uint32_t node, size_t len)
{
	size_t ps = dsm_g.region.page_size;
	uint32_t pages[GRANT_PAGES_MAX], n = 0, count;
	memcpy(&count, sd.buf, 4);
	for (size_t at = 4; count-- && n < sd.grant_pages;) {
		uint16_t from;
		uint32_t np;
		memcpy(&from, sd.buf + at, 2);
		memcpy(&np, sd.buf + at + 8, 4);
		for (uint32_t k = 0; k < np && n < sd.grant_pages; k++) {
			uint32_t pg;
			memcpy(&pg, sd.buf + at + 12 + 4 * (size_t)k, 4);
			bool have = false;
			for (uint32_t i = 0; i < n; i++)
				have |= pages[i] == pg;
			if (from != node && !have && sd.p.home[pg] == sd.n->id)
				pages[n++] = pg;
		}
		at += 12 + 4 * (size_t)np;
	}
	while (n && len + 4 + n * (4 + ps) > sd.cap)
		n--;
	if (!n)
		return len;
	size_t head = 4 + n * (4 + ps);
	memmove(sd.buf + head, sd.buf, len);
	memcpy(sd.buf, &n, 4);
	memcpy(sd.buf + 4, pages, 4 * (size_t)n);
	for (uint32_t i = 0; i < n; i++)
		memcpy(sd.buf + 4 + 4 * (size_t)n + i * ps,
		       dsm_region_alias(&dsm_g.region, pages[i]), ps);
	sd.grant_pages_sent += n;
	return head + len;
}

/* The grant gathered for node, with the slots of its other waiters
 * (GRANT_MORE), sent. */
static void grant_send(uint32_t node)
{
	struct grant_batch *g = &sd.batch[node];
	uint64_t a = g->a;
	size_t len = g->len;
	if (g->nmore) {
		len += 4 * (size_t)g->nmore;
		memcpy(g->msg + len, &g->nmore, 4);
		len += 4;
		a |= GRANT_MORE;
	}
	sd.barrier_msgs += (a & 0xffu) == DSM_SYNC_BARRIER;
	send_to(node, M_GRANT, a, g->slot, g->id, g->msg, len);
	free(g->msg);
	g->msg = NULL;
	g->nmore = 0;
}

/* A grant of a barrier's or flag's sweep (sd.gathering), its payload in
 * sd.buf: another waiter of a node whose grant is gathered, when it
 * brings no notice (the first one's brought them all) and fits, adds only
 * its slot; else the node's gathered grant goes, and this one is
 * gathered in its place (the order of a node's grants kept). */
static void grant_gather(uint32_t node, uint64_t a, uint32_t slot, uint64_t id,
			 size_t len, bool empty)
{
	struct grant_batch *g = &sd.batch[node];
	if (g->msg && empty && g->a == a && g->id == id &&
	    g->nmore + 1 < DSM_WAITERS_PER_NODE &&
	    g->len + 4 * ((size_t)g->nmore + 2) <= sd.cap) {
		memcpy(g->msg + g->len + 4 * (size_t)g->nmore++, &slot, 4);
		return;
	}
	if (g->msg)
		grant_send(node);
	g->msg = malloc(len + 4 * ((size_t)DSM_WAITERS_PER_NODE + 1));
	if (!g->msg)
		earth_fatal("shared memory: out of memory");
	memcpy(g->msg, sd.buf, len);
	*g = (struct grant_batch){g->msg, len, a, slot, id, 0};
}

/* The sweep's gathered grants, one a node, sent. */
static void grants_flush(void)
{
	sd.gathering = false;
	for (uint32_t k = 0; k < sd.n->num_nodes; k++)
		if (sd.batch[k].msg)
			grant_send(k);
}

/* A manager lets thread `thread` of `node` past object id. */
static void mgr_go(void *ctx, enum dsm_sync_kind kind, uint32_t id,
		   uint32_t node, uint32_t thread, const uint32_t *their_vt)
{
	(void)ctx;
	/* What node holds by the time it handles this grant: what its
	 * waiter said, and what this node sent it before (in order: the
	 * waiters of one barrier on one node need the notices once); this
	 * node itself, all it holds. */
	uint32_t nodes = sd.n->num_nodes, self = sd.n->id;
	uint32_t *sent = sd.sent + (size_t)node * nodes;
	for (uint32_t k = 0; k < nodes; k++)
		sd.vt_tmp[k] = node == self	       ? sd.p.log.vt[k]
			       : their_vt[k] > sent[k] ? their_vt[k]
						       : sent[k];
	/* For another node's release, maybe while this node's own diffs
	 * are out: of its own intervals only those whose diffs are home. */
	uint32_t own_upto = dsm_proto_sendable(&sd.p);
	bool collect = kind == DSM_SYNC_BARRIER && sd.collect_now;
	size_t vt_len = nodes * sizeof(uint32_t);
	size_t len =
	    encode_since(sd.vt_tmp, 0, node, own_upto, collect ? vt_len : 0);
	if (node != self)
		for (uint32_t k = 0; k < nodes; k++) {
			uint32_t v = sd.p.log.vt[k];
			if (k == self && own_upto < v)
				v = own_upto;
			if (v > sent[k])
				sent[k] = v;
		}
	bool empty = len == 4; /* no notice: the count alone */
	unsigned a = kind;
	if (collect) {
		memcpy(sd.buf + len, sd.collect_to, vt_len);
		len += vt_len;
		a |= GRANT_COLLECT;
	}
	/* Between hosts, a lock's grant brings the pages it invalidates
	 * that are homed here (the next critical section reads them). */
	if (kind == DSM_SYNC_LOCK && node != self && !dsm_g.peer_base &&
	    sd.grant_pages && len + 4 <= sd.cap) {
		size_t with = carry_pages(node, len);
		if (with != len)
			a |= GRANT_PAGES;
		len = with;
	}
	uint64_t oid = dsm_id(sd.n->id, id);
	if (sd.gathering && kind != DSM_SYNC_LOCK) {
		grant_gather(node, a, thread, oid, len, empty);
		return;
	}
	sd.barrier_msgs += kind == DSM_SYNC_BARRIER;
	send_to(node, M_GRANT, a, thread, oid, sd.buf, len);
}

/* ---- set up ---- */

int su_dsm_open(struct earth_node *n)
{
	uint32_t nodes = n->num_nodes;
	sd.n = n;
	if (dsm_proto_init(&sd.p, &dsm_g.region, n->id, nodes, &proto_ops,
			   NULL) ||
	    dsm_sync_init(&sd.sync, nodes, DSM_WAITERS_PER_NODE,
			  DSM_OBJECTS_PER_NODE, DSM_OBJECTS_PER_NODE,
			  DSM_OBJECTS_PER_NODE, mgr_go, NULL) ||
	    (n->id == 0 &&
	     dsm_alloc_init(&sd.alloc, dsm_g.region.pages, nodes)))
		return -1;
	sd.p.refresh_max = (uint32_t)earth_setting_u64(EARTH_SET_DSM_REFRESH);
	sd.p.home_keep = (uint32_t)earth_setting_u64(EARTH_SET_DSM_HOME_KEEP);
	sd.grant_pages = (uint32_t)earth_setting_u64(EARTH_SET_DSM_GRANT_PAGES);
	sd.lock_pretwin =
	    (uint32_t)earth_setting_u64(EARTH_SET_DSM_LOCK_PRETWIN);
	sd.claim_ahead = earth_setting_u64(EARTH_SET_DSM_CLAIM_AHEAD) != 0;
	if (su_dsm_fiber_open(dsm_g.region.pages))
		return -1;
	sd.pwait = calloc(dsm_g.region.pages, sizeof(*sd.pwait));
	sd.sent = calloc((size_t)nodes * nodes, sizeof(uint32_t));
	sd.told = calloc((size_t)nodes * nodes, sizeof(uint32_t));
	sd.cap = n->net ? net_msg_max(n->net) : BUF_CAP;
	dsm_log_fit(&sd.p.log, sd.cap);
	/* A page not yet homed here may get, from each node, a fetch, a
	 * claim's word and a diff in its parts, and more in flight. */
	size_t part = sd.cap - DSM_DIFF_RUN_HDR,
	       parts =
		   (dsm_diff_bound(dsm_g.region.page_size) + part - 1) / part;
	sd.early_max = (uint32_t)((3 + parts) * nodes + 8);
	sd.buf = malloc(BUF_CAP);
	sd.cut = malloc(BUF_CAP);
	sd.dpart = malloc(BUF_CAP);
	sd.vt_tmp = calloc(nodes, sizeof(uint32_t));
	sd.early = calloc(dsm_g.region.pages, sizeof(*sd.early));
	sd.diff_to = calloc(nodes, sizeof(uint32_t));
	sd.done = calloc((size_t)nodes * DSM_THREADS_PER_NODE, 1);
	sd.batch = calloc(nodes, sizeof(*sd.batch));
	if (!sd.pwait || !sd.sent || !sd.told || !sd.buf || !sd.cut ||
	    !sd.dpart || !sd.vt_tmp || !sd.early || !sd.done || !sd.diff_to ||
	    !sd.batch)
		return -1;
	if (dsm_g.main_pt) /* node 0's main: thread 0, slot 0 */
		sd.by_slot[0] = dsm_g.main_pt;
	return 0;
}

/* The program threads this node runs now: a keep of the protocol counts
 * their releases in rounds (dsm_proto_threads). */
static void threads_counted(void)
{
	uint32_t k = 0;
	for (unsigned i = 0; i < DSM_THREADS_PER_NODE; i++)
		k += sd.by_slot[i] != NULL;
	dsm_proto_threads(&sd.p, k);
}

void su_dsm_close(void)
{
	if (!sd.n)
		return;
	/* Threads the job's end found waiting or running, and fibers'
	 * records. */
	su_dsm_fiber_close();
	for (unsigned i = 0; i < DSM_WAITERS_PER_NODE; i++) {
		struct dsm_pt *pt = sd.by_slot[i];
		if (!pt || pt == dsm_g.main_pt)
			continue;
		if (!pt->fiber && !pt->t.finished)
			dsm_thread_destroy(&pt->t);
		free(pt);
	}
	dsm_proto_fini(&sd.p);
	dsm_sync_fini(&sd.sync);
	if (sd.n->id == 0)
		dsm_alloc_fini(&sd.alloc);
	free(sd.pwait);
	free(sd.held);
	for (unsigned k = 0; k < DSM_OBJECTS_PER_NODE; k++)
		if (sd.bar[k]) {
			free(sd.bar[k]->arrived);
			free(sd.bar[k]->least);
			free(sd.bar[k]);
		}
	free(sd.sent);
	free(sd.told);
	free(sd.diff_to);
	free(sd.batch); /* never one gathered between two messages */
	free(sd.vt_tmp);
	for (struct kept *m = sd.local.head, *nx; m; m = nx) {
		nx = m->next;
		free(m);
	}
	for (struct kept *m = sd.after_claims.head, *nx; m; m = nx) {
		nx = m->next;
		free(m);
	}
	free(sd.parked);
	for (uint32_t k = 0; sd.early && k < sd.early_hi; k++)
		for (struct kept *m = sd.early[k].head, *nx; m; m = nx) {
			nx = m->next;
			free(m);
		}
	free(sd.early);
	free(sd.done);
	for (struct placing *w = sd.placing, *nx; w; w = nx) {
		nx = w->next;
		free(w->acked);
		free(w);
	}
	free(sd.buf);
	free(sd.cut);
	free(sd.dpart);
	free(sd.big);
	while (sd.rfree) {
		struct rfetch *f = sd.rfree;
		sd.rfree = f->next;
		free(f);
	}
	memset(&sd, 0, sizeof(sd));
}

/* ---- requests of this node's threads ---- */

static void check_object(struct dsm_pt *pt, const char *what, uint64_t id)
{
	if (dsm_id_node(id) >= sd.n->num_nodes && pt->fiber)
		earth_fatal("shared memory: fiber %s: %s %#llx was never made "
			    "(earth_dsm_%s_new): its number names no node of "
			    "the job",
			    su_dsm_fiber_name(pt->ffiber), what,
			    (unsigned long long)id, what);
	if (dsm_id_node(id) >= sd.n->num_nodes)
		earth_fatal("shared memory: thread %u: %s %#llx was never "
			    "made (earth_dsm_%s_new): its number names no "
			    "node of the job",
			    pt->id, what, (unsigned long long)id, what);
}

static void perform(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c);

/* Requests held behind a release, sent once its diffs are acked. */
static void run_held(void)
{
	size_t i = 0;
	while (i < sd.nheld && sd.p.diffs_out == 0) {
		struct held x = sd.held[i++];
		perform(x.pt, x.req, x.b, x.c);
	}
	if (i) {
		memmove(sd.held, sd.held + i,
			(sd.nheld - i) * sizeof(*sd.held));
		sd.nheld -= i;
	}
}

/* arr (n elements of size each, room for *cap) with room for one more. */
static void *room_for_one(void *arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	size_t c = *cap ? *cap * 2 : 16;
	void *a = realloc(arr, c * size);
	if (!a)
		earth_fatal("shared memory: out of memory");
	*cap = c;
	return a;
}

static void hold(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
{
	sd.held =
	    room_for_one(sd.held, sd.nheld, &sd.held_cap, sizeof(*sd.held));
	sd.held[sd.nheld++] = (struct held){pt, req, b, c};
}

static void release(void)
{
	if (dsm_proto_release(&sd.p) < 0)
		earth_fatal("shared memory: a release failed: %m");
}

/* A copy of the program's globals, byte by byte and unseen by the
 * sanitizers: a sanitized program's globals have red zones between
 * them, which memcpy would call overflows (the loop is volatile, so
 * that the compiler does not make it a memcpy). */
__attribute__((no_sanitize("address", "thread"))) static void
globals_copy(void *dst, const void *src, size_t n)
{
	volatile uint8_t *d = dst;
	const volatile uint8_t *s = src;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

/* The globals of node 0's program, to every other node (the first
 * CREATE). */
static void send_globals(void)
{
	sd.globals_sent = true;
	const uint8_t *part[2] = {dsm_g.data, dsm_g.bss};
	size_t len[2] = {dsm_g.data_len, dsm_g.bss_len};
	for (uint32_t k = 1; k < sd.n->num_nodes; k++)
		for (unsigned r = 0; r < 2; r++)
			for (size_t off = 0; off < len[r]; off += sd.cap) {
				size_t m = len[r] - off < sd.cap ? len[r] - off
								 : sd.cap;
				globals_copy(sd.buf, part[r] + off, m);
				send_to(k, M_GLOBALS, off, r, 0, sd.buf, m);
			}
}

static void perform(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
{
	uint32_t nodes = sd.n->num_nodes;
	size_t vt_len = nodes * sizeof(uint32_t);
	switch (req) {
	case DSM_R_LOCK:
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_LOCK;
		pt->wait_id = (uint32_t)b;
		if (dsm_id_node(b) == sd.n->id)
			sd.lock_local++;
		else
			sd.lock_remote++;
		send_to(dsm_id_node(b), M_LOCK, b, pt->slot, 0, sd.p.log.vt,
			vt_len);
		return;
	case DSM_R_UNLOCK: {
		size_t len = notices_for(dsm_id_node(b), 0);
		send_to(dsm_id_node(b), M_UNLOCK, b, pt->slot, 0, sd.buf, len);
		resume(pt, 0);
		return;
	}
	case DSM_R_BARRIER: {
		memcpy(sd.buf, sd.p.log.vt, vt_len);
		size_t len = vt_len + notices_for(dsm_id_node(b), vt_len);
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_BARRIER;
		pt->wait_id = (uint32_t)b;
		sd.barrier_msgs++;
		send_to(dsm_id_node(b), M_BARRIER, b, pt->slot, c, sd.buf, len);
		return;
	}
	case DSM_R_FLAG_SET: {
		size_t len = notices_for(dsm_id_node(b), 0);
		send_to(dsm_id_node(b), M_FLAG_SET, b, 0, 0, sd.buf, len);
		resume(pt, 0);
		return;
	}
	case DSM_R_FLAG_WAIT:
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_FLAG_WAIT;
		pt->wait_id = (uint32_t)b;
		send_to(dsm_id_node(b), M_FLAG_WAIT, b, pt->slot, 0,
			sd.p.log.vt, vt_len);
		return;
	case DSM_R_FLAG_CLEAR:
		send_to(dsm_id_node(b), M_FLAG_CLEAR, b, 0, 0, NULL, 0);
		resume(pt, 0);
		return;
	case DSM_R_ALLOC:
		pt->waits = M_ALLOCATED;
		send_to(0, M_ALLOC, b, c, pt->slot, NULL, 0);
		return;
	case DSM_R_FREE:
		send_to(0, M_FREE, b, 0, 0, NULL, 0);
		resume(pt, 0);
		return;
	case DSM_R_CREATE: {
		if (!sd.globals_sent)
			send_globals();
		uint32_t to = (uint32_t)(c % nodes);
		uint32_t *vt = sd.told + (size_t)to * nodes;
		size_t len = encode_since(vt, 0, to, UINT32_MAX, 0);
		memcpy(vt, sd.p.log.vt, vt_len);
		send_to(to, M_CREATE, b, c, 0, sd.buf, len);
		resume(pt, 0);
		return;
	}
	case DSM_R_END: {
		size_t len = notices_for(0, 0);
		uint32_t id = pt->id;
		sd.by_slot[pt->slot] = NULL;
		free(pt);
		threads_counted();
		send_to(0, M_DONE, 0, id, 0, sd.buf, len);
		return;
	}
	}
}

/* Thread pt's fault on page, or (again) its fault asked again when the
 * page came. */
static void fault(struct dsm_pt *pt, uint64_t page, bool write, bool again)
{
	if (page >= dsm_g.region.pages)
		earth_fatal("shared memory: a fault on page %llu of %u",
			    (unsigned long long)page, dsm_g.region.pages);
	sd.p.claim_ahead = sd.claim_ahead; /* a thread's: it may go on */
	enum dsm_access a =
	    dsm_proto_access(&sd.p, (uint32_t)page, write, again);
	sd.p.claim_ahead = false;
	if (a == DSM_ACCESS_OK) {
		resume(pt, 0);
		return;
	}
	pt->wait_page = (uint32_t)page;
	pt->wait_write = write;
	pt->next = sd.pwait[page];
	sd.pwait[page] = pt;
}

/* The home pages every EU made writable (dsm/pt.h), noted as written. */
static void home_writes_take(void)
{
	for (struct dsm_eu *e =
		 atomic_load_explicit(&dsm_g.eus, memory_order_acquire);
	     e; e = e->next) {
		uint32_t h =
		    atomic_load_explicit(&e->home_w_head, memory_order_relaxed);
		uint32_t t =
		    atomic_load_explicit(&e->home_w_tail, memory_order_acquire);
		for (; h != t; h++)
			dsm_proto_home_written(&sd.p,
					       e->home_w[h % DSM_HOME_W_CAP]);
		atomic_store_explicit(&e->home_w_head, h, memory_order_release);
	}
}

/* Whether request req (object b) may go now, while this node's diffs
 * are out, instead of waiting for their acknowledgements: when its one
 * message goes to the node every diff out went to. Messages between two
 * nodes arrive in order (net/net.h), so that node applies the diffs
 * before it handles the message, and whatever the message lets happen
 * (a grant to another node, which then fetches from that home, or sees
 * its copy) follows them, as it would follow their acknowledgements. A
 * CREATE (and the globals before the first) and messages to this node
 * itself wait. */
static bool behind_diffs(unsigned req, uint64_t b)
{
	uint32_t to;
	switch (req) {
	case DSM_R_LOCK:
	case DSM_R_UNLOCK:
	case DSM_R_BARRIER:
	case DSM_R_FLAG_SET:
	case DSM_R_FLAG_WAIT:
	case DSM_R_FLAG_CLEAR:
		to = dsm_id_node(b);
		break;
	case DSM_R_ALLOC:
	case DSM_R_FREE:
	case DSM_R_END:
		to = 0;
		break;
	default:
		return false;
	}
	if (to == sd.n->id || sd.diff_to[to] != sd.p.diffs_out)
		return false;
	sd.early_sends++;
	return true;
}

static void request(const struct su_req *r);

/* A request put off while first writes wait for their homes. */
static void park(const struct su_req *r)
{
	sd.parked = room_for_one(sd.parked, sd.nparked, &sd.parked_cap,
				 sizeof(*sd.parked));
	sd.parked[sd.nparked++] = *r;
}

/* The last home of the first writes claimed ahead came: what waited
 * for it, in order (the messages first: they came before). Each is
 * handled as if it came now; should first writes be claimed ahead again
 * meanwhile, the rest waits again, behind. */
static void claims_done(void)
{
	struct kept *m = sd.after_claims.head;
	sd.after_claims = (struct kept_list){0};
	while (m) {
		struct kept *nx = m->next;
		if (sd.p.claims_out || sd.after_claims.n) {
			keep(&sd.after_claims, m->from, &m->h, m->payload);
		} else {
			receive(m->from, &m->h, m->payload);
		}
		free(m);
		m = nx;
	}
	struct su_req *q = sd.parked;
	size_t n = sd.nparked;
	sd.parked = NULL;
	sd.nparked = sd.parked_cap = 0;
	for (size_t i = 0; i < n; i++)
		request(&q[i]); /* parks again while claims are out */
	free(q);
}

static void request(const struct su_req *r)
{
	if ((unsigned)r->n != DSM_R_FAULT && (sd.p.claims_out || sd.nparked)) {
		/* A release would name pages whose home is not known. */
		park(r);
		return;
	}
	home_writes_take();
	struct dsm_pt *pt = (struct dsm_pt *)(uintptr_t)r->a;
	unsigned req = (unsigned)r->n;
	if (req != DSM_R_END && !pt->fiber) { /* a fiber's: set */
		pt->wait_t0 = q_tsc();
		pt->wait_cause = req == DSM_R_FAULT	  ? DSM_WAIT_PAGE
				 : req == DSM_R_LOCK	  ? DSM_WAIT_LOCK
				 : req == DSM_R_BARRIER	  ? DSM_WAIT_BARRIER
				 : req == DSM_R_FLAG_WAIT ? DSM_WAIT_FLAG
							  : DSM_WAIT_OTHER;
	}
	switch (req) {
	case DSM_R_FAULT:
		fault(pt, r->b, r->c != 0, false);
		return;
	case DSM_R_WAIT_END:
		if (sd.ended >= r->b) {
			resume(pt, 0);
		} else {
			sd.end_waiter = pt;
			sd.end_want = (uint32_t)r->b;
			pt->wait_req = DSM_R_WAIT_END;
		}
		return;
	case DSM_R_LOCK:
	case DSM_R_FLAG_WAIT:
	case DSM_R_FLAG_CLEAR:
		check_object(pt, req == DSM_R_LOCK ? "lock" : "flag", r->b);
		break;
	case DSM_R_UNLOCK:
	case DSM_R_BARRIER:
	case DSM_R_FLAG_SET:
		check_object(pt,
			     req == DSM_R_UNLOCK    ? "lock"
			     : req == DSM_R_BARRIER ? "barrier"
						    : "flag",
			     r->b);
		if (req == DSM_R_UNLOCK)
			lock_pages_note(r->b);
		release();
		break;
	case DSM_R_CREATE:
	case DSM_R_END:
		release();
		break;
	case DSM_R_FREE:
		/* A fiber's was checked as it came (su/dsm_fiber.c). */
		if (!pt->fiber && su_dsm_fiber_unplace(r->b))
			earth_fatal("shared memory: thread %u: "
				    "earth_dsm_free(%p): " SU_DSM_FREE_REFUSED,
				    pt->id,
				    (void *)(dsm_g.region.base +
					     ((size_t)r->b
					      << dsm_g.region.page_shift)));
		break;
	case DSM_R_ALLOC:
		break;
	default:
		earth_fatal("shared memory: a request of kind %u", req);
	}
	if (sd.nheld || (sd.p.diffs_out && !behind_diffs(req, r->b)))
		hold(pt, req, r->b, r->c);
	else
		perform(pt, req, r->b, r->c);
}

/* ---- what fibers' operations ask of it (su/dsm_fiber.h) ---- */

struct dsm_proto *su_dsm_proto(void)
{
	return sd.n ? &sd.p : NULL;
}

void su_dsm_sync_req(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
{
	struct su_req r = {.op = SU_OP_DSM,
			   .n = (int32_t)req,
			   .a = (uintptr_t)pt,
			   .b = b,
			   .c = c};
	request(&r);
}

bool su_dsm_waiter_take(struct dsm_pt *pt)
{
	for (unsigned i = DSM_THREADS_PER_NODE; i < DSM_WAITERS_PER_NODE; i++)
		if (!sd.by_slot[i]) {
			sd.by_slot[i] = pt;
			pt->slot = i;
			return true;
		}
	return false;
}

void su_dsm_waiter_free(struct dsm_pt *pt)
{
	sd.by_slot[pt->slot] = NULL;
	free(pt);
}

struct dsm_pt *su_dsm_lock_holder(uint64_t id)
{
	for (unsigned i = DSM_THREADS_PER_NODE; i < DSM_WAITERS_PER_NODE; i++)
		if (sd.by_slot[i] && sd.by_slot[i]->holds &&
		    sd.by_slot[i]->wait_id == (uint32_t)id)
			return sd.by_slot[i];
	return NULL;
}

bool su_dsm_releasing(void)
{
	return sd.p.diffs_out || sd.nheld;
}

void su_dsm_request(struct earth_node *n, const struct su_req *r)
{
	if (r->n >= DSM_R_F_ACQUIRE) {
		home_writes_take();
		su_dsm_fiber_request(n, r);
	} else {
		request(r);
	}
	drain_local();
}

/* ---- messages from nodes (and this one) ---- */

/* Threads waiting for page, asked again: the page came. */
static void page_came(uint32_t page)
{
	struct dsm_pt *w = sd.pwait[page];
	sd.pwait[page] = NULL;
	while (w) {
		struct dsm_pt *next = w->next;
		fault(w, page, w->wait_write, true);
		w = next;
	}
	su_dsm_fiber_page(page);
}

void su_dsm_page_came(uint32_t page)
{
	page_came(page);
}

/* The thread of slot that waits for an answer of this kind (the slot in
 * field `field`). */
static struct dsm_pt *waiting_thread(const struct wire_hdr *h, uint32_t from,
				     const char *field, uint64_t slot,
				     unsigned what)
{
	if (slot >= DSM_WAITERS_PER_NODE || !sd.by_slot[slot] ||
	    sd.by_slot[slot]->waits != what)
		bad(h, from, field,
		    "no thread of this node with that slot waits for it");
	struct dsm_pt *pt = sd.by_slot[slot];
	pt->waits = 0;
	pt->wait_req = 0;
	return pt;
}

/* A grant names the object the thread of each slot it names (field b,
 * and GRANT_MORE's) waits on, and comes from the node that manages it
 * (waiting_thread refuses a slot that waits for none). Returns its kind
 * (enum dsm_sync_kind), its flags off. */
static uint64_t grant_check(const struct wire_hdr *h, uint32_t from,
			    uint64_t slot)
{
	uint64_t got =
	    h->a & ~(uint64_t)(GRANT_COLLECT | GRANT_PAGES | GRANT_MORE);
	struct dsm_pt *pt =
	    slot < DSM_WAITERS_PER_NODE ? sd.by_slot[slot] : NULL;
	if (!pt || pt->waits != M_GRANT)
		return got; /* waiting_thread refuses it */
	unsigned kind = pt->wait_req == DSM_R_LOCK	? DSM_SYNC_LOCK
			: pt->wait_req == DSM_R_BARRIER ? DSM_SYNC_BARRIER
							: DSM_SYNC_FLAG;
	if (h->c != pt->wait_id || from != dsm_id_node(pt->wait_id) ||
	    got != kind)
		bad(h, from, "c",
		    "a grant of an object the thread does not wait on, or "
		    "not from the node that manages it");
	return got;
}

/* A lock's grant that carries pages (GRANT_PAGES): checked (no more than
 * GRANT_PAGES_MAX, each a page of the region homed at the granter, no
 * collect with them), then offered to the acquire its notices make
 * (op_refresh), which may use as many refreshes more; the bytes they
 * take before the notices. */
static size_t granted_pages(const struct wire_hdr *h, uint32_t from,
			    const uint8_t *payload)
{
	size_t ps = dsm_g.region.page_size;
	uint32_t n;
	if (h->len < 4 || (h->a & GRANT_COLLECT))
		bad(h, from, "a", "pages with no count, or with a collect");
	memcpy(&n, payload, 4);
	if (!n || n > GRANT_PAGES_MAX || h->len - 4 < n * (4 + ps))
		bad(h, from, "payload",
		    "a count of pages past the most a grant carries, or past "
		    "its bytes");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pg;
		memcpy(&pg, payload + 4 + 4 * (size_t)i, 4);
		if (pg >= dsm_g.region.pages || sd.p.home[pg] != from)
			bad(h, from, "payload",
			    "a page that is not the granter's to send");
	}
	sd.carry = payload + 4;
	sd.ncarry = n;
	sd.carry_from = from;
	sd.p.refresh_max += n;
	return 4 + n * (4 + ps);
}

/* The number, on this node, of an object (a lock, barrier or flag:
 * kind) a message names. One this node never made is a program's mistake
 * (an id not from earth_dsm_*_new, or one made on another node after its
 * use here): named as such. */
static uint32_t my_object(const struct wire_hdr *h, uint32_t from,
			  _Atomic uint32_t *made, const char *kind)
{
	uint64_t id = h->a;
	uint32_t k = dsm_id_index(id);
	if (dsm_id_node(id) != sd.n->id)
		bad(h, from, "a", "an object of another node");
	if (k >= atomic_load_explicit(made, memory_order_acquire))
		earth_fatal("shared memory: node %u used %s 0x%llx, which node "
			    "%u (its manager) never made: use what "
			    "earth_dsm_%s_new returned, after it returned "
			    "(PARMACS: LOCKINIT, ALOCKINIT, BARINIT or "
			    "PAUSEINIT before its first use)",
			    from, kind, (unsigned long long)id, sd.n->id, kind);
	return k;
}

/* The intervals a message carries: an acquire of this node (a grant, a
 * thread created here, a thread's end that main waits for), or with
 * !acquire a release this node manages (dsm_proto_learn). */
static void notices_in(const struct wire_hdr *h, uint32_t from, const void *buf,
		       size_t len, bool acquire)
{
	struct dsm_notice_fault f = {0};
	if ((acquire ? dsm_proto_acquire(&sd.p, buf, len, &f)
		     : dsm_proto_learn(&sd.p, buf, len, &f)) != 0)
		bad(h, from, "payload", f.what ? f.what : "bad write notices");
}

static void learn(const struct wire_hdr *h, uint32_t from, const void *buf,
		  size_t len)
{
	notices_in(h, from, buf, len, true);
}

static void learn_release(const struct wire_hdr *h, uint32_t from,
			  const void *buf, size_t len)
{
	notices_in(h, from, buf, len, false);
}

static void sync_refused(const struct wire_hdr *h, uint32_t from, int rc,
			 const char *why)
{
	if (rc)
		bad(h, from, "a", why);
}

static void placed(const struct wire_hdr *h, uint32_t from, const void *pl_,
		   size_t len)
{
	struct dsm_placement pl;
	if (len != sizeof(pl))
		bad(h, from, "len", "not a placement");
	memcpy(&pl, pl_, sizeof(pl));
	if (pl.tail == 0 || pl.tail > dsm_g.region.page_size)
		bad(h, from, "payload",
		    "a placement's bytes in its last page are not 1 to a "
		    "page");
	uint16_t *home = malloc((size_t)dsm_g.region.pages * sizeof(*home));
	if (!home)
		earth_fatal("shared memory: out of memory");
	const char *why;
	if (dsm_place_apply(&pl, home, dsm_g.region.pages, sd.n->num_nodes,
			    &why)) {
		free(home);
		bad(h, from, "payload", why);
	}
	for (uint32_t k = pl.first; k < pl.first + pl.pages; k++) {
		if (home[k] == DSM_HOME_NONE && sd.n->num_nodes == 1)
			home[k] = 0; /* first touch on one node: this one */
		if (home[k] == sd.n->id)
			memset(dsm_region_alias(&dsm_g.region, k), 0,
			       dsm_g.region.page_size);
		if (dsm_proto_set_home(&sd.p, k, 1, home[k]))
			earth_fatal("shared memory: setting a page's home: %m");
	}
	/* One node notices nothing (dsm_proto_release): its pages are
	 * writable from the start, so their first writes take no fault. */
	if (sd.n->num_nodes == 1 &&
	    dsm_region_set(&dsm_g.region, pl.first, pl.pages, DSM_PAGE_WRITE))
		earth_fatal("shared memory: making pages writable: %m");
	free(home);
	su_dsm_fiber_placed(pl.first, pl.pages, pl.tail);
	if (!sd.p.claims_out && (sd.nparked || sd.after_claims.n))
		claims_done();
}

static void create_here(const struct wire_hdr *h, uint32_t from)
{
	uint32_t nodes = sd.n->num_nodes;
	if (h->a >= dsm_g.nfns)
		bad(h, from, "a", "no function of the program's thread table");
	if (h->b % nodes != sd.n->id || h->b / nodes >= DSM_THREADS_PER_NODE ||
	    sd.by_slot[h->b / nodes])
		bad(h, from, "b",
		    "a thread id that is not this node's, is too large, or "
		    "runs already");
	struct dsm_pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		earth_fatal("shared memory: out of memory");
	pt->id = (uint32_t)h->b;
	pt->slot = (uint32_t)(h->b / nodes);
	const void *const *fns = dsm_g.fns;
	pt->fn = (void (*)(void))fns[h->a];
	if (dsm_thread_init(&pt->t, dsm_g.stack_size, dsm_pt_entry, pt, NULL))
		earth_fatal("shared memory: no stack for thread %u (%zu "
			    "bytes): %m",
			    pt->id, dsm_g.stack_size);
	sd.by_slot[pt->slot] = pt;
	threads_counted();
	resume(pt, 0);
}

static void bar_reset(struct bar_ep *ep)
{
	uint32_t nodes = sd.n->num_nodes;
	memset(ep->arrived, 0, nodes * sizeof(uint32_t));
	memset(ep->least, 0xff, nodes * sizeof(uint32_t));
}

static struct bar_ep *bar_episode(uint32_t k)
{
	if (!sd.bar[k]) {
		uint32_t nodes = sd.n->num_nodes;
		struct bar_ep *ep = calloc(1, sizeof(*ep));
		if (!ep || !(ep->arrived = calloc(nodes, sizeof(uint32_t))) ||
		    !(ep->least = calloc(nodes, sizeof(uint32_t))))
			earth_fatal("shared memory: out of memory");
		bar_reset(ep);
		sd.bar[k] = ep;
	}
	return sd.bar[k];
}

/* A fetch or diff of a first-touch page this node claimed to write, come
 * before node 0's word that it is the home: kept until the word (at most
 * a few per node of the job). */
static bool early(const struct wire_hdr *h, uint32_t from, const void *payload)
{
	if (h->a >= dsm_g.region.pages ||
	    !dsm_proto_claiming(&sd.p, (uint32_t)h->a))
		return false;
	struct kept_list *l = &sd.early[h->a];
	if (h->a >= sd.early_hi)
		sd.early_hi = (uint32_t)h->a + 1;
	if (l->n >= sd.early_max)
		bad(h, from, "a",
		    "too many messages for a page whose home is not decided");
	keep(l, from, h, payload);
	return true;
}

static void receive(uint32_t from, const struct wire_hdr *h,
		    const void *payload)
{
	uint32_t nodes = sd.n->num_nodes;
	size_t vt_len = nodes * sizeof(uint32_t);
	const char *why = NULL;
	uint32_t page = (uint32_t)h->a;
	if ((unsigned)h->n >= M_COUNT_)
		bad(h, from, "n", "unknown kind");
	if ((sd.p.claims_out || sd.after_claims.n) &&
	    (h->n == M_NOTICES || h->n == M_GRANT || h->n == M_CREATE ||
	     h->n == M_DONE)) {
		/* An acquire waits until every page this node wrote first
		 * has its home (no notice may find one without). */
		if (sd.after_claims.n >= 64u * nodes + 1024)
			bad(h, from, "n",
			    "too many grants while this node's first writes "
			    "wait for their homes");
		keep(&sd.after_claims, from, h, payload);
		return;
	}
	switch ((enum dsm_msg)h->n) {
	case M_FETCH:
		if (early(h, from, payload))
			return;
		{
			const void *copy =
			    h->a < dsm_g.region.pages
				? dsm_proto_serve(&sd.p, from, page, &why)
				: NULL;
			if (!copy)
				bad(h, from, "a",
				    why ? why : "no page of the region");
			send_to(from, M_PAGE, page, 0, 0, copy,
				dsm_g.region.page_size);
			return;
		}
	case M_PAGE: {
		if (h->a >= dsm_g.region.pages)
			bad(h, from, "a", "no page of the region");
		int rc =
		    dsm_proto_page_in(&sd.p, from, page, payload, h->len, &why);
		if (rc < 0)
			bad(h, from, "a", why);
		if (rc > 0)
			page_came(page);
		return;
	}
	case M_DIFF:
		if (early(h, from, payload))
			return;
		if (h->b > 1)
			bad(h, from, "b", "neither a diff's last part nor not");
		if (h->a >= dsm_g.region.pages ||
		    dsm_proto_apply(&sd.p, from, page, payload, h->len, &why))
			bad(h, from, "payload",
			    why ? why : "no page of the region");
		if (!h->b) /* the diff's last part */
			send_to(from, M_ACK, 0, 0, 0, NULL, 0);
		return;
	case M_ACK:
		if (!sd.diff_to[from] || dsm_proto_diff_acked(&sd.p))
			bad(h, from, "n",
			    "an acknowledgement of no diff sent to that node");
		sd.diff_to[from]--;
		if (!sd.p.diffs_out)
			run_held();
		if (!sd.p.diffs_out && !sd.nheld)
			su_dsm_fiber_acked();
		return;
	case M_LOCK: {
		uint32_t k = my_object(h, from, &dsm_g.nlocks, "lock");
		if (h->len != vt_len)
			bad(h, from, "len", "not a vector time");
		sync_refused(h, from,
			     dsm_sync_lock(&sd.sync, k, from, (uint32_t)h->b,
					   payload, &why),
			     why);
		return;
	}
	case M_UNLOCK: {
		uint32_t k = my_object(h, from, &dsm_g.nlocks, "lock");
		learn_release(h, from, payload, h->len);
		sync_refused(
		    h, from,
		    dsm_sync_unlock(&sd.sync, k, from, (uint32_t)h->b, &why),
		    why);
		return;
	}
	case M_BARRIER: {
		uint32_t k = my_object(h, from, &dsm_g.nbarriers, "barrier");
		if (h->len < vt_len || !h->c ||
		    h->c > (uint64_t)nodes * DSM_WAITERS_PER_NODE)
			bad(h, from, "c", "a count no job's threads make");
		uint32_t *vt = malloc(vt_len);
		if (!vt)
			earth_fatal("shared memory: out of memory");
		memcpy(vt, payload, vt_len);
		learn_release(h, from, (const uint8_t *)payload + vt_len,
			      h->len - vt_len);
		struct bar_ep *ep = bar_episode(k);
		uint32_t count = (uint32_t)h->c;
		ep->arrived[from]++;
		for (uint32_t q = 0; q < nodes; q++)
			if (vt[q] < ep->least[q])
				ep->least[q] = vt[q];
		bool last =
		    dsm_sync_waiting(&sd.sync, DSM_SYNC_BARRIER, k) + 1 ==
		    count;
		bool all = last;
		for (uint32_t q = 0; q < nodes && all; q++)
			all = ep->arrived[q] != 0;
		sd.collect_now = all;
		sd.collect_to = ep->least;
		sd.gathering = true;
		int rc = dsm_sync_barrier(&sd.sync, k, count, from,
					  (uint32_t)h->b, vt, &why);
		grants_flush();
		free(vt);
		sync_refused(h, from, rc, why);
		sd.collect_now = false;
		if (last)
			bar_reset(ep);
		return;
	}
	case M_FLAG_SET: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		learn_release(h, from, payload, h->len);
		sd.gathering = true;
		int rc = dsm_sync_flag_set(&sd.sync, k, &why);
		grants_flush();
		sync_refused(h, from, rc, why);
		return;
	}
	case M_FLAG_WAIT: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		if (h->len != vt_len)
			bad(h, from, "len", "not a vector time");
		sync_refused(h, from,
			     dsm_sync_flag_wait(&sd.sync, k, from,
						(uint32_t)h->b, payload, &why),
			     why);
		return;
	}
	case M_FLAG_CLEAR: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		sync_refused(h, from, dsm_sync_flag_clear(&sd.sync, k, &why),
			     why);
		return;
	}
	case M_NOTICES: /* the first part of the next message's (a grant
			 * applies them all) */
		learn_release(h, from, payload, h->len);
		return;
	case M_GRANT: {
		uint64_t kind = grant_check(h, from, h->b);
		const uint8_t *pl = payload, *more = NULL;
		size_t len = h->len;
		uint32_t nmore = 0;
		if (h->a & GRANT_MORE) { /* the other waiters' slots, last */
			if (kind == DSM_SYNC_LOCK || (h->a & GRANT_PAGES) ||
			    len < 4)
				bad(h, from, "a",
				    "more waiters in a lock's grant, or with "
				    "pages, or no count of them");
			memcpy(&nmore, pl + len - 4, 4);
			if (!nmore || nmore >= DSM_WAITERS_PER_NODE ||
			    (len - 4) / 4 < nmore)
				bad(h, from, "len",
				    "a count of more waiters no node has, or "
				    "past the payload");
			len -= 4 + 4 * (size_t)nmore;
			more = pl + len;
		}
		struct dsm_pt *pt = waiting_thread(h, from, "b", h->b, M_GRANT);
		if (h->a & GRANT_PAGES) {
			size_t head = granted_pages(h, from, pl);
			pl += head;
			len -= head;
		}
		if (h->a & GRANT_COLLECT) {
			if (len < vt_len)
				bad(h, from, "len",
				    "no vector time to collect to");
			size_t nl = len - vt_len;
			learn(h, from, pl, nl);
			uint32_t *upto = malloc(vt_len);
			if (!upto)
				earth_fatal("shared memory: out of memory");
			memcpy(upto, pl + nl, vt_len);
			/* Never past what this node holds. */
			for (uint32_t k = 0; k < nodes; k++)
				if (upto[k] > sd.p.log.vt[k])
					upto[k] = sd.p.log.vt[k];
			dsm_log_collect(&sd.p.log, upto);
			free(upto);
		} else {
			learn(h, from, pl, len);
		}
		sd.p.refresh_max -= sd.ncarry; /* the pages' offer ends */
		sd.ncarry = 0;
		if (kind == DSM_SYNC_LOCK)
			lock_pages_pretwin(h->c);
		resume(pt, 0);
		for (uint32_t i = 0; i < nmore; i++) {
			uint32_t slot;
			memcpy(&slot, more + 4 * (size_t)i, 4);
			grant_check(h, from, slot); /* the same object */
			resume(waiting_thread(h, from, "b", slot, M_GRANT), 0);
		}
		return;
	}
	case M_ALLOC: {
		if (sd.n->id != 0)
			bad(h, from, "n", "only node 0 allocates");
		/* a: bytes; the run's pages hold them, its last page
		 * `tail` of them. */
		struct dsm_placement pl;
		uint64_t first = ~0ull, err = 0;
		size_t ps = dsm_g.region.page_size;
		uint64_t pages = h->a / ps + (h->a % ps != 0);
		if (h->a == 0 || h->a > dsm_g.region.size) {
			err = ENOMEM;
		} else if (dsm_alloc_take(&sd.alloc, (uint32_t)pages,
					  (enum dsm_place)(h->b & 0xff),
					  (uint32_t)(h->b >> 8), &pl, &why)) {
			err = ENOMEM; /* the caller checked place and arg */
		} else {
			pl.tail = (uint32_t)(h->a - (pages - 1) * ps);
			/* Every node learns the homes, and says so, before the
			 * memory is handed out: a node may fetch a page from
			 * its home as soon as it has the address. */
			struct placing *w = malloc(sizeof(*w));
			uint8_t *acked = calloc(nodes, 1);
			if (!w || !acked)
				earth_fatal("shared memory: out of memory");
			*w = (struct placing){sd.placing, ++sd.place_seq, 0,
					      pl.first,	  from,		  h->c,
					      acked};
			sd.placing = w;
			for (uint32_t k = 0; k < nodes; k++)
				send_to(k, M_PLACED, 0, w->id, 0, &pl,
					sizeof(pl));
			return;
		}
		if (!sd.said_no_room) {
			sd.said_no_room = true;
			fprintf(stderr,
				"earth: node 0: shared memory: an allocation "
				"of %llu bytes on node %u gets NULL: the "
				"shared region of %zu MiB (%u pages of %zu "
				"bytes, %u in use: an allocation takes whole "
				"pages) has no free run that long; a larger "
				"EARTH_DSM_MB makes room (said once)\n",
				(unsigned long long)h->a, from,
				dsm_g.region.size >> 20, dsm_g.region.pages, ps,
				sd.alloc.used_pages);
		}
		send_to(from, M_ALLOCATED, first, err, h->c, NULL, 0);
		return;
	}
	case M_PLACED:
		if (from != 0)
			bad(h, from, "src", "only node 0 places pages");
		placed(h, from, payload, h->len);
		send_to(0, M_PLACED_ACK, h->b, 0, 0, NULL, 0);
		return;
	case M_PLACED_ACK: {
		struct placing **at = &sd.placing;
		while (*at && (*at)->id != h->a)
			at = &(*at)->next;
		if (sd.n->id != 0 || !*at || (*at)->acked[from])
			bad(h, from, "a",
			    "no placement waits for that node's word");
		struct placing *w = *at;
		w->acked[from] = 1;
		if (++w->acks == nodes) {
			*at = w->next;
			send_to(w->from, M_ALLOCATED, w->first, 0, w->slot,
				NULL, 0);
			free(w->acked);
			free(w);
		}
		return;
	}
	case M_ALLOCATED: {
		/* From the allocator: a page of the region, or an errno. */
		if (from != 0 ||
		    (h->a == ~0ull ? h->b > 4095 : h->a >= dsm_g.region.pages))
			bad(h, from, "a",
			    "an allocation not from node 0, past the end of "
			    "the region, or with no errno");
		struct dsm_pt *pt =
		    waiting_thread(h, from, "c", h->c, M_ALLOCATED);
		resume(pt, h->a == ~0ull ? -(int64_t)(h->b ? h->b : ENOMEM)
					 : (int64_t)h->a);
		return;
	}
	case M_FREE:
		/* To node 0: a node freed; from node 0: one did, and every
		 * other node learns that the pages are of no allocation. */
		if (sd.n->id != 0) {
			if (from != 0 || su_dsm_fiber_unplace(h->a))
				bad(h, from, "a",
				    "no allocation starts there, or not from "
				    "node 0");
			return;
		}
		if (h->a >= dsm_g.region.pages ||
		    dsm_alloc_free(&sd.alloc, page, &why) ||
		    (from != 0 && su_dsm_fiber_unplace(h->a)))
			bad(h, from, "a",
			    why ? why : "no allocation of node 0 starts there");
		for (uint32_t k = 1; k < nodes; k++)
			if (k != from)
				send_to(k, M_FREE, h->a, 0, 0, NULL, 0);
		return;
	case M_GLOBALS: {
		uint8_t *part = h->b == 0 ? dsm_g.data : dsm_g.bss;
		size_t len = h->b == 0 ? dsm_g.data_len : dsm_g.bss_len;
		if (from != 0 || h->b > 1 || h->a > len || h->len > len - h->a)
			bad(h, from, "a",
			    "outside the program's globals (do all nodes run "
			    "the same binary?)");
		globals_copy(part + h->a, payload, h->len);
		return;
	}
	case M_CREATE:
		if (from != 0)
			bad(h, from, "src", "only node 0 creates threads");
		learn(h, from, payload, h->len);
		create_here(h, from);
		return;
	case M_DONE:
		if (sd.n->id != 0)
			bad(h, from, "n", "only node 0 counts ended threads");
		if (h->b == 0 ||
		    h->b >= (uint64_t)nodes * DSM_THREADS_PER_NODE ||
		    h->b % nodes != from || sd.done[h->b])
			bad(h, from, "b",
			    "not a thread of that node, or one that ended "
			    "already");
		sd.done[h->b] = 1;
		learn(h, from, payload, h->len);
		sd.ended++;
		if (sd.end_waiter && sd.ended >= sd.end_want) {
			struct dsm_pt *w = sd.end_waiter;
			sd.end_waiter = NULL;
			w->wait_req = 0;
			resume(w, 0);
		}
		return;
	case M_CLAIM:
		if (sd.n->id != 0 || h->a >= dsm_g.region.pages || h->b > 1)
			bad(h, from, "a",
			    "a claim of no page, or not to node 0");
		if (sd.p.home[page] != DSM_HOME_NONE) {
			send_to(from, M_HOME, page, sd.p.home[page], 0, NULL,
				0);
		} else if (h->b) {
			/* The first writer: every node hears of its home. */
			for (uint32_t k = 0; k < nodes; k++)
				send_to(k, M_HOME, page, from, 0, NULL, 0);
		} else {
			send_to(from, M_HOME, page, DSM_HOME_NONE, 0, NULL, 0);
		}
		return;
	case M_HOME: {
		if (from != 0 || h->a >= dsm_g.region.pages ||
		    h->b > UINT16_MAX)
			bad(h, from, "a",
			    "a home not from node 0, or of no page");
		if (dsm_proto_homed(&sd.p, page, (uint32_t)h->b, &why) < 0)
			bad(h, from, "b", why);
		page_came(page);
		/* What came before the word, now that the home is known. */
		struct kept *m = sd.early[page].head;
		sd.early[page] = (struct kept_list){0};
		while (m) {
			struct kept *nx = m->next;
			receive(m->from, &m->h, m->payload);
			free(m);
			m = nx;
		}
		if (!sd.p.claims_out)
			claims_done();
		return;
	}
	case M_COUNT_:
		break;
	}
	bad(h, from, "n", "unknown kind");
}

void su_dsm_receive(struct earth_node *n, uint32_t from,
		    const struct wire_hdr *h, const void *payload)
{
	if (!n->dsm_on || !sd.n)
		wire_refuse(h, from, n->num_nodes, 0, "type", NULL,
			    "a shared-memory message, and this program uses no "
			    "shared memory (do all nodes run the same "
			    "binary?)");
	receive(from, h, payload);
	drain_local();
}

/* ---- a stuck job (node/stuck.c asks) ---- */

static const char *const req_names[DSM_R_COUNT_] = {
    [DSM_R_LOCK] = "lock",
    [DSM_R_BARRIER] = "barrier",
    [DSM_R_FLAG_WAIT] = "flag",
};

static uint32_t thread_of(uint32_t node, uint32_t slot)
{
	return slot * sd.n->num_nodes + node;
}

unsigned su_dsm_stuck_report(FILE *f)
{
	if (!sd.n)
		return 0;
	unsigned self = sd.n->id, waiting = 0;
	for (unsigned i = 0; i < DSM_WAITERS_PER_NODE; i++) {
		struct dsm_pt *pt = sd.by_slot[i];
		if (!pt || !pt->wait_req)
			continue;
		waiting++;
		if (pt->fiber)
			fprintf(f,
				"earth: node %u: stuck: a fiber (%s) waits for "
				"%s 0x%x (made by node %u)\n",
				self, su_dsm_fiber_name(pt->ffiber),
				req_names[pt->wait_req], pt->wait_id,
				dsm_id_node(pt->wait_id));
		else if (pt->wait_req == DSM_R_WAIT_END)
			fprintf(f,
				"earth: node %u: stuck: thread %u waits for "
				"%u thread%s to end, and %u did\n",
				self, pt->id, sd.end_want,
				sd.end_want == 1 ? "" : "s", sd.ended);
		else
			fprintf(f,
				"earth: node %u: stuck: thread %u waits for "
				"%s 0x%x (made by node %u)\n",
				self, pt->id, req_names[pt->wait_req],
				pt->wait_id, dsm_id_node(pt->wait_id));
	}
	/* What the objects this node manages say. */
	uint32_t nl = atomic_load(&dsm_g.nlocks),
		 nb = atomic_load(&dsm_g.nbarriers),
		 nf = atomic_load(&dsm_g.nflags);
	for (uint32_t k = 0; k < nl && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w = dsm_sync_waiting(&sd.sync, DSM_SYNC_LOCK, k);
		int64_t h = dsm_sync_holder(&sd.sync, k);
		if (!w)
			continue;
		if (h >= 0 &&
		    h % DSM_WAITERS_PER_NODE >= DSM_THREADS_PER_NODE) {
			fprintf(f,
				"earth: node %u: stuck: lock 0x%x is held by "
				"the fibers of node %u, and %u wait%s for it: "
				"unlock it on every path "
				"(earth_dsm_unlock_sync)\n",
				self, dsm_id(self, k),
				(unsigned)(h / DSM_WAITERS_PER_NODE), w,
				w == 1 ? "s" : "");
			continue;
		}
		fprintf(f,
			"earth: node %u: stuck: lock 0x%x is held by thread %u "
			"(node %u), and %u thread%s wait%s for it: release it "
			"on every path (earth_dsm_unlock, UNLOCK)\n",
			self, dsm_id(self, k),
			h < 0 ? 0
			      : thread_of((uint32_t)(h / DSM_WAITERS_PER_NODE),
					  (uint32_t)(h % DSM_WAITERS_PER_NODE)),
			h < 0 ? 0 : (unsigned)(h / DSM_WAITERS_PER_NODE), w,
			w == 1 ? "" : "s", w == 1 ? "s" : "");
	}
	for (uint32_t k = 0; k < nb && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w = dsm_sync_waiting(&sd.sync, DSM_SYNC_BARRIER, k);
		if (w)
			fprintf(f,
				"earth: node %u: stuck: barrier 0x%x has %u "
				"thread%s waiting for the others: every "
				"thread of the count must reach it\n",
				self, dsm_id(self, k), w, w == 1 ? "" : "s");
	}
	for (uint32_t k = 0; k < nf && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w = dsm_sync_waiting(&sd.sync, DSM_SYNC_FLAG, k);
		if (w)
			fprintf(f,
				"earth: node %u: stuck: flag 0x%x is not set, "
				"and %u thread%s wait%s for it\n",
				self, dsm_id(self, k), w, w == 1 ? "" : "s",
				w == 1 ? "s" : "");
	}
	return waiting;
}

void su_dsm_stats(struct dsm_stats *st, double tsc_per_ns)
{
	if (!sd.n)
		return;
	const struct dsm_proto_stats *p = &sd.p.st;
	st->read_faults = p->read_faults;
	st->write_faults = p->write_faults;
	st->fetches = p->fetches;
	st->fetches_direct = sd.fetch_direct;
	st->home_kept = p->home_kept;
	st->early_sends = sd.early_sends;
	st->grant_pages = sd.grant_pages_sent;
	st->msgs_net = sd.msgs_net;
	st->refreshes = p->refreshes;
	st->pretwins = p->pretwins;
	st->claims_ahead = p->claims_ahead;
	st->twins = p->twins;
	st->twin_bytes = p->twins * dsm_g.region.page_size;
	st->diffs = p->diffs;
	st->diff_bytes = p->diff_bytes;
	st->invalidations = p->invalidations;
	st->protections =
	    atomic_load_explicit(&dsm_g.region.changes, memory_order_relaxed);
	st->intervals = p->intervals;
	st->notice_bytes = sd.notice_bytes;
	st->notices_held = sd.p.log.held_bytes;
	for (unsigned k = 1; k < M_COUNT_; k++)
		st->msgs_sent += sd.msgs[k];
	st->barrier_msgs = sd.barrier_msgs;
	st->lock_local = sd.lock_local;
	st->lock_remote = sd.lock_remote;
	st->lock_handoffs = sd.sync.handoffs;
	st->barriers = sd.sync.barriers_done;
	su_dsm_fiber_stats(st);
	for (unsigned k = 0; k < DSM_WAIT_CAUSES_; k++)
		st->wait_ns[k] = (uint64_t)((double)sd.wait_ticks[k] /
					    (tsc_per_ns > 0 ? tsc_per_ns : 1));
}

const char *su_dsm_msg_name(unsigned what)
{
	return what < M_COUNT_ && msg_names[what] ? msg_names[what] : "DSM ?";
}
