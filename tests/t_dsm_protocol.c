/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_protocol.c - the page DSM's protocol, run on simulated nodes with
 * the runtime's own pieces (runtime/dsm/diff.h, notice.h): home-based
 * multi-writer lazy release consistency. Every node caches pages of the
 * homes (page p's home is node p % N, which works on its home copy), twins
 * a page at its first write, sends the diff to the home at a release (and
 * before a noticed page it wrote is invalidated), and closes an interval
 * with the pages it wrote; node 0 manages locks and barriers, and its log
 * gathers every release's notices, which its grants and barrier releases
 * carry to the nodes that lack them.
 *
 * Random data-race-free programs on 2-4 nodes: each step a node acquires
 * or releases one of a few locks, waits at a barrier with all, or reads
 * or writes a byte it may touch without a race (its last write and every
 * read since happen before, as a vector clock of the generator, apart
 * from the protocol, says). Every read must return the byte a sequential
 * memory holds: the last write, as happens-before orders them. Pages are
 * 256 bytes, so nodes write different bytes of one page between
 * synchronisations (false sharing, merged at the home).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dsm/alloc.h"
#include "dsm/proto.h"
#include "dsm/sync.h"

TestSuite(dsm_protocol, .timeout = 60);

enum { MAXN = 4, PAGES = 16, PSZ = 4096, LOCKS = 3 };
/* The bytes the programs touch: the first 64 of every page (nodes share
 * pages, and a page is cheap to copy). */
enum { SPAN = 64, BYTES = PAGES * SPAN };

static uint32_t addr_of(uint32_t a)
{
	return a / SPAN * PSZ + a % SPAN;
}

/* ---- the network: a FIFO channel per pair of nodes ---- */

enum {
	M_FETCH,
	M_PAGE,
	M_DIFF,
	M_ACK,
	M_LOCK,	   /* to the manager: lock id (page), vt */
	M_UNLOCK,  /* to the manager: lock id, the releaser's notices */
	M_BARRIER, /* to the manager: its notices, vt */
	M_GRANT,   /* from the manager: lock id, the notices the waiter lacks */
	M_BAR_GO,  /* from the manager: notices, vt: what all hold */
};
struct msg {
	int type;
	uint32_t page; /* or the lock */
	size_t len;
	uint8_t *data;
	uint32_t vt[4];
	struct msg *next;
};
static struct {
	struct msg *head, *tail;
	bool held; /* the test holds it back */
} chan[MAXN][MAXN];

/* ---- the nodes ---- */

struct node {
	uint32_t id;
	struct dsm_region r;
	struct dsm_proto p;
	uint32_t sent_vt[4]; /* what the manager has of this node's log */
	bool granted;	     /* its lock request or barrier went through */
};

static struct dsm_sync mgr; /* node 0's */

static struct node nd[MAXN];
static uint32_t nn;

static struct msg *send(uint32_t from, uint32_t to, int type, uint32_t page,
			const void *data, size_t len)
{
	struct msg *m = calloc(1, sizeof(*m));
	cr_assert(m);
	m->type = type;
	m->page = page;
	m->len = len;
	m->data = malloc(len ? len : 1);
	cr_assert(m->data);
	if (len)
		memcpy(m->data, data, len);
	if (chan[from][to].tail)
		chan[from][to].tail->next = m;
	else
		chan[from][to].head = m;
	chan[from][to].tail = m;
	return m;
}

static void op_fetch(void *ctx, uint32_t home, uint32_t page)
{
	send(((struct node *)ctx)->id, home, M_FETCH, page, NULL, 0);
}

static void op_diff(void *ctx, uint32_t home, uint32_t page, const void *d,
		    size_t len)
{
	send(((struct node *)ctx)->id, home, M_DIFF, page, d, len);
}

/* The home's copy read one-sided at an acquire, as on one host (off
 * unless a test turns it on): the releases it follows completed, so their
 * diffs are there; never while this node's own diffs are out. */
static bool refresh_on;
static uint64_t refreshed; /* by op_refresh, every node */
static bool op_refresh(void *ctx, uint32_t home, uint32_t page, void *dst)
{
	struct node *x = ctx;
	if (!refresh_on || x->p.diffs_out)
		return false;
	memcpy(dst, dsm_region_alias(&nd[home].r, page), PSZ);
	refreshed++;
	return true;
}

static const struct dsm_proto_ops ops = {op_fetch, op_diff, NULL, op_refresh};

static uint8_t nbuf[1 << 20];

/* x's log since vt, encoded into nbuf (of x's own intervals those up to
 * own_upto); its length. */
static size_t notices_since(struct node *x, const uint32_t *vt,
			    uint32_t own_upto)
{
	size_t len =
	    dsm_log_encode_since(&x->p.log, vt, own_upto, nbuf, sizeof(nbuf));
	cr_assert_lt(len, (size_t)-2);
	return len;
}

static void learn(struct node *x, const struct msg *m)
{
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_proto_acquire(&x->p, m->data, m->len, &f), 0, "%s",
		     f.what);
}

/* The manager receives a release: its notices held, node 0's copies
 * left until one of its own threads acquires. */
static void learn_release(struct node *x, const struct msg *m)
{
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_proto_learn(&x->p, m->data, m->len, &f), 0, "%s",
		     f.what);
}

/* The manager lets a waiter go: a grant with what it lacks. */
static void mgr_go(void *ctx, enum dsm_sync_kind kind, uint32_t id,
		   uint32_t node, uint32_t thread, const uint32_t *their_vt)
{
	(void)ctx;
	cr_assert_eq(thread, 0);
	struct msg *m =
	    send(0, node, kind == DSM_SYNC_LOCK ? M_GRANT : M_BAR_GO, id, nbuf,
		 notices_since(&nd[0], their_vt, dsm_proto_sendable(&nd[0].p)));
	memcpy(m->vt, nd[0].p.log.vt, nn * sizeof(uint32_t));
}

/* Delivers the next message of channel from -> to; false if none. */
static bool deliver_one(uint32_t from, uint32_t to)
{
	struct msg *m = chan[from][to].head;
	if (!m || chan[from][to].held)
		return false;
	chan[from][to].head = m->next;
	if (!m->next)
		chan[from][to].tail = NULL;
	struct dsm_proto *p = &nd[to].p;
	const char *why = NULL;
	static uint8_t page[PSZ];
	switch (m->type) {
	case M_FETCH:
		const void *home_copy = dsm_proto_serve(p, from, m->page, &why);
		cr_assert(home_copy, "%s", why);
		memcpy(page, home_copy, PSZ);
		send(to, from, M_PAGE, m->page, page, PSZ);
		break;
	case M_PAGE:
		cr_assert_geq(
		    dsm_proto_page_in(p, from, m->page, m->data, m->len, &why),
		    0, "%s", why);
		break;
	case M_DIFF:
		cr_assert_eq(
		    dsm_proto_apply(p, from, m->page, m->data, m->len, &why), 0,
		    "%s", why);
		send(to, from, M_ACK, m->page, NULL, 0);
		break;
	case M_ACK:
		cr_assert_eq(dsm_proto_diff_acked(p), 0);
		break;
	case M_LOCK:
		cr_assert_eq(dsm_sync_lock(&mgr, m->page, from, 0, m->vt, &why),
			     0, "%s", why);
		break;
	case M_UNLOCK:
		learn_release(&nd[0], m);
		cr_assert_eq(dsm_sync_unlock(&mgr, m->page, from, 0, &why), 0,
			     "%s", why);
		break;
	case M_BARRIER:
		learn_release(&nd[0], m);
		cr_assert_eq(
		    dsm_sync_barrier(&mgr, m->page, nn, from, 0, m->vt, &why),
		    0, "%s", why);
		break;
	case M_GRANT:
		learn(&nd[to], m);
		memcpy(nd[to].sent_vt, nd[to].p.log.vt, nn * sizeof(uint32_t));
		nd[to].granted = true;
		break;
	case M_BAR_GO:
		learn(&nd[to], m);
		dsm_log_collect(&nd[to].p.log, m->vt);
		memcpy(nd[to].sent_vt, nd[to].p.log.vt, nn * sizeof(uint32_t));
		nd[to].granted = true;
		break;
	}
	free(m->data);
	free(m);
	return true;
}

static unsigned net_seed = 1;

/* Delivers one message of a channel picked at random among those with
 * one; false when none can go. */
static bool deliver_any(void)
{
	uint32_t k = nn * nn, start;
	net_seed = net_seed * 1103515245u + 12345u;
	start = (net_seed >> 8) % k;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t c = (start + i) % k;
		if (deliver_one(c / nn, c % nn))
			return true;
	}
	return false;
}

static void settle(void)
{
	while (deliver_any())
		;
}

/* How the simulated nodes' pages fault (a test may ask for both). */
static enum dsm_region_faults sim_faults = DSM_FAULTS_AUTO;

static void sim_start(uint32_t nodes)
{
	nn = nodes;
	memset(chan, 0, sizeof(chan));
	memset(nd, 0, sizeof(nd));
	cr_assert_eq(dsm_sync_init(&mgr, nn, 1, LOCKS, 1, 0, mgr_go, NULL), 0);
	for (uint32_t i = 0; i < nn; i++) {
		char err[256];
		nd[i].id = i;
		cr_assert_eq(dsm_region_map(&nd[i].r, NULL, PAGES * PSZ, PSZ,
					    sim_faults, err, sizeof(err)),
			     0, "%s", err);
		cr_assert_eq(
		    dsm_proto_init(&nd[i].p, &nd[i].r, i, nn, &ops, &nd[i]), 0);
		for (uint32_t q = 0; q < PAGES; q++) /* page q: node q % N */
			cr_assert_eq(dsm_proto_set_home(&nd[i].p, q, 1, q % nn),
				     0);
	}
}

static void sim_end(void)
{
	settle();
	for (uint32_t i = 0; i < nn; i++) {
		dsm_proto_fini(&nd[i].p);
		dsm_region_unmap(&nd[i].r);
	}
	dsm_sync_fini(&mgr);
}

/* An access as the EU's fault path makes it: ask the protocol until the
 * page is usable, the network running meanwhile. */
static void access_page(struct node *x, uint32_t a, bool write)
{
	uint32_t page = a / PSZ;
	for (bool again = false;; again = true) {
		uint8_t st = x->r.state[page];
		if (dsm_page_allows(st, write))
			return;
		if (dsm_proto_access(&x->p, page, write, again) ==
		    DSM_ACCESS_OK)
			continue;
		cr_assert(deliver_any(),
			  "node %u waits on page %u, and no "
			  "message can go",
			  x->id, page);
	}
}

static uint8_t sim_read(struct node *x, uint32_t a)
{
	access_page(x, a, false);
	return x->r.base[a];
}

static void sim_write(struct node *x, uint32_t a, uint8_t v)
{
	access_page(x, a, true);
	x->r.base[a] = v;
}

static void sim_release(struct node *x)
{
	cr_assert_geq(dsm_proto_release(&x->p), 0);
	while (x->p.diffs_out) /* completes when every diff is acked */
		cr_assert(deliver_any(), "a release waits on an ack that "
					 "cannot come");
}

/* Waits (the network running) until x's request went through. */
static void wait_granted(struct node *x)
{
	while (!x->granted)
		cr_assert(deliver_any(),
			  "node %u waits for a grant that "
			  "cannot come",
			  x->id);
	x->granted = false;
}

static void sim_lock(struct node *x, uint32_t l)
{
	struct msg *m = send(x->id, 0, M_LOCK, l, NULL, 0);
	memcpy(m->vt, x->p.log.vt, nn * sizeof(uint32_t));
	wait_granted(x);
}

/* The release's notices go with the unlock, or the barrier. */
static struct msg *send_release(struct node *x, int type, uint32_t id)
{
	sim_release(x);
	struct msg *m = send(x->id, 0, type, id, nbuf,
			     notices_since(x, x->sent_vt, UINT32_MAX));
	memcpy(m->vt, x->p.log.vt, nn * sizeof(uint32_t));
	memcpy(x->sent_vt, x->p.log.vt, nn * sizeof(uint32_t));
	return m;
}

static void sim_unlock(struct node *x, uint32_t l)
{
	send_release(x, M_UNLOCK, l);
}

/* Every node reaches barrier 0; each waits until the manager lets it go
 * (which needs the others' arrivals: sent before anyone waits). */
static void sim_barrier(void)
{
	for (uint32_t i = 0; i < nn; i++)
		send_release(&nd[i], M_BARRIER, 0);
	for (uint32_t i = 0; i < nn; i++)
		wait_granted(&nd[i]);
	settle();
	uint32_t upto[MAXN];
	memcpy(upto, nd[0].p.log.vt, sizeof(upto[0]) * nn);
	dsm_log_collect(&nd[0].p.log, upto);
}

/* ---- the generator: vector clocks of happens-before, apart ---- */

struct vc {
	uint32_t t[MAXN];
};
static struct vc node_vc[MAXN], lock_vc[LOCKS];
static uint32_t cur[MAXN]; /* each node's open interval */
static int holder[LOCKS];
static uint8_t ref[BYTES];
/* The last write of each byte, and each node's last read since it. */
static struct {
	uint8_t node;
	uint32_t t;
	bool any;
	uint32_t read_t[MAXN];
} last[BYTES];

static bool seen(int n, int m, uint32_t t)
{
	return n == m || node_vc[n].t[m] >= t;
}

static bool may_read(int n, uint32_t a)
{
	return !last[a].any || seen(n, last[a].node, last[a].t);
}

static bool may_write(int n, uint32_t a)
{
	if (!may_read(n, a))
		return false;
	for (uint32_t r = 0; r < nn; r++)
		if (last[a].read_t[r] && !seen(n, (int)r, last[a].read_t[r]))
			return false;
	return true;
}

static void vc_join(struct vc *a, const struct vc *b)
{
	for (uint32_t i = 0; i < nn; i++)
		if (b->t[i] > a->t[i])
			a->t[i] = b->t[i];
}

static void gen_release(int n)
{
	node_vc[n].t[n] = cur[n]++;
}

static unsigned seed;
static unsigned rnd(unsigned m)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 8) % m;
}

static void run_program(uint32_t nodes, unsigned s, int steps)
{
	seed = s;
	net_seed = s;
	memset(node_vc, 0, sizeof(node_vc));
	memset(lock_vc, 0, sizeof(lock_vc));
	memset(last, 0, sizeof(last));
	memset(ref, 0, sizeof(ref));
	sim_start(nodes);
	for (uint32_t i = 0; i < nn; i++)
		cur[i] = 1;
	for (int l = 0; l < LOCKS; l++)
		holder[l] = -1;
	uint64_t reads = 0, writes = 0, barriers = 0;
	for (int step = 0; step < steps; step++) {
		int n = (int)rnd(nn);
		unsigned op = rnd(100);
		if (op < 3) { /* barrier: every lock free first */
			bool busy = false;
			for (int l = 0; l < LOCKS; l++)
				busy |= holder[l] >= 0;
			if (busy)
				continue;
			sim_barrier();
			struct vc all = {0};
			for (uint32_t i = 0; i < nn; i++) {
				gen_release((int)i);
				vc_join(&all, &node_vc[i]);
			}
			for (uint32_t i = 0; i < nn; i++)
				node_vc[i] = all;
			barriers++;
		} else if (op < 15) { /* lock or unlock */
			int l = (int)rnd(LOCKS);
			if (holder[l] == n) {
				sim_unlock(&nd[n], (uint32_t)l);
				gen_release(n);
				vc_join(&lock_vc[l], &node_vc[n]);
				holder[l] = -1;
			} else if (holder[l] < 0) {
				sim_lock(&nd[n], (uint32_t)l);
				vc_join(&node_vc[n], &lock_vc[l]);
				holder[l] = n;
			}
		} else {
			/* A byte this node may touch: try a few. */
			for (int tries = 0; tries < 8; tries++) {
				uint32_t a = rnd(BYTES);
				if (op < 60) {
					if (!may_read(n, a))
						continue;
					uint8_t v =
					    sim_read(&nd[n], addr_of(a));
					cr_assert_eq(v, ref[a],
						     "seed %u step %d: node %d "
						     "read byte %u (page %u, "
						     "home %u): %u, want %u",
						     s, step, n, a, a / SPAN,
						     a / SPAN % nn, v, ref[a]);
					last[a].read_t[n] = cur[n];
					reads++;
				} else {
					if (!may_write(n, a))
						continue;
					uint8_t v = (uint8_t)(1 + rnd(255));
					sim_write(&nd[n], addr_of(a), v);
					ref[a] = v;
					last[a].node = (uint8_t)n;
					last[a].t = cur[n];
					last[a].any = true;
					memset(last[a].read_t, 0,
					       sizeof(last[a].read_t));
					writes++;
				}
				break;
			}
		}
	}
	cr_log_info("%u nodes, seed %u: %llu reads, %llu writes, %llu "
		    "barriers",
		    nn, s, (unsigned long long)reads,
		    (unsigned long long)writes, (unsigned long long)barriers);
	cr_assert_gt(reads, (uint64_t)steps / 10);
	cr_assert_gt(writes, (uint64_t)steps / 10);
	sim_end();
}

Test(dsm_protocol, random_drf_programs_read_the_last_write)
{
	for (uint32_t nodes = 2; nodes <= MAXN; nodes++)
		for (unsigned s = 1; s <= 20; s++)
			run_program(nodes, s * 7919u + nodes, 4000);
}

/* The same with an acquire's invalidations of pages read here refreshed
 * from the home's copy at once (dsm/proto.h, DSM_REFRESH_MAX). */
Test(dsm_protocol, random_drf_programs_with_refreshes)
{
	refresh_on = true;
	for (uint32_t nodes = 2; nodes <= MAXN; nodes++)
		for (unsigned s = 1; s <= 10; s++)
			run_program(nodes, s * 7919u + nodes + 1, 4000);
	cr_assert_gt(refreshed, 0, "no acquire refreshed a page");
}

/* A page read here and written at its home under a lock: the next grant
 * brings the new bytes with it (no fault, a fetch made at the acquire). */
Test(dsm_protocol, grant_refreshes_a_page_read_here)
{
	refresh_on = true;
	sim_start(2);
	cr_assert_eq(sim_read(&nd[1], 10), 0);
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], 10, 7);
	sim_unlock(&nd[0], 0);
	uint64_t faults = nd[1].p.st.read_faults;
	sim_lock(&nd[1], 0);
	cr_assert_eq(nd[1].r.state[0], DSM_PAGE_READ,
		     "invalidated, not refreshed");
	cr_assert_eq(nd[1].p.st.refreshes, 1);
	cr_assert_eq(sim_read(&nd[1], 10), 7, "stale data through a lock");
	cr_assert_eq(nd[1].p.st.read_faults, faults, "it faulted anyway");
	sim_unlock(&nd[1], 0);
	sim_end();
}

/* Node 0 writes page 0 under lock 0, node 1 takes the lock: whether
 * node 1's copy was refreshed (still readable) rather than invalidated. */
static bool noticed_and_refreshed(uint8_t v)
{
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], 10, v);
	sim_unlock(&nd[0], 0);
	uint64_t r = nd[1].p.st.refreshes;
	sim_lock(&nd[1], 0);
	sim_unlock(&nd[1], 0);
	bool fresh = nd[1].p.st.refreshes == r + 1;
	cr_assert_eq(fresh, nd[1].r.state[0] == DSM_PAGE_READ);
	return fresh;
}

/* Refreshes in a row of one page this node does not fault on. */
static int refreshes_in_a_row(uint8_t *v)
{
	int n = 0;
	while (noticed_and_refreshed(++*v))
		cr_assert_leq(++n, 255, "refreshed without end");
	return n;
}

/* A page refreshed DSM_REFRESH_AGE times with no fault here is
 * invalidated at the next notice: read again at once, it is refreshed
 * twice as long, up to DSM_REFRESH_GROW doublings; left unread through
 * DSM_REFRESH_AGE notices, it starts over. Every read sees the last
 * write. */
Test(dsm_protocol, refreshes_end_unless_the_page_is_read_again)
{
	refresh_on = true;
	sim_start(2);
	uint8_t v = 0;
	cr_assert_eq(sim_read(&nd[1], 10), 0);
	for (int g = 0; g <= DSM_REFRESH_GROW + 1; g++) {
		int want = DSM_REFRESH_AGE
			   << (g < DSM_REFRESH_GROW ? g : DSM_REFRESH_GROW);
		cr_assert_eq(refreshes_in_a_row(&v), want, "run %d", g);
		cr_assert_eq(sim_read(&nd[1], 10), v, "stale after run %d", g);
	}
	cr_assert_eq(refreshes_in_a_row(&v),
		     DSM_REFRESH_AGE << DSM_REFRESH_GROW);
	for (int i = 0; i < DSM_REFRESH_AGE; i++) /* left unread */
		cr_assert_not(noticed_and_refreshed(++v));
	cr_assert_eq(sim_read(&nd[1], 10), v);
	cr_assert_eq(refreshes_in_a_row(&v), DSM_REFRESH_AGE,
		     "not started over");
	sim_end();
}

/* Claims a test node made (no node 0 here: the test answers them). */
static unsigned claims_made;
static void op_claim_count(void *ctx, uint32_t page, bool write)
{
	(void)ctx;
	(void)page;
	cr_assert(write, "a read claimed ahead");
	claims_made++;
}
static const struct dsm_proto_ops claim_ops = {op_fetch, op_diff,
					       op_claim_count, op_refresh};

/* A first write to a page with no home goes on at once against a twin of
 * zeros (EARTH_DSM_CLAIM_AHEAD): node 0's answer naming this node drops
 * the twin; one naming another keeps it, and the release sends the
 * writes there as a diff; a page placed anew meanwhile (written after
 * its free) leaves no claim counted out. */
Test(dsm_protocol, first_write_claimed_ahead)
{
	sim_start(2);
	struct node *x = &nd[1];
	x->p.ops = &claim_ops;
	x->p.claim_ahead = true;
	const char *why;
	for (uint32_t q = 2; q <= 4; q++)
		cr_assert_eq(dsm_proto_set_home(&x->p, q, 1, DSM_HOME_NONE), 0);
	/* node 0's view once it decided: page 2 is node 1's, page 3 its own */
	cr_assert_eq(dsm_proto_set_home(&nd[0].p, 2, 1, 1), 0);
	cr_assert_eq(dsm_proto_set_home(&nd[0].p, 3, 1, 0), 0);
	for (uint32_t q = 2; q <= 4; q++) {
		cr_assert_eq(dsm_proto_access(&x->p, q, true, false),
			     DSM_ACCESS_OK, "page %u waited", q);
		cr_assert_eq(x->r.state[q], DSM_PAGE_WRITE);
		x->r.base[q * PSZ + 5] = (uint8_t)(10 + q);
	}
	cr_assert_eq(claims_made, 3);
	cr_assert_eq(x->p.claims_out, 3);
	cr_assert(dsm_proto_claiming(&x->p, 2));
	/* page 2: this node's; page 3: node 0's (its writes: a diff) */
	cr_assert_eq(dsm_proto_homed(&x->p, 2, 1, &why), 1);
	cr_assert_null(x->p.twin[2]);
	cr_assert_eq(dsm_proto_homed(&x->p, 3, 0, &why), 1);
	cr_assert_not_null(x->p.twin[3]);
	/* page 4 placed anew: no answer is waited for */
	cr_assert_eq(dsm_proto_set_home(&x->p, 4, 1, 0), 0);
	cr_assert_eq(x->p.claims_out, 0);
	cr_assert_null(x->p.twin[4]);
	/* a second home for page 2 is refused */
	cr_assert_lt(dsm_proto_homed(&x->p, 2, 0, &why), 0);
	uint64_t diffs = x->p.st.diffs;
	sim_release(x);
	cr_assert_eq(x->p.st.diffs, diffs + 1, "page 3's writes not sent");
	settle();
	cr_assert_eq(nd[0].r.base[3 * PSZ + 5], 13, "the diff did not land");
	cr_assert_eq(x->r.base[2 * PSZ + 5], 12);
	x->p.ops = &ops;
	sim_end();
}

/* A page written here and placed anew before this node's release (a
 * write after its allocation was freed, and the page allocated again:
 * first touch or homed elsewhere) takes its twin with it: the release
 * sends no diff, never one to no home (DSM_HOME_NONE) nor one that would
 * land stale bytes on the new allocation at its home. */
Test(dsm_protocol, page_placed_anew_drops_its_twin)
{
	sim_start(2);
	struct node *x = &nd[1];
	/* pages 2 and 4 are node 0's: node 1's writes twin them */
	sim_write(x, 2 * PSZ + 5, 7);
	sim_write(x, 4 * PSZ + 9, 8);
	cr_assert_not_null(x->p.twin[2]);
	cr_assert_not_null(x->p.twin[4]);
	/* both placed anew: page 2 first touch, page 4 node 0's again */
	cr_assert_eq(dsm_proto_set_home(&x->p, 2, 1, DSM_HOME_NONE), 0);
	cr_assert_eq(dsm_proto_set_home(&x->p, 4, 1, 0), 0);
	cr_assert_null(x->p.twin[2]);
	cr_assert_null(x->p.twin[4]);
	/* node 0 placed it: zeros */
	memset(dsm_region_alias(&nd[0].r, 4), 0, PSZ);
	uint64_t diffs = x->p.st.diffs;
	sim_release(x);
	cr_assert_eq(x->p.st.diffs, diffs, "a diff of a page placed anew");
	settle();
	cr_assert_eq(((uint8_t *)dsm_region_alias(&nd[0].r, 4))[9], 0,
		     "stale bytes landed on the new allocation");
	sim_end();
}

/* A page this node wrote under the lock last time comes with the next
 * grant twinned and writable (a pretwin): the write takes no fault; left
 * unwritten, its empty diff names it in no notice, and the next grant
 * does not pretwin it. */
Test(dsm_protocol, grant_pretwins_a_page_written_here_last_time)
{
	refresh_on = true;
	sim_start(2);
	struct node *a = &nd[0], *b = &nd[1];
	sim_lock(b, 0);
	sim_write(b, 10, 1); /* page 0, home node 0: a twin, a diff */
	sim_unlock(b, 0);
	sim_lock(a, 0);
	sim_write(a, 11, 2);
	sim_unlock(a, 0);
	uint64_t wf = b->p.st.write_faults;
	sim_lock(b, 0);
	cr_assert_eq(b->r.state[0], DSM_PAGE_WRITE, "not pretwinned");
	cr_assert_eq(b->p.st.pretwins, 1);
	cr_assert_eq(sim_read(b, 11), 2, "stale data through a lock");
	sim_write(b, 10, 3);
	cr_assert_eq(b->p.st.write_faults, wf, "the write faulted anyway");
	sim_unlock(b, 0);
	sim_lock(a, 0);
	cr_assert_eq(sim_read(a, 10), 3, "the pretwinned write was lost");
	sim_write(a, 11, 4);
	sim_unlock(a, 0);
	/* pretwinned again, left unwritten: no notice, no hint */
	sim_lock(b, 0);
	cr_assert_eq(b->p.st.pretwins, 2);
	uint64_t intervals = b->p.st.intervals;
	sim_unlock(b, 0);
	cr_assert_eq(b->p.st.intervals, intervals,
		     "an unwritten pretwinned page made an interval");
	sim_lock(a, 0);
	sim_write(a, 11, 5);
	sim_unlock(a, 0);
	sim_lock(b, 0);
	cr_assert_eq(b->p.st.pretwins, 2, "pretwinned though not written");
	cr_assert_eq(b->r.state[0], DSM_PAGE_READ);
	cr_assert_eq(sim_read(b, 11), 5);
	sim_unlock(b, 0);
	sim_end();
}

/* dsm_proto_pretwin (a lock's grant asks it for the copies the lock's
 * last critical section here wrote): a copy read here, not invalidated,
 * comes twinned and writable; the write takes no fault and its diff
 * reaches the home; left unwritten it names the page in no notice; a
 * home page, an invalid one or one already twinned is left as it is. */
Test(dsm_protocol, pretwin_of_a_copy_read_here)
{
	sim_start(2);
	struct node *a = &nd[0], *b = &nd[1];
	sim_lock(b, 0);
	sim_write(b, 10, 1); /* page 0, home node 0: a twin, a diff */
	sim_unlock(b, 0);
	cr_assert_eq(b->r.state[0], DSM_PAGE_READ);
	sim_lock(b, 0); /* after itself: nothing invalidated */
	uint64_t wf = b->p.st.write_faults, twins = b->p.st.twins;
	cr_assert(dsm_proto_pretwin(&b->p, 0));
	cr_assert_eq(b->r.state[0], DSM_PAGE_WRITE);
	cr_assert_eq(b->p.st.pretwins, 1);
	cr_assert_eq(b->p.st.twins, twins + 1);
	cr_assert_not(dsm_proto_pretwin(&b->p, 0), "twinned twice");
	sim_write(b, 10, 2);
	cr_assert_eq(b->p.st.write_faults, wf, "the write faulted anyway");
	sim_unlock(b, 0);
	sim_lock(a, 0);
	cr_assert_eq(sim_read(a, 10), 2, "the pretwinned write was lost");
	cr_assert_not(dsm_proto_pretwin(&a->p, 0), "a home page twinned");
	sim_unlock(a, 0);
	/* pretwinned, left unwritten: no interval, no notice */
	sim_lock(b, 0);
	cr_assert(dsm_proto_pretwin(&b->p, 0));
	uint64_t intervals = b->p.st.intervals;
	sim_unlock(b, 0);
	cr_assert_eq(b->p.st.intervals, intervals,
		     "an unwritten pretwinned page made an interval");
	cr_assert_eq(b->r.state[0], DSM_PAGE_READ);
	/* invalidated by a's write: not twinned (the fault fetches it) */
	sim_lock(a, 0);
	sim_write(a, 11, 3);
	sim_unlock(a, 0);
	sim_lock(b, 0);
	cr_assert_eq(b->r.state[0], DSM_PAGE_INVALID, "state %d inval %lu",
		     b->r.state[0], (unsigned long)b->p.st.invalidations);
	cr_assert_not(dsm_proto_pretwin(&b->p, 0), "an invalid page twinned");
	cr_assert_eq(sim_read(b, 11), 3);
	sim_unlock(b, 0);
	sim_end();
}

/* A page written in the open interval, then invalidated (its diff sent
 * at once, the page still to be noticed at the release): dsm_proto_pretwin
 * leaves it alone. Pretwinned, its empty diff at the release dropped its
 * notice, so a third node kept its stale copy (the seeded dsm_drf on 3
 * nodes read stale counters in 4 of 80 runs). */
Test(dsm_protocol, pretwin_leaves_a_page_written_in_the_interval)
{
	refresh_on = true;
	sim_start(3);
	struct node *a = &nd[0], *b = &nd[1], *c = &nd[2];
	sim_lock(c, 0);
	cr_assert_eq(sim_read(c, 10), 0); /* c caches page 0 */
	sim_unlock(c, 0);
	sim_lock(b, 0);
	sim_write(b, 10, 7);
	sim_lock(a, 1);
	sim_write(a, 11, 5); /* page 0's home */
	sim_unlock(a, 1);
	sim_lock(b, 1); /* a's notice: b's diff goes, page 0 invalid */
	cr_assert_eq(b->r.state[0], DSM_PAGE_INVALID);
	while (b->p.diffs_out) /* acknowledged: a refresh could read it */
		cr_assert(deliver_any());
	cr_assert_not(dsm_proto_pretwin(&b->p, 0),
		      "a page written in the interval pretwinned");
	sim_unlock(b, 1);
	sim_unlock(b, 0);
	sim_lock(c, 0);
	cr_assert_eq(sim_read(c, 10), 7, "stale data: b's write unnoticed");
	sim_unlock(c, 0);
	sim_end();
}

/* The manager's own release with its diff still on the way (the SU goes
 * on serving while its releases wait for their acknowledgements): a
 * grant it makes meanwhile for another node must not carry that
 * interval. Else the grantee takes it as seen, copies the page from its
 * home before the diff is there (a fetch, or a refresh at the grant),
 * and the grant that does order it after the write (lock 1, released by
 * node 0 after its acks) has nothing left to invalidate. */
static void manager_release_in_flight(bool refresh)
{
	refresh_on = refresh;
	sim_start(3);
	const uint32_t a = 1 * PSZ + 5, c = 1 * PSZ + 9; /* page 1: home 1 */
	if (refresh)
		cr_assert_eq(sim_read(&nd[2], c), 0);
	sim_lock(&nd[0], 1);
	sim_lock(&nd[1], 0);
	sim_write(&nd[0], a, 42);
	chan[0][1].held = true; /* the diff to the home waits */
	cr_assert_eq(dsm_proto_release(&nd[0].p), 1);
	struct msg *m = send(2, 0, M_LOCK, 0, NULL, 0);
	memcpy(m->vt, nd[2].p.log.vt, nn * sizeof(uint32_t));
	sim_unlock(&nd[1], 0); /* lock 0 goes to node 2 */
	wait_granted(&nd[2]);
	cr_assert_eq(sim_read(&nd[2], c), 0);
	sim_unlock(&nd[2], 0);
	chan[0][1].held = false;
	settle(); /* the diff applied, acknowledged */
	sim_unlock(&nd[0], 1);
	sim_lock(&nd[2], 1);
	cr_assert_eq(sim_read(&nd[2], a), 42,
		     "stale data through lock 1 (refresh %d)", refresh);
	sim_unlock(&nd[2], 1);
	sim_end();
}

Test(dsm_protocol, grant_withholds_the_managers_release_in_flight)
{
	manager_release_in_flight(false);
}

Test(dsm_protocol, grant_withholds_the_managers_release_in_flight_refresh)
{
	manager_release_in_flight(true);
}

/* A page a fiber holds for write across releases (earth_dsm_fiber.h)
 * stays writable and twinned; each release sends what changed since the
 * last and names the page only when something did: a page held and left
 * alone makes no interval. */
Test(dsm_protocol, held_page_noticed_only_when_written)
{
	sim_start(2);
	struct node *b = &nd[1];
	sim_write(b, 10, 1); /* page 0, home node 0 */
	cr_assert_eq(dsm_proto_pin(&b->p, 0), 0);
	uint64_t iv = b->p.st.intervals;
	sim_release(b);
	cr_assert_eq(b->p.st.intervals, iv + 1);
	cr_assert_eq(b->r.state[0], DSM_PAGE_WRITE, "a held page protected");
	sim_release(b);
	sim_release(b);
	cr_assert_eq(b->p.st.intervals, iv + 1,
		     "a held page named again though not written");
	b->r.base[11] = 2; /* no fault: it is held writable */
	sim_release(b);
	cr_assert_eq(b->p.st.intervals, iv + 2, "a write to it not named");
	cr_assert_geq(dsm_proto_unpin(&b->p, 0), 0);
	sim_lock(&nd[0], 0);
	cr_assert_eq(sim_read(&nd[0], 11), 2);
	sim_unlock(&nd[0], 0);
	sim_end();
}

/* The litmus cases, each a fixed program on fresh nodes. */

Test(dsm_protocol, message_through_a_lock)
{
	sim_start(2);
	/* node 1 caches page 0 (home 0) before node 0 writes it */
	cr_assert_eq(sim_read(&nd[1], 10), 0);
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], 10, 7);
	sim_unlock(&nd[0], 0);
	sim_lock(&nd[1], 0);
	cr_assert_eq(sim_read(&nd[1], 10), 7, "stale data through a lock");
	sim_unlock(&nd[1], 0);
	sim_end();
}

/* A home page written in interval after interval stays writable through
 * the releases (DSM_HOME_KEEP): no fault and no protection change at the
 * home, every release still noticing it, so a node that caches it reads
 * every new value; left unwritten, it is read-only again after
 * DSM_HOME_KEEP releases. */
Test(dsm_protocol, home_page_written_in_a_row_stays_writable)
{
	sim_start(2);
	struct node *h = &nd[0], *o = &nd[1];
	enum { ROUNDS = DSM_HOME_KEEP + 4 };
	for (uint8_t i = 1; i <= ROUNDS; i++) {
		sim_lock(h, 0);
		sim_write(h, 10, i);
		sim_unlock(h, 0);
		sim_lock(o, 0);
		cr_assert_eq(sim_read(o, 10), i, "round %u: a stale copy", i);
		sim_unlock(o, 0);
		if (i >= 2 && i < 2 + DSM_HOME_KEEP)
			cr_assert_eq(h->r.state[0], DSM_PAGE_WRITE,
				     "round %u: written in a row, yet made "
				     "read-only",
				     i);
	}
	/* faulted at rounds 1, 2 and 11 (DSM_HOME_KEEP + 1 later) */
	cr_assert_lt(h->p.st.write_faults, 4);
	cr_assert_eq(h->p.st.home_kept, ROUNDS - 2);
	/* writes elsewhere make intervals; page 0 is not written in them:
	 * read-only after its keep (twice DSM_HOME_KEEP since round 11) */
	for (unsigned i = 0; i < 2 * DSM_HOME_KEEP; i++) {
		sim_lock(h, 0);
		sim_write(h, 2 * PSZ, (uint8_t)i);
		sim_unlock(h, 0);
	}
	cr_assert_eq(h->r.state[0], DSM_PAGE_HOME,
		     "unwritten, it stays writable");
	sim_lock(o, 0);
	cr_assert_eq(sim_read(o, 10), ROUNDS);
	sim_unlock(o, 0);
	sim_end();
}

/* A home page still written when its keep ends is kept twice as long the
 * next time, up to DSM_HOME_KEEP_GROW times DSM_HOME_KEEP releases (255 at
 * most): a page written in every interval faults at rounds 1 and 2 (kept
 * K = DSM_HOME_KEEP), 2 + K + 1 (kept 2K), then 2K + 1 later (4K), ...
 * (with K = 8: 1, 2, 11, 28, 61, 126). Left unwritten it is read-only
 * again after one keep at most, and written in a row again it starts over
 * at DSM_HOME_KEEP: faults at rounds 1, 2 and DSM_HOME_KEEP + 3. */
static uint64_t home_faults_in(unsigned rounds)
{
	unsigned most = DSM_HOME_KEEP * DSM_HOME_KEEP_GROW,
		 span = DSM_HOME_KEEP;
	if (most > 255)
		most = 255;
	uint64_t n = 2;
	for (unsigned at = 2 + span + 1; at <= rounds; at += span + 1) {
		n++;
		span = 2 * span > most ? most : 2 * span;
	}
	return n;
}

Test(dsm_protocol, home_page_kept_longer_while_written)
{
	sim_start(2);
	struct node *h = &nd[0], *o = &nd[1];
	enum { ROUNDS = 400 };
	for (unsigned i = 1; i <= ROUNDS; i++) {
		sim_lock(h, 0);
		sim_write(h, 10, (uint8_t)i);
		sim_unlock(h, 0);
		if (i % 16 == 0) {
			sim_lock(o, 0);
			cr_assert_eq(sim_read(o, 10), (uint8_t)i,
				     "round %u: a stale copy", i);
			sim_unlock(o, 0);
		}
	}
	cr_assert_eq(h->p.st.write_faults, home_faults_in(ROUNDS),
		     "%" PRIu64 " faults in %u rounds, not %" PRIu64
		     ": the keep did not grow",
		     h->p.st.write_faults, ROUNDS, home_faults_in(ROUNDS));
	/* unwritten: read-only after the rest of its keep (255 at most) */
	for (unsigned i = 0; i < DSM_HOME_KEEP * DSM_HOME_KEEP_GROW; i++) {
		sim_lock(h, 0);
		sim_write(h, 2 * PSZ, (uint8_t)i);
		sim_unlock(h, 0);
	}
	cr_assert_eq(h->r.state[0], DSM_PAGE_HOME,
		     "unwritten, it stays writable");
	/* written in a row again: kept DSM_HOME_KEEP releases, not more */
	uint64_t f = h->p.st.write_faults;
	for (unsigned i = 1; i <= DSM_HOME_KEEP + 3; i++) {
		sim_lock(h, 0);
		sim_write(h, 10, (uint8_t)(200 + i));
		sim_unlock(h, 0);
	}
	cr_assert_eq(h->p.st.write_faults, f + 3,
		     "written again after a pause: %" PRIu64
		     " faults, not 3 (1, 2 and %u): the keep did not start "
		     "over",
		     h->p.st.write_faults - f, DSM_HOME_KEEP + 3);
	sim_lock(o, 0);
	cr_assert_eq(sim_read(o, 10), (uint8_t)(203 + DSM_HOME_KEEP));
	sim_unlock(o, 0);
	sim_end();
}

/* A keep counts the releases of every program thread of the node: with
 * 16 threads each releasing once a round and one of them writing the
 * page, the page written in every round is kept as with one thread
 * (kept from round 2 to 9, read-only at the end of round 10, kept again
 * from round 11 for twice as long), not protected at each round. */
Test(dsm_protocol, home_page_keep_counts_every_thread)
{
	sim_start(2);
	struct node *h = &nd[0], *o = &nd[1];
	enum { THREADS = 16, ROUNDS = 12 };
	dsm_proto_threads(&h->p, THREADS);
	for (unsigned i = 1; i <= ROUNDS; i++) {
		sim_lock(h, 0);
		sim_write(h, 10, (uint8_t)i); /* thread 0 */
		sim_unlock(h, 0);
		for (unsigned t = 1; t < THREADS; t++) {
			sim_lock(h, 0);
			sim_write(h, 2 * PSZ + t, (uint8_t)i);
			sim_unlock(h, 0);
		}
		if (i >= 2 && i <= 9)
			cr_assert_eq(h->r.state[0], DSM_PAGE_WRITE,
				     "round %u: written in every round, yet "
				     "made read-only",
				     i);
	}
	cr_assert_eq(h->r.state[0], DSM_PAGE_WRITE,
		     "round %u: its longer keep not counted in rounds", ROUNDS);
	sim_lock(o, 0);
	cr_assert_eq(sim_read(o, 10), ROUNDS);
	sim_unlock(o, 0);
	sim_end();
}

/* The manager of a lock holds the notices of an unlock it receives and
 * passes them on, but its own copy of a page another node wrote stays
 * valid until a thread of its own acquires: a thread of the manager's
 * node that did not synchronise goes on reading its copy (no fetch in the
 * middle of its phase); once it acquires, it reads the new value. */
Test(dsm_protocol, manager_copies_kept_until_its_own_acquire)
{
	sim_start(3);
	uint32_t a = 1 * PSZ + 5;	      /* page 1: home node 1 */
	cr_assert_eq(sim_read(&nd[0], a), 0); /* node 0 caches it */
	sim_lock(&nd[2], 0);
	sim_write(&nd[2], a, 4);
	sim_unlock(&nd[2], 0);
	settle();
	cr_assert_eq(nd[0].r.state[1], DSM_PAGE_READ,
		     "the manager dropped its copy at another node's unlock");
	uint64_t fetches = nd[0].p.st.fetches;
	cr_assert_eq(sim_read(&nd[0], a), 0);
	cr_assert_eq(nd[0].p.st.fetches, fetches);
	sim_lock(&nd[1], 0); /* passed on: node 1 sees it */
	cr_assert_eq(sim_read(&nd[1], a), 4);
	sim_unlock(&nd[1], 0);
	sim_lock(&nd[0], 0); /* its own acquire */
	cr_assert_eq(nd[0].r.state[1], DSM_PAGE_INVALID);
	cr_assert_eq(sim_read(&nd[0], a), 4, "stale data after the acquire");
	sim_unlock(&nd[0], 0);
	sim_end();
}

Test(dsm_protocol, transitive_chain_of_three)
{
	sim_start(3);
	uint32_t x = 1 * PSZ + 3;	      /* page 1: home node 1 */
	cr_assert_eq(sim_read(&nd[2], x), 0); /* node 2 caches it */
	sim_lock(&nd[0], 0);		      /* lock A */
	sim_write(&nd[0], x, 9);
	sim_unlock(&nd[0], 0);
	sim_lock(&nd[1], 0); /* A, then B */
	uint8_t v = sim_read(&nd[1], x);
	sim_unlock(&nd[1], 0);
	sim_lock(&nd[1], 1);
	sim_write(&nd[1], 2 * PSZ, v);
	sim_unlock(&nd[1], 1);
	sim_lock(&nd[2], 1); /* B only */
	cr_assert_eq(sim_read(&nd[2], 2 * PSZ), 9);
	cr_assert_eq(sim_read(&nd[2], x), 9, "the chain was not transitive");
	sim_unlock(&nd[2], 1);
	sim_end();
}

Test(dsm_protocol, disjoint_writes_to_one_page_merge)
{
	sim_start(3);
	/* page 0 (home 0) written by nodes 1 and 2, bytes of one word */
	sim_write(&nd[1], 0, 1);
	sim_write(&nd[2], 1, 2);
	sim_write(&nd[1], 2, 3);
	sim_barrier();
	for (uint32_t i = 0; i < nn; i++) {
		cr_assert_eq(sim_read(&nd[i], 0), 1);
		cr_assert_eq(sim_read(&nd[i], 1), 2);
		cr_assert_eq(sim_read(&nd[i], 2), 3);
	}
	cr_assert_eq(nd[1].p.st.diffs + nd[2].p.st.diffs, 2);
	sim_end();
}

/* A fetch answered before a release's diff reached the home, arriving
 * after the acquire that noticed the page: the old bytes are not used,
 * the page is asked for again. */
Test(dsm_protocol, fetch_answered_before_a_notice_is_asked_again)
{
	sim_start(3);
	uint32_t x = 2 * PSZ + 5; /* page 2: home node 2 */
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], x, 1); /* node 0 twins page 2 */
	/* node 1 asks for page 2; node 2 answers with the old bytes, held
	 * on the way back */
	chan[2][1].held = true;
	cr_assert_eq(dsm_proto_access(&nd[1].p, 2, false, false),
		     DSM_ACCESS_WAIT);
	cr_assert(deliver_one(1, 2));
	sim_unlock(&nd[0], 0); /* diff applied at node 2, acked */
	sim_lock(&nd[1], 0);   /* notices page 2 while its fetch is out */
	chan[2][1].held = false;
	cr_assert_eq(sim_read(&nd[1], x), 1, "the stale answer was used");
	cr_assert_eq(nd[1].p.st.fetches, 2);
	sim_unlock(&nd[1], 0);
	sim_end();
}

/* What a hostile or broken peer sends is refused with a reason. */
/* Every page homed on node 0 (as a block placement makes them). */
static void all_homed_on_0(void)
{
	for (uint32_t i = 0; i < nn; i++)
		cr_assert_eq(dsm_proto_set_home(&nd[i].p, 0, PAGES, 0), 0);
}

static uint64_t changes_of(struct node *x)
{
	return atomic_load(&x->r.changes);
}

/* Runs test with page protections, then with userfaultfd where this
 * kernel has it (the two make their changes with other system calls). */
static void faults_each(void (*test)(void))
{
	sim_faults = DSM_FAULTS_PROTECT;
	test();
	sim_faults = DSM_FAULTS_UFFD;
	struct dsm_region r;
	char err[256];
	if (dsm_region_map(&r, NULL, PSZ, PSZ, DSM_FAULTS_UFFD, err,
			   sizeof(err)))
		return;
	dsm_region_unmap(&r);
	test();
}

/* x made `runs` protection changes since it had made `since`. */
static void changes_since(struct node *x, uint64_t since, uint64_t runs)
{
	uint64_t made = changes_of(x) - since;
	cr_assert_eq(made, runs,
		     "node %u: %" PRIu64 " protection changes for %" PRIu64
		     " runs of pages",
		     x->id, made, runs);
}

/* x made the changes of invalidating `runs` runs of pages since it had
 * made `since`: one a run under protections, one for all under
 * userfaultfd where the kernel drops several runs at once
 * (process_madvise: region.pidfd), else one a run. */
static void drops_since(struct node *x, uint64_t since, uint64_t runs)
{
	changes_since(x, since, x->r.uffd >= 0 && x->r.pidfd >= 0 ? 1 : runs);
}

/* Node 1 read every page but page 9; node 0 wrote every page under lock
 * 0 twice (two intervals name each page). Node 1's acquire invalidates
 * its 15 copies by runs of consecutive pages (pages 0-8 and 10-15), each
 * page once: one protection change a run, or one for both. */
static void invalidate_runs(void)
{
	sim_start(2);
	all_homed_on_0();
	for (uint32_t q = 0; q < PAGES; q++)
		if (q != 9)
			cr_assert_eq(sim_read(&nd[1], q * PSZ + 3), 0);
	for (uint8_t v = 1; v <= 2; v++) {
		sim_lock(&nd[0], 0);
		for (uint32_t q = 0; q < PAGES; q++)
			sim_write(&nd[0], q * PSZ + 3, (uint8_t)(v + q));
		sim_unlock(&nd[0], 0);
	}
	uint64_t inv = nd[1].p.st.invalidations, ch = changes_of(&nd[1]);
	sim_lock(&nd[1], 0);
	cr_assert_eq(nd[1].p.st.invalidations - inv, PAGES - 1);
	drops_since(&nd[1], ch, 2);
	for (uint32_t q = 0; q < PAGES; q++) {
		cr_assert_eq(nd[1].r.state[q], DSM_PAGE_INVALID, "page %u", q);
		cr_assert_eq(sim_read(&nd[1], q * PSZ + 3), (uint8_t)(2 + q),
			     "stale page %u", q);
	}
	sim_unlock(&nd[1], 0);
	sim_end();
}

Test(dsm_protocol, acquire_invalidates_consecutive_pages_in_one_change)
{
	faults_each(invalidate_runs);
}

/* The same with few pages far apart, noticed out of order (pages 1 and
 * 15 in an interval before page 0's): runs 0-1 and 15. */
static void invalidate_sparse_runs(void)
{
	sim_start(2);
	all_homed_on_0();
	const uint32_t pages[] = {0, 1, PAGES - 1};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sim_read(&nd[1], pages[i] * PSZ), 0);
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], pages[1] * PSZ, 2);
	sim_write(&nd[0], pages[2] * PSZ, 3);
	sim_unlock(&nd[0], 0);
	sim_lock(&nd[0], 0);
	sim_write(&nd[0], pages[0] * PSZ, 1);
	sim_unlock(&nd[0], 0);
	uint64_t inv = nd[1].p.st.invalidations, ch = changes_of(&nd[1]);
	sim_lock(&nd[1], 0);
	cr_assert_eq(nd[1].p.st.invalidations - inv, 3);
	drops_since(&nd[1], ch, 2);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sim_read(&nd[1], pages[i] * PSZ), i + 1,
			     "stale page %u", pages[i]);
	sim_unlock(&nd[1], 0);
	sim_end();
}

Test(dsm_protocol, acquire_invalidates_sparse_pages_by_runs)
{
	faults_each(invalidate_sparse_runs);
}

/* Node 1 wrote every page (twins: all homed on node 0), node 0 every
 * page of its own but page 6: each release write-protects its pages by
 * runs, one protection change a run, then sends its diffs; node 0 then
 * reads node 1's bytes, node 1 node 0's. */
static void protect_runs(void)
{
	sim_start(2);
	all_homed_on_0();
	sim_lock(&nd[1], 0);
	for (uint32_t q = 0; q < PAGES; q++)
		sim_write(&nd[1], q * PSZ + 1, (uint8_t)(10 + q));
	uint64_t diffs = nd[1].p.st.diffs, ch = changes_of(&nd[1]);
	sim_unlock(&nd[1], 0);
	cr_assert_eq(nd[1].p.st.diffs - diffs, PAGES);
	changes_since(&nd[1], ch, 1);
	for (uint32_t q = 0; q < PAGES; q++)
		cr_assert_eq(nd[1].r.state[q], DSM_PAGE_READ, "page %u", q);
	sim_lock(&nd[0], 0);
	for (uint32_t q = 0; q < PAGES; q++) {
		cr_assert_eq(sim_read(&nd[0], q * PSZ + 1), (uint8_t)(10 + q),
			     "node 1's write to page %u lost", q);
		if (q != 6)
			sim_write(&nd[0], q * PSZ + 2, (uint8_t)(30 + q));
	}
	ch = changes_of(&nd[0]);
	sim_unlock(&nd[0], 0);
	changes_since(&nd[0], ch, 2);
	for (uint32_t q = 0; q < PAGES; q++)
		cr_assert_eq(nd[0].r.state[q], DSM_PAGE_HOME, "page %u", q);
	sim_lock(&nd[1], 0);
	for (uint32_t q = 0; q < PAGES; q++)
		cr_assert_eq(sim_read(&nd[1], q * PSZ + 2),
			     q != 6 ? (uint8_t)(30 + q) : 0, "page %u", q);
	sim_unlock(&nd[1], 0);
	sim_end();
}

Test(dsm_protocol, release_protects_consecutive_pages_in_one_change)
{
	faults_each(protect_runs);
}

Test(dsm_protocol, bad_messages_refused)
{
	sim_start(2);
	static uint8_t page[PSZ], d[16];
	const char *why = NULL;
	/* page 1 is homed on node 1 */
	cr_assert_null(dsm_proto_serve(&nd[0].p, 1, 1, &why));
	cr_assert(strstr(why, "not the home"), "%s", why);
	cr_assert_null(dsm_proto_serve(&nd[0].p, 1, PAGES, &why));
	cr_assert(strstr(why, "past the end"), "%s", why);
	cr_assert_null(dsm_proto_serve(&nd[0].p, 0, 0, &why));
	cr_assert(strstr(why, "itself"), "%s", why);
	cr_assert_eq(dsm_proto_page_in(&nd[0].p, 1, 1, page, PSZ, &why), -1);
	cr_assert(strstr(why, "did not ask"), "%s", why);
	cr_assert_eq(dsm_proto_page_in(&nd[0].p, 0, 1, page, PSZ, &why), -1);
	cr_assert(strstr(why, "not its home"), "%s", why);
	cr_assert_eq(dsm_proto_access(&nd[0].p, 1, false, false),
		     DSM_ACCESS_WAIT);
	cr_assert_eq(dsm_proto_page_in(&nd[0].p, 1, 1, page, PSZ - 1, &why),
		     -1);
	cr_assert(strstr(why, "wrong size"), "%s", why);
	/* a diff whose run leaves the page */
	uint16_t off = PSZ - 2, cnt = 3;
	memcpy(d, &off, 2);
	memcpy(d + 2, &cnt, 2);
	cr_assert_eq(dsm_proto_apply(&nd[0].p, 1, 0, d, 8, &why), -1);
	cr_assert(strstr(why, "past the end of the page"), "%s", why);
	cr_assert_eq(dsm_proto_apply(&nd[0].p, 1, 1, d, 8, &why), -1);
	cr_assert(strstr(why, "not the home"), "%s", why);
	cr_assert_eq(dsm_proto_diff_acked(&nd[0].p), -1);
	sim_end();
}
