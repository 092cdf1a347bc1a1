/* SPDX-License-Identifier: MIT */
/*
 * t_su_rings.c - one SU serving the request rings of k EUs (the k-EU
 * node's ring pairs, docs/architecture.md, "Serving k EUs fairly"): each
 * step takes one batch at most from each EU's ring in turn, a fiber made
 * ready by an EU's request goes to the ready ring of its frame's EU (the
 * poster's for its own frames), each EU's
 * count of requests performed (eu_link.req_done) is its own and waits
 * while fibers for that EU wait beyond its ring, and the SU wakes each
 * sleeping EU; outside the request rings (a peer's message, the inbox) a
 * fiber for a slot goes to the EU whose frame it is, a new frame to the
 * EU with the shortest ready ring. White box: k ring pairs driven by hand
 * and by k posting threads, with no EU thread.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "unit/req_line.h"

#define K 3

TestSuite(su_rings, .timeout = 60);

/* Slot i is signalled by EU i only; its fiber runs on own[i].body, a
 * frame of EU i's (a header naming the EU, in registered memory): a
 * frame's fibers run on its EU. */
static earth_slot slot[K] __attribute__((aligned(64)));
static struct {
	struct frame_hdr h;
	int body;
	char pad[44];
} __attribute__((aligned(64))) own[K];

/* Fibers that reached an EU other than the one whose request made them
 * ready (any thread counts; the tests check it is 0). */
static _Atomic unsigned wrong;

static void fiber(void *frame)
{
	(void)frame;
}

static void node_up(uint32_t slots)
{
	struct earth_node *n = &earth_node_g;
	memset(n, 0, sizeof(*n));
	memset(&su_g, 0, sizeof(su_g));
	n->num_nodes = 1;
	n->eus = K;
	n->numa_node = -1;
	n->su_wordp = &n->su_word;
	cr_assert_eq(unit_links_init(n, Q_MODE_SW, slots), 0);
	cr_assert_eq(su_attach(&su_g, n), 0);
	cr_assert_eq(su_g.neus, K);
	cr_assert_eq(q_mpsc_init(&n->inbox, 8), 0);
	reg_fiber_add(fiber);
	atomic_store(&wrong, 0);
	cr_assert_eq(reg_mem_add(own, sizeof(own)), 0);
	for (int i = 0; i < K; i++) {
		own[i].h = (struct frame_hdr){
		    NULL, (uint32_t)i << FRAME_OWNER_SHIFT, FRAME_LIVE};
		slot[i] = (earth_slot){1, 1, fiber, &own[i].body};
	}
}

static void node_down(void)
{
	struct earth_node *n = &earth_node_g;
	cr_expect_eq(atomic_load(&wrong), 0,
		     "%u fibers reached another EU than the one that asked",
		     atomic_load(&wrong));
	reg_mem_remove(own);
	su_detach(&su_g);
	unit_links_fini(n);
	q_mpsc_fini(&n->inbox);
}

/* EU i posts msgs request messages of REQ_LINE_WORDS SYNCs to its slot,
 * as the EU's posting path lays them out (unit/req_line.h). */
static void post(int i, unsigned msgs)
{
	struct q_ring *q = &earth_node_g.link[i].req;
	for (unsigned m = 0; m < msgs; m++) {
		struct q_msg *msg = q_ring_reserve(q);
		cr_assert_not_null(msg, "EU %d's request ring full", i);
		for (unsigned w = 0; w < REQ_LINE_WORDS; w++)
			msg->w[w] = req_head(SU_OP_SYNC, 0, 0,
					     (uint64_t)(uintptr_t)&slot[i]);
		q_ring_publish(q, msg);
	}
	q_ring_flush(q);
}

/* EU i takes its ready ring: the fibers on it, each checked to be for
 * one of its own slots. */
static unsigned take(int i)
{
	struct q_ring *q = &earth_node_g.link[i].ready;
	struct q_msg *m;
	unsigned got = 0;
	while ((m = q_ring_peek(q))) {
		struct ready_msg *r = ready_of(m);
		for (int e = 0; e < READY_PER_MSG && r->e[e].fiber; e++) {
			if (r->e[e].fiber != (uintptr_t)fiber ||
			    r->e[e].frame != (uintptr_t)&own[i].body)
				atomic_fetch_add(&wrong, 1);
			got++;
		}
		q_ring_release(q);
	}
	return got;
}

static uint64_t done(int i)
{
	return atomic_load_explicit(&earth_node_g.link[i].req_done,
				    memory_order_acquire);
}

Test(su_rings, a_fiber_goes_back_to_the_eu_that_asked)
{
	node_up(64);
	post(0, 1);
	post(2, 2);
	cr_assert_eq(su_step(&earth_node_g, false), 3 * REQ_LINE_WORDS);
	cr_expect_eq(take(0), REQ_LINE_WORDS);
	cr_expect_eq(take(1), 0);
	cr_expect_eq(take(2), 2 * REQ_LINE_WORDS);
	cr_expect_eq(done(0), REQ_LINE_WORDS);
	cr_expect_eq(done(1), 0);
	cr_expect_eq(done(2), 2 * REQ_LINE_WORDS);
	node_down();
}

Test(su_rings, one_busy_eu_holds_another_back_by_one_batch_at_most)
{
	node_up(64);
	/* EU 0 has 20 messages waiting, more than three batches; EU 1 then
	 * posts one: the first step performs it. */
	post(0, 20);
	post(1, 1);
	su_step(&earth_node_g, false);
	cr_expect_eq(done(1), REQ_LINE_WORDS);
	/* EU 0: one batch (the last message begun goes whole). */
	cr_expect_geq(done(0), EARTH_SU_BATCH);
	cr_expect_lt(done(0), EARTH_SU_BATCH + REQ_LINE_WORDS);
	cr_expect_eq(take(1), REQ_LINE_WORDS);
	unsigned got = take(0);
	for (int s = 0; s < 4; s++) {
		su_step(&earth_node_g, false);
		got += take(0);
	}
	cr_expect_eq(got, 20 * REQ_LINE_WORDS);
	cr_expect_eq(done(0), 20 * REQ_LINE_WORDS);
	node_down();
}

Test(su_rings, a_full_ready_ring_holds_back_only_its_eus_count)
{
	/* Ready rings of 8 messages, 3 fibers each: EU 0's 30 fibers do not
	 * fit, 6 wait in its overflow list, and its count waits with them
	 * (the EU may not signal slots itself before they reach it). */
	node_up(8);
	post(0, 5);
	post(1, 1);
	su_step(&earth_node_g, false);
	cr_expect_eq(su_g.eus[0].rovf_len, 6);
	cr_expect_eq(su_g.eus[1].rovf_len, 0);
	cr_expect_eq(done(0), 0);
	cr_expect_eq(done(1), REQ_LINE_WORDS);
	cr_expect_eq(su_ready_backlog(&su_g), 6);
	/* EU 0 catches up: the rest reach it, and its count follows. */
	unsigned got = take(0);
	su_step(&earth_node_g, false);
	got += take(0);
	cr_expect_eq(got, 5 * REQ_LINE_WORDS);
	cr_expect_eq(done(0), 5 * REQ_LINE_WORDS);
	cr_expect_eq(take(1), REQ_LINE_WORDS);
	cr_expect_eq(su_ready_backlog(&su_g), 0);
	node_down();
}

/* The SU wakes a sleeping EU it gave work (a ready message), not its
 * siblings, which would spin and sleep again for nothing; the job's end
 * wakes them all. */
Test(su_rings, the_su_wakes_the_sleeping_eus_it_gave_work)
{
	node_up(64);
	struct earth_node *n = &earth_node_g;
	for (int i = 0; i < K; i++)
		atomic_store(&n->link[i].word, UNIT_SLEEPING);
	cr_expect(su_eus_asleep(n, memory_order_relaxed));
	post(1, 1);
	cr_assert_eq(su_step(n, false), REQ_LINE_WORDS);
	su_wake_eu(n);
	for (int i = 0; i < K; i++)
		cr_expect_eq(atomic_load(&n->link[i].word),
			     i == 1 ? UNIT_RUNNING : UNIT_SLEEPING, "EU %d %s",
			     i,
			     i == 1 ? "was given work but sleeps"
				    : "was woken for nothing");
	cr_expect_not(su_eus_asleep(n, memory_order_relaxed));
	cr_expect_eq(take(1), REQ_LINE_WORDS);
	atomic_store(&n->link[1].word, UNIT_SLEEPING);
	atomic_store(&n->stop, true);
	su_wake_eu(n);
	for (int i = 0; i < K; i++)
		cr_expect_eq(atomic_load(&n->link[i].word), UNIT_RUNNING,
			     "EU %d sleeps through the job's end", i);
	node_down();
}

/* K posting threads at once, each as an EU would: post a message, then
 * take its ready ring until the fibers of everything it posted came back
 * and the SU's count of its requests says so; the SU steps meanwhile. */
#define ROUNDS 2000

static _Atomic int posters_left;
static uint64_t taken[K]; /* by each poster, read after the join */

static void *poster(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct q_ring *q = &earth_node_g.link[i].req;
	uint64_t posted = 0, got = 0;
	for (int r = 0; r < ROUNDS; r++) {
		struct q_msg *msg;
		while (!(msg = q_ring_reserve(q)))
			got += take(i);
		for (unsigned w = 0; w < REQ_LINE_WORDS; w++)
			msg->w[w] = req_head(SU_OP_SYNC, 0, 0,
					     (uint64_t)(uintptr_t)&slot[i]);
		q_ring_publish(q, msg);
		q_ring_flush(q);
		posted += REQ_LINE_WORDS;
		got += take(i);
	}
	while (got < posted || done(i) < posted)
		got += take(i);
	taken[i] = got;
	atomic_fetch_sub(&posters_left, 1);
	return NULL;
}

Test(su_rings, k_eus_post_at_once_and_each_gets_its_own_back)
{
	node_up(16);
	pthread_t t[K];
	atomic_store(&posters_left, K);
	for (int i = 0; i < K; i++)
		cr_assert_eq(
		    pthread_create(&t[i], NULL, poster, (void *)(intptr_t)i),
		    0);
	while (atomic_load(&posters_left))
		su_step(&earth_node_g, false);
	for (int i = 0; i < K; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < K; i++) {
		cr_expect_eq(taken[i], (uint64_t)ROUNDS * REQ_LINE_WORDS,
			     "EU %d", i);
		cr_expect_eq(done(i), (uint64_t)ROUNDS * REQ_LINE_WORDS,
			     "EU %d", i);
	}
	node_down();
}

/* ---- a peer's readiness routed by the frame's EU ---- */

/* Frames as the EUs lay them out: a header naming the EU, then the body
 * (a slot in it), in registered memory. */
static struct {
	struct frame_hdr h;
	earth_slot s;
	char pad[40];
} __attribute__((aligned(64))) frames[K];

/* The frames' bodies on EU i's ready ring; a fiber for another frame or
 * another function counts as wrong. */
static unsigned take_frames(int i, void *want)
{
	struct q_ring *q = &earth_node_g.link[i].ready;
	struct q_msg *m;
	unsigned got = 0;
	while ((m = q_ring_peek(q))) {
		struct ready_msg *r = ready_of(m);
		for (int e = 0; e < READY_PER_MSG && r->e[e].fiber; e++) {
			if (r->e[e].fiber != (uintptr_t)fiber ||
			    (want && r->e[e].frame != (uintptr_t)want))
				atomic_fetch_add(&wrong, 1);
			got++;
		}
		q_ring_release(q);
	}
	return got;
}

Test(su_rings, a_peers_signal_goes_to_the_frames_eu_a_new_frame_to_the_idlest)
{
	node_up(64);
	cr_assert_eq(reg_mem_add(frames, sizeof(frames)), 0);
	/* frame j is EU (2 - j)'s */
	for (int j = 0; j < K; j++) {
		frames[j].h = (struct frame_hdr){
		    NULL, (uint32_t)(K - 1 - j) << FRAME_OWNER_SHIFT,
		    FRAME_LIVE};
		frames[j].s = (earth_slot){1, 1, fiber, &frames[j].s};
	}
	su_step(&earth_node_g, false);
	cr_assert(su_g.by_frame, "with 3 EUs");
	for (int j = 0; j < K; j++)
		su_slot_signal(&su_g, &frames[j].s, "RSYNC");
	/* a slot whose fiber runs on memory that is not a frame: EU 0 */
	static int loose;
	static earth_slot outside;
	outside = (earth_slot){1, 1, fiber, &loose};
	su_slot_signal(&su_g, &outside, "RSYNC");
	su_ready_flush();
	cr_expect_eq(take_frames(2, &frames[0].s), 1);
	cr_expect_eq(take_frames(1, &frames[1].s), 1);
	cr_expect_eq(take_frames(0, NULL), 2); /* frame 2's, outside's */
	cr_expect_eq(atomic_load(&wrong), 0);
	/* new frames: EU 0 has 3 messages more unconsumed, EU 2 has 2, EU 1
	 * none */
	su_g.eu = &su_g.eus[0];
	for (int f = 0; f < 3 * READY_PER_MSG; f++)
		su_ready_push(&su_g, fiber, &own[0].body);
	su_g.eu = &su_g.eus[2];
	for (int f = 0; f < 2 * READY_PER_MSG; f++)
		su_ready_push(&su_g, fiber, &own[2].body);
	su_g.eu = &su_g.eus[0];
	su_ready_push_new(&su_g, fiber, &own[1].body);
	su_ready_push_new(&su_g, fiber, &own[1].body);
	su_ready_flush();
	/* both went to EU 1, whose ring stayed the shortest (one message,
	 * open, then published) */
	cr_expect_eq(take_frames(1, &own[1].body), 2);
	cr_expect_eq(take_frames(0, &own[0].body), 3 * READY_PER_MSG);
	cr_expect_eq(take_frames(2, &own[2].body), 2 * READY_PER_MSG);
	/* a request's fiber goes to its frame's EU: the poster's own, or a
	 * sibling's (EU 0 signals a slot of EU 2's frame 0) */
	post(2, 1);
	su_step(&earth_node_g, false);
	cr_expect_eq(take_frames(2, &own[2].body), REQ_LINE_WORDS);
	cr_expect_eq(take_frames(0, NULL), 0);
	cr_expect_eq(take_frames(1, NULL), 0);
	struct q_ring *q0 = &earth_node_g.link[0].req;
	struct q_msg *msg = q_ring_reserve(q0);
	cr_assert_not_null(msg);
	for (unsigned w = 0; w < REQ_LINE_WORDS; w++)
		msg->w[w] = req_head(SU_OP_SYNC, 0, 0,
				     (uint64_t)(uintptr_t)&frames[0].s);
	q_ring_publish(q0, msg);
	q_ring_flush(q0);
	su_step(&earth_node_g, false);
	cr_expect_eq(take_frames(2, &frames[0].s), REQ_LINE_WORDS);
	cr_expect_eq(take_frames(0, NULL), 0);
	cr_expect_eq(take_frames(1, NULL), 0);
	reg_mem_remove(frames);
	node_down();
}
