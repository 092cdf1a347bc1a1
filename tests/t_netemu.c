/* SPDX-License-Identifier: MIT */
/*
 * t_netemu.c - the emulated network (runtime/net/emu.c). White-box, on a
 * recording stand-in transport: nothing leaves before its time, then
 * everything leaves in order per peer with its payload; the bandwidth
 * spaces messages out; a transport without room keeps the order; a
 * shutdown or the SU's end releases everything, and fini sends nothing;
 * bad settings are refused naming the
 * variable. As jobs: every remote operation gives the right values under
 * emulation over shm and tcp, and the added delay shows in a block move's
 * latency (a lower bound only: no timing targets).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/emu.h"
#include "job.h"

#ifndef T_LL7
#error "T_LL7 (the ASan build of the ll7 benchmark) must be defined"
#endif

TestSuite(netemu, .timeout = 240);

/* ---- a transport that records what it is given ---- */

#define REC_MAX 64
struct rec {
	struct net base;
	int nsent;
	uint32_t peer[REC_MAX];
	int32_t tag[REC_MAX];
	uint64_t at_ns[REC_MAX];
	unsigned char first_byte[REC_MAX];
	int refuse; /* refuse this many sends with -EAGAIN */
	int flushes, finis;
};

static int rec_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload)
{
	struct rec *r = (struct rec *)t;
	if (r->refuse > 0) {
		r->refuse--;
		return -EAGAIN;
	}
	cr_assert_lt(r->nsent, REC_MAX);
	r->peer[r->nsent] = peer;
	r->tag[r->nsent] = h->n;
	r->at_ns[r->nsent] = t_now_ns();
	r->first_byte[r->nsent] = h->len ? *(const unsigned char *)payload : 0;
	r->nsent++;
	return 0;
}
static void rec_flush(struct net *t)
{
	((struct rec *)t)->flushes++;
}
static unsigned rec_poll(struct net *t, void *n, net_deliver_fn deliver,
			 unsigned budget)
{
	(void)t, (void)n, (void)deliver, (void)budget;
	return 0;
}
static bool rec_pending(struct net *t)
{
	(void)t;
	return false;
}
static _Atomic uint32_t rec_word;
static _Atomic uint32_t *rec_su_word(struct net *t)
{
	(void)t;
	return &rec_word;
}
static void rec_fini(struct net *t)
{
	((struct rec *)t)->finis++;
}
static const struct net_ops rec_ops = {
    .name = "rec",
    .send = rec_send,
    .flush = rec_flush,
    .poll = rec_poll,
    .pending = rec_pending,
    .su_word = rec_su_word,
    .fini = rec_fini,
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->base.ops = &rec_ops;
	r->base.self = 0;
	r->base.nodes = 3;
	r->base.max_payload = WIRE_MAX_PAYLOAD;
}

static int send_tagged(struct net *e, uint32_t peer, int32_t tag,
		       const void *payload, uint32_t len, uint8_t type)
{
	struct wire_hdr h;
	memset(&h, 0, sizeof(h));
	h.type = type;
	h.n = tag;
	h.len = len;
	return e->ops->send(e, peer, &h, payload);
}

/* Polls until the stand-in got `want` messages (10 s at most). */
static void poll_until(struct net *e, struct rec *r, int want)
{
	uint64_t t0 = t_now_ns();
	while (r->nsent < want && t_now_ns() - t0 < 10000000000ull)
		e->ops->poll(e, NULL, NULL, 16);
	cr_assert_eq(r->nsent, want, "only %d of %d messages left", r->nsent,
		     want);
}

Test(netemu, held_for_the_latency_then_in_order)
{
	static struct rec r;
	rec_init(&r);
	const uint64_t lat = 20000000; /* 20 ms */
	struct net *e = net_emu_wrap(&r.base, lat, 0);
	cr_assert_not_null(e);
	cr_expect_eq(e->nodes, 3);
	cr_expect_eq(e->max_payload, WIRE_MAX_PAYLOAD);
	cr_expect_null(e->ops->wait, "the stand-in has no wait");
	unsigned char pay[100];
	uint64_t t0 = t_now_ns();
	for (int i = 0; i < 6; i++) {
		pay[0] = (unsigned char)(0xa0 + i);
		cr_assert_eq(send_tagged(e, 1 + (uint32_t)(i % 2), i, pay,
					 i % 3 ? sizeof(pay) : 0, W_SYNC),
			     0);
	}
	e->ops->poll(e, NULL, NULL, 16);
	e->ops->flush(e);
	/* Asked well before 20 ms passed: nothing may have left yet. */
	if (t_now_ns() - t0 < lat / 2)
		cr_expect_eq(r.nsent, 0, "%d messages left early", r.nsent);
	cr_expect(e->ops->pending(e), "held messages must count as pending");
	poll_until(e, &r, 6);
	int last[3] = {-1, -1, -1};
	for (int i = 0; i < 6; i++) {
		cr_expect_geq(r.at_ns[i] - t0, lat, "message %d after %llu ns",
			      i, (unsigned long long)(r.at_ns[i] - t0));
		cr_expect_gt(r.tag[i], last[r.peer[i]], "order to peer %u",
			     r.peer[i]);
		last[r.peer[i]] = r.tag[i];
		cr_expect_eq(r.peer[i], 1 + (uint32_t)(r.tag[i] % 2));
		if (r.tag[i] % 3)
			cr_expect_eq(r.first_byte[i], 0xa0 + r.tag[i],
				     "payload of message %d", r.tag[i]);
	}
	cr_expect_not(e->ops->pending(e));
	cr_expect_gt(r.flushes, 0, "released messages must be flushed");
	e->ops->fini(e);
	cr_expect_eq(r.finis, 1, "fini must end the wrapped transport");
}

Test(netemu, bandwidth_spaces_messages)
{
	static struct rec r;
	rec_init(&r);
	/* 1 MB/s: a 40-byte header and 4960 bytes take 5 ms each. */
	struct net *e = net_emu_wrap(&r.base, 0, 1.0);
	cr_assert_not_null(e);
	static unsigned char pay[4960];
	uint64_t t0 = t_now_ns();
	for (int i = 0; i < 4; i++)
		cr_assert_eq(send_tagged(e, 1, i, pay, sizeof(pay), W_BLK_DATA),
			     0);
	/* Another peer has its own link: not behind the first one's. */
	cr_assert_eq(send_tagged(e, 2, 99, pay, sizeof(pay), W_BLK_DATA), 0);
	poll_until(e, &r, 5);
	for (int i = 0; i < 5; i++) {
		uint64_t want = r.tag[i] == 99
				    ? 5000000
				    : 5000000ull * (uint64_t)(r.tag[i] + 1);
		cr_expect_geq(r.at_ns[i] - t0, want,
			      "message %d after %llu ns, want >= %llu",
			      r.tag[i], (unsigned long long)(r.at_ns[i] - t0),
			      (unsigned long long)want);
	}
	e->ops->fini(e);
}

Test(netemu, no_room_keeps_the_order)
{
	static struct rec r;
	rec_init(&r);
	struct net *e = net_emu_wrap(&r.base, 1000, 0);
	cr_assert_not_null(e);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(send_tagged(e, 1, i, NULL, 0, W_SYNC), 0);
	r.refuse = 3; /* the transport is full three times */
	poll_until(e, &r, 5);
	for (int i = 0; i < 5; i++)
		cr_expect_eq(r.tag[i], i, "position %d has message %d", i,
			     r.tag[i]);
	e->ops->fini(e);
}

Test(netemu, shutdown_releases_everything)
{
	static struct rec r;
	rec_init(&r);
	struct net *e = net_emu_wrap(&r.base, 5000000000ull, 0); /* 5 s */
	cr_assert_not_null(e);
	cr_assert_eq(send_tagged(e, 1, 1, NULL, 0, W_SYNC), 0);
	cr_assert_eq(send_tagged(e, 2, 2, NULL, 0, W_SHUTDOWN), 0);
	uint64_t t0 = t_now_ns();
	e->ops->flush(e);
	cr_expect_eq(r.nsent, 2, "the job ended: nothing may wait 5 s");
	cr_expect_lt(t_now_ns() - t0, 1000000000ull);
	e->ops->fini(e);
	/* A node other than 0 ends on node 0's word: what it still holds
	 * goes when its SU ends (end), on the SU's thread. */
	static struct rec r2;
	rec_init(&r2);
	e = net_emu_wrap(&r2.base, 5000000000ull, 0);
	cr_assert_not_null(e->ops->end, "the emulation must offer end");
	cr_assert_eq(send_tagged(e, 1, 7, NULL, 0, W_SYNC), 0);
	t0 = t_now_ns();
	e->ops->end(e);
	cr_expect_eq(r2.nsent, 1, "the SU ended: nothing may wait 5 s");
	cr_expect_gt(r2.flushes, 0, "what end released must be flushed");
	cr_expect_lt(t_now_ns() - t0, 1000000000ull);
	e->ops->fini(e);
	cr_expect_eq(r2.finis, 1);
}

/* fini runs on the node's thread once the SU ended, and a transport's
 * data path is the SU thread's alone (tcp's io_uring ring refuses another
 * thread's submission with EEXIST): what is still held is dropped, never
 * handed to the transport from there. */
Test(netemu, fini_sends_nothing)
{
	static struct rec r;
	rec_init(&r);
	struct net *e = net_emu_wrap(&r.base, 5000000000ull, 0);
	cr_assert_not_null(e);
	cr_assert_eq(send_tagged(e, 1, 7, NULL, 0, W_SYNC), 0);
	cr_assert_eq(send_tagged(e, 2, 8, NULL, 0, W_SYNC), 0);
	e->ops->fini(e);
	cr_expect_eq(r.nsent, 0, "fini handed %d messages to the transport",
		     r.nsent);
	cr_expect_eq(r.flushes, 0, "fini flushed the transport");
	cr_expect_eq(r.finis, 1, "fini must end the wrapped transport");
}

/* ---- settings ---- */

static void expect_config_error(const char *var, const char *value)
{
	unsetenv("EARTH_NET_LATENCY_NS");
	unsetenv("EARTH_NET_BW_MBPS");
	setenv(var, value, 1);
	uint64_t lat;
	double bw;
	const char *err = NULL;
	cr_expect_eq(net_emu_config(&lat, &bw, &err), -1, "%s=%s accepted", var,
		     value);
	cr_expect(err && strstr(err, var), "the error must name %s: %s", var,
		  err ? err : "(none)");
	unsetenv(var);
}

Test(netemu, settings)
{
	const char *bad_lat[] = {"abc",
				 "-5",
				 "12x",
				 "1e3",
				 "99999999999999",
				 "18446744073709551616"};
	for (size_t i = 0; i < T_NCASES(bad_lat); i++)
		expect_config_error("EARTH_NET_LATENCY_NS", bad_lat[i]);
	const char *bad_bw[] = {"fast", "-1", "nan", "inf", "1e9", "10MB"};
	for (size_t i = 0; i < T_NCASES(bad_bw); i++)
		expect_config_error("EARTH_NET_BW_MBPS", bad_bw[i]);
	setenv("EARTH_NET_LATENCY_NS", "2500", 1);
	setenv("EARTH_NET_BW_MBPS", "12.5", 1);
	uint64_t lat;
	double bw;
	const char *err = NULL;
	cr_expect_eq(net_emu_config(&lat, &bw, &err), 0, "%s", err);
	cr_expect_eq(lat, 2500);
	cr_expect_eq(bw, 12.5);
	/* Asked for: wrapped. Not asked for: the transport itself. */
	static struct rec r;
	rec_init(&r);
	struct net *e = net_emu_from_env(&r.base, &err);
	cr_assert_not_null(e);
	cr_expect_neq(e, &r.base);
	e->ops->fini(e);
	unsetenv("EARTH_NET_LATENCY_NS");
	unsetenv("EARTH_NET_BW_MBPS");
	rec_init(&r);
	cr_expect_eq(net_emu_from_env(&r.base, &err), &r.base);
	/* A bad setting ends the transport it would have wrapped. */
	setenv("EARTH_NET_BW_MBPS", "x", 1);
	rec_init(&r);
	err = NULL;
	cr_expect_null(net_emu_from_env(&r.base, &err));
	cr_expect_eq(r.finis, 1);
	cr_expect(err && strstr(err, "EARTH_NET_BW_MBPS"));
	unsetenv("EARTH_NET_BW_MBPS");
}

/* ---- jobs ---- */

static void remote_ops_correct(const char *transport, int nodes)
{
	static struct t_cmd c;
	t_sh(&c, 200,
	     "env EARTH_NET_LATENCY_NS=20000 EARTH_NET_BW_MBPS=2000 %s "
	     "--transport %s -n %d %s/multinode 200000",
	     T_EARTHRUN, transport, nodes, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s: status %d\n%s", transport, c.status,
		     c.err);
	cr_assert(strstr(c.out, "all correct"), "%s\n%s", c.out, c.err);
}

Test(netemu, remote_ops_correct_shm)
{
	remote_ops_correct("shm", 3);
}

Test(netemu, remote_ops_correct_tcp)
{
	remote_ops_correct("tcp", 2);
}

Test(netemu, remote_ops_correct_ucx)
{
	setenv("UCX_TLS", "posix,cma", 1);
	remote_ops_correct("ucx", 2);
}

/* first_chunk_ns (column 12 of an ll7row) of the row for fiber size s. */
static double first_chunk_ns(const char *out, long n, long s)
{
	char key[96];
	snprintf(key, sizeof(key), "ll7row,emu,dual,%ld,1,%ld,", n, s);
	const char *p = strstr(out, key);
	cr_assert(p, "no row '%s' in:\n%s", key, out);
	for (int col = 1; col < 12; col++) {
		p = strchr(p, ',');
		cr_assert(p);
		p++;
	}
	return atof(p);
}

Test(netemu, delay_shows_in_a_block_move)
{
	/* 3 ms each way, 2 MB/s: the first chunk (s doubles, then a
	 * 40-byte header each way) cannot come back in less than
	 * 6 ms + its bytes at 2 bytes/us. Results stay exact. */
	static struct t_cmd c;
	t_sh(&c, 200,
	     "env EARTH_NET_LATENCY_NS=3000000 EARTH_NET_BW_MBPS=2 %s -n 2 "
	     "%s --job emu dual 2000 1 1 1 20",
	     T_EARTHRUN, T_LL7);
	cr_assert_eq(c.status, 0, "status %d\n%s\n%s", c.status, c.out, c.err);
	cr_assert(strstr(c.out, "ll7: all runs verified"), "%s", c.out);
	double small = first_chunk_ns(c.out, 2000, 1000);
	double big = first_chunk_ns(c.out, 2000, 2000);
	cr_expect_geq(small, 6e6 + (1000 * 8 + 80) * 500.0, "%.0f ns", small);
	cr_expect_geq(big, 6e6 + (2000 * 8 + 80) * 500.0, "%.0f ns", big);
}

Test(netemu, bad_setting_stops_the_job)
{
	static struct t_cmd c;
	t_sh(&c, 200, "env EARTH_NET_LATENCY_NS=soon %s -n 2 %s/multinode 10",
	     T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_expect(strstr(c.err, "EARTH_NET_LATENCY_NS='soon'"), "%s", c.err);
}
