/* SPDX-License-Identifier: MIT */
/*
 * t_wire.c - validation of message headers from other nodes (wire_check):
 * a good header of every type passes; each bad field is rejected with a
 * message naming that field. White-box: includes the internal wire.h.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <string.h>

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
	h = good(W_BLK_DATA, 2);
	h.len = WIRE_MAX_PAYLOAD + 1;
	expect_bad(&h, 2, "len");
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
