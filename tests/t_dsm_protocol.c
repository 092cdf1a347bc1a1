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

#include <stdlib.h>
#include <string.h>

#include "dsm/diff.h"
#include "dsm/notice.h"

TestSuite(dsm_protocol, .timeout = 60);

enum { MAXN = 4, PAGES = 16, PSZ = 256, BYTES = PAGES * PSZ, LOCKS = 3 };
enum { INV, RD, WR };

/* ---- the protocol ---- */

struct node {
	uint32_t id;
	struct dsm_log log;
	uint8_t mem[BYTES]; /* cached copies; the home copy for its pages */
	uint8_t twin[PAGES][PSZ];
	uint8_t state[PAGES];
	bool dirty[PAGES]; /* written in the open interval */
	uint64_t fetches, diffs, diff_bytes, invalidations;
};

static struct node nd[MAXN];
static uint32_t nn;

static uint32_t home(uint32_t p)
{
	return p % nn;
}

static void fetch(struct node *x, uint32_t p)
{
	memcpy(x->mem + p * PSZ, nd[home(p)].mem + p * PSZ, PSZ);
	x->state[p] = RD;
	x->fetches++;
}

/* The page's diff to its home, applied and acknowledged at once. */
static void flush(struct node *x, uint32_t p)
{
	static uint8_t d[PSZ * 3];
	size_t len =
	    dsm_diff_encode(x->mem + p * PSZ, x->twin[p], PSZ, d, sizeof(d));
	cr_assert_neq(len, (size_t)-1);
	struct dsm_diff_fault f;
	cr_assert_eq(dsm_diff_apply(nd[home(p)].mem + p * PSZ, PSZ, d, len, &f),
		     0);
	x->diffs++;
	x->diff_bytes += len;
	x->state[p] = RD;
}

static uint8_t sim_read(struct node *x, uint32_t a)
{
	uint32_t p = a / PSZ;
	if (home(p) != x->id && x->state[p] == INV)
		fetch(x, p);
	return x->mem[a];
}

static void sim_write(struct node *x, uint32_t a, uint8_t v)
{
	uint32_t p = a / PSZ;
	if (home(p) != x->id) {
		if (x->state[p] == INV)
			fetch(x, p);
		if (x->state[p] != WR) {
			memcpy(x->twin[p], x->mem + p * PSZ, PSZ);
			x->state[p] = WR;
		}
	}
	x->mem[a] = v;
	x->dirty[p] = true;
}

static void on_inval(void *arg, uint32_t p)
{
	struct node *x = arg;
	if (home(p) == x->id)
		return;
	if (x->state[p] == WR)
		flush(x, p); /* its own writes reach the home first */
	x->state[p] = INV;
	x->invalidations++;
}

/* A release: diffs to the homes, then the interval closed. */
static void sim_release(struct node *x)
{
	uint32_t w[PAGES], k = 0;
	for (uint32_t p = 0; p < PAGES; p++) {
		if (x->state[p] == WR)
			flush(x, p);
		if (x->dirty[p])
			w[k++] = p;
		x->dirty[p] = false;
	}
	cr_assert_eq(dsm_log_close(&x->log, w, k), 0);
}

/* `to` learns what `from`'s log holds that it lacks. */
static void carry(struct node *from, struct node *to)
{
	static uint8_t buf[1 << 20];
	size_t len =
	    dsm_log_encode_since(&from->log, to->log.vt, buf, sizeof(buf));
	cr_assert_lt(len, (size_t)-2);
	struct dsm_notice_fault f = {0};
	cr_assert_eq(dsm_log_add(&to->log, buf, len, on_inval, to, &f), 0, "%s",
		     f.what);
}

static void sim_unlock(struct node *x)
{
	sim_release(x);
	carry(x, &nd[0]); /* the release's notices to the manager */
}

static void sim_lock(struct node *x)
{
	carry(&nd[0], x); /* the grant carries what x lacks */
}

static void sim_barrier(void)
{
	for (uint32_t i = 0; i < nn; i++) {
		sim_release(&nd[i]);
		carry(&nd[i], &nd[0]);
	}
	for (uint32_t i = 1; i < nn; i++)
		carry(&nd[0], &nd[i]);
	uint32_t upto[MAXN];
	memcpy(upto, nd[0].log.vt, sizeof(upto[0]) * nn);
	for (uint32_t i = 0; i < nn; i++)
		dsm_log_collect(&nd[i].log, upto);
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
	nn = nodes;
	seed = s;
	memset(nd, 0, sizeof(nd));
	memset(node_vc, 0, sizeof(node_vc));
	memset(lock_vc, 0, sizeof(lock_vc));
	memset(last, 0, sizeof(last));
	memset(ref, 0, sizeof(ref));
	for (uint32_t i = 0; i < nn; i++) {
		nd[i].id = i;
		cr_assert_eq(dsm_log_init(&nd[i].log, nn, i, PAGES), 0);
		cur[i] = 1;
	}
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
				sim_unlock(&nd[n]);
				gen_release(n);
				vc_join(&lock_vc[l], &node_vc[n]);
				holder[l] = -1;
			} else if (holder[l] < 0) {
				sim_lock(&nd[n]);
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
					uint8_t v = sim_read(&nd[n], a);
					cr_assert_eq(v, ref[a],
						     "seed %u step %d: node %d "
						     "read byte %u (page %u, "
						     "home %u): %u, want %u",
						     s, step, n, a, a / PSZ,
						     home(a / PSZ), v, ref[a]);
					last[a].read_t[n] = cur[n];
					reads++;
				} else {
					if (!may_write(n, a))
						continue;
					uint8_t v = (uint8_t)(1 + rnd(255));
					sim_write(&nd[n], a, v);
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
	for (uint32_t i = 0; i < nn; i++)
		dsm_log_fini(&nd[i].log);
}

Test(dsm_protocol, random_drf_programs_read_the_last_write)
{
	for (uint32_t nodes = 2; nodes <= MAXN; nodes++)
		for (unsigned s = 1; s <= 20; s++)
			run_program(nodes, s * 7919u + nodes, 4000);
}

/* The litmus cases, each a fixed program on fresh nodes. */

static void sim_start(uint32_t nodes)
{
	nn = nodes;
	memset(nd, 0, sizeof(nd));
	for (uint32_t i = 0; i < nn; i++) {
		nd[i].id = i;
		cr_assert_eq(dsm_log_init(&nd[i].log, nn, i, PAGES), 0);
	}
}

static void sim_end(void)
{
	for (uint32_t i = 0; i < nn; i++)
		dsm_log_fini(&nd[i].log);
}

Test(dsm_protocol, message_through_a_lock)
{
	sim_start(2);
	/* node 1 caches page 0 (home 0) before node 0 writes it */
	cr_assert_eq(sim_read(&nd[1], 10), 0);
	sim_lock(&nd[0]);
	sim_write(&nd[0], 10, 7);
	sim_unlock(&nd[0]);
	sim_lock(&nd[1]);
	cr_assert_eq(sim_read(&nd[1], 10), 7, "stale data through a lock");
	sim_unlock(&nd[1]);
	sim_end();
}

Test(dsm_protocol, transitive_chain_of_three)
{
	sim_start(3);
	uint32_t x = 1 * PSZ + 3;	      /* page 1: home node 1 */
	cr_assert_eq(sim_read(&nd[2], x), 0); /* node 2 caches it */
	sim_lock(&nd[0]);		      /* lock A */
	sim_write(&nd[0], x, 9);
	sim_unlock(&nd[0]);
	sim_lock(&nd[1]); /* A, then B */
	uint8_t v = sim_read(&nd[1], x);
	sim_write(&nd[1], 2 * PSZ, v);
	sim_unlock(&nd[1]);
	sim_lock(&nd[2]); /* B only */
	cr_assert_eq(sim_read(&nd[2], 2 * PSZ), 9);
	cr_assert_eq(sim_read(&nd[2], x), 9, "the chain was not transitive");
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
	cr_assert_eq(nd[1].diffs + nd[2].diffs, 2);
	sim_end();
}
