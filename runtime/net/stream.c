/* SPDX-License-Identifier: MIT */
/*
 * stream.c - reassembling messages from a byte stream (see stream.h).
 * Messages that lie whole in a piece are delivered in place; the bytes of
 * one that does not are copied into buf until it is complete.
 */
#define EARTH_INTERNAL 1
#include "stream.h"

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
	if (h->magic == WIRE_BYE_MAGIC) {
		if (h->version != WIRE_VERSION || h->type != 0 ||
		    h->src != s->from || h->len != 0)
			return "magic (malformed BYE record)";
		*bye = true;
		return NULL;
	}
	return wire_check(h, s->from, s->self, s->nodes);
}

const char *wire_stream_feed(struct wire_stream *s, const void *data,
			     size_t n, wire_stream_fn fn, void *ctx,
			     unsigned *count)
{
	const unsigned char *p = data;
	struct wire_hdr h;
	bool bye;
	if (s->bye)
		return NULL;
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
		const char *bad = check(s, &h, &bye);
		if (bad)
			return bad;
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
		const char *bad = check(s, &h, &bye);
		if (bad)
			return bad;
		if (bye) {
			s->bye = true;
			return NULL;
		}
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
