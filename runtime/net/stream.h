/* SPDX-License-Identifier: MIT */
/*
 * stream.h - messages out of a byte stream (the tcp transport): a peer's
 * bytes arrive in pieces of any size; each message is a wire_hdr, then the
 * payload padded to 8 bytes. The header is checked (wire_check) before its
 * length is trusted; a payload may span pieces. With a place function set,
 * a W_BLK_DATA payload (up to WIRE_MAX_BLK_DATA) is not gathered: its bytes
 * are copied to the destination place() returns as they arrive, or
 * received straight there by the caller (wire_stream_direct), and the
 * message is then delivered with WIRE_F_PLACED and no payload. A BYE record
 * (a header with magic WIRE_BYE_MAGIC) is the transport's own: the sender
 * ends cleanly and sends nothing more.
 */
#ifndef EARTH_STREAM_H
#define EARTH_STREAM_H

#ifndef EARTH_INTERNAL
#error "stream.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "net/wire.h"

#define WIRE_BYE_MAGIC 0xB7E0u

/* Bytes one message takes in a stream. */
static inline size_t wire_msg_bytes(uint32_t len)
{
	return sizeof(struct wire_hdr) + (((size_t)len + 7) & ~(size_t)7);
}

/* Where the payload of BLK_DATA header h goes (h->len bytes, checked by
 * the callee), or NULL to refuse it (the stream then fails, naming field
 * b). ctx is the feed's. */
typedef void *(*wire_place_fn)(void *ctx, uint32_t from,
			       const struct wire_hdr *h);

struct wire_stream {
	uint32_t from, self, nodes;
	bool bye;		/* BYE received: the rest is ignored */
	size_t len;		/* bytes of an incomplete message in buf */
	unsigned char *buf;	/* one largest message, 8-aligned */
	unsigned char *scratch; /* a payload that arrived misaligned */
	wire_place_fn place;	/* optional, set after init */
	/* A BLK_DATA payload being placed: its header, where the next byte
	 * goes, payload and padding bytes still to come. */
	bool placing;
	struct wire_hdr ph;
	unsigned char *pdst;
	size_t pleft, ppad;
	/* Received with the end of a payload (wire_stream_direct): its
	 * padding and the next header. */
	unsigned char ahead[8 + sizeof(struct wire_hdr)];
	/* The last bytes came through wire_stream_direct_done and what they
	 * began is not complete: the rest of a payload, or the header of the
	 * next chunk of the same block move. */
	bool direct_run;
	/* Payload bytes placed: copied out of fed pieces, and received
	 * straight at their destination. */
	uint64_t copied, direct;
};

/* Called for each complete message, payload 8-aligned. */
typedef void (*wire_stream_fn)(void *ctx, uint32_t from,
			       const struct wire_hdr *h, const void *payload);

/* 0, or -ENOMEM. */
int wire_stream_init(struct wire_stream *s, uint32_t from, uint32_t self,
		     uint32_t nodes);
void wire_stream_fini(struct wire_stream *s);

/*
 * Feeds n received bytes; calls fn for each message they complete, in
 * order, and adds their number to *count. Returns NULL, or a static string
 * naming the bad field (the stream is then unusable).
 */
const char *wire_stream_feed(struct wire_stream *s, const void *data, size_t n,
			     wire_stream_fn fn, void *ctx, unsigned *count);

/*
 * Where the next bytes of s may be received straight from the connection
 * instead of being fed: the rest of the BLK_DATA payload being placed
 * (iov[0], at its destination), then its padding and the next message's
 * header (iov[1], into s->ahead); offered when at least min bytes of the
 * payload are left, and then until the payload is complete and, when it
 * was not its move's last chunk (WIRE_F_LAST), until the next header is
 * (iov[0] may then be empty). Returns 2, or 0 when there is nothing to
 * offer.
 */
int wire_stream_direct(struct wire_stream *s, size_t min, struct iovec iov[2]);

/*
 * n bytes arrived in the iovecs wire_stream_direct gave, in order: takes
 * them as wire_stream_feed takes a piece (the placed message is delivered
 * once its padding came; the header after it is checked). Returns NULL or
 * the bad field, as wire_stream_feed.
 */
const char *wire_stream_direct_done(struct wire_stream *s, size_t n,
				    wire_stream_fn fn, void *ctx,
				    unsigned *count);

#endif /* EARTH_STREAM_H */
