/* SPDX-License-Identifier: MIT */
/*
 * wire.h - messages between the SUs of a job. Every transport carries a
 * byte stream per pair of nodes; a message is a 40-byte header and a
 * payload. Everything received is untrusted until wire_check() accepts it.
 * Layout and rules: docs/architecture.md, "Between nodes".
 */
#ifndef EARTH_WIRE_H
#define EARTH_WIRE_H

#ifndef EARTH_INTERNAL
#error "wire.h is internal to the EARTH runtime"
#endif

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC 0xEA27u
#define WIRE_VERSION 1u
/* Largest payload of one message; BLKMOV is cut into chunks of this,
 * except over a transport that writes BLK_DATA payloads straight to their
 * destination as they arrive (tcp), where a chunk may be up to
 * WIRE_MAX_BLK_DATA. */
#define WIRE_MAX_PAYLOAD (64u * 1024u)
#define WIRE_MAX_BLK_DATA (16u * 1024u * 1024u)

enum wire_type {
	W_SYNC = 1, /* signal slot (a) once (n = 1)                      */
	W_BLK_REQ,  /* read n bytes at src (b); send them to dst (c),    */
	/* then signal slot (a); payload: none or the origin */
	W_BLK_DATA, /* write the payload at dst (b); if LAST, signal (a) */
	W_INVOKE,   /* start function id (n) with the payload as args    */
	W_SHUTDOWN, /* main ended: exit with status (n)                  */
	W_INCR,	    /* add n to the count of slot (a)                    */
	W_COLL_UP,  /* collective number n: a subtree's value (b), kind  */
	/* and type in flags >> 8 (see su/coll.c)            */
	W_COLL_DOWN,  /* collective number n: the result (b) for all       */
	W_STEAL,      /* the sender is idle: send a token if you have one  */
	W_STEAL_NONE, /* no token to give                                  */
	W_TOKEN,      /* a token: function id (n), the payload as args     */
	W_PROBE,      /* node 0: stuck-job wave n; answer when idle        */
	W_PROBE_ACK,  /* to node 0: idle for wave n (0: active again since */
	/* the last answer); messages sent (b), received (c) */
	W_BEAT, /* the sender is alive: sent by a transport that finds   */
	/* no kernel watching its links (ucx) on a link quiet  */
	/* for a while; every field 0; never reaches the SU     */
	W_DSM, /* shared memory: what (n), a, b, c and the payload  */
	/* as su/dsm.c says; checked there                      */
	W_TYPE_COUNT_
};

#define WIRE_F_LAST 0x1u   /* W_BLK_DATA: last chunk of the move         */
#define WIRE_F_NOSLOT 0x2u /* no slot to signal                          */
/* W_BLK_DATA: the data a BLK_REQ of the receiver asked for (statistics
 * count the receiver's reads in flight with it). */
#define WIRE_F_REPLY 0x8u
/* W_SHUTDOWN: the job is stuck (su/quiet.c): report the slots that wait
 * here, then end. */
#define WIRE_F_STUCK 0x10u
#define WIRE_F_COLL_SHIFT 8 /* W_COLL_*: kind | type << 4 in flags >> 8   */
/* Never on the wire (wire_check rejects it): set by a transport that has
 * already written a W_BLK_DATA payload at b; the message comes with no
 * payload pointer. */
#define WIRE_F_PLACED 0x4u

struct wire_hdr {
	uint16_t magic;	 /* WIRE_MAGIC */
	uint8_t version; /* WIRE_VERSION */
	uint8_t type;	 /* enum wire_type */
	uint16_t flags;	 /* WIRE_F_* */
	uint16_t src;	 /* sending node */
	uint32_t len;	 /* payload bytes after the header */
	int32_t n;	 /* type-specific count, id or status */
	uint64_t a;	 /* slot: earth_gslot bits */
	uint64_t b;	 /* address on the receiving node */
	uint64_t c;	 /* W_BLK_REQ: destination gptr; W_SYNC, */
	/* W_INCR, W_BLK_DATA: the origin (wire_origin); else 0 */
};
static_assert(sizeof(struct wire_hdr) == 40, "wire header layout");

/*
 * Checks a received header from peer `from` on node `self` of `nodes`
 * nodes: magic, version, type, sender, length limits per type. Returns
 * NULL, or a static string naming the bad field.
 */
const char *wire_check(const struct wire_hdr *h, uint32_t from, uint32_t self,
		       uint32_t nodes);

const char *wire_type_name(unsigned type);

/*
 * The origin of the request behind a message (base/srctab.h): field c of
 * SYNC, INCR and BLK_DATA, the 8-byte payload of a BLK_REQ; 0 when none.
 * Untrusted like the rest: read only to word a refusal (refuse.c).
 */
uint64_t wire_origin(const struct wire_hdr *h, const void *payload);

/*
 * Stops the job: message h from node `from` refused for its field `field`
 * because of what fmt says. With an origin this node reads: "refused
 * GET_SYNC_L from node 0 (f.tc:12 in main, fiber 0): ROLE WHY (message
 * BLK_REQ, field b)"; else "message BLK_REQ from node 0 rejected: field
 * b (WHY)". role: what the field is ("the source"), or NULL.
 */
_Noreturn void wire_refuse(const struct wire_hdr *h, uint32_t from,
			   uint32_t nodes, uint64_t origin, const char *field,
			   const char *role, const char *fmt, ...)
    __attribute__((format(printf, 7, 8), cold));

#endif /* EARTH_WIRE_H */
