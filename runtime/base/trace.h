/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the timeline recorder (EARTH_TRACE / earthrun --trace): one
 * bounded event buffer per unit (EU, SU), written only by the thread doing
 * that unit's work, flushed to the node's part file when the unit goes idle
 * with its buffer half full, and at node end (trace.c), never on the busy
 * path. A full buffer drops the
 * event and counts it. With tracing off every hook is one predicted branch
 * on trace_on, a read-mostly flag set before the units start.
 */
#ifndef EARTH_TRACE_H
#define EARTH_TRACE_H

#ifndef EARTH_INTERNAL
#error "trace.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "queues/q_arch.h"

enum trace_unit { TRACE_EU, TRACE_SU, TRACE_UNITS_ };

enum trace_kind {
	TRACE_FIBER, /* EU slice: a fiber ran; arg = its function            */
	TRACE_OP,    /* SU slice: one EU request handled; aux = enum su_op   */
	TRACE_RECV,  /* SU slice: one message from peer aux2 handled; aux =
		      * wire type, arg = its sequence number from that peer  */
	TRACE_SEND,  /* SU slice: one message to peer aux2 sent; aux = wire
		      * type, arg = its sequence number to that peer         */
};

struct trace_ev {
	uint64_t t0, t1; /* TSC */
	uint64_t arg;
	uint16_t kind, aux;
	uint32_t aux2;
};

struct trace_buf {
	struct trace_ev *ev;
	uint32_t len, cap;
	uint64_t dropped; /* events lost to a full buffer */
	char *out;	  /* the flush's formatting buffer */
	uint32_t tid;	  /* the track: EU 0 1, the SU 2, EU i > 0 2 + i */
};

/* Set once before the units start, cleared after they end. */
extern bool trace_on __attribute__((visibility("hidden")));
/* EU 0's buffer and the SU's; EUs 1 to k - 1 have theirs in
 * trace_eu_rest (a node of k EUs, trace_open). The calling EU's: an EU
 * thread points trace_eu_me at its own as it starts (trace_eu_start),
 * every other thread keeps EU 0's. */
extern struct trace_buf trace_bufs[TRACE_UNITS_]
    __attribute__((visibility("hidden")));
extern struct trace_buf *trace_eu_rest __attribute__((visibility("hidden")));
extern __thread struct trace_buf *trace_eu_me
    __attribute__((visibility("hidden"), tls_model("initial-exec")));

/* unit's buffer on the calling thread (unit is a constant at every call:
 * the test folds away). */
static inline struct trace_buf *trace_buf_of(enum trace_unit unit)
{
	return unit == TRACE_EU ? trace_eu_me : &trace_bufs[TRACE_SU];
}

/* An EU thread of a node of several EUs, as it starts: its own buffer. */
void trace_eu_start(unsigned index);

/* Records a slice [t0, t1] on `unit`. Only the thread doing that unit's
 * work calls it. */
static inline void trace_slice(enum trace_unit unit, enum trace_kind kind,
			       uint16_t aux, uint32_t aux2, uint64_t arg,
			       uint64_t t0, uint64_t t1)
{
	struct trace_buf *b = trace_buf_of(unit);
	if (q_unlikely(b->len == b->cap)) {
		b->dropped++;
		return;
	}
	struct trace_ev *e = &b->ev[b->len++];
	e->t0 = t0;
	e->t1 = t1;
	e->arg = arg;
	e->kind = (uint16_t)kind;
	e->aux = aux;
	e->aux2 = aux2;
}

/* How the trace names what it records, from the layers above: the
 * threaded function whose entry fiber is fn (NULL: none, the symbol
 * table is asked next), and a message type. */
struct trace_names {
	const char *(*tfunc)(uintptr_t fn);
	const char *(*msg)(unsigned type);
	const char *(*op)(unsigned op); /* a TRACE_OP's aux; NULL: op.h's */
};

/* Node bring-up (earth_run thread, before the units start): turns tracing
 * on when EARTH_TRACE names a file. Returns 0, or -errno after printing
 * why (the node does not start). */
int trace_open(uint32_t node, uint32_t nodes, unsigned eus, double tsc_per_ns,
	       const struct trace_names *names);
/* Writes `unit`'s buffered events to the part file. The thread doing that
 * unit's work, off its busy path (idle, node end). */
void trace_flush(enum trace_unit unit);
/* The unit goes idle: writes its buffer out once it is half full (rarely,
 * so that short idle moments stay short). */
static inline void trace_idle(enum trace_unit unit)
{
	const struct trace_buf *b = trace_buf_of(unit);
	if (b->len >= b->cap / 2)
		trace_flush(unit);
}

/* Node end (earth_run thread, after the units ended): flushes what is
 * left, writes the totals, and — when no launcher merges the parts — turns
 * this node's part into the final trace file. 0, or -1 when a write,
 * close or rename failed (said on stderr, naming the file; the part and
 * any temporary file are removed). */
int trace_close(void);
/* Sequence numbers of the messages between this node and `peer`, counted
 * even when tracing drops events (SU thread). */
uint64_t trace_next_seq_out(uint32_t peer);
uint64_t trace_next_seq_in(uint32_t peer);

#endif /* EARTH_TRACE_H */
