/* SPDX-License-Identifier: MIT */
/*
 * t_wire.c - validation of message headers from other nodes (wire_check):
 * a good header of every type passes; each bad field is rejected with a
 * message naming that field; the stream decoder of the tcp transport
 * writes large BLK_DATA payloads straight to their destination however the
 * bytes are cut, and refuses a destination outside registered memory.
 * White-box: includes the internal wire.h and stream.h.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <string.h>

#include "helpers.h"
#include "stream.h"
#include "wire.h"

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
		struct wire_hdr h = good(t, 0);
		if (t == W_BLK_DATA || t == W_INVOKE || t == W_TOKEN)
			h.len = 100;
		const char *why = wire_check(&h, 0, 1, 4);
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
	h = good(W_INCR, 2);
	h.n = -5;
	expect_bad(&h, 2, "len/n");
	h = good(W_BLK_REQ, 2);
	h.n = -1;
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
		cr_assert_eq(wire_stream_init(&s, 2, 1, 4), 0);
		s.place = place_at;
		memset(place_mem, 0, sizeof(place_mem));
		delivered_placed = delivered_other = 0;
		unsigned count = 0;
		for (size_t off = 0; off < n; off += pieces[k]) {
			size_t m = n - off < pieces[k] ? n - off : pieces[k];
			cr_assert_null(wire_stream_feed(&s, in + off, m,
							count_msg, NULL, &count));
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
