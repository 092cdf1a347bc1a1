/* SPDX-License-Identifier: MIT */
/*
 * t_wire.c - validation of message headers from other nodes (wire_check):
 * a good header of every type passes; each bad field is rejected with a
 * message naming that field; the stream decoder of the tcp transport
 * writes large BLK_DATA payloads straight to their destination however the
 * bytes are cut, or lets them be received there directly (the padding and
 * next header with them), and refuses a destination outside registered
 * memory either way. White-box: includes the internal wire.h and stream.h.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <string.h>

#include "helpers.h"
#include "net/stream.h"
#include "net/wire.h"

TestSuite(wire, .timeout = 10);

static struct wire_hdr good(uint8_t type, uint32_t from)
{
	struct wire_hdr h;
	memset(&h, 0, sizeof(h));
	h.magic = WIRE_MAGIC;
	h.version = WIRE_VERSION;
	h.type = type;
	h.src = (uint16_t)from;
	h.n = 1;
	return h;
}

static void expect_bad(const struct wire_hdr *h, uint32_t from,
		       const char *field)
{
	const char *why = wire_check(h, from, 1, 4);
	cr_assert(why, "type %u accepted, want rejection of '%s'", h->type,
		  field);
	cr_assert(!strncmp(why, field, strlen(field)), "got '%s', want '%s'",
		  why, field);
}

Test(wire, good_headers_pass)
{
	for (uint8_t t = 1; t < W_TYPE_COUNT_; t++) {
		/* Answers to node 0's probes go to node 0. */
		uint32_t from = t == W_PROBE_ACK ? 1 : 0;
		uint32_t self = t == W_PROBE_ACK ? 0 : 1;
		struct wire_hdr h = good(t, from);
		if (t == W_BLK_DATA || t == W_INVOKE || t == W_TOKEN)
			h.len = 100;
		if (t == W_BEAT)
			h.n = 0; /* carries nothing */
		const char *why = wire_check(&h, from, self, 4);
		cr_assert_null(why, "type %s rejected: %s", wire_type_name(t),
			       why);
	}
}

Test(wire, each_bad_field_is_named)
{
	struct wire_hdr h = good(W_SYNC, 2);
	h.magic = 0x1234;
	expect_bad(&h, 2, "magic");
	h = good(W_SYNC, 2);
	h.version = 9;
	expect_bad(&h, 2, "version");
	h = good(0, 2);
	expect_bad(&h, 2, "type");
	h = good(W_TYPE_COUNT_, 2);
	expect_bad(&h, 2, "type");
	h = good(W_SYNC, 3);
	expect_bad(&h, 2, "src");
	h = good(W_SYNC, 2);
	h.flags = 0x80;
	expect_bad(&h, 2, "flags");
	h = good(W_INVOKE, 2);
	h.len = WIRE_MAX_PAYLOAD + 1;
	expect_bad(&h, 2, "len");
	/* BLK_DATA may be larger, for a transport that places it */
	h = good(W_BLK_DATA, 2);
	h.len = WIRE_MAX_BLK_DATA;
	cr_assert_null(wire_check(&h, 2, 1, 4));
	h.len = WIRE_MAX_BLK_DATA + 1;
	expect_bad(&h, 2, "len");
	/* WIRE_F_PLACED is the receiver's own: never accepted */
	h = good(W_BLK_DATA, 2);
	h.flags = WIRE_F_PLACED;
	expect_bad(&h, 2, "flags");
	h = good(W_SYNC, 2);
	h.len = 8;
	expect_bad(&h, 2, "len/n");
	h = good(W_SYNC, 2);
	h.n = 0;
	expect_bad(&h, 2, "len/n");
	/* One SYNC is one signal: a count would let one 40-byte message make
	 * a re-armed slot fire two billion times, every fiber kept in the
	 * SU's overflow list (found by tests/fuzz/fuzz_deliver.c). */
	h = good(W_SYNC, 2);
	h.n = 2;
	expect_bad(&h, 2, "len/n");
	h.n = INT32_MAX;
	expect_bad(&h, 2, "len/n");
	h = good(W_INCR, 2);
	h.n = -5;
	expect_bad(&h, 2, "len/n");
	h = good(W_BLK_REQ, 2);
	h.n = -1;
	expect_bad(&h, 2, "len/n");
	/* A BLK_REQ's payload is its 8-byte origin or nothing. */
	h = good(W_BLK_REQ, 2);
	h.len = 8;
	cr_expect_null(wire_check(&h, 2, 0, 4));
	h.len = 16;
	expect_bad(&h, 2, "len/n");
	h.len = 4;
	expect_bad(&h, 2, "len/n");
	h = good(W_INVOKE, 2);
	h.n = -1;
	expect_bad(&h, 2, "n");
	h = good(W_TOKEN, 2);
	h.n = -1;
	expect_bad(&h, 2, "n");
	h = good(W_SHUTDOWN, 2);
	expect_bad(&h, 2, "src/len");
	h = good(W_COLL_UP, 2);
	h.len = 4;
	expect_bad(&h, 2, "len/n");
	h = good(W_STEAL, 2);
	h.len = 4;
	expect_bad(&h, 2, "len");
	/* A BEAT (ucx's link heartbeat) carries nothing: no field of it can
	 * name memory, a slot, a function or a count. */
	for (int f = 0; f < 6; f++) {
		h = good(W_BEAT, 2);
		h.n = 0;
		cr_assert_null(wire_check(&h, 2, 1, 4));
		if (f == 0)
			h.len = 8;
		else if (f == 1)
			h.n = 1;
		else if (f == 2)
			h.a = 0x1000;
		else if (f == 3)
			h.b = 0x1000;
		else if (f == 4)
			h.c = 0x1000;
		else
			h.flags = WIRE_F_LAST;
		expect_bad(&h, 2, "len/n/a/b/c");
	}
}

Test(wire, every_type_has_a_name)
{
	for (unsigned t = 1; t < W_TYPE_COUNT_; t++)
		cr_assert_str_neq(wire_type_name(t), "unknown", "type %u", t);
	cr_assert_str_eq(wire_type_name(0), "unknown");
	cr_assert_str_eq(wire_type_name(200), "unknown");
}

/* ---- the stream decoder placing BLK_DATA payloads (tcp) ---- */

static unsigned char place_mem[300000];
static unsigned delivered_placed, delivered_other;

static void *place_at(void *ctx, uint32_t from, const struct wire_hdr *h)
{
	(void)ctx;
	(void)from;
	if (h->b + h->len > sizeof(place_mem))
		return NULL; /* outside "registered memory" */
	return place_mem + h->b;
}

static void count_msg(void *ctx, uint32_t from, const struct wire_hdr *h,
		      const void *payload)
{
	(void)ctx;
	(void)from;
	if (h->flags & WIRE_F_PLACED) {
		cr_assert_null(payload);
		delivered_placed++;
	} else {
		delivered_other++;
	}
}

/* A decoder of node 1 for peer 2 of 4 that places into place_mem, which
 * is cleared, with the delivery counts reset. */
static void placing_stream(struct wire_stream *s)
{
	cr_assert_eq(wire_stream_init(s, 2, 1, 4), 0);
	s->place = place_at;
	memset(place_mem, 0, sizeof(place_mem));
	delivered_placed = delivered_other = 0;
}

/* A stream of: SYNC, BLK_DATA of len bytes at b, SYNC. */
static size_t blk_stream(unsigned char *out, uint32_t len, uint64_t b)
{
	struct wire_hdr h = good(W_SYNC, 2);
	size_t at = 0;
	memcpy(out, &h, sizeof(h));
	at += sizeof(h);
	h = good(W_BLK_DATA, 2);
	h.len = len;
	h.b = b;
	h.flags = WIRE_F_LAST;
	memcpy(out + at, &h, sizeof(h));
	at += sizeof(h);
	for (uint32_t i = 0; i < len; i++)
		out[at + i] = (unsigned char)(i * 13 + 7);
	at += (len + 7) & ~7u;
	h = good(W_SYNC, 2);
	memcpy(out + at, &h, sizeof(h));
	return at + sizeof(h);
}

Test(wire, stream_places_large_blocks)
{
	static unsigned char in[400000];
	uint32_t len = 200001; /* more than WIRE_MAX_PAYLOAD, odd */
	size_t n = blk_stream(in, len, 1000);
	size_t pieces[] = {1, 7, 40, 41, 4096, 65536, n};
	for (size_t k = 0; k < T_NCASES(pieces); k++) {
		struct wire_stream s;
		placing_stream(&s);
		unsigned count = 0;
		for (size_t off = 0; off < n; off += pieces[k]) {
			size_t m = n - off < pieces[k] ? n - off : pieces[k];
			cr_assert_null(wire_stream_feed(
			    &s, in + off, m, count_msg, NULL, &count));
		}
		cr_assert_eq(count, 3, "pieces of %zu", pieces[k]);
		cr_assert_eq(delivered_placed, 1);
		cr_assert_eq(delivered_other, 2);
		for (uint32_t i = 0; i < len; i++)
			cr_assert_eq(place_mem[1000 + i],
				     (unsigned char)(i * 13 + 7),
				     "pieces of %zu: byte %u", pieces[k], i);
		cr_assert_eq(place_mem[999], 0);
		cr_assert_eq(place_mem[1000 + len], 0, "padding not placed");
		wire_stream_fini(&s);
	}
}

Test(wire, stream_refuses_what_it_cannot_place)
{
	static unsigned char in[400000];
	unsigned count = 0;
	struct wire_stream s;
	/* outside the memory place_at accepts: field b */
	size_t n = blk_stream(in, 200000, 200000);
	cr_assert_eq(wire_stream_init(&s, 2, 1, 4), 0);
	s.place = place_at;
	const char *why = wire_stream_feed(&s, in, n, count_msg, NULL, &count);
	cr_assert(why && !strncmp(why, "b (", 3), "%s", why ? why : "accepted");
	wire_stream_fini(&s);
	/* without a place function a large BLK_DATA is refused: field len */
	cr_assert_eq(wire_stream_init(&s, 2, 1, 4), 0);
	why = wire_stream_feed(&s, in, n, count_msg, NULL, &count);
	cr_assert(why && !strncmp(why, "len", 3), "%s", why ? why : "accepted");
	wire_stream_fini(&s);
}

/* ---- receiving placed payloads directly (wire_stream_direct) ---- */

/* Appends a message of `type` with len payload bytes (BLK_DATA: to b) to
 * out at *at. */
static void put_msg(unsigned char *out, size_t *at, uint8_t type, uint32_t len,
		    uint64_t b)
{
	struct wire_hdr h = good(type, 2);
	h.len = len;
	h.b = b;
	memcpy(out + *at, &h, sizeof(h));
	*at += sizeof(h);
	for (uint32_t i = 0; i < len; i++)
		out[*at + i] = (unsigned char)(i * 13 + b);
	*at += (len + 7) & ~7u;
}

/*
 * Feeds in[0, n) to s as the tcp transport does: where wire_stream_direct
 * offers to take the next bytes, up to `step` of them go into its iovecs
 * (wire_stream_direct_done), else a piece of `step` bytes is fed. NULL,
 * or the error.
 */
static const char *feed_direct(struct wire_stream *s, const unsigned char *in,
			       size_t n, size_t step, size_t min,
			       unsigned *count)
{
	for (size_t off = 0; off < n;) {
		struct iovec iov[2];
		size_t m = n - off < step ? n - off : step;
		const char *why;
		if (wire_stream_direct(s, min, iov)) {
			size_t k0 = m < iov[0].iov_len ? m : iov[0].iov_len;
			size_t k1 =
			    m - k0 < iov[1].iov_len ? m - k0 : iov[1].iov_len;
			memcpy(iov[0].iov_base, in + off, k0);
			memcpy(iov[1].iov_base, in + off + k0, k1);
			why = wire_stream_direct_done(s, k0 + k1, count_msg,
						      NULL, count);
			off += k0 + k1;
		} else {
			why = wire_stream_feed(s, in + off, m, count_msg, NULL,
					       count);
			off += m;
		}
		if (why)
			return why;
	}
	return NULL;
}

Test(wire, stream_takes_placed_payloads_received_directly)
{
	/* SYNC, two blocks back to back (odd lengths), INVOKE, SYNC */
	static unsigned char in[400000];
	size_t n = 0;
	uint32_t la = 200001, lb = 70003;
	put_msg(in, &n, W_SYNC, 0, 0);
	put_msg(in, &n, W_BLK_DATA, la, 1000);
	put_msg(in, &n, W_BLK_DATA, lb, 210000);
	put_msg(in, &n, W_INVOKE, 100, 0);
	put_msg(in, &n, W_SYNC, 0, 0);
	size_t steps[] = {1, 7, 40, 47, 4096, 65536, n};
	size_t mins[] = {1, 16384};
	for (size_t k = 0; k < T_NCASES(steps) * T_NCASES(mins); k++) {
		size_t step = steps[k % T_NCASES(steps)];
		size_t min = mins[k / T_NCASES(steps)];
		struct wire_stream s;
		placing_stream(&s);
		unsigned count = 0;
		cr_assert_null(feed_direct(&s, in, n, step, min, &count));
		cr_assert_eq(count, 5, "step %zu, min %zu", step, min);
		cr_assert_eq(delivered_placed, 2);
		cr_assert_eq(delivered_other, 3);
		for (uint32_t i = 0; i < la; i++)
			cr_assert_eq(place_mem[1000 + i],
				     (unsigned char)(i * 13 + 1000),
				     "step %zu: byte %u", step, i);
		for (uint32_t i = 0; i < lb; i++)
			cr_assert_eq(place_mem[210000 + i],
				     (unsigned char)(i * 13 + 210000),
				     "step %zu: byte %u of the second", step,
				     i);
		cr_assert(!place_mem[999] && !place_mem[1000 + la] &&
			      !place_mem[209999] && !place_mem[210000 + lb],
			  "step %zu: padding or more placed", step);
		cr_assert_eq(s.direct + s.copied, la + lb);
		if (step > 1 && step < n) /* else one piece takes all */
			cr_assert_gt(s.direct, 0, "step %zu", step);
		wire_stream_fini(&s);
	}
}

Test(wire, stream_direct_checks_what_comes_after)
{
	static unsigned char in[400000];
	unsigned count = 0;
	struct wire_stream s;
	struct iovec iov[2];
	size_t n = 0;
	put_msg(in, &n, W_BLK_DATA, 100000, 1000);
	/* nothing is being placed: nothing to receive directly */
	placing_stream(&s);
	cr_assert_eq(wire_stream_direct(&s, 1, iov), 0);
	cr_assert_not_null(
	    wire_stream_direct_done(&s, 1, count_msg, NULL, &count));
	/* more bytes than were asked for */
	cr_assert_null(wire_stream_feed(&s, in, 100, count_msg, NULL, &count));
	cr_assert_eq(wire_stream_direct(&s, 1, iov), 2);
	cr_assert_eq(wire_stream_direct(&s, 100000, iov), 0, "under min");
	const char *why = wire_stream_direct_done(
	    &s, iov[0].iov_len + iov[1].iov_len + 1, count_msg, NULL, &count);
	cr_assert(why && !strncmp(why, "len", 3), "%s", why ? why : "taken");
	wire_stream_fini(&s);
	/* the header received with the end of a payload is checked: a
	 * destination outside registered memory fails before a byte lands */
	put_msg(in, &n, W_BLK_DATA, 20000, 290000);
	placing_stream(&s);
	why = feed_direct(&s, in, n, 65536, 1, &count);
	cr_assert(why && !strncmp(why, "b (", 3), "%s", why ? why : "taken");
	for (size_t i = 290000; i < sizeof(place_mem); i++)
		cr_assert_eq(place_mem[i], 0, "byte %zu written", i);
	wire_stream_fini(&s);
}
