/* SPDX-License-Identifier: MIT */
/*
 * wire.c - validation of received message headers (see wire.h). The
 * addresses and ids a header carries are checked where they are used
 * (registry.c) against this node's registered memory and function table.
 */
#define EARTH_INTERNAL 1
#include "net/wire.h"

static const char *const names[W_TYPE_COUNT_] = {
    [W_SYNC] = "SYNC",
    [W_BLK_REQ] = "BLK_REQ",
    [W_BLK_DATA] = "BLK_DATA",
    [W_INVOKE] = "INVOKE",
    [W_SHUTDOWN] = "SHUTDOWN",
    [W_INCR] = "INCR",
    [W_COLL_UP] = "COLL_UP",
    [W_COLL_DOWN] = "COLL_DOWN",
    [W_STEAL] = "STEAL",
    [W_STEAL_NONE] = "STEAL_NONE",
    [W_TOKEN] = "TOKEN",
    [W_PROBE] = "PROBE",
    [W_PROBE_ACK] = "PROBE_ACK",
    [W_BEAT] = "BEAT",
    [W_DSM] = "DSM",
};

const char *wire_type_name(unsigned type)
{
	return type > 0 && type < W_TYPE_COUNT_ ? names[type] : "unknown";
}

const char *wire_check(const struct wire_hdr *h, uint32_t from, uint32_t self,
		       uint32_t nodes)
{
	if (h->magic != WIRE_MAGIC)
		return "magic (not an EARTH message, or the stream lost sync)";
	if (h->version != WIRE_VERSION)
		return "version (peer runs another wire version)";
	if (h->type == 0 || h->type >= W_TYPE_COUNT_)
		return "type (unknown message type)";
	if (h->src != from)
		return "src (sender field does not match the connection)";
	if (h->type != W_COLL_UP && h->type != W_COLL_DOWN &&
	    (h->flags & ~(WIRE_F_LAST | WIRE_F_NOSLOT | WIRE_F_REPLY |
			  (h->type == W_SHUTDOWN ? WIRE_F_STUCK : 0))))
		return "flags (unknown bits)";
	if (h->len > WIRE_MAX_PAYLOAD &&
	    (h->type != W_BLK_DATA || h->len > WIRE_MAX_BLK_DATA))
		return "len (payload larger than the protocol maximum)";
	switch (h->type) {
	case W_SYNC:
		/* One signal each: a count would let one message make a
		 * re-armed slot fire billions of times. */
		if (h->len != 0 || h->n != 1)
			return "len/n (SYNC carries no payload and n = 1)";
		break;
	case W_BLK_REQ:
		if ((h->len != 0 && h->len != 8) || h->n < 0)
			return "len/n (BLK_REQ carries no payload or its "
			       "8-byte origin; n is the length)";
		break;
	case W_BLK_DATA:
		break;
	case W_INVOKE:
		if (h->n < 0)
			return "n (function id)";
		break;
	case W_INCR:
		if (h->len != 0 || h->n < 1)
			return "len/n (INCR carries no payload and n >= 1)";
		break;
	case W_COLL_UP:
	case W_COLL_DOWN:
		if (h->len != 0 || h->n < 0)
			return "len/n (collectives carry no payload; n is the "
			       "collective number)";
		break;
	case W_STEAL:
	case W_STEAL_NONE:
		if (h->len != 0)
			return "len (no payload)";
		break;
	case W_TOKEN:
		if (h->n < 0)
			return "n (function id)";
		break;
	case W_PROBE:
		if (h->len != 0 || from != 0 || h->n < 1)
			return "src/len/n (only node 0 probes; n is the wave)";
		break;
	case W_PROBE_ACK:
		if (h->len != 0 || self != 0 || h->n < 0)
			return "len/n (answers go to node 0; n is the wave)";
		break;
	case W_BEAT:
		/* Nothing a peer could make it choose. */
		if (h->len != 0 || h->flags != 0 || h->n != 0 || h->a != 0 ||
		    h->b != 0 || h->c != 0)
			return "len/n/a/b/c/flags (BEAT carries nothing)";
		break;
	case W_DSM:
		if (h->n < 1)
			return "n (what a shared-memory message is)";
		break;
	case W_SHUTDOWN:
		if (h->len != 0 || from != 0)
			return "src/len (only node 0 ends a job)";
		break;
	}
	(void)nodes;
	return 0;
}
