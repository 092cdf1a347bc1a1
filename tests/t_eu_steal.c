/* SPDX-License-Identifier: MIT */
/*
 * t_eu_steal.c - tokens between the EUs of one node (k = 3; the k-EU
 * node's deques, docs/architecture.md, "Stealing between EUs"): k threads
 * acting as the EUs run a tree of tokens through their own deques and the
 * EUs' idle wait (eu_idle: steal from a sibling, the idle count, sleep),
 * every token run exactly once and the idle count back to 0; siblings
 * steal every token of an EU that only pushes; an EU asleep wakes for a
 * sibling's token; a fiber one EU makes ready on another's frame goes
 * to that EU's sibling list and wakes it, through the SU only when that
 * list is full; the SU asks peers for tokens only when every EU is
 * idle, steals for a peer from the EUs round robin with each frame going
 * back to its EU, gives an arriving token to the EU with the shortest
 * ready ring, and counts the node stuck only when every EU is idle. White
 * box: the node set up by hand, threads started by the test (the node's
 * own start of k EU threads is not built here); TSan runs it too.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eu/eu.h"
#include "gas/registry.h"
#include "helpers.h"
#include "su/su.h"

#define K 3

TestSuite(eu_steal, .timeout = 120);

/* EU 0 is eu_first, EU i > 0 others[i - 1] (eu_at), as the node lays
 * them out: a frame ended on a sibling goes back to its EU. */
static struct eu_state others[K - 1];

static void fiber(void *frame)
{
	(void)frame;
}
static void token_gone(void *frame)
{
	(void)frame;
}
static void invoke_tramp(void *frame)
{
	(void)frame;
}

/* k EUs on one node, each with its ring pair and deque, no threads. */
static void node_up(unsigned k)
{
	struct earth_node *n = &earth_node_g;
	memset(n, 0, sizeof(*n));
	memset(&su_g, 0, sizeof(su_g));
	n->num_nodes = 1;
	n->eus = (uint16_t)k;
	n->numa_node = -1;
	n->su_wordp = &n->su_word;
	/* Three EU threads on two vCPUs: idle EUs yield while they poll. */
	n->oversubscribed = true;
	n->spin_ticks = (uint64_t)(200000 * q_tsc_per_ns()); /* 200 us */
	n->token_gone_fiber = token_gone;
	n->invoke_fiber = invoke_tramp;
	cr_assert_eq(unit_links_init(n, Q_MODE_SW, 16), 0);
	cr_assert_eq(unit_tokens_init(n, 1u << 20, k > 1), 0);
	cr_assert_eq(su_attach(&su_g, n), 0);
	cr_assert_eq(q_mpsc_init(&n->inbox, 8), 0);
	(void)earth_fence_heavy_init(); /* else EUs sleep 1 ms at a time */
	memset(&eu_first, 0, sizeof(eu_first));
	memset(others, 0, sizeof(others));
	eu_rest = others;
	for (unsigned i = 0; i < k; i++) {
		struct eu_state *eu = eu_at(i);
		eu->owner_tag = i << FRAME_OWNER_SHIFT;
		eu->link = &n->link[i];
		eu->req = &n->link[i].req;
		eu->ready = &n->link[i].ready;
		eu->tokens = &n->link[i].tokens;
		eu->siblings = k > 1;
	}
}

static void node_down(void)
{
	struct earth_node *n = &earth_node_g;
	for (unsigned i = 0; i < n->eus; i++)
		eu_frames_release_all(eu_at(i));
	eu_frames_release_large();
	eu_rest = NULL;
	su_detach(&su_g);
	unit_links_fini(n);
	q_mpsc_fini(&n->inbox);
}

/* ---- k EU threads running tokens ---- */

/* A token of the tree: token i has children 2i and 2i + 1 below
 * tree_size. */
struct tok {
	_Atomic uint32_t runs;
	_Atomic int32_t ran_on; /* the EU that ran it last */
};
static struct tok *toks;
static uint32_t tree_size;    /* tokens 1 .. tree_size - 1 */
static bool tree_grows;	      /* running a token pushes its children */
static _Atomic uint64_t left; /* tokens not run yet */
static uint64_t ran_by[K];    /* each EU's, read after the join */

/* A token's work: long enough that a sibling steals while it runs. */
static void work(uint32_t i)
{
	volatile uint32_t x = i;
	for (int r = 0; r < 64; r++)
		x = x * 2654435761u + 1;
}

/* A token is a frame, as TOKEN makes it: its argument is the token's
 * number. */
struct tok_frame {
	uint32_t i;
};
static void tok_entry(void *frame)
{
	(void)frame;
}
EARTH_THREADED_FUNCTION(tok_fn, tok_entry, struct tok_frame, sizeof(uint32_t));
/* Tokens that ran in a frame of another EU than the one running them
 * (a stolen token moves into a frame of its thief's). */
static _Atomic uint64_t not_runners;

/* Token i onto EU e's deque, in a frame of e's (EU e's thread). */
static bool push_tok(unsigned e, uint32_t i)
{
	struct tok_frame *f = eu_frame_alloc(eu_at(e), &tok_fn);
	f->i = i;
	return deque_push(eu_at(e)->tokens, f);
}

static void run_token(unsigned e, void *frame)
{
	uint32_t i = ((struct tok_frame *)frame)->i;
	struct tok *t = &toks[i];
	if (frame_owner((struct frame_hdr *)frame - 1) != e)
		atomic_fetch_add(&not_runners, 1);
	atomic_fetch_add(&t->runs, 1);
	atomic_store(&t->ran_on, (int32_t)e);
	ran_by[e]++;
	work(i);
	if (tree_grows)
		for (uint32_t c = 2 * i; c <= 2 * i + 1 && c < tree_size; c++) {
			if (!push_tok(e, c))
				abort(); /* not from this thread: cr_assert */
			eu_token_pushed(eu_at(e));
		}
	eu_frame_free(eu_at(e), frame);
	atomic_fetch_sub(&left, 1);
}

/* The EU a thread of the test acts as. */
static __thread int by_hand_eu = -1;

/* EU e's loop as eu/fiber_loop.h runs it, with tokens and fibers siblings
 * hand it: such a fiber, else its newest token, else its idle wait (a
 * sibling's token lands on its own deque). */
static void *eu_thread_by_hand(void *arg)
{
	unsigned e = (unsigned)(uintptr_t)arg;
	struct earth_node *n = &earth_node_g;
	by_hand_eu = (int)e;
	ran_by[e] = 0;
	while (!atomic_load_explicit(&n->stop, memory_order_acquire)) {
		struct q_msg *m = q_mpsc_peek(&n->link[e].sib);
		if (m) {
			earth_fiber_fn f = (earth_fiber_fn)(uintptr_t)m->w[0];
			void *fr = (void *)(uintptr_t)m->w[1];
			q_mpsc_release(&n->link[e].sib);
			f(fr);
			continue;
		}
		void *t = deque_pop(eu_at(e)->tokens);
		if (t)
			run_token(e, t);
		else
			eu_idle(n, eu_at(e));
	}
	return NULL;
}

static void start_eus(pthread_t *t, unsigned from, unsigned to)
{
	for (unsigned e = from; e < to; e++)
		cr_assert_eq(pthread_create(&t[e], NULL, eu_thread_by_hand,
					    (void *)(uintptr_t)e),
			     0);
}

/* Waits (10 s at most) until *w's value satisfies ok. */
static bool wait_for(_Atomic uint64_t *w, bool (*ok)(uint64_t))
{
	for (int i = 0; i < 10000; i++) {
		if (ok(atomic_load(w)))
			return true;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool none_left(uint64_t v)
{
	return v == 0;
}

/* Ends the EU threads as node 0's end does (stop, then the SU's wake). */
static void stop_eus(pthread_t *t, unsigned from, unsigned to)
{
	struct earth_node *n = &earth_node_g;
	atomic_store_explicit(&n->stop, true, memory_order_release);
	su_wake_eu(n);
	for (unsigned e = from; e < to; e++)
		pthread_join(t[e], NULL);
}

static void tree_make(uint32_t size, bool grows)
{
	tree_size = size;
	tree_grows = grows;
	toks = calloc(size, sizeof(*toks));
	cr_assert_not_null(toks);
	atomic_store(&not_runners, 0);
}

static void tree_check_each_once(uint32_t from)
{
	uint32_t bad = 0, first = 0;
	for (uint32_t i = from; i < tree_size; i++)
		if (atomic_load(&toks[i].runs) != 1 && !bad++)
			first = i;
	cr_expect_eq(bad, 0, "%u tokens not run exactly once (token %u: %u)",
		     bad, first, atomic_load(&toks[first].runs));
	cr_expect_eq(atomic_load(&not_runners), 0,
		     "%llu tokens ran in a frame of another EU",
		     (unsigned long long)atomic_load(&not_runners));
	free(toks);
	toks = NULL;
}

Test(eu_steal, k_eus_run_a_tree_of_tokens_each_exactly_once)
{
	node_up(K);
	/* 2^18 - 1 tokens (TSan: EARTH_TEST_SCALE=10, 2^15 - 1). */
	uint32_t size = 1u << 18;
	while (size > 1024 && size > (1u << 18) / t_scale())
		size >>= 1;
	tree_make(size, true);
	atomic_store(&left, size - 1);
	pthread_t t[K];
	/* The root on EU 0's deque before anyone runs. */
	cr_assert(push_tok(0, 1));
	start_eus(t, 0, K);
	cr_assert(wait_for(&left, none_left), "%llu tokens never ran",
		  (unsigned long long)atomic_load(&left));
	stop_eus(t, 0, K);
	tree_check_each_once(1);
	uint64_t sum = 0, taken = 0;
	for (int e = 0; e < K; e++) {
		sum += ran_by[e];
		taken += eu_at(e)->tokens_taken;
		cr_expect_eq(deque_size(eu_at(e)->tokens), 0, "EU %d", e);
	}
	cr_expect_eq(sum, size - 1);
	cr_log_info(
	    "%llu of %u tokens taken from a sibling; run by EU 0, 1, "
	    "2: %llu %llu %llu",
	    (unsigned long long)taken, size - 1, (unsigned long long)ran_by[0],
	    (unsigned long long)ran_by[1], (unsigned long long)ran_by[2]);
	/* Every EU left its idle wait and its sleep as often as it entered. */
	cr_expect_eq(atomic_load(&earth_node_g.eus_idle), 0);
	node_down();
}

Test(eu_steal, siblings_steal_every_token_of_an_eu_that_only_pushes)
{
	node_up(K);
	uint32_t n = (uint32_t)t_scaled(100000, 5000);
	tree_make(n + 1, false);
	atomic_store(&left, n);
	pthread_t t[K];
	start_eus(t, 1, K); /* EU 0 is this thread: it pushes, never pops */
	for (uint32_t i = 1; i <= n; i++) {
		cr_assert(push_tok(0, i));
		eu_token_pushed(eu_at(0));
	}
	cr_assert(wait_for(&left, none_left), "%llu tokens never ran",
		  (unsigned long long)atomic_load(&left));
	stop_eus(t, 1, K);
	tree_check_each_once(1);
	/* Every token ran on EU 1 or 2, each taken from a sibling at least
	 * once (a stolen token waits on the thief's own deque, where the
	 * other may take it again). */
	cr_expect_eq(ran_by[1] + ran_by[2], n);
	cr_expect_geq(eu_at(1)->tokens_taken + eu_at(2)->tokens_taken, n);
	cr_expect_eq(atomic_load(&earth_node_g.eus_idle), 0);
	node_down();
}

static bool two_asleep(uint64_t w)
{
	return unit_idle_asleep(w) == 2 && unit_idle_waiting(w) == 2;
}

Test(eu_steal, an_eu_asleep_wakes_for_a_siblings_token)
{
	node_up(K);
	tree_make(2, false);
	atomic_store(&left, 1);
	pthread_t t[K];
	start_eus(t, 1, K);
	/* EUs 1 and 2 find nothing, spin 200 us and sleep: no token, no
	 * ready message, nothing wakes them. */
	cr_assert(wait_for(&earth_node_g.eus_idle, two_asleep),
		  "EUs 1 and 2 never both slept: idle count %#llx",
		  (unsigned long long)atomic_load(&earth_node_g.eus_idle));
	struct timespec ts = {0, 20000000}; /* and stay asleep */
	nanosleep(&ts, NULL);
	cr_expect(two_asleep(atomic_load(&earth_node_g.eus_idle)));
	/* EU 0 pushes a token: with no sibling spinning, one is woken and
	 * steals it. */
	cr_assert(push_tok(0, 1));
	eu_token_pushed(eu_at(0));
	cr_assert(wait_for(&left, none_left), "the token never ran");
	int32_t on = atomic_load(&toks[1].ran_on);
	cr_expect(on == 1 || on == 2, "run by EU %d", on);
	/* The one that ran it sleeps again. */
	cr_expect(wait_for(&earth_node_g.eus_idle, two_asleep));
	stop_eus(t, 1, K);
	tree_check_each_once(1);
	cr_expect_geq(eu_at(on)->sleeps, 2, "EU %d slept %llu times", on,
		      (unsigned long long)eu_at(on)->sleeps);
	cr_expect_eq(eu_at(on)->tokens_taken, 1);
	cr_expect_eq(atomic_load(&earth_node_g.eus_idle), 0);
	node_down();
}

/* ---- fibers made ready on a sibling's frame ---- */

static _Atomic uint64_t handed_runs;
static _Atomic int handed_on = -1;
static void handed_fiber(void *frame)
{
	(void)frame;
	atomic_store(&handed_on, by_hand_eu);
	atomic_fetch_add(&handed_runs, 1);
}

static bool one_run(uint64_t v)
{
	return v == 1;
}

Test(eu_steal, a_fiber_made_ready_on_a_siblings_frame_wakes_it_asleep)
{
	node_up(K);
	/* A frame of EU 1's, taken before its thread runs. */
	void *frame = eu_frame_alloc(eu_at(1), &tok_fn);
	atomic_store(&handed_runs, 0);
	atomic_store(&handed_on, -1);
	pthread_t t[K];
	start_eus(t, 1, K);
	cr_assert(wait_for(&earth_node_g.eus_idle, two_asleep),
		  "EUs 1 and 2 never both slept: idle count %#llx",
		  (unsigned long long)atomic_load(&earth_node_g.eus_idle));
	/* This thread, as EU 0, signalled the slot of a fiber on that frame
	 * to 0: the fiber goes to EU 1, with no request to the SU. */
	eu_ready_elsewhere(eu_at(0), handed_fiber, frame);
	cr_assert(wait_for(&handed_runs, one_run), "the fiber never ran");
	cr_expect_eq(atomic_load(&handed_on), 1, "run by EU %d",
		     atomic_load(&handed_on));
	cr_expect_eq(eu_at(0)->req_posted, 0);
	cr_expect_eq(eu_at(0)->fibers_elsewhere, 1);
	cr_expect(wait_for(&earth_node_g.eus_idle, two_asleep));
	stop_eus(t, 1, K);
	/* asleep before, and again after it ran the fiber */
	cr_expect_geq(eu_at(1)->sleeps, 2, "EU 1 slept %llu times",
		      (unsigned long long)eu_at(1)->sleeps);
	eu_frame_free(eu_at(1), frame);
	node_down();
}

Test(eu_steal, a_full_sibling_list_sends_the_fiber_through_the_su)
{
	node_up(K);
	void *frame = eu_frame_alloc(eu_at(1), &tok_fn);
	struct q_mpsc *q = &earth_node_g.link[1].sib;
	unsigned filled = 0;
	for (struct q_msg *m; (m = q_mpsc_reserve(q)); filled++) {
		m->w[0] = (uintptr_t)handed_fiber;
		m->w[1] = (uintptr_t)frame;
		q_mpsc_publish(q, m);
	}
	cr_assert_eq(filled, EARTH_SIB_READY_SLOTS);
	eu_ready_elsewhere(eu_at(0), handed_fiber, frame);
	/* A SPAWN request to the SU, which routes it by frame. */
	cr_expect_eq(eu_at(0)->req_posted, 1);
	eu_post_flush(eu_at(0));
	cr_expect(q_ring_peek(&earth_node_g.link[0].req),
		  "no request on EU 0's ring");
	unsigned left_on_list = 0;
	for (; q_mpsc_peek(q); left_on_list++)
		q_mpsc_release(q);
	cr_expect_eq(left_on_list, EARTH_SIB_READY_SLOTS);
	eu_frame_free(eu_at(1), frame);
	node_down();
}

/* ---- the SU and the idle count ---- */

struct sent {
	uint32_t peer;
	uint8_t type;
	uint64_t first; /* the payload's first word */
};
static struct sent sent[16];
static unsigned nsent;

static int take_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		     const void *payload)
{
	(void)t;
	cr_assert_lt(nsent, 16);
	sent[nsent] = (struct sent){peer, h->type, 0};
	if (payload && h->len >= 8)
		memcpy(&sent[nsent].first, payload, 8);
	nsent++;
	return 0;
}
static void no_flush(struct net *t)
{
	(void)t;
}
static bool none_pending(struct net *t)
{
	(void)t;
	return false;
}
static const struct net_ops ops = {.name = "test",
				   .send = take_send,
				   .flush = no_flush,
				   .pending = none_pending};
static struct net net = {
    .ops = &ops, .self = 0, .nodes = 2, .max_payload = WIRE_MAX_PAYLOAD};

struct tframe {
	uint64_t arg;
	uint64_t rest[5];
};
static void tentry(void *frame)
{
	(void)frame;
}
EARTH_THREADED_FUNCTION(t_tok, tentry, struct tframe, 8);

/* Node 0 of 2 with k EUs, a transport that takes every message. */
static void node_up2(unsigned k)
{
	node_up(k);
	struct earth_node *n = &earth_node_g;
	n->num_nodes = 2;
	n->net = &net;
	nsent = 0;
	su_g.out_head = calloc(2, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(2, sizeof(*su_g.out_tail));
	su_g.owed = calloc(2, sizeof(*su_g.owed));
	su_g.hungry = calloc(2, sizeof(*su_g.hungry));
	su_g.owed_max = 1u << 20;
	reg_fiber_add(fiber);
}

static void node_down2(void)
{
	free(su_g.out_head);
	free(su_g.out_tail);
	free(su_g.owed);
	free(su_g.hungry);
	earth_node_g.net = NULL;
	node_down();
}

static unsigned steals_sent(void)
{
	unsigned s = 0;
	for (unsigned i = 0; i < nsent; i++)
		s += sent[i].type == W_STEAL;
	return s;
}

Test(eu_steal, the_su_asks_peers_only_when_every_eu_is_idle)
{
	node_up2(K);
	struct earth_node *n = &earth_node_g;
	/* No token, nothing ready; EUs 0 and 1 idle, EU 2 runs a fiber
	 * (it may make tokens for them): no STEAL. */
	eu_idle_enter(n);
	eu_idle_enter(n);
	cr_expect_not(unit_eus_all_idle(n));
	su_balance_idle(n, true);
	cr_expect_eq(steals_sent(), 0);
	cr_expect_not(su_g.steal_out);
	/* EU 2 idles too: the node asks a peer. */
	eu_idle_enter(n);
	cr_expect(unit_eus_all_idle(n));
	su_balance_idle(n, true);
	cr_expect_eq(steals_sent(), 1);
	cr_expect_eq(sent[0].peer, 1);
	cr_expect(su_g.steal_out);
	/* Every EU idle but a token waits on EU 2's deque (a sibling takes
	 * it): no STEAL. */
	su_g.steal_out = false;
	struct {
		struct frame_hdr h;
		struct tframe f;
	} fr = {{&t_tok, 0, FRAME_LIVE}, {7, {0}}};
	cr_assert(deque_push(eu_at(2)->tokens, &fr.f));
	su_balance_idle(n, true);
	cr_expect_eq(steals_sent(), 1);
	(void)deque_pop(eu_at(2)->tokens);
	/* One EU leaves idle (a ready message came): no STEAL. */
	eu_idle_leave(n, eu_at(0));
	su_balance_idle(n, true);
	cr_expect_eq(steals_sent(), 1);
	eu_idle_leave(n, eu_at(1));
	eu_idle_leave(n, eu_at(2));
	cr_expect_eq(atomic_load(&n->eus_idle), 0);
	node_down2();
}

Test(eu_steal, one_eu_keeps_no_count_and_asks_as_before)
{
	node_up2(1);
	struct earth_node *n = &earth_node_g;
	cr_expect(unit_eus_all_idle(n));
	su_balance_idle(n, true);
	cr_expect_eq(steals_sent(), 1);
	cr_expect_eq(atomic_load(&n->eus_idle), 0);
	node_down2();
}

/* The fibers on EU e's ready ring: how many are (fiber, frame). */
static unsigned ready_count(unsigned e, earth_fiber_fn fiber_fn, void *frame,
			    unsigned *all)
{
	struct q_ring *q = &earth_node_g.link[e].ready;
	struct q_msg *m;
	unsigned got = 0;
	while ((m = q_ring_peek(q))) {
		struct ready_msg *r = ready_of(m);
		for (int i = 0; i < READY_PER_MSG && r->e[i].fiber; i++) {
			if (r->e[i].fiber == (uintptr_t)fiber_fn &&
			    (!frame || r->e[i].frame == (uintptr_t)frame))
				got++;
			if (all)
				(*all)++;
			if (r->e[i].fiber == (uintptr_t)invoke_tramp)
				free((void *)(uintptr_t)r->e[i].frame);
		}
		q_ring_release(q);
	}
	return got;
}

Test(eu_steal, the_su_steals_for_a_peer_from_the_eus_round_robin)
{
	node_up2(K);
	struct earth_node *n = &earth_node_g;
	struct {
		struct frame_hdr h;
		struct tframe f;
	} fr[3];
	for (int i = 0; i < 3; i++)
		fr[i] = (typeof(fr[i])){{&t_tok, 0, FRAME_LIVE},
					{100u + (unsigned)i, {0}}};
	/* EU 1 holds tokens 100 (oldest) and 101, EU 2 holds 102. */
	cr_assert(deque_push(eu_at(1)->tokens, &fr[0].f));
	cr_assert(deque_push(eu_at(1)->tokens, &fr[1].f));
	cr_assert(deque_push(eu_at(2)->tokens, &fr[2].f));
	struct wire_hdr steal = {.type = W_STEAL};
	for (int i = 0; i < 4; i++)
		su_balance_receive(n, 1, &steal, NULL);
	su_ready_flush();
	/* EU 0 has none; then EU 1's oldest, EU 2's, EU 1's next; then
	 * none left. */
	cr_assert_eq(nsent, 4);
	cr_expect_eq(sent[0].type, W_TOKEN);
	cr_expect_eq(sent[0].first, 100);
	cr_expect_eq(sent[1].first, 102);
	cr_expect_eq(sent[2].first, 101);
	cr_expect_eq(sent[3].type, W_STEAL_NONE);
	cr_expect_eq(su_g.tokens_given, 3);
	/* Each frame goes back to the EU that pushed it (its owner): EU 1
	 * two, EU 2 one, EU 0 none. */
	unsigned all[K] = {0};
	cr_expect_eq(ready_count(0, token_gone, NULL, &all[0]), 0);
	cr_expect_eq(ready_count(1, token_gone, NULL, &all[1]), 2);
	cr_expect_eq(ready_count(2, token_gone, &fr[2].f, &all[2]), 1);
	cr_expect_eq(all[0] + all[1] + all[2], 3);
	node_down2();
}

/* A token from peer 1 carrying argument v. */
static void token_arrives(uint64_t v)
{
	struct wire_hdr h = {
	    .type = W_TOKEN, .n = reg_tfunc_id(&t_tok), .len = t_tok.args_size};
	cr_assert_geq(h.n, 0);
	su_balance_receive(&earth_node_g, 1, &h, &v);
}

Test(eu_steal, an_arriving_token_goes_to_the_shortest_ready_ring)
{
	node_up2(K);
	/* EU 0's ring holds 2 messages (6 fibers), EU 1's 1 (3), EU 2's
	 * none. */
	for (unsigned e = 0; e < 2; e++) {
		su_g.eu = &su_g.eus[e];
		for (unsigned i = 0; i < (2 - e) * READY_PER_MSG; i++)
			su_ready_push(&su_g, fiber, eu_at(e));
	}
	su_g.eu = &su_g.eus[0];
	su_ready_flush();
	token_arrives(1);
	cr_expect_eq(su_g.eu, &su_g.eus[0], "su->eu left as it was");
	cr_expect_eq(su_g.eus[2].rmsg != NULL, 1, "EU 2 got it");
	/* EU 2: 1 fiber in its open message; still the shortest. */
	token_arrives(2);
	su_ready_flush();
	/* EU 2: one message (3), EU 1: one (3), EU 0: two: a tie between
	 * 1 and 2 goes round robin, from the EU after the last chosen. */
	token_arrives(3);
	su_ready_flush();
	cr_expect_eq(ready_count(0, invoke_tramp, NULL, NULL), 0);
	cr_expect_eq(ready_count(1, invoke_tramp, NULL, NULL), 1);
	cr_expect_eq(ready_count(2, invoke_tramp, NULL, NULL), 2);
	cr_expect_eq(su_g.tokens_stolen, 3);
	node_down2();
}

/* ---- stuck detection ---- */

Test(eu_steal, a_node_is_stuck_only_when_every_eu_is_idle)
{
	node_up(K);
	struct earth_node *n = &earth_node_g;
	/* One node, every EU's word asleep (eu_idle), nothing pending, no
	 * token: but the count says EU 2 is not in its idle wait (it
	 * stored its word and has not counted itself yet, say). */
	eu_idle_enter(n);
	eu_idle_enter(n);
	cr_expect_not(su_quiet_idle(n, true));
	cr_expect_not(atomic_load(&n->stop), "declared stuck too soon");
	/* A token on a deque: not stuck either. */
	eu_idle_enter(n);
	struct {
		struct frame_hdr h;
		struct tframe f;
	} fr = {{&t_tok, 0, FRAME_LIVE}, {1, {0}}};
	cr_assert(deque_push(eu_at(1)->tokens, &fr.f));
	cr_expect_not(su_quiet_idle(n, true));
	cr_expect_not(atomic_load(&n->stop), "stuck with a token waiting");
	(void)deque_pop(eu_at(1)->tokens);
	/* Every EU idle, nothing anywhere: stuck. */
	su_quiet_idle(n, true);
	cr_expect(atomic_load(&n->stop), "not declared stuck");
	cr_expect_eq(n->exit_status, EARTH_EXIT_STUCK);
	node_down();
}
