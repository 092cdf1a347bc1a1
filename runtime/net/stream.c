/* SPDX-License-Identifier: MIT */
/*
 * stream.c - reassembling messages from a byte stream (see stream.h).
 * Messages that lie whole in a piece are delivered in place; the bytes of
 * one that does not are copied into buf until it is complete. BLK_DATA
 * payloads go straight to their destination when a place function is set:
 * copied out of the pieces, or received there by the caller
 * (wire_stream_direct).
 */
#define EARTH_INTERNAL 1
#include "net/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HDR sizeof(struct wire_hdr)

int wire_stream_init(struct wire_stream *s, uint32_t from, uint32_t self,
		     uint32_t nodes)
{
	memset(s, 0, sizeof(*s));
	s->from = from;
	s->self = self;
	s->nodes = nodes;
	s->buf = malloc(wire_msg_bytes(WIRE_MAX_PAYLOAD));
	s->scratch = malloc(WIRE_MAX_PAYLOAD);
	if (!s->buf || !s->scratch) {
		wire_stream_fini(s);
		return -ENOMEM;
	}
	return 0;
}

void wire_stream_fini(struct wire_stream *s)
{
	free(s->buf);
	free(s->scratch);
	s->buf = s->scratch = NULL;
}

/* Checks a header; sets *bye for a valid BYE record. */
static const char *check(struct wire_stream *s, const struct wire_hdr *h,
			 bool *bye)
{
	*bye = false;
	s->direct_run = false; /* a new message */
	if (h->magic == WIRE_BYE_MAGIC) {
		if (h->version != WIRE_VERSION || h->type != 0 ||
		    h->src != s->from || h->len != 0)
			return "magic (malformed BYE record)";
		*bye = true;
		return NULL;
	}
	return wire_check(h, s->from, s->self, s->nodes);
}

/* Starts placing the payload of BLK_DATA header h; NULL or the error. */
static const char *place_start(struct wire_stream *s, const struct wire_hdr *h,
			       void *ctx)
{
	void *dst = s->place(ctx, s->from, h);
	if (!dst)
		return "b (BLK_DATA destination outside this node's "
		       "registered memory; memory from malloc or mmap that "
		       "other nodes write must be registered with "
		       "earth_register_memory)";
	s->placing = true;
	s->ph = *h;
	s->ph.flags |= WIRE_F_PLACED;
	s->pdst = dst;
	s->pleft = h->len;
	s->ppad = wire_msg_bytes(h->len) - sizeof(*h) - h->len;
	return NULL;
}

/* Takes payload bytes of the message being placed; true once complete. */
static bool place_more(struct wire_stream *s, const unsigned char **p,
		       size_t *n)
{
	size_t k = s->pleft < *n ? s->pleft : *n;
	memcpy(s->pdst, *p, k);
	s->pdst += k;
	s->pleft -= k;
	s->copied += k;
	*p += k;
	*n -= k;
	k = s->ppad < *n ? s->ppad : *n;
	s->ppad -= k;
	*p += k;
	*n -= k;
	if (s->pleft || s->ppad)
		return false;
	s->placing = false;
	return true;
}

static inline bool placeable(const struct wire_stream *s,
			     const struct wire_hdr *h)
{
	return s->place && h->type == W_BLK_DATA && h->len;
}

const char *wire_stream_feed(struct wire_stream *s, const void *data, size_t n,
			     wire_stream_fn fn, void *ctx, unsigned *count)
{
	const unsigned char *p = data;
	struct wire_hdr h;
	bool bye;
	const char *bad;
	if (s->bye)
		return NULL;
again:
	if (s->placing) {
		if (!place_more(s, &p, &n))
			return NULL;
		s->direct_run &= !(s->ph.flags & WIRE_F_LAST);
		fn(ctx, s->from, &s->ph, NULL);
		++*count;
		if (s->bye)
			return NULL;
	}
	if (s->len) {
		/* Complete the message begun in buf. */
		if (s->len < HDR) {
			size_t k = HDR - s->len < n ? HDR - s->len : n;
			memcpy(s->buf + s->len, p, k);
			s->len += k;
			p += k;
			n -= k;
			if (s->len < HDR)
				return NULL;
		}
		memcpy(&h, s->buf, HDR);
		bad = check(s, &h, &bye);
		if (bad)
			return bad;
		if (!bye && placeable(s, &h)) {
			s->len = 0;
			bad = place_start(s, &h, ctx);
			if (bad)
				return bad;
			goto again;
		}
		if (h.len > WIRE_MAX_PAYLOAD)
			return "len (a BLK_DATA this large needs a transport "
			       "that places it)";
		size_t need = wire_msg_bytes(h.len);
		size_t k = need - s->len < n ? need - s->len : n;
		memcpy(s->buf + s->len, p, k);
		s->len += k;
		p += k;
		n -= k;
		if (s->len < need)
			return NULL;
		s->len = 0;
		if (bye) {
			s->bye = true;
			return NULL;
		}
		fn(ctx, s->from, &h, s->buf + HDR);
		++*count;
		if (s->bye)
			return NULL;
	}
	while (n >= HDR) {
		memcpy(&h, p, HDR);
		bad = check(s, &h, &bye);
		if (bad)
			return bad;
		if (bye) {
			s->bye = true;
			return NULL;
		}
		if (placeable(s, &h)) {
			p += HDR;
			n -= HDR;
			bad = place_start(s, &h, ctx);
			if (bad)
				return bad;
			goto again;
		}
		if (h.len > WIRE_MAX_PAYLOAD)
			return "len (a BLK_DATA this large needs a transport "
			       "that places it)";
		size_t need = wire_msg_bytes(h.len);
		if (n < need)
			break;
		const void *payload = p + HDR;
		if (((uintptr_t)payload & 7) && h.len) {
			memcpy(s->scratch, payload, h.len);
			payload = s->scratch;
		}
		fn(ctx, s->from, &h, payload);
		++*count;
		p += need;
		n -= need;
		if (s->bye)
			return NULL;
	}
	/* n < one message: keep it. */
	memcpy(s->buf, p, n);
	s->len = n;
	return NULL;
}

/* Bytes after the payload being placed (its padding and the next
 * header), or of the next header; 0 once a header is complete. */
static size_t direct_after(const struct wire_stream *s)
{
	if (s->placing)
		return s->ppad + HDR;
	return s->len < HDR ? HDR - s->len : 0;
}

int wire_stream_direct(struct wire_stream *s, size_t min, struct iovec iov[2])
{
	bool start = s->placing && s->pleft && s->pleft >= min;
	if ((!start && !s->direct_run) || s->bye || !direct_after(s))
		return 0;
	size_t left = s->placing ? s->pleft : 0;
	iov[0] = (struct iovec){left ? s->pdst : s->ahead, left};
	iov[1] = (struct iovec){s->ahead, direct_after(s)};
	return 2;
}

const char *wire_stream_direct_done(struct wire_stream *s, size_t n,
				    wire_stream_fn fn, void *ctx,
				    unsigned *count)
{
	size_t left = s->placing ? s->pleft : 0, after = direct_after(s);
	if ((!s->placing && !s->direct_run) || !after || n > left + after)
		return "len (more bytes than wire_stream_direct asked for)";
	size_t k = n < left ? n : left;
	s->pdst += k;
	s->pleft -= k;
	s->direct += k;
	s->direct_run = true;
	return wire_stream_feed(s, s->ahead, n - k, fn, ctx, count);
}
