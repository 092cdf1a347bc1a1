/* SPDX-License-Identifier: MIT */
/*
 * t_eu_frames.c - each EU's frame lists and its remote-free list
 * (docs/architecture.md, "What is atomic, and which thread may touch
 * what"): a frame names the EU it came from in its header; one ended on
 * another EU goes back onto its owner's remote-free list of its class,
 * which the owner takes whole only when its own list of the class is
 * empty, before it refills from the heap; large frames are safe from any
 * EU. White box: k eu_state records driven by threads that stand for EU
 * threads (eu_self pointed at each), with exact counts; under TSan too.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "eu/eu.h"

#define K 3

TestSuite(eu_frames, .timeout = 120);

static void entry(void *frame)
{
	(void)frame;
}

/* 40 bytes of frame: class 0 (64 bytes with the header). */
static const struct earth_tfunc small_fn = {"small", entry, 40, 0};
/* Over the largest class: a large frame. */
static const struct earth_tfunc large_fn = {
    "large", entry, (64u << EARTH_FRAME_CLASSES) + 64, 0};

static struct eu_state others[K - 1];

/* EU 0 is eu_first; EU i > 0 others[i - 1]; each tagged as the node
 * tags them (node/node.c). */
static void eus_up(void)
{
	memset(&eu_first, 0, sizeof(eu_first));
	memset(others, 0, sizeof(others));
	eu_rest = others;
	for (unsigned i = 0; i < K; i++)
		eu_at(i)->owner_tag = i << FRAME_OWNER_SHIFT;
}

static void eus_down(void)
{
	for (unsigned i = 0; i < K; i++)
		eu_frames_release_all(eu_at(i));
	eu_frames_release_large();
	eu_rest = NULL;
}

static unsigned chunks_of(const struct eu_state *eu)
{
	unsigned c = 0;
	for (const struct frame_chunk *k = eu->chunks; k; k = k->next)
		c++;
	return c;
}

static unsigned list_len(void *head)
{
	unsigned c = 0;
	for (struct frame_hdr *h = head; h; h = *(void **)(h + 1))
		c++;
	return c;
}

#define N 200 /* frames EU 0 hands to EU 1 in the first test */
static void *frames[N];

static void *free_on_eu1(void *arg)
{
	(void)arg;
	eu_self = eu_at(1);
	for (unsigned i = 0; i < N; i++) {
		memset(frames[i], 0x5a, small_fn.frame_size);
		eu_frame_free(eu_self, frames[i]);
	}
	return NULL;
}

Test(eu_frames, a_frame_ended_on_another_eu_goes_back_to_its_owner)
{
	eus_up();
	struct eu_state *e0 = eu_at(0), *e1 = eu_at(1);
	for (unsigned i = 0; i < N; i++) {
		frames[i] = eu_frame_alloc(e0, &small_fn);
		struct frame_hdr *h = (struct frame_hdr *)frames[i] - 1;
		cr_assert_eq(frame_owner(h), 0);
		cr_assert_eq(h->cls & FRAME_CLASS_MASK, 0);
	}
	/* 200 frames: four chunks of 64, 56 left on EU 0's own list */
	cr_assert_eq(chunks_of(e0), 4);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, free_on_eu1, NULL), 0);
	pthread_join(t, NULL);
	/* all went back to EU 0, none onto EU 1's lists */
	cr_expect_eq(e1->frames_sent_back, N);
	cr_expect_eq(list_len(e1->free_list[0]), 0);
	cr_expect_eq(chunks_of(e1), 0);
	cr_expect_eq(list_len(atomic_load(&e0->remote_free[0])), N);
	cr_expect_eq(list_len(e0->free_list[0]), 56);
	/* EU 0 uses its own list first: the remote list stays */
	for (unsigned i = 0; i < 56; i++)
		(void)eu_frame_alloc(e0, &small_fn);
	cr_expect_eq(e0->remote_lists_taken, 0);
	cr_expect_eq(list_len(atomic_load(&e0->remote_free[0])), N);
	/* then takes the remote list whole, before any new chunk */
	for (unsigned i = 0; i < N; i++) {
		void *f = eu_frame_alloc(e0, &small_fn);
		cr_assert_eq(((struct frame_hdr *)f - 1)->magic, FRAME_LIVE);
	}
	cr_expect_eq(e0->remote_lists_taken, 1);
	cr_expect_eq(chunks_of(e0), 4);
	cr_expect_null(atomic_load(&e0->remote_free[0]));
	(void)eu_frame_alloc(e0, &small_fn);
	cr_expect_eq(chunks_of(e0), 5);
	cr_expect_eq(e0->frames_allocated, 56 + 2 * N + 1);
	eus_down();
}

Test(eu_frames, a_large_frame_ends_on_any_eu)
{
	eus_up();
	void *f = eu_frame_alloc(eu_at(2), &large_fn);
	struct frame_hdr *h = (struct frame_hdr *)f - 1;
	cr_expect_eq(h->cls & FRAME_CLASS_MASK, FRAME_CLASS_LARGE);
	cr_expect_eq(frame_owner(h), 2);
	eu_frame_free(eu_at(0), f);
	cr_expect_eq(eu_at(0)->frames_sent_back, 0);
	/* reused first-fit by any EU */
	void *g = eu_frame_alloc(eu_at(1), &large_fn);
	cr_expect_eq(g, f);
	cr_expect_eq(frame_owner((struct frame_hdr *)g - 1), 1);
	eu_frame_free(eu_at(1), g);
	eus_down();
}

/* ---- EU 0 allocates while EUs 1 and 2 end its frames, at once ---- */

#define M 60000	 /* frames in all */
#define RING 256 /* frames in flight to each freeing EU */

struct hand {
	_Atomic(void *) slot[RING];
	unsigned head; /* consumer's */
} __attribute__((aligned(64)));
static struct hand hands[K - 1];
static _Atomic unsigned large_left;

static void *freer(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	struct hand *hd = &hands[i - 1];
	eu_self = eu_at(i);
	for (unsigned got = 0; got < M / (K - 1); got++) {
		void *f;
		while (!(f = atomic_exchange_explicit(&hd->slot[hd->head], NULL,
						      memory_order_acquire)))
			sched_yield();
		hd->head = (hd->head + 1) % RING;
		*(volatile uint64_t *)f = got;
		eu_frame_free(eu_self, f);
	}
	/* large frames from and to every EU at once */
	for (unsigned j = 0; j < 200; j++)
		eu_frame_free(eu_self, eu_frame_alloc(eu_self, &large_fn));
	atomic_fetch_sub(&large_left, 1);
	return NULL;
}

Test(eu_frames, frames_ended_on_two_other_eus_while_the_owner_allocates)
{
	eus_up();
	memset(hands, 0, sizeof(hands));
	atomic_store(&large_left, K - 1);
	pthread_t t[K - 1];
	for (unsigned i = 1; i < K; i++)
		cr_assert_eq(pthread_create(&t[i - 1], NULL, freer,
					    (void *)(uintptr_t)i),
			     0);
	struct eu_state *e0 = eu_at(0);
	unsigned tail[K - 1] = {0};
	for (unsigned m = 0; m < M; m++) {
		void *f = eu_frame_alloc(e0, &small_fn);
		cr_assert_eq(((struct frame_hdr *)f - 1)->magic, FRAME_LIVE);
		struct hand *hd = &hands[m % (K - 1)];
		unsigned *tl = &tail[m % (K - 1)];
		while (
		    atomic_load_explicit(&hd->slot[*tl], memory_order_relaxed))
			sched_yield();
		atomic_store_explicit(&hd->slot[*tl], f, memory_order_release);
		*tl = (*tl + 1) % RING;
	}
	for (unsigned i = 0; i < K - 1; i++)
		pthread_join(t[i], NULL);
	/* every frame ended once, on another EU, and came back to EU 0 */
	cr_expect_eq(eu_at(1)->frames_sent_back + eu_at(2)->frames_sent_back,
		     M);
	cr_expect_eq(e0->frames_allocated, M);
	unsigned held = list_len(e0->free_list[0]) +
			list_len(atomic_load(&e0->remote_free[0]));
	cr_expect_eq(held, chunks_of(e0) * EARTH_FRAME_CHUNK,
		     "%u free frames, %u chunks", held, chunks_of(e0));
	/* EU 0 refilled from what came back: at most 2 * RING in flight
	 * plus what was on its way back, not a chunk per 64 frames */
	cr_expect(chunks_of(e0) < M / EARTH_FRAME_CHUNK / 4, "%u chunks",
		  chunks_of(e0));
	cr_expect_gt(e0->remote_lists_taken, 0);
	eus_down();
}
