/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wire.c - libFuzzer target for the message decoder of the tcp
 * transport (runtime/net/stream.c, which runs wire_check before trusting a
 * length). Input: two bytes choose the nodes, this node, the sender and
 * how the rest is cut; the rest is the byte stream. It is decoded twice:
 * in one piece and cut into pieces of pseudo-random sizes. Both must
 * deliver the same messages (headers, payload sums), then agree on the
 * error or on none; every delivered message must be valid (wire_check),
 * with an 8-aligned payload of h->len readable bytes. Half of the inputs
 * (a bit of the second byte) decode with a place function, as the tcp
 * transport does: BLK_DATA payloads then go to a per-decoder memory at an
 * offset chosen from the header, and both decoders must have written the
 * same bytes there. Those inputs are decoded a third time, cut again, with
 * the bytes wire_stream_direct asks for put straight into its iovecs
 * (wire_stream_direct_done) as the tcp transport receives them; it must
 * agree with the others, and every decoder must count each placed payload
 * byte once, copied or received directly.
 *
 *   make fuzz-wire  (tests/fuzz/module.mk; part of make test with clang-14)
 */
#define EARTH_INTERNAL 1
#include "net/stream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSGS 4096
#define PLACE_MEM (2u << 20)

struct seen {
	unsigned char *mem; /* where placed payloads go */
	unsigned n;
	struct rec {
		struct wire_hdr h;
		uint64_t sum;
	} m[MAX_MSGS];
};

static struct seen whole, cut, direct;

/* Where a placed payload goes: the same offset for both decoders. */
static size_t place_off(const struct wire_hdr *h)
{
	return (size_t)(h->b % (PLACE_MEM - h->len + 1));
}

static void *place(void *ctx, uint32_t from, const struct wire_hdr *h)
{
	struct seen *s = ctx;
	if (h->type != W_BLK_DATA || h->src != from || !h->len ||
	    h->len > WIRE_MAX_BLK_DATA)
		__builtin_trap();
	if ((h->b & 0x8000) || h->len > PLACE_MEM) /* refused: must fail */
		return NULL;
	return s->mem + place_off(h);
}

static void on_msg(void *ctx, uint32_t from, const struct wire_hdr *h,
		   const void *payload)
{
	struct seen *s = ctx;
	/* (collectives use the flag bits for their own purposes) */
	bool placed = h->type == W_BLK_DATA && (h->flags & WIRE_F_PLACED);
	if ((h->len > WIRE_MAX_PAYLOAD && !placed) || (placed && payload) ||
	    (h->len && !placed && ((uintptr_t)payload & 7)) || h->src != from)
		__builtin_trap();
	uint64_t sum = 0;
	const unsigned char *p = placed ? s->mem + place_off(h) : payload;
	for (uint32_t i = 0; i < h->len; i++)
		sum = sum * 131 + p[i];
	if (s->n < MAX_MSGS) {
		s->m[s->n].h = *h;
		if (placed)
			s->m[s->n].h.flags &= (uint16_t)~WIRE_F_PLACED;
		s->m[s->n].sum = sum;
	}
	s->n++;
}

/* Recipes (12 bytes each) into a stream of messages in out; its length. */
static size_t build(const uint8_t *in, size_t n, uint32_t from,
		    unsigned char *out, size_t cap)
{
	size_t len = 0;
	for (; n >= 12; in += 12, n -= 12) {
		struct wire_hdr h;
		memset(&h, 0, sizeof(h));
		h.magic = WIRE_MAGIC;
		h.version = WIRE_VERSION;
		h.src = (uint16_t)from;
		h.type = (uint8_t)(1 + in[0] % (W_TYPE_COUNT_ - 1));
		h.flags = in[1] & 3;
		uint32_t plen =
		    (uint32_t)(in[2] | in[3] << 8 | (in[4] & 1) << 16);
		if (plen > WIRE_MAX_PAYLOAD)
			plen = WIRE_MAX_PAYLOAD;
		h.n = 1 + in[5];
		h.a = (uint64_t)in[6] << 3;
		h.b = (uint64_t)in[7] << 12;
		bool nopay = h.type != W_BLK_DATA && h.type != W_INVOKE &&
			     h.type != W_TOKEN;
		if (h.type == W_SHUTDOWN)
			h.src = 0;
		h.len = nopay ? 0 : plen;
		if (in[8] == 0xBE) { /* a BYE record */
			memset(&h, 0, sizeof(h));
			h.magic = WIRE_BYE_MAGIC;
			h.version = WIRE_VERSION;
			h.src = (uint16_t)from;
		}
		switch (in[11] & 15) { /* spoil something, sometimes */
		case 1:
			h.magic ^= (uint16_t)in[9];
			break;
		case 2:
			h.len = (uint32_t)in[9] << 12 | in[10];
			break;
		case 3:
			h.len += 0x10000u;
			break;
		case 4:
			h.type = in[9];
			break;
		case 5:
			h.src = in[9];
			break;
		case 6:
			h.flags = (uint16_t)(in[9] << 8 | in[10]);
			break;
		case 7:
			h.version = in[9];
			break;
		}
		size_t need =
		    wire_msg_bytes(h.len > WIRE_MAX_PAYLOAD ? 0 : h.len);
		if (len + need > cap)
			break;
		memcpy(out + len, &h, sizeof(h));
		for (size_t i = sizeof(h); i < need; i++)
			out[len + i] = (unsigned char)(i * 7 + in[10]);
		if ((in[11] & 15) == 8) /* a stray byte */
			out[len + in[9] % need] ^= in[10] | 1;
		len += need;
	}
	return len;
}

static unsigned char built[1u << 22];

/* Decodes data into s in pieces cut by *rng; with min, takes the bytes
 * wire_stream_direct asks for (at least min of a payload) as the tcp
 * transport receives them. The first error, or NULL. */
static const char *decode_cut(struct wire_stream *s, const uint8_t *data,
			      size_t size, uint32_t *rng, size_t min,
			      struct seen *seen, unsigned *count)
{
	const char *e = NULL;
	for (size_t off = 0; off < size && !e;) {
		*rng = *rng * 1103515245u + 12345u;
		size_t k = 1 + (*rng >> 16) % 97;
		if ((*rng >> 8) % 8 == 0) /* sometimes a large piece */
			k = 1 + (*rng >> 12) % 70000;
		if (k > size - off)
			k = size - off;
		struct iovec iov[2];
		if (min && wire_stream_direct(s, min, iov)) {
			size_t k0 = k < iov[0].iov_len ? k : iov[0].iov_len;
			size_t k1 =
			    k - k0 < iov[1].iov_len ? k - k0 : iov[1].iov_len;
			memcpy(iov[0].iov_base, data + off, k0);
			memcpy(iov[1].iov_base, data + off + k0, k1);
			e = wire_stream_direct_done(s, k0 + k1, on_msg, seen,
						    count);
			off += k0 + k1;
			continue;
		}
		/* Feed from a copy: the decoder cannot read past the piece. */
		unsigned char *piece = malloc(k);
		memcpy(piece, data + off, k);
		e = wire_stream_feed(s, piece, k, on_msg, seen, count);
		free(piece);
		off += k;
	}
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint32_t nodes = 2 + data[0] % 6;
	uint32_t self = (data[0] >> 3) % nodes;
	uint32_t from = (self + 1 + (data[0] >> 6)) % nodes;
	if (from == self)
		from = (from + 1) % nodes;
	uint32_t rng = data[1] * 2654435761u + 1;
	bool recipes = data[1] & 1;
	bool placing = data[1] & 2;
	size_t min = 1 + (size_t)(data[1] >> 2) * 300;
	static unsigned char mem_a[PLACE_MEM], mem_b[PLACE_MEM],
	    mem_c[PLACE_MEM];
	whole.mem = mem_a;
	cut.mem = mem_b;
	direct.mem = mem_c;
	data += 2;
	size -= 2;
	if (recipes) {
		size = build(data, size, from, built, sizeof(built));
		data = built;
	}

	struct wire_stream a, b, c;
	if (wire_stream_init(&a, from, self, nodes) ||
	    wire_stream_init(&b, from, self, nodes) ||
	    wire_stream_init(&c, from, self, nodes))
		abort();
	if (placing)
		a.place = b.place = c.place = place;
	unsigned ca = 0, cb = 0, cc = 0;
	whole.n = cut.n = direct.n = 0;
	const char *ea = wire_stream_feed(&a, data, size, on_msg, &whole, &ca);
	const char *eb = decode_cut(&b, data, size, &rng, 0, &cut, &cb);
	const char *ec =
	    decode_cut(&c, data, size, &rng, placing ? min : 0, &direct, &cc);
	if (ca != whole.n || cb != cut.n || cc != direct.n ||
	    whole.n != cut.n || whole.n != direct.n || ea != eb || ea != ec ||
	    a.bye != b.bye || a.bye != c.bye || a.direct || b.direct ||
	    a.copied != b.copied || a.copied != c.copied + c.direct)
		__builtin_trap();
	for (unsigned i = 0; i < whole.n && i < MAX_MSGS; i++) {
		if (memcmp(&whole.m[i].h, &cut.m[i].h,
			   sizeof(struct wire_hdr)) ||
		    memcmp(&whole.m[i].h, &direct.m[i].h,
			   sizeof(struct wire_hdr)) ||
		    whole.m[i].sum != cut.m[i].sum ||
		    whole.m[i].sum != direct.m[i].sum ||
		    wire_check(&whole.m[i].h, from, self, nodes))
			__builtin_trap();
	}
	wire_stream_fini(&a);
	wire_stream_fini(&b);
	wire_stream_fini(&c);
	return 0;
}
