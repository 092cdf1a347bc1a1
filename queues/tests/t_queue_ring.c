/* SPDX-License-Identifier: MIT */
/*
 * t_queue_ring.c - the SPSC ring (queues/q_ring.h) in both modes, Q_MODE_SW
 * and Q_MODE_HWQ: argument checks, empty/full, FIFO order and payloads
 * across many wrap-arounds, credit return, q_ring_nonempty, the HWQ
 * delivery latency, and a two-thread stream with a tiny and a normal ring.
 * Q_TEST_SCALE=N divides the message counts by N (the TSan run uses 10).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "qtest.h"
#include "../q_ring.h"

TestSuite(ring, .timeout = 60);

struct rcase {
	enum q_mode mode;
	uint32_t cap;
	uint32_t lat_ns;
	uint32_t count; /* messages (before Q_TEST_SCALE) */
};

static const char *mode_name(enum q_mode mode)
{
	return mode == Q_MODE_HWQ ? "hwq" : "sw";
}

/* w[0] = seq, w[1] = checksum, w[2..5] derived from both. */
static void fill_msg(struct q_msg *m, uint64_t seq)
{
	uint64_t ck = qt_mix(seq);
	m->w[0] = seq;
	m->w[1] = ck;
	for (int k = 2; k < Q_MSG_WORDS; k++)
		m->w[k] = ck ^ ((uint64_t)k << 56) ^ ~seq;
}

/* Asserts m carries message `seq` with an intact payload. */
static void check_msg(const struct q_msg *m, uint64_t seq, enum q_mode mode,
		      uint32_t cap)
{
	if (q_likely(m->w[0] == seq && m->w[1] == qt_mix(seq))) {
		for (int k = 2; k < Q_MSG_WORDS; k++) {
			uint64_t want =
			    qt_mix(seq) ^ ((uint64_t)k << 56) ^ ~seq;
			if (q_unlikely(m->w[k] != want))
				cr_assert_fail("%s/%u: seq %" PRIu64
					       " w[%d] %#" PRIx64
					       " want %#" PRIx64,
					       mode_name(mode), cap, seq, k,
					       m->w[k], want);
		}
		return;
	}
	cr_assert_eq(m->w[0], seq, "%s/%u: seq %" PRIu64 " want %" PRIu64,
		     mode_name(mode), cap, m->w[0], seq);
	cr_assert_eq(m->w[1], qt_mix(seq),
		     "%s/%u: seq %" PRIu64 " checksum %#" PRIx64
		     " want %#" PRIx64,
		     mode_name(mode), cap, seq, m->w[1], qt_mix(seq));
}

/* Wait loops yield the CPU and read the clock every 256 spins. */
static const struct qt_waiter ring_wait = {.yield_mask = 255,
					   .clock_mask = 255};

static void ring_setup(struct q_ring *q, enum q_mode mode, uint32_t cap,
		       uint32_t lat_ns)
{
	int rc = q_ring_init(q, mode, cap, lat_ns, -1);
	cr_assert_eq(rc, 0, "%s/%u: q_ring_init = %d", mode_name(mode), cap,
		     rc);
	cr_assert_eq(q->capacity, cap, "%s: capacity %" PRIu64 " want %u",
		     mode_name(mode), q->capacity, cap);
}

/* Producer side: publishes seq; the ring must have room. */
static void produce(struct q_ring *q, uint64_t seq)
{
	struct q_msg *m = q_ring_reserve(q);
	cr_assert_not_null(m, "%s/%" PRIu64 ": no room for seq %" PRIu64,
			   mode_name(q->p.mode), q->capacity, seq);
	fill_msg(m, seq);
	q_ring_publish(q, m);
}

/* Consumer side: message seq must be next. */
static void consume(struct q_ring *q, uint64_t seq)
{
	struct q_msg *m = q_ring_peek(q);
	cr_assert_not_null(m, "%s/%" PRIu64 ": seq %" PRIu64 " not visible",
			   mode_name(q->c.mode), q->capacity, seq);
	check_msg(m, seq, q->c.mode, (uint32_t)q->capacity);
	q_ring_release(q);
}

/* Reserves and publishes until the ring is full; returns how many. */
static uint64_t fill_up(struct q_ring *q, uint64_t seq0)
{
	uint64_t n = 0;
	struct q_msg *m;
	while (n <= q->capacity && (m = q_ring_reserve(q))) {
		fill_msg(m, seq0 + n++);
		q_ring_publish(q, m);
	}
	return n;
}

static const enum q_mode modes[] = {Q_MODE_SW, Q_MODE_HWQ};

Test(ring, init_errors)
{
	static const uint32_t bad_caps[] = {
	    0, 1, 2, 4, 7, 9, 12, 100, 1000, 0x7fffffffu, 0xffffffffu};
	struct q_ring q;
	for (int i = 0; i < 2; i++) {
		for (size_t j = 0; j < QT_NCASES(bad_caps); j++) {
			int rc = q_ring_init(&q, modes[i], bad_caps[j], 0, -1);
			cr_assert_eq(
			    rc, -EINVAL, "%s: capacity %u: rc %d want %d",
			    mode_name(modes[i]), bad_caps[j], rc, -EINVAL);
		}
		for (uint32_t cap = 8; cap <= 4096; cap *= 2) {
			int rc = q_ring_init(&q, modes[i], cap, 1000, -1);
			cr_assert_eq(rc, 0, "%s: capacity %u: rc %d",
				     mode_name(modes[i]), cap, rc);
			cr_assert_eq(q.capacity, cap,
				     "capacity %" PRIu64 " want %u", q.capacity,
				     cap);
			q_ring_fini(&q);
		}
	}
	static const int bad_modes[] = {2, 3, -1, 0x7fffffff};
	for (size_t j = 0; j < QT_NCASES(bad_modes); j++) {
		int rc = q_ring_init(&q, (enum q_mode)bad_modes[j], 8, 0, -1);
		cr_assert_eq(rc, -EINVAL, "mode %d: rc %d want %d",
			     bad_modes[j], rc, -EINVAL);
	}
}

/* clang-format off */
static const struct rcase empty_cases[] = {
	{Q_MODE_SW, 8, 0, 0},
	{Q_MODE_SW, 1024, 0, 0},
	{Q_MODE_HWQ, 8, 0, 0},
	{Q_MODE_HWQ, 1024, 0, 0},
	{Q_MODE_HWQ, 8, 1000000, 0},
};
/* clang-format on */

static void empty_case(const struct rcase *c)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, c->lat_ns);
	for (int i = 0; i < 3; i++) {
		cr_assert_null(q_ring_peek(&q), "%s/%u: peek on an empty ring",
			       mode_name(c->mode), c->cap);
		cr_assert_not(q_ring_nonempty(&q), "%s/%u: nonempty on empty",
			      mode_name(c->mode), c->cap);
	}
	/* A flush with nothing published publishes nothing. */
	q_ring_flush(&q);
	cr_assert_null(q_ring_peek(&q), "%s/%u: peek after an empty flush",
		       mode_name(c->mode), c->cap);
	cr_assert_eq(q_ring_unconsumed(&q), 0, "%s/%u: unconsumed %" PRIu64,
		     mode_name(c->mode), c->cap, q_ring_unconsumed(&q));
	q_ring_fini(&q);
}

Test(ring, empty)
{
	for (size_t i = 0; i < QT_NCASES(empty_cases); i++)
		empty_case(&empty_cases[i]);
}

/* clang-format off */
static const struct rcase full_cases[] = {
	{Q_MODE_SW, 8, 0, 0},
	{Q_MODE_SW, 16, 0, 0},
	{Q_MODE_SW, 64, 0, 0},
	{Q_MODE_SW, 1024, 0, 0},
	{Q_MODE_HWQ, 8, 0, 0},
	{Q_MODE_HWQ, 16, 0, 0},
	{Q_MODE_HWQ, 64, 0, 0},
	{Q_MODE_HWQ, 1024, 0, 0},
};
/* clang-format on */

/* Exactly `capacity` slots, then NULL; all of them arrive, in order. */
static void full_case(const struct rcase *c)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, 0);
	/* Until published, reserve hands out the same slot. */
	struct q_msg *m1 = q_ring_reserve(&q), *m2 = q_ring_reserve(&q);
	cr_assert_not_null(m1, "%s/%u: reserve on an empty ring",
			   mode_name(c->mode), c->cap);
	cr_assert_eq(m1, m2, "%s/%u: reserve twice: %p then %p",
		     mode_name(c->mode), c->cap, (void *)m1, (void *)m2);

	uint64_t n = fill_up(&q, 0);
	cr_assert_eq(n, c->cap, "%s/%u: reserved %" PRIu64 " slots want %u",
		     mode_name(c->mode), c->cap, n, c->cap);
	for (int i = 0; i < 3; i++)
		cr_assert_null(q_ring_reserve(&q),
			       "%s/%u: reserve on a full ring",
			       mode_name(c->mode), c->cap);
	cr_assert_geq(q_ring_unconsumed(&q), c->cap,
		      "%s/%u: unconsumed %" PRIu64 " want >= %u",
		      mode_name(c->mode), c->cap, q_ring_unconsumed(&q),
		      c->cap);

	/* HWQ: publish alone delivers. SW: the consumer needs the flush. */
	if (c->mode == Q_MODE_SW)
		q_ring_flush(&q);
	cr_assert(q_ring_nonempty(&q), "%s/%u: full ring reads empty",
		  mode_name(c->mode), c->cap);
	for (uint64_t i = 0; i < c->cap; i++)
		consume(&q, i);
	cr_assert_null(q_ring_peek(&q), "%s/%u: peek after draining",
		       mode_name(c->mode), c->cap);
	cr_assert_not(q_ring_nonempty(&q), "%s/%u: nonempty after draining",
		      mode_name(c->mode), c->cap);

	/* A second lap: again exactly capacity. */
	n = fill_up(&q, c->cap);
	cr_assert_eq(n, c->cap, "%s/%u: second lap: %" PRIu64 " slots want %u",
		     mode_name(c->mode), c->cap, n, c->cap);
	cr_assert_null(q_ring_reserve(&q), "%s/%u: reserve on a full ring",
		       mode_name(c->mode), c->cap);
	q_ring_flush(&q);
	for (uint64_t i = 0; i < c->cap; i++)
		consume(&q, c->cap + i);
	cr_assert_null(q_ring_peek(&q), "%s/%u: peek after draining",
		       mode_name(c->mode), c->cap);
	q_ring_fini(&q);
}

Test(ring, full)
{
	for (size_t i = 0; i < QT_NCASES(full_cases); i++)
		full_case(&full_cases[i]);
}

/* HWQ needs no flush for a single message; SW delivers it on flush. */
Test(ring, visibility_flush)
{
	for (int i = 0; i < 2; i++) {
		struct q_ring q;
		ring_setup(&q, modes[i], 1024, 0);
		produce(&q, 0);
		if (modes[i] == Q_MODE_SW)
			q_ring_flush(&q);
		cr_assert(q_ring_nonempty(&q), "%s: published message unseen",
			  mode_name(modes[i]));
		struct q_msg *m = q_ring_peek(&q), *again = q_ring_peek(&q);
		cr_assert_not_null(m, "%s: published message not delivered",
				   mode_name(modes[i]));
		cr_assert_eq(m, again, "%s: peek twice: %p then %p",
			     mode_name(modes[i]), (void *)m, (void *)again);
		check_msg(m, 0, modes[i], 1024);
		q_ring_release(&q);
		cr_assert_null(q_ring_peek(&q), "%s: one message read twice",
			       mode_name(modes[i]));
		q_ring_fini(&q);
	}
}

/* clang-format off */
static const struct rcase fifo_wrap_cases[] = {
	{Q_MODE_SW, 8, 0, 100000},
	{Q_MODE_SW, 16, 0, 100000},
	{Q_MODE_SW, 64, 0, 100000},
	{Q_MODE_SW, 1024, 0, 100000},
	{Q_MODE_HWQ, 8, 0, 100000},
	{Q_MODE_HWQ, 16, 0, 100000},
	{Q_MODE_HWQ, 64, 0, 100000},
	{Q_MODE_HWQ, 1024, 0, 100000},
};
/* clang-format on */

/*
 * One thread, alternating random-size produce and consume bursts (SW: the
 * burst is flushed three times in four); FIFO and payloads over many laps.
 * Single-threaded, q_ring_nonempty must agree with q_ring_peek exactly.
 */
static void fifo_wrap_case(const struct rcase *c)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, 0);
	uint64_t total = qt_scaled(c->count, 1000);
	if (total < 16 * (uint64_t)c->cap)
		total = 16 * (uint64_t)c->cap;
	uint64_t rs = 0x2545f4914f6cdd1dull ^ c->cap;
	rs ^= (uint64_t)c->mode << 40;
	uint64_t sent = 0, got = 0, idle = 0, fulls = 0, empties = 0;
	while (got < total) {
		uint64_t burst = qt_rnd(&rs) % (c->cap + 3), k;
		for (k = 0; k < burst && sent < total; k++) {
			struct q_msg *m = q_ring_reserve(&q);
			if (!m) {
				fulls++;
				break;
			}
			fill_msg(m, sent++);
			q_ring_publish(&q, m);
		}
		if (c->mode == Q_MODE_SW && (qt_rnd(&rs) & 3))
			q_ring_flush(&q);
		uint64_t moved = k;
		burst = qt_rnd(&rs) % (c->cap + 3);
		for (k = 0; k < burst; k++) {
			bool ne = q_ring_nonempty(&q);
			struct q_msg *m = q_ring_peek(&q);
			cr_assert_eq(
			    ne, m != NULL,
			    "%s/%u: nonempty %d but peek %p at seq %" PRIu64,
			    mode_name(c->mode), c->cap, ne, (void *)m, got);
			if (!m) {
				empties++;
				break;
			}
			cr_assert_lt(got, sent,
				     "%s/%u: message %" PRIu64 " never sent",
				     mode_name(c->mode), c->cap, got);
			check_msg(m, got++, c->mode, c->cap);
			q_ring_release(&q);
		}
		moved += k;
		idle = moved ? 0 : idle + 1;
		cr_assert_lt(idle, 100,
			     "%s/%u: no progress: sent %" PRIu64
			     " got %" PRIu64,
			     mode_name(c->mode), c->cap, sent, got);
		if (sent == total)
			q_ring_flush(&q);
	}
	cr_assert_eq(sent, total, "%s/%u: sent %" PRIu64 " want %" PRIu64,
		     mode_name(c->mode), c->cap, sent, total);
	cr_assert_null(q_ring_peek(&q), "%s/%u: extra message after %" PRIu64,
		       mode_name(c->mode), c->cap, got);
	cr_assert_gt(got / c->cap, 10, "%s/%u: only %" PRIu64 " laps",
		     mode_name(c->mode), c->cap, got / c->cap);
	/* Both edges were hit (except perhaps on the big ring). */
	if (c->cap <= 64)
		cr_assert(fulls > 0 && empties > 0,
			  "%s/%u: fulls %" PRIu64 " empties %" PRIu64,
			  mode_name(c->mode), c->cap, fulls, empties);
	q_ring_fini(&q);
}

Test(ring, fifo_wrap)
{
	for (size_t i = 0; i < QT_NCASES(fifo_wrap_cases); i++)
		fifo_wrap_case(&fifo_wrap_cases[i]);
}

/* clang-format off */
static const struct rcase credits_cases[] = {
	{Q_MODE_SW, 8, 0, 0},
	{Q_MODE_SW, 64, 0, 0},
	{Q_MODE_SW, 1024, 0, 0},
	{Q_MODE_HWQ, 8, 0, 0},
	{Q_MODE_HWQ, 64, 0, 0},
	{Q_MODE_HWQ, 1024, 0, 0},
};
/* clang-format on */

/* Releasing a full ring's worth gives the producer room again. */
static void credits_case(const struct rcase *c)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, 0);
	uint64_t seq = 0, next = 0;
	for (int lap = 0; lap < 4; lap++) {
		uint64_t n = fill_up(&q, seq);
		cr_assert_eq(n, c->cap,
			     "%s/%u lap %d: reserved %" PRIu64 " want %u",
			     mode_name(c->mode), c->cap, lap, n, c->cap);
		seq += n;
		q_ring_flush(&q);
		for (uint64_t i = 0; i < c->cap; i++)
			consume(&q, next++);
		/* Releases alone (no empty peek yet) must hand some back. */
		struct q_msg *m = q_ring_reserve(&q);
		cr_assert_not_null(m,
				   "%s/%u lap %d: no credit after a full ring",
				   mode_name(c->mode), c->cap, lap);
		fill_msg(m, seq++);
		q_ring_publish(&q, m);
		q_ring_flush(&q);
		consume(&q, next++);
		/* The empty peek hands back the rest. */
		cr_assert_null(q_ring_peek(&q), "%s/%u lap %d: extra message",
			       mode_name(c->mode), c->cap, lap);
		cr_assert_eq(q_ring_unconsumed(&q), 0,
			     "%s/%u lap %d: unconsumed %" PRIu64 " after drain",
			     mode_name(c->mode), c->cap, lap,
			     q_ring_unconsumed(&q));
	}
	q_ring_fini(&q);
}

Test(ring, credits)
{
	for (size_t i = 0; i < QT_NCASES(credits_cases); i++)
		credits_case(&credits_cases[i]);
}

/* clang-format off */
static const struct rcase credits_on_empty_peek_cases[] = {
	{Q_MODE_SW, 64, 0, 0},
	{Q_MODE_SW, 1024, 0, 0},
	{Q_MODE_HWQ, 64, 0, 0},
	{Q_MODE_HWQ, 1024, 0, 0},
};
/* clang-format on */

/*
 * Fewer releases than a credit batch, then a peek of the empty ring: that
 * peek must return every credit, so the producer gets exactly a full ring
 * beyond what it had published.
 */
static void credits_on_empty_peek_case(const struct rcase *c)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, 0);
	for (uint64_t i = 0; i < 3; i++)
		produce(&q, i);
	q_ring_flush(&q);
	for (uint64_t i = 0; i < 3; i++)
		consume(&q, i);
	cr_assert_null(q_ring_peek(&q), "%s/%u: extra message",
		       mode_name(c->mode), c->cap);
	uint64_t n = fill_up(&q, 3);
	cr_assert_eq(n, c->cap,
		     "%s/%u: after an empty peek %" PRIu64 " slots want %u",
		     mode_name(c->mode), c->cap, n, c->cap);
	q_ring_flush(&q);
	for (uint64_t i = 0; i < n; i++)
		consume(&q, 3 + i);
	cr_assert_null(q_ring_peek(&q), "%s/%u: extra message",
		       mode_name(c->mode), c->cap);
	q_ring_fini(&q);
}

Test(ring, credits_on_empty_peek)
{
	for (size_t i = 0; i < QT_NCASES(credits_on_empty_peek_cases); i++)
		credits_on_empty_peek_case(&credits_on_empty_peek_cases[i]);
}

Test(ring, nonempty)
{
	for (int i = 0; i < 2; i++) {
		enum q_mode mode = modes[i];
		struct q_ring q;
		ring_setup(&q, mode, 8, 0);
		for (uint64_t lap = 0; lap < 20; lap++) {
			cr_assert_not(q_ring_nonempty(&q),
				      "%s lap %" PRIu64
				      ": empty ring reads nonempty",
				      mode_name(mode), lap);
			produce(&q, 2 * lap);
			produce(&q, 2 * lap + 1);
			q_ring_flush(&q);
			cr_assert(q_ring_nonempty(&q),
				  "%s lap %" PRIu64 ": two messages unseen",
				  mode_name(mode), lap);
			/* Peeking does not consume. */
			cr_assert_not_null(q_ring_peek(&q), "%s: peek",
					   mode_name(mode));
			cr_assert(q_ring_nonempty(&q),
				  "%s lap %" PRIu64 ": peek consumed",
				  mode_name(mode), lap);
			consume(&q, 2 * lap);
			cr_assert(q_ring_nonempty(&q),
				  "%s lap %" PRIu64 ": one message left unseen",
				  mode_name(mode), lap);
			consume(&q, 2 * lap + 1);
			cr_assert_not(q_ring_nonempty(&q),
				      "%s lap %" PRIu64
				      ": drained ring reads nonempty",
				      mode_name(mode), lap);
		}
		q_ring_fini(&q);
	}
}

/* HWQ latency: published at once (nonempty) but deliverable L ns later. */
Test(ring, hwq_latency)
{
	const uint32_t lat = 2000000; /* 2 ms */
	struct q_ring q;
	ring_setup(&q, Q_MODE_HWQ, 64, lat);
	for (uint64_t round = 0; round < 3; round++) {
		uint64_t t0 = qt_now_ns();
		for (uint64_t k = 0; k < 4; k++)
			produce(&q, 4 * round + k);
		struct q_msg *m = q_ring_peek(&q);
		uint64_t t1 = qt_now_ns();
		cr_assert(q_ring_nonempty(&q),
			  "round %" PRIu64 ": nonempty must ignore the latency",
			  round);
		/* Only meaningful if we were not descheduled for 1 ms. */
		if (t1 - t0 < lat / 2)
			cr_assert_null(m,
				       "round %" PRIu64
				       ": visible after %" PRIu64
				       " ns, latency %u ns",
				       round, t1 - t0, lat);
		for (uint64_t k = 0; k < 4; k++) {
			uint64_t deadline = t0 + 1000000000ull, now;
			while (!(m = q_ring_peek(&q))) {
				now = qt_now_ns();
				cr_assert_lt(now, deadline,
					     "round %" PRIu64 " msg %" PRIu64
					     ": not delivered after 1 s",
					     round, k);
				cr_assert(q_ring_nonempty(&q),
					  "round %" PRIu64
					  ": nonempty false while pending",
					  round);
			}
			now = qt_now_ns();
			/* Half: slack for a TSC calibration that was preempted.
			 */
			cr_assert_geq(now - t0, lat / 2,
				      "round %" PRIu64 " msg %" PRIu64
				      ": delivered after %" PRIu64
				      " ns, latency %u ns",
				      round, k, now - t0, lat);
			check_msg(m, 4 * round + k, Q_MODE_HWQ, 64);
			q_ring_release(&q);
		}
		cr_assert_null(q_ring_peek(&q), "round %" PRIu64 ": extra",
			       round);
		cr_assert_not(q_ring_nonempty(&q),
			      "round %" PRIu64 ": drained ring reads nonempty",
			      round);
	}
	q_ring_fini(&q);
}

/* latency_ns applies to Q_MODE_HWQ only. */
Test(ring, sw_ignores_latency)
{
	struct q_ring q;
	ring_setup(&q, Q_MODE_SW, 64, 2000000000u);
	produce(&q, 7);
	q_ring_flush(&q);
	struct q_msg *m = q_ring_peek(&q);
	cr_assert_not_null(m, "sw ring delayed a flushed message");
	check_msg(m, 7, Q_MODE_SW, 64);
	q_ring_release(&q);
	q_ring_fini(&q);
}

/* Slots on NUMA node 0 (or the heap where libnuma cannot): a full lap. */
Test(ring, numa_node)
{
	for (int i = 0; i < 2; i++) {
		struct q_ring q;
		int rc = q_ring_init(&q, modes[i], 64, 0, 0);
		cr_assert_eq(rc, 0, "%s: q_ring_init on node 0 = %d",
			     mode_name(modes[i]), rc);
		cr_assert(q.numa_node == 0 || q.numa_node == -1,
			  "%s: numa_node %d want 0 or -1", mode_name(modes[i]),
			  q.numa_node);
		uint64_t n = fill_up(&q, 0);
		cr_assert_eq(n, 64, "%s: %" PRIu64 " slots want 64",
			     mode_name(modes[i]), n);
		q_ring_flush(&q);
		for (uint64_t k = 0; k < n; k++)
			consume(&q, k);
		q_ring_fini(&q);
	}
}

/* ---- two threads ---- */

struct stream {
	struct q_ring *q;
	enum q_mode mode;
	uint64_t n;
	uint64_t sum; /* producer: sum of the checksums sent */
	bool stalled; /* producer: no room for QT_STALL_NS */
	uint64_t stall_seq;
};

static void *stream_producer(void *arg)
{
	struct stream *s = arg;
	struct q_ring *q = s->q;
	uint64_t sum = 0;
	for (uint64_t seq = 0; seq < s->n; seq++) {
		struct q_msg *m;
		struct qt_waiter w = ring_wait;
		while (!(m = q_ring_reserve(q))) {
			if (s->mode == Q_MODE_SW)
				q_ring_flush(q);
			if (!qt_wait_more(&w)) {
				s->stalled = true;
				s->stall_seq = seq;
				return NULL;
			}
		}
		fill_msg(m, seq);
		sum += m->w[1];
		q_ring_publish(q, m);
	}
	q_ring_flush(q);
	s->sum = sum;
	return NULL;
}

ParameterizedTestParameters(ring, stream)
{
	/* clang-format off */
	static struct rcase c[] = {
		{Q_MODE_SW, 8, 0, 2000000},
		{Q_MODE_SW, 1024, 0, 2000000},
		{Q_MODE_HWQ, 8, 0, 2000000},
		{Q_MODE_HWQ, 1024, 0, 2000000},
		{Q_MODE_HWQ, 64, 2000, 200000}, /* with a 2 us latency */
	};
	/* clang-format on */
	return cr_make_param_array(struct rcase, c, QT_NCASES(c));
}

/* Producer thread -> consumer (this thread): exact order, no loss. */
ParameterizedTest(struct rcase *c, ring, stream)
{
	struct q_ring q;
	ring_setup(&q, c->mode, c->cap, c->lat_ns);
	struct stream s = {
	    .q = &q, .mode = c->mode, .n = qt_scaled(c->count, 1000)};
	pthread_t tid;
	int rc = pthread_create(&tid, NULL, stream_producer, &s);
	cr_assert_eq(rc, 0, "pthread_create: %d", rc);

	uint64_t sum = 0;
	for (uint64_t seq = 0; seq < s.n; seq++) {
		struct q_msg *m;
		struct qt_waiter w = ring_wait;
		while (!(m = q_ring_peek(&q)))
			if (!qt_wait_more(&w))
				cr_assert_fail("%s/%u: stalled at seq %" PRIu64
					       " of %" PRIu64 " (nonempty %d)",
					       mode_name(c->mode), c->cap, seq,
					       s.n, q_ring_nonempty(&q));
		check_msg(m, seq, c->mode, c->cap);
		sum += m->w[1];
		q_ring_release(&q);
	}
	pthread_join(tid, NULL);
	cr_assert_not(s.stalled, "%s/%u: producer stalled at seq %" PRIu64,
		      mode_name(c->mode), c->cap, s.stall_seq);
	cr_assert_eq(sum, s.sum, "%s/%u: checksum %#" PRIx64 " want %#" PRIx64,
		     mode_name(c->mode), c->cap, sum, s.sum);
	cr_assert_null(q_ring_peek(&q), "%s/%u: extra message after %" PRIu64,
		       mode_name(c->mode), c->cap, s.n);
	cr_assert_not(q_ring_nonempty(&q), "%s/%u: nonempty after the stream",
		      mode_name(c->mode), c->cap);
	cr_assert_eq(q_ring_unconsumed(&q), 0, "%s/%u: unconsumed %" PRIu64,
		     mode_name(c->mode), c->cap, q_ring_unconsumed(&q));
	q_ring_fini(&q);
}
