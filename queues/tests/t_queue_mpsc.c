/* SPDX-License-Identifier: MIT */
/*
 * t_queue_mpsc.c - the bounded MPSC queue (queues/q_mpsc.h): argument
 * checks, empty/full, claim order versus publish order, FIFO for one
 * producer over many laps, and 4 producer threads into one consumer
 * (every message exactly once, per-producer order kept).
 * Q_TEST_SCALE=N divides the message counts by N (the TSan run uses 10).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "qtest.h"
#include "../q_mpsc.h"

TestSuite(mpsc, .timeout = 60);

/* w[0] = producer, w[1] = seq, w[2] = checksum, w[3..5] derived. */
static void fill_msg(struct q_msg *m, uint64_t id, uint64_t seq)
{
	uint64_t ck = qt_mix((id << 48) ^ seq);
	m->w[0] = id;
	m->w[1] = seq;
	m->w[2] = ck;
	for (int k = 3; k < Q_MSG_WORDS; k++)
		m->w[k] = ck ^ ((uint64_t)k << 56) ^ ~seq;
}

/* Asserts the payload of m is intact (whatever its id and seq). */
static void check_payload(const struct q_msg *m)
{
	uint64_t id = m->w[0], seq = m->w[1], ck = qt_mix((id << 48) ^ seq);
	if (q_likely(m->w[2] == ck && m->w[3] == (ck ^ (3ull << 56) ^ ~seq) &&
		     m->w[4] == (ck ^ (4ull << 56) ^ ~seq) &&
		     m->w[5] == (ck ^ (5ull << 56) ^ ~seq)))
		return;
	cr_assert_eq(m->w[2], ck,
		     "producer %" PRIu64 " seq %" PRIu64 ": checksum %#" PRIx64
		     " want %#" PRIx64,
		     id, seq, m->w[2], ck);
	for (int k = 3; k < Q_MSG_WORDS; k++)
		cr_assert_eq(m->w[k], ck ^ ((uint64_t)k << 56) ^ ~seq,
			     "producer %" PRIu64 " seq %" PRIu64
			     ": w[%d] %#" PRIx64 " want %#" PRIx64,
			     id, seq, k, m->w[k],
			     ck ^ ((uint64_t)k << 56) ^ ~seq);
}

/* Wait loops yield the CPU every 16 spins, read the clock every 1024. */
static const struct qt_waiter mpsc_wait = {.yield_mask = 15,
					   .clock_mask = 1023};

static void mpsc_setup(struct q_mpsc *q, uint32_t cap)
{
	int rc = q_mpsc_init(q, cap);
	cr_assert_eq(rc, 0, "capacity %u: q_mpsc_init = %d", cap, rc);
	cr_assert_eq(q->capacity, cap, "capacity %" PRIu64 " want %u",
		     q->capacity, cap);
}

static void produce(struct q_mpsc *q, uint64_t id, uint64_t seq)
{
	struct q_msg *m = q_mpsc_reserve(q);
	cr_assert_not_null(m,
			   "cap %" PRIu64 ": no room for %" PRIu64 "/%" PRIu64,
			   q->capacity, id, seq);
	fill_msg(m, id, seq);
	q_mpsc_publish(q, m);
}

static void consume(struct q_mpsc *q, uint64_t id, uint64_t seq)
{
	struct q_msg *m = q_mpsc_peek(q);
	cr_assert_not_null(
	    m, "cap %" PRIu64 ": %" PRIu64 "/%" PRIu64 " not visible",
	    q->capacity, id, seq);
	check_payload(m);
	cr_assert_eq(m->w[0], id,
		     "cap %" PRIu64 ": producer %" PRIu64 " want %" PRIu64,
		     q->capacity, m->w[0], id);
	cr_assert_eq(m->w[1], seq,
		     "cap %" PRIu64 ": seq %" PRIu64 " want %" PRIu64,
		     q->capacity, m->w[1], seq);
	q_mpsc_release(q);
}

Test(mpsc, init_errors)
{
	static const uint32_t bad[] = {
	    0, 1, 3, 5, 6, 7, 12, 100, 1000, 0x7fffffffu, 0xffffffffu};
	struct q_mpsc q;
	for (size_t i = 0; i < QT_NCASES(bad); i++) {
		int rc = q_mpsc_init(&q, bad[i]);
		cr_assert_eq(rc, -EINVAL, "capacity %u: rc %d want %d", bad[i],
			     rc, -EINVAL);
	}
	for (uint32_t cap = 2; cap <= 4096; cap *= 2) {
		mpsc_setup(&q, cap);
		q_mpsc_fini(&q);
		cr_assert_null(q.slots, "fini left slots %p", (void *)q.slots);
	}
}

Test(mpsc, empty)
{
	static const uint32_t caps[] = {2, 8, 1024};
	for (size_t i = 0; i < QT_NCASES(caps); i++) {
		struct q_mpsc q;
		mpsc_setup(&q, caps[i]);
		for (int k = 0; k < 3; k++)
			cr_assert_null(q_mpsc_peek(&q), "cap %u: peek on empty",
				       caps[i]);
		produce(&q, 1, 0);
		consume(&q, 1, 0);
		cr_assert_null(q_mpsc_peek(&q),
			       "cap %u: one message read twice", caps[i]);
		q_mpsc_fini(&q);
	}
}

/* Exactly `capacity` claims, then NULL; one release frees one slot. */
Test(mpsc, full)
{
	static const uint32_t caps[] = {2, 4, 8, 64, 1024};
	for (size_t i = 0; i < QT_NCASES(caps); i++) {
		uint32_t cap = caps[i];
		struct q_mpsc q;
		mpsc_setup(&q, cap);
		uint64_t next = 0, sent = 0;
		for (int lap = 0; lap < 3; lap++) {
			struct q_msg *m;
			uint64_t n = 0;
			while (n <= cap && (m = q_mpsc_reserve(&q))) {
				fill_msg(m, 0, sent++);
				q_mpsc_publish(&q, m);
				n++;
			}
			cr_assert_eq(n, cap,
				     "cap %u lap %d: %" PRIu64 " slots want %u",
				     cap, lap, n, cap);
			cr_assert_null(q_mpsc_reserve(&q),
				       "cap %u: full queue gave a slot", cap);
			consume(&q, 0, next++);
			produce(&q, 0, sent++);
			cr_assert_null(q_mpsc_reserve(&q),
				       "cap %u: full queue gave a slot", cap);
			while (next < sent)
				consume(&q, 0, next++);
			cr_assert_null(q_mpsc_peek(&q), "cap %u lap %d: extra",
				       cap, lap);
		}
		q_mpsc_fini(&q);
	}
}

/*
 * Claimed but unpublished: the consumer must stop at it even when later
 * claims are published, then deliver in claim order once it is.
 */
Test(mpsc, claim_order)
{
	struct q_mpsc q;
	mpsc_setup(&q, 8);
	for (uint64_t lap = 0; lap < 5; lap++) {
		struct q_msg *a = q_mpsc_reserve(&q);
		struct q_msg *b = q_mpsc_reserve(&q);
		struct q_msg *c = q_mpsc_reserve(&q);
		cr_assert(a && b && c && a != b && b != c && a != c,
			  "lap %" PRIu64 ": claims %p %p %p", lap, (void *)a,
			  (void *)b, (void *)c);
		fill_msg(c, 2, lap);
		q_mpsc_publish(&q, c);
		fill_msg(b, 1, lap);
		q_mpsc_publish(&q, b);
		cr_assert_null(q_mpsc_peek(&q),
			       "lap %" PRIu64 ": passed an unpublished claim",
			       lap);
		fill_msg(a, 0, lap);
		q_mpsc_publish(&q, a);
		consume(&q, 0, lap);
		consume(&q, 1, lap);
		consume(&q, 2, lap);
		cr_assert_null(q_mpsc_peek(&q), "lap %" PRIu64 ": extra", lap);
	}
	q_mpsc_fini(&q);
}

/* One producer, random bursts on both sides, many laps. */
Test(mpsc, fifo_single_producer)
{
	static const uint32_t caps[] = {2, 8, 64};
	for (size_t i = 0; i < QT_NCASES(caps); i++) {
		uint32_t cap = caps[i];
		struct q_mpsc q;
		mpsc_setup(&q, cap);
		const uint64_t total = qt_scaled(100000, 1000);
		uint64_t rs = 0x9e3779b97f4a7c15ull ^ cap;
		uint64_t sent = 0, got = 0, fulls = 0, empties = 0, idle = 0;
		while (got < total) {
			uint64_t burst = qt_rnd(&rs) % (cap + 3), k, moved;
			for (k = 0; k < burst && sent < total; k++) {
				struct q_msg *m = q_mpsc_reserve(&q);
				if (!m) {
					fulls++;
					break;
				}
				fill_msg(m, 5, sent++);
				q_mpsc_publish(&q, m);
			}
			moved = k;
			burst = qt_rnd(&rs) % (cap + 3);
			for (k = 0; k < burst; k++) {
				struct q_msg *m = q_mpsc_peek(&q);
				if (!m) {
					cr_assert_eq(got, sent,
						     "cap %u: empty at %" PRIu64
						     " of %" PRIu64,
						     cap, got, sent);
					empties++;
					break;
				}
				if (q_unlikely(m->w[1] != got || m->w[0] != 5))
					cr_assert_fail(
					    "cap %u: got %" PRIu64 "/%" PRIu64
					    " want 5/%" PRIu64,
					    cap, m->w[0], m->w[1], got);
				check_payload(m);
				got++;
				q_mpsc_release(&q);
			}
			moved += k;
			idle = moved ? 0 : idle + 1;
			cr_assert_lt(idle, 100,
				     "cap %u: no progress: sent %" PRIu64
				     " got %" PRIu64,
				     cap, sent, got);
		}
		cr_assert_null(q_mpsc_peek(&q), "cap %u: extra message", cap);
		cr_assert(fulls > 0 && empties > 0,
			  "cap %u: fulls %" PRIu64 " empties %" PRIu64, cap,
			  fulls, empties);
		q_mpsc_fini(&q);
	}
}

/* ---- several producer threads ---- */

#define NPROD 4

struct prod {
	struct q_mpsc *q;
	pthread_barrier_t *start;
	uint64_t id;
	uint64_t n;
	bool stalled;
	uint64_t stall_seq;
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	pthread_barrier_wait(p->start);
	for (uint64_t seq = 0; seq < p->n; seq++) {
		struct q_msg *m;
		struct qt_waiter w = mpsc_wait;
		while (!(m = q_mpsc_reserve(p->q))) {
			if (!qt_wait_more(&w)) {
				p->stalled = true;
				p->stall_seq = seq;
				return NULL;
			}
		}
		fill_msg(m, p->id, seq);
		q_mpsc_publish(p->q, m);
	}
	return NULL;
}

struct mp_case {
	uint32_t cap;
	uint32_t per_producer; /* before Q_TEST_SCALE */
};

static void multi_producer(const struct mp_case *c)
{
	struct q_mpsc q;
	mpsc_setup(&q, c->cap);
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, NPROD + 1);
	struct prod p[NPROD];
	pthread_t tid[NPROD];
	const uint64_t n = qt_scaled(c->per_producer, 1000);
	for (int i = 0; i < NPROD; i++) {
		p[i] = (struct prod){
		    .q = &q, .start = &start, .id = (uint64_t)i, .n = n};
		int rc = pthread_create(&tid[i], NULL, producer, &p[i]);
		cr_assert_eq(rc, 0, "pthread_create: %d", rc);
	}
	pthread_barrier_wait(&start);

	uint64_t next[NPROD] = {0};
	for (uint64_t got = 0; got < NPROD * n; got++) {
		struct q_msg *m;
		struct qt_waiter w = mpsc_wait;
		while (!(m = q_mpsc_peek(&q)))
			if (!qt_wait_more(&w))
				cr_assert_fail("cap %u: stalled after %" PRIu64
					       " messages (next %" PRIu64
					       " %" PRIu64 " %" PRIu64
					       " %" PRIu64 ")",
					       c->cap, got, next[0], next[1],
					       next[2], next[3]);
		uint64_t id = m->w[0], seq = m->w[1];
		if (q_unlikely(id >= NPROD))
			cr_assert_fail("cap %u: message %" PRIu64
				       " from producer %" PRIu64,
				       c->cap, got, id);
		if (q_unlikely(seq != next[id]))
			cr_assert_fail("cap %u: producer %" PRIu64
				       " seq %" PRIu64 " want %" PRIu64 " (%s)",
				       c->cap, id, seq, next[id],
				       seq < next[id] ? "duplicate or reordered"
						      : "lost or reordered");
		check_payload(m);
		next[id]++;
		q_mpsc_release(&q);
	}
	for (int i = 0; i < NPROD; i++) {
		pthread_join(tid[i], NULL);
		cr_assert_not(p[i].stalled,
			      "cap %u: producer %d stalled at %" PRIu64, c->cap,
			      i, p[i].stall_seq);
		cr_assert_eq(next[i], n,
			     "cap %u: producer %d: %" PRIu64
			     " received want %" PRIu64,
			     c->cap, i, next[i], n);
	}
	cr_assert_null(q_mpsc_peek(&q), "cap %u: extra message", c->cap);
	pthread_barrier_destroy(&start);
	q_mpsc_fini(&q);
}

Test(mpsc, four_producers)
{
	static const struct mp_case c = {64, 250000};
	multi_producer(&c);
}

/* The smallest queue: producers collide on every slot. */
Test(mpsc, four_producers_tiny)
{
	static const struct mp_case c = {2, 25000};
	multi_producer(&c);
}
