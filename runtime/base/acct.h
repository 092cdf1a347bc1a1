/* SPDX-License-Identifier: MIT */
/*
 * acct.h - where a node's time went (earthrun --stats, EARTH_STATS=1 or
 * EARTH_STATS_JSON=FILE): the EU's time in fibers, in the runtime and
 * idle; the SU's time serving, receiving, sending and idle; operations by
 * type, local and remote; and, each time a fiber ends, why the EU goes on
 * or waits (the CVM study's switch classes) with the remote reads still in
 * flight. Counting is on only when asked for (acct_on, set before the
 * units start); off, every hook is one predicted branch.
 */
#ifndef EARTH_ACCT_H
#define EARTH_ACCT_H

#ifndef EARTH_INTERNAL
#error "acct.h is internal to the EARTH runtime"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "queues/q_arch.h"
#include "base/op.h"

/* What the EU finds when a fiber ends. */
enum acct_switch {
	ACCT_SW_READY,	/* another fiber is ready: useful work            */
	ACCT_SW_REMOTE, /* none ready; several remote reads in flight     */
	ACCT_SW_SAME,	/* none ready; all wait on the same remote read   */
	ACCT_SW_TAIL,	/* none ready; the node waits in a collective     */
	ACCT_SW_IDLE,	/* none ready, no remote read nor collective out  */
	ACCT_SW_KINDS_
};
/* Buckets of reads in flight: 0, 1, 2-3, 4-7, 8-15, 16+. */
#define ACCT_OVERLAP_BUCKETS 6

/* Owned by one EU thread (a thread running fibers): each EU has its own
 * (acct_eu_of), the calling EU's through acct_me. */
struct acct_eu {
	/* The EU's time is cut into segments: fibers, idle stretches and the
	 * runtime between them; mark is where the last segment ended. */
	uint64_t mark;
	uint64_t fiber_ticks;	/* inside fibers, posting included */
	uint64_t runtime_ticks; /* between fibers: fetching, dispatch */
	uint64_t idle_ticks;	/* nothing ready: spinning or asleep */
	uint64_t sw[ACCT_SW_KINDS_];
	uint64_t overlap_hist[ACCT_OVERLAP_BUCKETS];
	uint64_t overlap_sum, overlap_max;
	/* Posted by this EU: reads from another node into this one
	 * (GET_SYNC, BLKMOV_SYNC), and collectives. Their completions are
	 * counted by the SU in acct_shared. (A node of several EUs counts
	 * both node-wide instead, in acct_posted.) */
	uint64_t reads_posted, colls_posted;
} __attribute__((aligned(64)));

/* A node of several EUs: reads and collectives posted by every EU, as
 * their completions are counted for the node (acct_shared); each EU's
 * fiber ends are then classified by the node's reads in flight. Relaxed
 * atomic adds, only while counting. A line of its own. */
struct acct_posted {
	_Atomic uint64_t reads, colls;
} __attribute__((aligned(64)));

/* The requests acct_su counts: enum su_op, and a SYNC of a global slot
 * (earth_rsync) as a kind of its own. */
enum { ACCT_OP_RSYNC = SU_OP_COUNT_, ACCT_OP_COUNT_ };

/* A request's kind as acct_su counts it (SU_OP_INVOKE_REMOTE is INVOKE);
 * gslot: its slot is a global one. */
static inline unsigned acct_op_of(unsigned op, bool gslot)
{
	if (op == SU_OP_INVOKE_REMOTE)
		return SU_OP_INVOKE;
	if (op == SU_OP_SYNC && gslot)
		return ACCT_OP_RSYNC;
	return op;
}

/* Its name: su_op_name's, or "RSYNC". */
static inline const char *acct_op_name(unsigned op)
{
	return op == ACCT_OP_RSYNC ? "RSYNC" : su_op_name(op);
}

/* Owned by the thread doing the SU's work. */
struct acct_su {
	uint64_t mark;	      /* end of the last accounted segment         */
	uint64_t serve_ticks; /* handling EU requests and peers' messages */
	uint64_t recv_ticks;  /* polling the transport, delivery excluded */
	uint64_t send_ticks;  /* flushing and retrying sends              */
	uint64_t idle_ticks;  /* nothing to do: spinning or asleep        */
	uint64_t ops[ACCT_OP_COUNT_];	 /* EU requests handled, by type */
	uint64_t remote[ACCT_OP_COUNT_]; /* ... of which needed another
					  * node (a TOKEN: ran on another
					  * node, given when it stole) */
	bool in_step; /* inside su_step: the segments above are open   */
	bool sent;    /* handling this request needed another node: a
		       * message left, or its memory was accessed
		       * one-sided                                     */
} __attribute__((aligned(64)));

/* Completions of what acct_eu counts as posted: reads whose data all
 * arrived (the last BLK_DATA flagged WIRE_F_REPLY, or served one-sided
 * by this SU) and collectives finished here. Written by the SU only
 * (relaxed load and store), read relaxed by the EU at each fiber end: a
 * snapshot, as the classification is. A line of their own, so the EU does
 * not miss on the SU's other counters. */
struct acct_shared {
	_Atomic uint64_t reads_done;
	_Atomic uint64_t colls_done;
} __attribute__((aligned(64)));

extern bool acct_on __attribute__((visibility("hidden")));
/* EU 0's record, and EUs 1 to acct_eus - 1's (node/report.c allocates
 * them when counting starts); the calling EU's: an EU thread points
 * acct_me at its own as it starts, every other thread keeps EU 0's. */
extern struct acct_eu acct_eu0 __attribute__((visibility("hidden")));
extern struct acct_eu *acct_eu_rest __attribute__((visibility("hidden")));
extern unsigned acct_eus __attribute__((visibility("hidden")));
extern __thread struct acct_eu *acct_me
    __attribute__((visibility("hidden"), tls_model("initial-exec")));
static inline struct acct_eu *acct_eu_of(unsigned i)
{
	return i ? &acct_eu_rest[i - 1] : &acct_eu0;
}
/* Several EUs: posted counts node-wide (acct_posted). */
extern bool acct_node_wide __attribute__((visibility("hidden")));
extern struct acct_posted acct_posted __attribute__((visibility("hidden")));
extern struct acct_su acct_su __attribute__((visibility("hidden")));
extern struct acct_shared acct_shared __attribute__((visibility("hidden")));

/* EU: a read from another node into this one was posted. */
static inline void acct_read_posted(void)
{
	if (acct_node_wide)
		atomic_fetch_add_explicit(&acct_posted.reads, 1,
					  memory_order_relaxed);
	else
		acct_me->reads_posted++;
}

/* EU: a collective was posted. */
static inline void acct_coll_posted(void)
{
	if (acct_node_wide)
		atomic_fetch_add_explicit(&acct_posted.colls, 1,
					  memory_order_relaxed);
	else
		acct_me->colls_posted++;
}

/* EU, when a fiber ended and `more` says whether another is ready. */
static inline void acct_switch(bool more)
{
	struct acct_eu *a = acct_me;
	uint64_t done =
	    atomic_load_explicit(&acct_shared.reads_done, memory_order_relaxed);
	uint64_t colls_done =
	    atomic_load_explicit(&acct_shared.colls_done, memory_order_relaxed);
	uint64_t reads = a->reads_posted, colls = a->colls_posted;
	if (acct_node_wide) {
		reads = atomic_load_explicit(&acct_posted.reads,
					     memory_order_relaxed);
		colls = atomic_load_explicit(&acct_posted.colls,
					     memory_order_relaxed);
	}
	/* (Node-wide, another EU's post may be seen after its completion.) */
	uint32_t out = reads > done ? (uint32_t)(reads - done) : 0;
	enum acct_switch k;
	if (more)
		k = ACCT_SW_READY;
	else if (colls > colls_done)
		k = ACCT_SW_TAIL;
	else if (out > 1)
		k = ACCT_SW_REMOTE;
	else if (out == 1)
		k = ACCT_SW_SAME;
	else
		k = ACCT_SW_IDLE;
	a->sw[k]++;
	unsigned b = out ? 1 + (31 - (unsigned)__builtin_clz(out)) : 0;
	a->overlap_hist[b < ACCT_OVERLAP_BUCKETS ? b
						 : ACCT_OVERLAP_BUCKETS - 1]++;
	a->overlap_sum += out;
	if (out > a->overlap_max)
		a->overlap_max = out;
}

/* EU: a fiber ran from t0 to t1. */
static inline void acct_fiber(uint64_t t0, uint64_t t1)
{
	struct acct_eu *a = acct_me;
	a->runtime_ticks += t0 - a->mark;
	a->fiber_ticks += t1 - t0;
	a->mark = t1;
}

/* EU: it was idle from t0 to t1. */
static inline void acct_eu_idle(uint64_t t0, uint64_t t1)
{
	struct acct_eu *a = acct_me;
	a->runtime_ticks += t0 - a->mark;
	a->idle_ticks += t1 - t0;
	a->mark = t1;
}

/* SU: the time since the last mark goes to `bucket`. */
static inline void acct_su_to(uint64_t *bucket)
{
	uint64_t t = q_tsc();
	*bucket += t - acct_su.mark;
	acct_su.mark = t;
}

/* SU: one more of counter (an acct_shared field) completed. */
static inline void acct_completed(_Atomic uint64_t *counter)
{
	atomic_store_explicit(
	    counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
	    memory_order_relaxed);
}

/* SU: a message from a peer is about to be handled; returns the time.
 * Outside su_step (an interrupt handler of a single-core node, inside a
 * fiber) nothing is charged: that time is the fiber's. */
static inline uint64_t acct_deliver_begin(void)
{
	uint64_t t = q_tsc();
	if (acct_su.in_step)
		acct_su.recv_ticks += t - acct_su.mark;
	return t;
}

/* SU: the message that began at t0 was handled; returns the time. */
static inline uint64_t acct_deliver_end(uint64_t t0)
{
	uint64_t t = q_tsc();
	if (acct_su.in_step) {
		acct_su.serve_ticks += t - t0;
		acct_su.mark = t;
	}
	return t;
}

#endif /* EARTH_ACCT_H */
