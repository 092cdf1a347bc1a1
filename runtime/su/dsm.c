/* SPDX-License-Identifier: MIT */
/*
 * su/dsm.c - the SU's part of shared memory across nodes (earth_dsm.h):
 * it runs this node's side of the protocol (dsm/proto.h) and manages the
 * locks, barriers and flags this node made (dsm/sync.h). Program threads
 * ask through their EU (dsm/pt.h, SU_OP_DSM); nodes speak through W_DSM
 * messages (su/dsm_msg.h). What it does for the job as a whole (node 0's
 * allocator and homes, the globals, threads' creation and end) is
 * su/dsm_job.c's; the stuck report and statistics su/dsm_report.c's;
 * the state they share, su/dsm_int.h.
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
#include "su/dsm_int.h"
#include "su/dsm_msg.h"
#include "su/su.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct su_dsm su_dsm_g;

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

/* ---- a lock's pages, pretwinned at its next grant here ---- */

static struct lock_pages *lock_pages_of(uint64_t lock)
{
	uint64_t h = lock * 0x9e3779b97f4a7c15ull;
	return &su_dsm_g.lockpg[h >> 58 & (LOCK_PAGES_SETS - 1)];
}

/* An unlock of lock, before its release: the copies it wrote. */
static void lock_pages_note(uint64_t lock)
{
	if (!su_dsm_g.lock_pretwin)
		return;
	struct lock_pages *l = lock_pages_of(lock);
	l->lock = lock;
	l->n = 0;
	for (uint32_t i = 0;
	     i < su_dsm_g.p.ndirty && l->n < su_dsm_g.lock_pretwin; i++) {
		uint32_t pg = su_dsm_g.p.dirty_list[i];
		if (su_dsm_g.p.twin[pg])
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
		dsm_proto_pretwin(&su_dsm_g.p, l->page[i]);
}

/* ---- refusing a message ---- */

EARTH_COLD _Noreturn void su_dsm_bad(const struct wire_hdr *h, uint32_t from,
				     const char *field, const char *why)
{
	unsigned what = (unsigned)h->n;
	wire_refuse(h, from, su_dsm_g.n->num_nodes, 0, field, NULL,
		    "shared-memory %s: %s",
		    what < M_COUNT_ && msg_names[what] ? msg_names[what] : "?",
		    why);
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

void su_dsm_send(uint32_t node, unsigned what, uint64_t a, uint64_t b,
		 uint64_t c, const void *payload, size_t len)
{
	struct wire_hdr h = {.type = W_DSM,
			     .n = (int32_t)what,
			     .len = (uint32_t)len,
			     .a = a,
			     .b = b,
			     .c = c};
	su_dsm_g.msgs[what]++;
	if (node != su_dsm_g.n->id) {
		su_dsm_g.msgs_net++;
		su_net_send(su_dsm_g.n, node, &h, payload);
		return;
	}
	/* To this node: handled once the handler that sends it is done,
	 * as a message from another node would be (never inside it), on a
	 * copy of the payload. */
	h.src = (uint16_t)node;
	keep(&su_dsm_g.local, node, &h, payload);
}

/* The messages to this node, handled in order (request and message
 * handlers end with it). */
static void drain_local(void)
{
	if (su_dsm_g.draining)
		return;
	su_dsm_g.draining = true;
	struct kept *m;
	while ((m = su_dsm_g.local.head)) {
		su_dsm_g.local.head = m->next;
		if (!su_dsm_g.local.head)
			su_dsm_g.local.tail = NULL;
		su_dsm_handle(m->from, &m->h, m->payload);
		free(m);
	}
	su_dsm_g.draining = false;
}

void su_dsm_resume(struct dsm_pt *pt, int64_t result)
{
	if (pt->wait_t0) {
		su_dsm_g.wait_ticks[pt->wait_cause] += q_tsc() - pt->wait_t0;
		pt->wait_t0 = 0;
	}
	pt->result = result;
	if (pt->fiber) {
		su_dsm_fiber_resume(pt);
		return;
	}
	su_ready_push(&su_g, su_dsm_g.n->dsm_fiber, pt);
}

/* A vector time a node sent (or we recorded) raised to what every node
 * holds: intervals a barrier let every node drop (GRANT_COLLECT) are held
 * by all, whatever an older vector time says. Into su_dsm_g.vt_tmp. */
static const uint32_t *since(const uint32_t *vt)
{
	for (uint32_t k = 0; k < su_dsm_g.n->num_nodes; k++) {
		uint32_t floor = su_dsm_g.p.log.log[k].first - 1;
		su_dsm_g.vt_tmp[k] = vt[k] > floor ? vt[k] : floor;
	}
	return su_dsm_g.vt_tmp;
}

/* The notices a holder of vector time vt lacks (this node's own up to
 * own_upto, dsm_log_encode_since), for node `to`: written into su_dsm_g.buf at
 * off, leaving tail bytes after them; their bytes. Notices that take more
 * room go ahead in NOTICES messages of whole intervals, the last part
 * here: messages between two nodes arrive in order, so `to` has learnt
 * them all when it handles this one (learning them early only
 * invalidates early). */
static size_t encode_since(const uint32_t *vt, size_t off, uint32_t to,
			   uint32_t own_upto, size_t tail)
{
	const uint32_t *from = since(vt);
	size_t len = dsm_log_size_since(&su_dsm_g.p.log, from, own_upto);
	size_t room = su_dsm_g.cap - off - tail;
	if (len == (size_t)-2)
		earth_fatal("shared memory: node %u lacks write notices every "
			    "node dropped at a barrier",
			    to);
	su_dsm_g.notice_bytes += len;
	if (len <= room)
		return dsm_log_encode_since(&su_dsm_g.p.log, from, own_upto,
					    su_dsm_g.buf + off, room);
	if (len > su_dsm_g.big_cap) {
		uint8_t *b = realloc(su_dsm_g.big, len);
		if (!b)
			earth_fatal("shared memory: out of memory");
		su_dsm_g.big = b;
		su_dsm_g.big_cap = len;
	}
	dsm_log_encode_since(&su_dsm_g.p.log, from, own_upto, su_dsm_g.big,
			     len);
	size_t at = 4;
	while (4 + (len - at) > room) {
		size_t n = dsm_notice_cut(su_dsm_g.big, len, &at, su_dsm_g.cut,
					  su_dsm_g.cap);
		if (n == 4)
			earth_fatal(
			    "shared memory: an interval's write notices "
			    "exceed a message (%zu bytes)",
			    su_dsm_g.cap);
		su_dsm_send(to, M_NOTICES, 0, 0, 0, su_dsm_g.cut, n);
	}
	return dsm_notice_cut(su_dsm_g.big, len, &at, su_dsm_g.buf + off, room);
}

/* The notices node `to` lacks by what we sent it, appended to su_dsm_g.buf at
 * off, with every interval of this node's own: a release's request goes
 * once its diffs are acknowledged, or behind them to the one node they
 * all went to (behind_diffs). What `to` has then is our vector time. */
static size_t notices_for(uint32_t to, size_t off)
{
	uint32_t *vt = su_dsm_g.sent + (size_t)to * su_dsm_g.n->num_nodes;
	size_t w = encode_since(vt, off, to, UINT32_MAX, 0);
	memcpy(vt, su_dsm_g.p.log.vt, su_dsm_g.n->num_nodes * sizeof(uint32_t));
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
	su_dsm_handle(f->home, &h, f->data);
	f->next = su_dsm_g.rfree;
	su_dsm_g.rfree = f;
	drain_local();
}

/* Starts reading page from its home's copy through the transport
 * (net_ops.dsm_get: the SU does not wait; the transport's poll ends
 * it); false when it cannot. */
static bool rfetch_start(uint32_t home, uint32_t page)
{
	struct net *t = su_dsm_g.n->net;
	size_t ps = dsm_g.region.page_size;
	if (!t || !t->ops->dsm_get)
		return false;
	struct rfetch *f = su_dsm_g.rfree;
	if (f)
		su_dsm_g.rfree = f->next;
	else if (!(f = malloc(sizeof(*f) + ps)))
		return false;
	f->home = home;
	f->page = page;
	if (t->ops->dsm_get(t, home, f->data, (uint64_t)page * ps, ps,
			    rfetch_done, f)) {
		f->next = su_dsm_g.rfree;
		su_dsm_g.rfree = f;
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
	if (dsm_g.peer_base && !su_dsm_g.p.diffs_out) {
		size_t ps = dsm_g.region.page_size;
		struct wire_hdr h = {.magic = WIRE_MAGIC,
				     .version = WIRE_VERSION,
				     .type = W_DSM,
				     .src = (uint16_t)home,
				     .n = M_PAGE,
				     .len = (uint32_t)ps,
				     .a = page};
		keep(&su_dsm_g.local, home, &h,
		     dsm_g.peer_base + home * dsm_g.peer_seg +
			 (size_t)page * ps);
		su_dsm_g.fetch_direct++;
		return;
	}
	/* Between hosts, read one-sided by the transport where it can, on
	 * the same condition. */
	if (!su_dsm_g.p.diffs_out && home != su_dsm_g.n->id &&
	    rfetch_start(home, page)) {
		su_dsm_g.fetch_direct++;
		return;
	}
	su_dsm_send(home, M_FETCH, page, 0, 0, NULL, 0);
}

/* A diff to its home, in parts where it exceeds a message (b = 1: more
 * parts follow; the home applies each and acknowledges the last). */
static void op_diff(void *ctx, uint32_t home, uint32_t page, const void *d,
		    size_t len)
{
	(void)ctx;
	su_dsm_g.diff_to[home]++;
	if (len <= su_dsm_g.cap) {
		su_dsm_send(home, M_DIFF, page, 0, 0, d, len);
		return;
	}
	struct dsm_diff_cutter c;
	dsm_diff_cut_init(&c, d, len);
	size_t n;
	while ((n = dsm_diff_cut(&c, su_dsm_g.dpart, su_dsm_g.cap))) {
		su_dsm_send(home, M_DIFF, page, c.at < len, 0, su_dsm_g.dpart,
			    n);
	}
}

/* On one host: page's home copy into dst, read one-sided as op_fetch
 * does, on the same conditions (an acquire's refresh, dsm/proto.h). */
static bool op_refresh(void *ctx, uint32_t home, uint32_t page, void *dst)
{
	(void)ctx;
	size_t ps = dsm_g.region.page_size;
	if (su_dsm_g.p.diffs_out || home == su_dsm_g.n->id)
		return false;
	/* A page the grant being learnt carried (its home's copy when the
	 * manager granted: every notice the grant carries, its diffs
	 * there). */
	for (uint32_t i = 0; i < su_dsm_g.ncarry && home == su_dsm_g.carry_from;
	     i++) {
		uint32_t pg;
		memcpy(&pg, su_dsm_g.carry + 4 * (size_t)i, 4);
		if (pg == page) {
			memcpy(dst,
			       su_dsm_g.carry + 4 * (size_t)su_dsm_g.ncarry +
				   i * ps,
			       ps);
			return true;
		}
	}
	if (!dsm_g.peer_base)
		return false;
	memcpy(dst, dsm_g.peer_base + home * dsm_g.peer_seg + (size_t)page * ps,
	       ps);
	su_dsm_g.fetch_direct++;
	return true;
}

static void op_claim(void *ctx, uint32_t page, bool write)
{
	(void)ctx;
	su_dsm_send(0, M_CLAIM, page, write, 0, NULL, 0);
}

static const struct dsm_proto_ops proto_ops = {op_fetch, op_diff, op_claim,
					       op_refresh};

/* Pages homed here that the notices in su_dsm_g.buf[0, len) name in intervals
 * of nodes other than `node` (those it invalidates), at most the setting's
 * and what fits after them: put before the notices (GRANT_PAGES), with
 * their count and numbers; the payload's new length. */
static size_t carry_pages(uint32_t node, size_t len)
{
	size_t ps = dsm_g.region.page_size;
	uint32_t pages[GRANT_PAGES_MAX], n = 0, count;
	memcpy(&count, su_dsm_g.buf, 4);
	for (size_t at = 4; count-- && n < su_dsm_g.grant_pages;) {
		uint16_t from;
		uint32_t np;
		memcpy(&from, su_dsm_g.buf + at, 2);
		memcpy(&np, su_dsm_g.buf + at + 8, 4);
		for (uint32_t k = 0; k < np && n < su_dsm_g.grant_pages; k++) {
			uint32_t pg;
			memcpy(&pg, su_dsm_g.buf + at + 12 + 4 * (size_t)k, 4);
			bool have = false;
			for (uint32_t i = 0; i < n; i++)
				have |= pages[i] == pg;
			if (from != node && !have &&
			    su_dsm_g.p.home[pg] == su_dsm_g.n->id)
				pages[n++] = pg;
		}
		at += 12 + 4 * (size_t)np;
	}
	while (n && len + 4 + n * (4 + ps) > su_dsm_g.cap)
		n--;
	if (!n)
		return len;
	size_t head = 4 + n * (4 + ps);
	memmove(su_dsm_g.buf + head, su_dsm_g.buf, len);
	memcpy(su_dsm_g.buf, &n, 4);
	memcpy(su_dsm_g.buf + 4, pages, 4 * (size_t)n);
	for (uint32_t i = 0; i < n; i++)
		memcpy(su_dsm_g.buf + 4 + 4 * (size_t)n + i * ps,
		       dsm_region_alias(&dsm_g.region, pages[i]), ps);
	su_dsm_g.grant_pages_sent += n;
	return head + len;
}

/* The grant gathered for node, with the slots of its other waiters
 * (GRANT_MORE), sent. */
static void grant_send(uint32_t node)
{
	struct grant_batch *g = &su_dsm_g.batch[node];
	uint64_t a = g->a;
	size_t len = g->len;
	if (g->nmore) {
		len += 4 * (size_t)g->nmore;
		memcpy(g->msg + len, &g->nmore, 4);
		len += 4;
		a |= GRANT_MORE;
	}
	su_dsm_g.barrier_msgs += (a & 0xffu) == DSM_SYNC_BARRIER;
	su_dsm_send(node, M_GRANT, a, g->slot, g->id, g->msg, len);
	free(g->msg);
	g->msg = NULL;
	g->nmore = 0;
}

/* A grant of a barrier's or flag's sweep (su_dsm_g.gathering), its payload in
 * su_dsm_g.buf: another waiter of a node whose grant is gathered, when it
 * brings no notice (the first one's brought them all) and fits, adds only
 * its slot; else the node's gathered grant goes, and this one is
 * gathered in its place (the order of a node's grants kept). */
static void grant_gather(uint32_t node, uint64_t a, uint32_t slot, uint64_t id,
			 size_t len, bool empty)
{
	struct grant_batch *g = &su_dsm_g.batch[node];
	if (g->msg && empty && g->a == a && g->id == id &&
	    g->nmore + 1 < DSM_WAITERS_PER_NODE &&
	    g->len + 4 * ((size_t)g->nmore + 2) <= su_dsm_g.cap) {
		memcpy(g->msg + g->len + 4 * (size_t)g->nmore++, &slot, 4);
		return;
	}
	if (g->msg)
		grant_send(node);
	g->msg = malloc(len + 4 * ((size_t)DSM_WAITERS_PER_NODE + 1));
	if (!g->msg)
		earth_fatal("shared memory: out of memory");
	memcpy(g->msg, su_dsm_g.buf, len);
	*g = (struct grant_batch){g->msg, len, a, slot, id, 0};
}

/* The sweep's gathered grants, one a node, sent. */
static void grants_flush(void)
{
	su_dsm_g.gathering = false;
	for (uint32_t k = 0; k < su_dsm_g.n->num_nodes; k++)
		if (su_dsm_g.batch[k].msg)
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
	uint32_t nodes = su_dsm_g.n->num_nodes, self = su_dsm_g.n->id;
	uint32_t *sent = su_dsm_g.sent + (size_t)node * nodes;
	for (uint32_t k = 0; k < nodes; k++)
		su_dsm_g.vt_tmp[k] = node == self ? su_dsm_g.p.log.vt[k]
				     : their_vt[k] > sent[k] ? their_vt[k]
							     : sent[k];
	/* For another node's release, maybe while this node's own diffs
	 * are out: of its own intervals only those whose diffs are home. */
	uint32_t own_upto = dsm_proto_sendable(&su_dsm_g.p);
	bool collect = kind == DSM_SYNC_BARRIER && su_dsm_g.collect_now;
	size_t vt_len = nodes * sizeof(uint32_t);
	size_t len = encode_since(su_dsm_g.vt_tmp, 0, node, own_upto,
				  collect ? vt_len : 0);
	if (node != self)
		for (uint32_t k = 0; k < nodes; k++) {
			uint32_t v = su_dsm_g.p.log.vt[k];
			if (k == self && own_upto < v)
				v = own_upto;
			if (v > sent[k])
				sent[k] = v;
		}
	bool empty = len == 4; /* no notice: the count alone */
	unsigned a = kind;
	if (collect) {
		memcpy(su_dsm_g.buf + len, su_dsm_g.collect_to, vt_len);
		len += vt_len;
		a |= GRANT_COLLECT;
	}
	/* Between hosts, a lock's grant brings the pages it invalidates
	 * that are homed here (the next critical section reads them). */
	if (kind == DSM_SYNC_LOCK && node != self && !dsm_g.peer_base &&
	    su_dsm_g.grant_pages && len + 4 <= su_dsm_g.cap) {
		size_t with = carry_pages(node, len);
		if (with != len)
			a |= GRANT_PAGES;
		len = with;
	}
	uint64_t oid = dsm_id(su_dsm_g.n->id, id);
	if (su_dsm_g.gathering && kind != DSM_SYNC_LOCK) {
		grant_gather(node, a, thread, oid, len, empty);
		return;
	}
	su_dsm_g.barrier_msgs += kind == DSM_SYNC_BARRIER;
	su_dsm_send(node, M_GRANT, a, thread, oid, su_dsm_g.buf, len);
}

/* ---- set up ---- */

int su_dsm_open(struct earth_node *n)
{
	uint32_t nodes = n->num_nodes;
	su_dsm_g.n = n;
	if (dsm_proto_init(&su_dsm_g.p, &dsm_g.region, n->id, nodes, &proto_ops,
			   NULL) ||
	    dsm_sync_init(&su_dsm_g.sync, nodes, DSM_WAITERS_PER_NODE,
			  DSM_OBJECTS_PER_NODE, DSM_OBJECTS_PER_NODE,
			  DSM_OBJECTS_PER_NODE, mgr_go, NULL) ||
	    (n->id == 0 &&
	     dsm_alloc_init(&su_dsm_g.alloc, dsm_g.region.pages, nodes)))
		return -1;
	su_dsm_g.p.refresh_max =
	    (uint32_t)earth_setting_u64(EARTH_SET_DSM_REFRESH);
	su_dsm_g.p.home_keep =
	    (uint32_t)earth_setting_u64(EARTH_SET_DSM_HOME_KEEP);
	su_dsm_g.grant_pages =
	    (uint32_t)earth_setting_u64(EARTH_SET_DSM_GRANT_PAGES);
	su_dsm_g.lock_pretwin =
	    (uint32_t)earth_setting_u64(EARTH_SET_DSM_LOCK_PRETWIN);
	su_dsm_g.claim_ahead =
	    earth_setting_u64(EARTH_SET_DSM_CLAIM_AHEAD) != 0;
	if (su_dsm_fiber_open(dsm_g.region.pages))
		return -1;
	su_dsm_g.pwait = calloc(dsm_g.region.pages, sizeof(*su_dsm_g.pwait));
	su_dsm_g.sent = calloc((size_t)nodes * nodes, sizeof(uint32_t));
	su_dsm_g.told = calloc((size_t)nodes * nodes, sizeof(uint32_t));
	su_dsm_g.cap = n->net ? net_msg_max(n->net) : BUF_CAP;
	dsm_log_fit(&su_dsm_g.p.log, su_dsm_g.cap);
	/* A page not yet homed here may get, from each node, a fetch, a
	 * claim's word and a diff in its parts, and more in flight. */
	size_t part = su_dsm_g.cap - DSM_DIFF_RUN_HDR,
	       parts =
		   (dsm_diff_bound(dsm_g.region.page_size) + part - 1) / part;
	su_dsm_g.early_max = (uint32_t)((3 + parts) * nodes + 8);
	su_dsm_g.buf = malloc(BUF_CAP);
	su_dsm_g.cut = malloc(BUF_CAP);
	su_dsm_g.dpart = malloc(BUF_CAP);
	su_dsm_g.vt_tmp = calloc(nodes, sizeof(uint32_t));
	su_dsm_g.early = calloc(dsm_g.region.pages, sizeof(*su_dsm_g.early));
	su_dsm_g.diff_to = calloc(nodes, sizeof(uint32_t));
	su_dsm_g.done = calloc((size_t)nodes * DSM_THREADS_PER_NODE, 1);
	su_dsm_g.batch = calloc(nodes, sizeof(*su_dsm_g.batch));
	if (!su_dsm_g.pwait || !su_dsm_g.sent || !su_dsm_g.told ||
	    !su_dsm_g.buf || !su_dsm_g.cut || !su_dsm_g.dpart ||
	    !su_dsm_g.vt_tmp || !su_dsm_g.early || !su_dsm_g.done ||
	    !su_dsm_g.diff_to || !su_dsm_g.batch)
		return -1;
	if (dsm_g.main_pt) /* node 0's main: thread 0, slot 0 */
		su_dsm_g.by_slot[0] = dsm_g.main_pt;
	return 0;
}

/* The program threads this node runs now: a keep of the protocol counts
 * their releases in rounds (dsm_proto_threads). */
void su_dsm_threads_counted(void)
{
	uint32_t k = 0;
	for (unsigned i = 0; i < DSM_THREADS_PER_NODE; i++)
		k += su_dsm_g.by_slot[i] != NULL;
	dsm_proto_threads(&su_dsm_g.p, k);
}

void su_dsm_close(void)
{
	if (!su_dsm_g.n)
		return;
	/* Threads the job's end found waiting or running, and fibers'
	 * records. */
	su_dsm_fiber_close();
	for (unsigned i = 0; i < DSM_WAITERS_PER_NODE; i++) {
		struct dsm_pt *pt = su_dsm_g.by_slot[i];
		if (!pt || pt == dsm_g.main_pt)
			continue;
		if (!pt->fiber && !pt->t.finished)
			dsm_thread_destroy(&pt->t);
		free(pt);
	}
	dsm_proto_fini(&su_dsm_g.p);
	dsm_sync_fini(&su_dsm_g.sync);
	if (su_dsm_g.n->id == 0)
		dsm_alloc_fini(&su_dsm_g.alloc);
	free(su_dsm_g.pwait);
	free(su_dsm_g.held);
	for (unsigned k = 0; k < DSM_OBJECTS_PER_NODE; k++)
		if (su_dsm_g.bar[k]) {
			free(su_dsm_g.bar[k]->arrived);
			free(su_dsm_g.bar[k]->least);
			free(su_dsm_g.bar[k]);
		}
	free(su_dsm_g.sent);
	free(su_dsm_g.told);
	free(su_dsm_g.diff_to);
	free(su_dsm_g.batch); /* never one gathered between two messages */
	free(su_dsm_g.vt_tmp);
	for (struct kept *m = su_dsm_g.local.head, *nx; m; m = nx) {
		nx = m->next;
		free(m);
	}
	for (struct kept *m = su_dsm_g.after_claims.head, *nx; m; m = nx) {
		nx = m->next;
		free(m);
	}
	free(su_dsm_g.parked);
	for (uint32_t k = 0; su_dsm_g.early && k < su_dsm_g.early_hi; k++)
		for (struct kept *m = su_dsm_g.early[k].head, *nx; m; m = nx) {
			nx = m->next;
			free(m);
		}
	free(su_dsm_g.early);
	free(su_dsm_g.done);
	for (struct placing *w = su_dsm_g.placing, *nx; w; w = nx) {
		nx = w->next;
		free(w->acked);
		free(w);
	}
	free(su_dsm_g.buf);
	free(su_dsm_g.cut);
	free(su_dsm_g.dpart);
	free(su_dsm_g.big);
	while (su_dsm_g.rfree) {
		struct rfetch *f = su_dsm_g.rfree;
		su_dsm_g.rfree = f->next;
		free(f);
	}
	memset(&su_dsm_g, 0, sizeof(su_dsm_g));
}

/* ---- requests of this node's threads ---- */

static void check_object(struct dsm_pt *pt, const char *what, uint64_t id)
{
	if (dsm_id_node(id) >= su_dsm_g.n->num_nodes && pt->fiber)
		earth_fatal("shared memory: fiber %s: %s %#llx was never made "
			    "(earth_dsm_%s_new): its number names no node of "
			    "the job",
			    su_dsm_fiber_name(pt->ffiber), what,
			    (unsigned long long)id, what);
	if (dsm_id_node(id) >= su_dsm_g.n->num_nodes)
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
	while (i < su_dsm_g.nheld && su_dsm_g.p.diffs_out == 0) {
		struct held x = su_dsm_g.held[i++];
		perform(x.pt, x.req, x.b, x.c);
	}
	if (i) {
		memmove(su_dsm_g.held, su_dsm_g.held + i,
			(su_dsm_g.nheld - i) * sizeof(*su_dsm_g.held));
		su_dsm_g.nheld -= i;
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
	su_dsm_g.held =
	    room_for_one(su_dsm_g.held, su_dsm_g.nheld, &su_dsm_g.held_cap,
			 sizeof(*su_dsm_g.held));
	su_dsm_g.held[su_dsm_g.nheld++] = (struct held){pt, req, b, c};
}

static void release(void)
{
	if (dsm_proto_release(&su_dsm_g.p) < 0)
		earth_fatal("shared memory: a release failed: %m");
}

static void perform(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
{
	uint32_t nodes = su_dsm_g.n->num_nodes;
	size_t vt_len = nodes * sizeof(uint32_t);
	switch (req) {
	case DSM_R_LOCK:
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_LOCK;
		pt->wait_id = (uint32_t)b;
		if (dsm_id_node(b) == su_dsm_g.n->id)
			su_dsm_g.lock_local++;
		else
			su_dsm_g.lock_remote++;
		su_dsm_send(dsm_id_node(b), M_LOCK, b, pt->slot, 0,
			    su_dsm_g.p.log.vt, vt_len);
		return;
	case DSM_R_UNLOCK: {
		size_t len = notices_for(dsm_id_node(b), 0);
		su_dsm_send(dsm_id_node(b), M_UNLOCK, b, pt->slot, 0,
			    su_dsm_g.buf, len);
		su_dsm_resume(pt, 0);
		return;
	}
	case DSM_R_BARRIER: {
		memcpy(su_dsm_g.buf, su_dsm_g.p.log.vt, vt_len);
		size_t len = vt_len + notices_for(dsm_id_node(b), vt_len);
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_BARRIER;
		pt->wait_id = (uint32_t)b;
		su_dsm_g.barrier_msgs++;
		su_dsm_send(dsm_id_node(b), M_BARRIER, b, pt->slot, c,
			    su_dsm_g.buf, len);
		return;
	}
	case DSM_R_FLAG_SET: {
		size_t len = notices_for(dsm_id_node(b), 0);
		su_dsm_send(dsm_id_node(b), M_FLAG_SET, b, 0, 0, su_dsm_g.buf,
			    len);
		su_dsm_resume(pt, 0);
		return;
	}
	case DSM_R_FLAG_WAIT:
		pt->waits = M_GRANT;
		pt->wait_req = DSM_R_FLAG_WAIT;
		pt->wait_id = (uint32_t)b;
		su_dsm_send(dsm_id_node(b), M_FLAG_WAIT, b, pt->slot, 0,
			    su_dsm_g.p.log.vt, vt_len);
		return;
	case DSM_R_FLAG_CLEAR:
		su_dsm_send(dsm_id_node(b), M_FLAG_CLEAR, b, 0, 0, NULL, 0);
		su_dsm_resume(pt, 0);
		return;
	case DSM_R_ALLOC:
		pt->waits = M_ALLOCATED;
		su_dsm_send(0, M_ALLOC, b, c, pt->slot, NULL, 0);
		return;
	case DSM_R_FREE:
		su_dsm_send(0, M_FREE, b, 0, 0, NULL, 0);
		su_dsm_resume(pt, 0);
		return;
	case DSM_R_CREATE: {
		if (!su_dsm_g.globals_sent)
			su_dsm_send_globals();
		uint32_t to = (uint32_t)(c % nodes);
		uint32_t *vt = su_dsm_g.told + (size_t)to * nodes;
		size_t len = encode_since(vt, 0, to, UINT32_MAX, 0);
		memcpy(vt, su_dsm_g.p.log.vt, vt_len);
		su_dsm_send(to, M_CREATE, b, c, 0, su_dsm_g.buf, len);
		su_dsm_resume(pt, 0);
		return;
	}
	case DSM_R_END: {
		size_t len = notices_for(0, 0);
		uint32_t id = pt->id;
		su_dsm_g.by_slot[pt->slot] = NULL;
		free(pt);
		su_dsm_threads_counted();
		su_dsm_send(0, M_DONE, 0, id, 0, su_dsm_g.buf, len);
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
	su_dsm_g.p.claim_ahead =
	    su_dsm_g.claim_ahead; /* a thread's: it may go on */
	enum dsm_access a =
	    dsm_proto_access(&su_dsm_g.p, (uint32_t)page, write, again);
	su_dsm_g.p.claim_ahead = false;
	if (a == DSM_ACCESS_OK) {
		su_dsm_resume(pt, 0);
		return;
	}
	pt->wait_page = (uint32_t)page;
	pt->wait_write = write;
	pt->next = su_dsm_g.pwait[page];
	su_dsm_g.pwait[page] = pt;
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
			dsm_proto_home_written(&su_dsm_g.p,
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
	if (to == su_dsm_g.n->id ||
	    su_dsm_g.diff_to[to] != su_dsm_g.p.diffs_out)
		return false;
	su_dsm_g.early_sends++;
	return true;
}

static void request(const struct su_req *r);

/* A request put off while first writes wait for their homes. */
static void park(const struct su_req *r)
{
	su_dsm_g.parked =
	    room_for_one(su_dsm_g.parked, su_dsm_g.nparked,
			 &su_dsm_g.parked_cap, sizeof(*su_dsm_g.parked));
	su_dsm_g.parked[su_dsm_g.nparked++] = *r;
}

/* The last home of the first writes claimed ahead came: what waited
 * for it, in order (the messages first: they came before). Each is
 * handled as if it came now; should first writes be claimed ahead again
 * meanwhile, the rest waits again, behind. */
void su_dsm_claims_done(void)
{
	struct kept *m = su_dsm_g.after_claims.head;
	su_dsm_g.after_claims = (struct kept_list){0};
	while (m) {
		struct kept *nx = m->next;
		if (su_dsm_g.p.claims_out || su_dsm_g.after_claims.n) {
			keep(&su_dsm_g.after_claims, m->from, &m->h,
			     m->payload);
		} else {
			su_dsm_handle(m->from, &m->h, m->payload);
		}
		free(m);
		m = nx;
	}
	struct su_req *q = su_dsm_g.parked;
	size_t n = su_dsm_g.nparked;
	su_dsm_g.parked = NULL;
	su_dsm_g.nparked = su_dsm_g.parked_cap = 0;
	for (size_t i = 0; i < n; i++)
		request(&q[i]); /* parks again while claims are out */
	free(q);
}

static void request(const struct su_req *r)
{
	if ((unsigned)r->n != DSM_R_FAULT &&
	    (su_dsm_g.p.claims_out || su_dsm_g.nparked)) {
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
		if (su_dsm_g.ended >= r->b) {
			su_dsm_resume(pt, 0);
		} else {
			su_dsm_g.end_waiter = pt;
			su_dsm_g.end_want = (uint32_t)r->b;
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
	if (su_dsm_g.nheld ||
	    (su_dsm_g.p.diffs_out && !behind_diffs(req, r->b)))
		hold(pt, req, r->b, r->c);
	else
		perform(pt, req, r->b, r->c);
}

/* ---- what fibers' operations ask of it (su/dsm_fiber.h) ---- */

struct dsm_proto *su_dsm_proto(void)
{
	return su_dsm_g.n ? &su_dsm_g.p : NULL;
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
		if (!su_dsm_g.by_slot[i]) {
			su_dsm_g.by_slot[i] = pt;
			pt->slot = i;
			return true;
		}
	return false;
}

void su_dsm_waiter_free(struct dsm_pt *pt)
{
	su_dsm_g.by_slot[pt->slot] = NULL;
	free(pt);
}

struct dsm_pt *su_dsm_lock_holder(uint64_t id)
{
	for (unsigned i = DSM_THREADS_PER_NODE; i < DSM_WAITERS_PER_NODE; i++)
		if (su_dsm_g.by_slot[i] && su_dsm_g.by_slot[i]->holds &&
		    su_dsm_g.by_slot[i]->wait_id == (uint32_t)id)
			return su_dsm_g.by_slot[i];
	return NULL;
}

bool su_dsm_releasing(void)
{
	return su_dsm_g.p.diffs_out || su_dsm_g.nheld;
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
void su_dsm_page_came(uint32_t page)
{
	struct dsm_pt *w = su_dsm_g.pwait[page];
	su_dsm_g.pwait[page] = NULL;
	while (w) {
		struct dsm_pt *next = w->next;
		fault(w, page, w->wait_write, true);
		w = next;
	}
	su_dsm_fiber_page(page);
}

/* The thread of slot that waits for an answer of this kind (the slot in
 * field `field`). */
struct dsm_pt *su_dsm_waiting(const struct wire_hdr *h, uint32_t from,
			      const char *field, uint64_t slot, unsigned what)
{
	if (slot >= DSM_WAITERS_PER_NODE || !su_dsm_g.by_slot[slot] ||
	    su_dsm_g.by_slot[slot]->waits != what)
		su_dsm_bad(
		    h, from, field,
		    "no thread of this node with that slot waits for it");
	struct dsm_pt *pt = su_dsm_g.by_slot[slot];
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
	    slot < DSM_WAITERS_PER_NODE ? su_dsm_g.by_slot[slot] : NULL;
	if (!pt || pt->waits != M_GRANT)
		return got; /* waiting_thread refuses it */
	unsigned kind = pt->wait_req == DSM_R_LOCK	? DSM_SYNC_LOCK
			: pt->wait_req == DSM_R_BARRIER ? DSM_SYNC_BARRIER
							: DSM_SYNC_FLAG;
	if (h->c != pt->wait_id || from != dsm_id_node(pt->wait_id) ||
	    got != kind)
		su_dsm_bad(
		    h, from, "c",
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
		su_dsm_bad(h, from, "a",
			   "pages with no count, or with a collect");
	memcpy(&n, payload, 4);
	if (!n || n > GRANT_PAGES_MAX || h->len - 4 < n * (4 + ps))
		su_dsm_bad(
		    h, from, "payload",
		    "a count of pages past the most a grant carries, or past "
		    "its bytes");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pg;
		memcpy(&pg, payload + 4 + 4 * (size_t)i, 4);
		if (pg >= dsm_g.region.pages || su_dsm_g.p.home[pg] != from)
			su_dsm_bad(h, from, "payload",
				   "a page that is not the granter's to send");
	}
	su_dsm_g.carry = payload + 4;
	su_dsm_g.ncarry = n;
	su_dsm_g.carry_from = from;
	su_dsm_g.p.refresh_max += n;
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
	if (dsm_id_node(id) != su_dsm_g.n->id)
		su_dsm_bad(h, from, "a", "an object of another node");
	if (k >= atomic_load_explicit(made, memory_order_acquire))
		earth_fatal("shared memory: node %u used %s 0x%llx, which node "
			    "%u (its manager) never made: use what "
			    "earth_dsm_%s_new returned, after it returned "
			    "(PARMACS: LOCKINIT, ALOCKINIT, BARINIT or "
			    "PAUSEINIT before its first use)",
			    from, kind, (unsigned long long)id, su_dsm_g.n->id,
			    kind);
	return k;
}

/* The intervals a message carries: an acquire of this node (a grant, a
 * thread created here, a thread's end that main waits for), or with
 * !acquire a release this node manages (dsm_proto_learn). */
static void notices_in(const struct wire_hdr *h, uint32_t from, const void *buf,
		       size_t len, bool acquire)
{
	struct dsm_notice_fault f = {0};
	if ((acquire ? dsm_proto_acquire(&su_dsm_g.p, buf, len, &f)
		     : dsm_proto_learn(&su_dsm_g.p, buf, len, &f)) != 0)
		su_dsm_bad(h, from, "payload",
			   f.what ? f.what : "bad write notices");
}

void su_dsm_learn(const struct wire_hdr *h, uint32_t from, const void *buf,
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
		su_dsm_bad(h, from, "a", why);
}

static void bar_reset(struct bar_ep *ep)
{
	uint32_t nodes = su_dsm_g.n->num_nodes;
	memset(ep->arrived, 0, nodes * sizeof(uint32_t));
	memset(ep->least, 0xff, nodes * sizeof(uint32_t));
}

static struct bar_ep *bar_episode(uint32_t k)
{
	if (!su_dsm_g.bar[k]) {
		uint32_t nodes = su_dsm_g.n->num_nodes;
		struct bar_ep *ep = calloc(1, sizeof(*ep));
		if (!ep || !(ep->arrived = calloc(nodes, sizeof(uint32_t))) ||
		    !(ep->least = calloc(nodes, sizeof(uint32_t))))
			earth_fatal("shared memory: out of memory");
		bar_reset(ep);
		su_dsm_g.bar[k] = ep;
	}
	return su_dsm_g.bar[k];
}

/* A fetch or diff of a first-touch page this node claimed to write, come
 * before node 0's word that it is the home: kept until the word (at most
 * a few per node of the job). */
static bool early(const struct wire_hdr *h, uint32_t from, const void *payload)
{
	if (h->a >= dsm_g.region.pages ||
	    !dsm_proto_claiming(&su_dsm_g.p, (uint32_t)h->a))
		return false;
	struct kept_list *l = &su_dsm_g.early[h->a];
	if (h->a >= su_dsm_g.early_hi)
		su_dsm_g.early_hi = (uint32_t)h->a + 1;
	if (l->n >= su_dsm_g.early_max)
		su_dsm_bad(
		    h, from, "a",
		    "too many messages for a page whose home is not decided");
	keep(l, from, h, payload);
	return true;
}

void su_dsm_handle(uint32_t from, const struct wire_hdr *h, const void *payload)
{
	uint32_t nodes = su_dsm_g.n->num_nodes;
	size_t vt_len = nodes * sizeof(uint32_t);
	const char *why = NULL;
	uint32_t page = (uint32_t)h->a;
	if ((unsigned)h->n >= M_COUNT_)
		su_dsm_bad(h, from, "n", "unknown kind");
	if ((su_dsm_g.p.claims_out || su_dsm_g.after_claims.n) &&
	    (h->n == M_NOTICES || h->n == M_GRANT || h->n == M_CREATE ||
	     h->n == M_DONE)) {
		/* An acquire waits until every page this node wrote first
		 * has its home (no notice may find one without). */
		if (su_dsm_g.after_claims.n >= 64u * nodes + 1024)
			su_dsm_bad(
			    h, from, "n",
			    "too many grants while this node's first writes "
			    "wait for their homes");
		keep(&su_dsm_g.after_claims, from, h, payload);
		return;
	}
	switch ((enum dsm_msg)h->n) {
	case M_FETCH:
		if (early(h, from, payload))
			return;
		{
			const void *copy =
			    h->a < dsm_g.region.pages
				? dsm_proto_serve(&su_dsm_g.p, from, page, &why)
				: NULL;
			if (!copy)
				su_dsm_bad(h, from, "a",
					   why ? why : "no page of the region");
			su_dsm_send(from, M_PAGE, page, 0, 0, copy,
				    dsm_g.region.page_size);
			return;
		}
	case M_PAGE: {
		if (h->a >= dsm_g.region.pages)
			su_dsm_bad(h, from, "a", "no page of the region");
		int rc = dsm_proto_page_in(&su_dsm_g.p, from, page, payload,
					   h->len, &why);
		if (rc < 0)
			su_dsm_bad(h, from, "a", why);
		if (rc > 0)
			su_dsm_page_came(page);
		return;
	}
	case M_DIFF:
		if (early(h, from, payload))
			return;
		if (h->b > 1)
			su_dsm_bad(h, from, "b",
				   "neither a diff's last part nor not");
		if (h->a >= dsm_g.region.pages ||
		    dsm_proto_apply(&su_dsm_g.p, from, page, payload, h->len,
				    &why))
			su_dsm_bad(h, from, "payload",
				   why ? why : "no page of the region");
		if (!h->b) /* the diff's last part */
			su_dsm_send(from, M_ACK, 0, 0, 0, NULL, 0);
		return;
	case M_ACK:
		if (!su_dsm_g.diff_to[from] ||
		    dsm_proto_diff_acked(&su_dsm_g.p))
			su_dsm_bad(
			    h, from, "n",
			    "an acknowledgement of no diff sent to that node");
		su_dsm_g.diff_to[from]--;
		if (!su_dsm_g.p.diffs_out)
			run_held();
		if (!su_dsm_g.p.diffs_out && !su_dsm_g.nheld)
			su_dsm_fiber_acked();
		return;
	case M_LOCK: {
		uint32_t k = my_object(h, from, &dsm_g.nlocks, "lock");
		if (h->len != vt_len)
			su_dsm_bad(h, from, "len", "not a vector time");
		sync_refused(h, from,
			     dsm_sync_lock(&su_dsm_g.sync, k, from,
					   (uint32_t)h->b, payload, &why),
			     why);
		return;
	}
	case M_UNLOCK: {
		uint32_t k = my_object(h, from, &dsm_g.nlocks, "lock");
		learn_release(h, from, payload, h->len);
		sync_refused(h, from,
			     dsm_sync_unlock(&su_dsm_g.sync, k, from,
					     (uint32_t)h->b, &why),
			     why);
		return;
	}
	case M_BARRIER: {
		uint32_t k = my_object(h, from, &dsm_g.nbarriers, "barrier");
		if (h->len < vt_len || !h->c ||
		    h->c > (uint64_t)nodes * DSM_WAITERS_PER_NODE)
			su_dsm_bad(h, from, "c",
				   "a count no job's threads make");
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
		    dsm_sync_waiting(&su_dsm_g.sync, DSM_SYNC_BARRIER, k) + 1 ==
		    count;
		bool all = last;
		for (uint32_t q = 0; q < nodes && all; q++)
			all = ep->arrived[q] != 0;
		su_dsm_g.collect_now = all;
		su_dsm_g.collect_to = ep->least;
		su_dsm_g.gathering = true;
		int rc = dsm_sync_barrier(&su_dsm_g.sync, k, count, from,
					  (uint32_t)h->b, vt, &why);
		grants_flush();
		free(vt);
		sync_refused(h, from, rc, why);
		su_dsm_g.collect_now = false;
		if (last)
			bar_reset(ep);
		return;
	}
	case M_FLAG_SET: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		learn_release(h, from, payload, h->len);
		su_dsm_g.gathering = true;
		int rc = dsm_sync_flag_set(&su_dsm_g.sync, k, &why);
		grants_flush();
		sync_refused(h, from, rc, why);
		return;
	}
	case M_FLAG_WAIT: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		if (h->len != vt_len)
			su_dsm_bad(h, from, "len", "not a vector time");
		sync_refused(h, from,
			     dsm_sync_flag_wait(&su_dsm_g.sync, k, from,
						(uint32_t)h->b, payload, &why),
			     why);
		return;
	}
	case M_FLAG_CLEAR: {
		uint32_t k = my_object(h, from, &dsm_g.nflags, "flag");
		sync_refused(h, from,
			     dsm_sync_flag_clear(&su_dsm_g.sync, k, &why), why);
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
				su_dsm_bad(
				    h, from, "a",
				    "more waiters in a lock's grant, or with "
				    "pages, or no count of them");
			memcpy(&nmore, pl + len - 4, 4);
			if (!nmore || nmore >= DSM_WAITERS_PER_NODE ||
			    (len - 4) / 4 < nmore)
				su_dsm_bad(
				    h, from, "len",
				    "a count of more waiters no node has, or "
				    "past the payload");
			len -= 4 + 4 * (size_t)nmore;
			more = pl + len;
		}
		struct dsm_pt *pt = su_dsm_waiting(h, from, "b", h->b, M_GRANT);
		if (h->a & GRANT_PAGES) {
			size_t head = granted_pages(h, from, pl);
			pl += head;
			len -= head;
		}
		if (h->a & GRANT_COLLECT) {
			if (len < vt_len)
				su_dsm_bad(h, from, "len",
					   "no vector time to collect to");
			size_t nl = len - vt_len;
			su_dsm_learn(h, from, pl, nl);
			uint32_t *upto = malloc(vt_len);
			if (!upto)
				earth_fatal("shared memory: out of memory");
			memcpy(upto, pl + nl, vt_len);
			/* Never past what this node holds. */
			for (uint32_t k = 0; k < nodes; k++)
				if (upto[k] > su_dsm_g.p.log.vt[k])
					upto[k] = su_dsm_g.p.log.vt[k];
			dsm_log_collect(&su_dsm_g.p.log, upto);
			free(upto);
		} else {
			su_dsm_learn(h, from, pl, len);
		}
		su_dsm_g.p.refresh_max -=
		    su_dsm_g.ncarry; /* the pages' offer ends */
		su_dsm_g.ncarry = 0;
		if (kind == DSM_SYNC_LOCK)
			lock_pages_pretwin(h->c);
		su_dsm_resume(pt, 0);
		for (uint32_t i = 0; i < nmore; i++) {
			uint32_t slot;
			memcpy(&slot, more + 4 * (size_t)i, 4);
			grant_check(h, from, slot); /* the same object */
			su_dsm_resume(
			    su_dsm_waiting(h, from, "b", slot, M_GRANT), 0);
		}
		return;
	}
	case M_ALLOC:
	case M_PLACED:
	case M_PLACED_ACK:
	case M_ALLOCATED:
	case M_FREE:
	case M_GLOBALS:
	case M_CREATE:
	case M_DONE:
	case M_CLAIM:
	case M_HOME:
		su_dsm_job_receive(from, h, payload);
		return;
	case M_COUNT_:
		break;
	}
	su_dsm_bad(h, from, "n", "unknown kind");
}

void su_dsm_receive(struct earth_node *n, uint32_t from,
		    const struct wire_hdr *h, const void *payload)
{
	if (!n->dsm_on || !su_dsm_g.n)
		wire_refuse(h, from, n->num_nodes, 0, "type", NULL,
			    "a shared-memory message, and this program uses no "
			    "shared memory (do all nodes run the same "
			    "binary?)");
	su_dsm_handle(from, h, payload);
	drain_local();
}

const char *su_dsm_msg_name(unsigned what)
{
	return what < M_COUNT_ && msg_names[what] ? msg_names[what] : "DSM ?";
}
