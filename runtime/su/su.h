/* SPDX-License-Identifier: MIT */
/*
 * su.h - internals of the Synchronization Unit: handling requests,
 * signalling slots, making fibers ready, the SU thread. Everything here
 * runs on the SU thread.
 */
#ifndef EARTH_SU_H
#define EARTH_SU_H

#ifndef EARTH_INTERNAL
#error "su.h is internal to the EARTH runtime"
#endif

#include "gas/registry.h"
#include "unit/slot.h"
#include "unit/unit.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A message for a peer whose transport had no room (su/remote.c). */
struct su_out_msg {
	struct su_out_msg *next;
	struct wire_hdr h;
	/* The payload: where a block-move chunk lies (it stays put until the
	 * move's slot is signalled), or NULL when it is copied below. */
	const void *ref;
	/* Bytes of memory it holds charged to su_state.owed[peer] (an
	 * answer to that peer), or 0. */
	uint32_t owed;
	unsigned char payload[];
};

/* A ready fiber waiting for room in an EU's ready ring. */
struct ready_entry {
	earth_fiber_fn fiber;
	void *frame;
};

/* The SU's side of one EU's ring pair (earth_node.link[i]). */
struct su_eu {
	struct q_ring *req;   /* consumer side */
	struct q_ring *ready; /* producer side */
	struct q_msg *rmsg;   /* ready message being filled, or NULL */
	unsigned rfill;
	/* Ready fibers that did not fit the ring, oldest first. */
	struct ready_entry *rovf;
	size_t rovf_head, rovf_len, rovf_cap;
	/* Requests from the request ring, performed; and the value last
	 * stored to the link's req_done. */
	uint64_t reqs, reqs_pub;
	struct eu_link *link;
} q_aligned_line;

/* Owned by the SU thread; counters also published for earth_stats_get. */
struct su_state {
	/* The EU that fibers made ready go to now (su_ready_push) when
	 * they are not routed by frame (by_frame): the one whose requests
	 * are being performed, EU 0 for everything else. */
	struct su_eu *eu;
	struct su_eu *eus; /* neus of them (su_attach) */
	unsigned neus;
	/* k > 1: a fiber for a slot, or SPAWN's, goes to the EU whose frame
	 * it is (su_eu_of_frame), not to su->eu, also while su_step serves
	 * the request rings (a frame's fibers run one at a time, on one EU);
	 * a new frame from a peer to the EU with the shortest ready ring
	 * (su_eu_new, ties taken in turn from new_next). False whenever
	 * neus is 1. */
	bool by_frame;
	unsigned new_next;
	bool wake_check;  /* published since su_wake_eu last looked */
	unsigned batches; /* busy batches, for EARTH_SU_WAKE_EVERY */
	/* Load balancing (su/balance.c): nodes that asked us for work in
	 * vain, and our own asking. */
	bool *hungry;
	uint32_t nhungry;
	bool steal_out;	      /* a STEAL is on its way, no answer yet */
	bool steal_quiet;     /* every peer said no: wait for new work */
	uint32_t steal_tries; /* NONE answers since the last success */
	uint64_t rng;
	unsigned give_next; /* the EU whose deque a peer's STEAL tries first */
	uint64_t tokens_stolen, tokens_given;
	uint64_t steal_requests; /* STEALs sent */
	uint64_t dry_since;	 /* TSC when the node ran dry; 0: it has work */
	uint32_t dry_polls;
	/* Messages for peers whose transport had no room, oldest first. */
	struct su_out_msg **out_head, **out_tail;
	/* Per peer: memory held by queued answers to its requests (block
	 * data it asked for, STEAL answers), which grows only while it does
	 * not read; above owed_max the peer is named and the job stops
	 * (EARTH_PEER_QUEUE_MB). */
	uint64_t *owed;
	uint64_t owed_max;
	size_t out_pending;
	/* Payload bytes of messages queued for a transport with no room:
	 * by reference (block-move chunks) and copied. */
	uint64_t queued_ref, queued_copied;
	/* Registered segments the checks of peers' messages found lately
	 * (remote.c). */
	struct reg_cache regs;
	uint64_t handled, fibers_ready, slot_signals, ready_overflow, sleeps;
	uint64_t msgs_sent, msgs_received;
	/* The collective in progress (su/coll.c): number, what this node and
	 * its children in the tree have contributed so far. */
	struct su_coll {
		uint32_t seq;
		bool started, local_in, sent_up;
		unsigned kids_in;
		uint8_t type, op;
		uint64_t acc, result;
		earth_slot *slot;
	} coll;
	/* Stuck-job detection (su/quiet.c). */
	struct su_quiet {
		/* Node 0: the wave in flight (active) or the last one, the
		 * answers still to come and their sums; the sums of the wave
		 * before; a peer was active again since it answered (dirty);
		 * this node's activity when the wave started. */
		uint32_t wave, acks_left;
		bool active, done, dirty, have_prev;
		uint64_t sum_sent, sum_recv, prev_sent, prev_recv;
		uint64_t act[4];
		/* A peer: the wave to answer when idle (0: none); it answered
		 * and watches for activity (counts at the answer). */
		uint32_t owed;
		bool watching;
		uint64_t mark_sent, mark_recv;
	} quiet;
	uint64_t busy_ticks;
	/* A dozing SU's measure of its own speed (loop.c, su_spin_ticks):
	 * the least time of the probe so far and the last, when it measured,
	 * and the measures that found the core shared with a busy thread. */
	uint64_t probe_least, probe_last, probe_at, shared_seen;
	/* Copies of the counters above, stored relaxed by the SU when it goes
	 * idle; read relaxed by earth_stats_get on the EU. */
	_Atomic uint64_t pub_handled, pub_fibers_ready, pub_slot_signals,
	    pub_ready_overflow, pub_sleeps, pub_busy_ticks, pub_shared_seen;
} q_aligned_line;

/* The SU of this process's node. */
extern struct su_state su_g EARTH_HIDDEN;

/* How long an idle stretch spins before the SU dozes, given a probe of the
 * SU's speed (loop.c, su_core_probe; n->su_probe): EARTH_SHARED_SPIN_US if
 * it took more than EARTH_SHARED_SLOWER_PCT percent of the least probe
 * time seen (then the core is shared with a busy thread, counted in
 * shared_seen), else EARTH_SPIN_US. Keeps the least. */
uint64_t su_spin_ticks(const struct earth_node *n, struct su_state *su,
		       uint64_t probe) EARTH_HIDDEN;

/* ---- ready queue (ready.c) ---- */

/* The SU's side of the node's n->eus ring pairs (unit_links_init), before
 * the SU runs: su->eu is EU 0's. Returns 0 or -ENOMEM. su_detach frees
 * them and what waits in them. */
int su_attach(struct su_state *su, struct earth_node *n) EARTH_HIDDEN;
void su_detach(struct su_state *su) EARTH_HIDDEN;
/* Ready fibers waiting in some EU's overflow list, all EUs. */
static inline size_t su_ready_backlog(const struct su_state *su)
{
	size_t b = 0;
	for (unsigned i = 0; i < su->neus; i++)
		b += su->eus[i].rovf_len;
	return b;
}
/* Some EU's ready message is open, or fibers wait in its overflow list. */
static inline bool su_ready_held(const struct su_state *su)
{
	for (unsigned i = 0; i < su->neus; i++)
		if (su->eus[i].rmsg || su->eus[i].rovf_len)
			return true;
	return false;
}
/* Some EU has not consumed every ready message published to it. */
static inline bool su_ready_unconsumed(const struct su_state *su)
{
	for (unsigned i = 0; i < su->neus; i++)
		if (q_ring_unconsumed(su->eus[i].ready) != 0)
			return true;
	return false;
}
/* Some EU's ready message is open. */
static inline bool su_ready_open(const struct su_state *su)
{
	for (unsigned i = 0; i < su->neus; i++)
		if (su->eus[i].rmsg)
			return true;
	return false;
}

/* Into su->eu's overflow list. */
void su_ready_spill(struct su_state *su, earth_fiber_fn fiber,
		    void *frame) EARTH_HIDDEN;
/* Publishes each EU's ready message being filled and the SW tail. Leaves the
 * fence and the look at the EU's sleep state to su_wake_eu, which the SU
 * loop calls when it goes idle and every EARTH_SU_WAKE_EVERY busy batches:
 * an EU blocks only after spinning for EARTH_SPIN_US, so that delay costs a
 * sleeping EU at most a few batches, and no fence sits on the busy path. */
void su_ready_flush(void) EARTH_HIDDEN;
/* Wakes the sleeping EUs that have something in their ready ring (every
 * sleeping EU with one EU, or once the job stops). */
void su_wake_eu(struct earth_node *n) EARTH_HIDDEN;
/* Every EU's sleep word reads UNIT_SLEEPING (loaded with mo). */
bool su_eus_asleep(const struct earth_node *n, memory_order mo) EARTH_HIDDEN;
/* Moves spilled ready fibers into their rings (every EU); returns how
 * many. */
unsigned su_ready_drain_ovf(struct su_state *su) EARTH_HIDDEN;

/* The EU a fiber for a slot of `frame` goes to when su->by_frame: the one
 * whose lists the frame came from (its header, unit.h: frame_owner), if
 * frame is one (aligned, its header in registered memory and live); else
 * EU 0. */
struct su_eu *su_eu_of_frame_slow(struct su_state *su,
				  const void *frame) EARTH_HIDDEN;
/* The EU with the shortest ready ring (published and not consumed, what
 * waits in its overflow list, an open message), for a new frame; ties
 * go in turn. */
struct su_eu *su_eu_new_slow(struct su_state *su) EARTH_HIDDEN;
static inline struct su_eu *su_eu_new(struct su_state *su)
{
	return q_likely(su->neus == 1) ? su->eus : su_eu_new_slow(su);
}

/* A fiber becomes ready: into su->eu's message being filled, three per
 * line. */
static inline void su_ready_push(struct su_state *su, earth_fiber_fn fiber,
				 void *frame)
{
	struct su_eu *e = su->eu;
	su->fibers_ready++;
	if (q_unlikely(e->rovf_len)) {
		su_ready_spill(su, fiber, frame);
		return;
	}
	if (!e->rmsg) {
		e->rmsg = q_ring_reserve(e->ready);
		if (q_unlikely(!e->rmsg)) {
			su_ready_spill(su, fiber, frame);
			return;
		}
		e->rfill = 0;
	}
	struct ready_msg *r = ready_of(e->rmsg);
	r->e[e->rfill].fiber = (uintptr_t)fiber;
	r->e[e->rfill].frame = (uintptr_t)frame;
	if (++e->rfill == READY_PER_MSG) {
		q_ring_publish(e->ready, e->rmsg);
		e->rmsg = NULL;
	}
}

/* A GET/DATA value (1, 2, 4 or 8 bytes; the EU checked the size), from
 * local memory or through the shared mapping. */
static inline void su_copy_value(void *dst, const void *src, unsigned size)
{
	if (q_unlikely(size != 1 && size != 2 && size != 4 && size != 8))
		earth_fatal("request with a %u-byte value", size);
	req_value_copy(dst, src, size);
}

/* ---- slots (slot.c) ---- */

_Noreturn void su_slot_remote(const char *op, earth_gslot g) EARTH_HIDDEN
    __attribute__((cold));
_Noreturn void su_slot_null(const char *op) EARTH_HIDDEN __attribute__((cold));

/* Resolves a request's slot field to a local slot. */
static inline earth_slot *
su_slot_resolve(struct earth_node *n, const struct su_req *r, const char *op)
{
	earth_slot *s;
	if (r->flags & SU_REQ_GSLOT) {
		earth_gslot g = {r->slot};
		if (q_unlikely(earth_gslot_node(g) != n->id))
			su_slot_remote(op, g); /* callers route remote slots */
		s = earth_gslot_addr(g);
	} else {
		s = (earth_slot *)(uintptr_t)r->slot;
	}
	if (q_unlikely(!s))
		su_slot_null(op);
	return s;
}
/* A signal: count down (unit/slot.h: the EU may signal the same slot at
 * the same time); at zero the fiber becomes ready and the count reloads
 * from reset. The fiber must be one this node armed a slot with
 * (gas/registry.h): a slot lies in memory other nodes may write. */
/* A fiber ready on EU e (not su->eu). */
static inline void su_ready_push_to(struct su_state *su, struct su_eu *e,
				    earth_fiber_fn fiber, void *frame)
{
	struct su_eu *was = su->eu;
	su->eu = e;
	su_ready_push(su, fiber, frame);
	su->eu = was;
}
/* SPAWN's fiber: on the EU whose frame it is (k > 1), else su->eu. */
static inline void su_ready_spawn(struct su_state *su, earth_fiber_fn fiber,
				  void *frame)
{
	if (q_unlikely(su->by_frame))
		su_ready_push_to(su, su_eu_of_frame_slow(su, frame), fiber,
				 frame);
	else
		su_ready_push(su, fiber, frame);
}
/* A new frame's fiber (a peer's INVOKE or TOKEN): on the EU with the
 * shortest ready ring. */
static inline void su_ready_push_new(struct su_state *su, earth_fiber_fn fiber,
				     void *buf)
{
	if (q_likely(su->neus == 1))
		su_ready_push(su, fiber, buf);
	else
		su_ready_push_to(su, su_eu_new_slow(su), fiber, buf);
}

static inline __attribute__((always_inline)) void
su_slot_signal(struct su_state *su, earth_slot *s, const char *op)
{
	su->slot_signals++;
	if (slot_count_down(s, op)) {
		earth_fiber_fn f = slot_checked_fiber(s, op);
		if (q_unlikely(su->by_frame))
			su_ready_push_to(su, su_eu_of_frame_slow(su, s->frame),
					 f, s->frame);
		else
			su_ready_push(su, f, s->frame);
	}
}

/*
 * A GET_SYNC's value `v` (size bytes) for dst, whose signal of the local
 * slot s makes its fiber ready: the value goes to the EU with the fiber,
 * in a message of their own, and the EU stores it just before running
 * the fiber. The destination is in a frame the EU's fibers write, so a
 * store by the SU would pull its line over and the fiber pull it back: two
 * cross-core transfers on the critical path of every remote load. Returns
 * false when the signal does not fire, or other ready fibers wait to go
 * out first (order), or the ring is full: the caller stores and signals.
 */
static inline bool su_ready_value(struct su_state *su, earth_slot *s, void *dst,
				  uint64_t v, unsigned size)
{
	struct su_eu *e = q_unlikely(su->by_frame)
			      ? su_eu_of_frame_slow(su, s->frame)
			      : su->eu;
	if (((uintptr_t)s & 7) || !s->fiber || e->rmsg || e->rovf_len ||
	    __atomic_load_n(&s->count, __ATOMIC_RELAXED) != 1 ||
	    q_unlikely(!reg_fiber_known(s->fiber)))
		return false; /* a forged fiber: su_slot_signal says so */
	struct q_msg *m = q_ring_reserve(e->ready);
	if (q_unlikely(!m) || !slot_fire_if_last(s))
		return false; /* the EU signalled it meanwhile: no fire */
	su->slot_signals++;
	su->fibers_ready++;
	struct ready_msg *r = ready_of(m);
	r->e[0].fiber = READY_VALUE;
	r->e[0].frame = size;
	r->e[1].fiber = (uintptr_t)s->fiber;
	r->e[1].frame = (uintptr_t)s->frame;
	r->e[2].fiber = (uintptr_t)dst;
	r->e[2].frame = v;
	q_ring_publish(e->ready, m);
	return true;
}

/* ---- other nodes: sending (remote.c) ---- */

/* Sends a message (fills magic, version, src); queues it when the
 * transport has no room. Never blocks. */
void su_net_send(struct earth_node *n, uint32_t peer, struct wire_hdr *h,
		 const void *payload) EARTH_HIDDEN;
/* Memory for a queued message, and giving it back (out.c): malloc, or
 * a fixed pool while an interrupt handler runs (su_out_pool). */
void *su_out_alloc(size_t bytes) EARTH_HIDDEN;
void su_out_free(void *p) EARTH_HIDDEN;
/* Set (1) while a signal handler does the SU's work: su_out_alloc takes
 * the pool. Entries of the pool left (the handler checks before it
 * queues), and forgetting them all (node start). */
extern __thread volatile sig_atomic_t su_out_pool EARTH_HIDDEN
    __attribute__((tls_model("initial-exec")));
unsigned su_out_pool_free(void) EARTH_HIDDEN;
void su_out_pool_reset(void) EARTH_HIDDEN;
/* Retries queued messages; returns how many went out. */
unsigned su_net_drain(struct earth_node *n) EARTH_HIDDEN;
/* Signals a slot named by a global slot pointer, here or on its node
 * (a SYNC message carrying `origin`, su_origin). */
void su_signal_gslot(struct earth_node *n, uint64_t gslot, const char *op,
		     uint64_t origin) EARTH_HIDDEN;
/* The origin of request r (base/srctab.h) for the messages it makes this
 * node send: 0 unless the EU named its fiber (SU_REQ_WHERE). */
uint64_t su_origin(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
void su_remote_sync(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
void su_remote_get(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
void su_remote_data(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
void su_remote_blkmov(struct earth_node *n,
		      const struct su_req *r) EARTH_HIDDEN;
void su_remote_invoke(struct earth_node *n,
		      const struct su_req *r) EARTH_HIDDEN;
/* A SYNC or INCR (t) of count for the slot gslot names, to its node. */
static inline void su_send_sync(struct earth_node *n, uint64_t gslot,
				enum wire_type t, int32_t count,
				uint64_t origin)
{
	struct wire_hdr h = {
	    .type = (uint8_t)t, .n = count, .a = gslot, .c = origin};
	su_net_send(n, earth_gslot_node((earth_gslot){gslot}), &h, NULL);
}
/* Pushes len bytes at local src to dst (another node), then the slot:
 * BLK_DATA messages (the transport's max_payload each), flags on each,
 * WIRE_F_LAST on the last. */
void su_push_data(struct earth_node *n, const void *src, uint64_t len,
		  earth_gptr dst, uint64_t gslot, unsigned flags,
		  uint64_t origin) EARTH_HIDDEN;

/* ---- other nodes: receiving (deliver.c) ---- */

/* A message from peer `from` (net_deliver_fn; ctx is the node). */
void su_net_deliver(void *ctx, uint32_t from, const struct wire_hdr *h,
		    const void *payload) EARTH_HIDDEN;
/* Where a BLK_DATA payload may land (struct net's place): its
 * destination when it lies in registered memory, else NULL. */
void *su_net_place(const struct wire_hdr *h) EARTH_HIDDEN;

/* ---- load balancing (balance.c) ---- */

/* Peers asked in vain and an EU's deque holds tokens: steal one for each
 * hungry peer (su_step calls it while any peer is hungry). */
void su_balance_token_added(struct earth_node *n) EARTH_HIDDEN;
/* Nothing to do here: ask a peer for a token (at most one request out)
 * once the node has stayed dry for EARTH_STEAL_AFTER_NS, or at once (a
 * unit about to sleep), so that the dry spell of a remote round trip does
 * not send a STEAL each time. */
void su_balance_idle(struct earth_node *n, bool at_once) EARTH_HIDDEN;
/* Work arrived: asking again is allowed. */
void su_balance_busy(void) EARTH_HIDDEN;
void su_balance_receive(struct earth_node *n, uint32_t from,
			const struct wire_hdr *h,
			const void *payload) EARTH_HIDDEN;

/* ---- collectives (coll.c) ---- */

void su_coll_post(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;

/* ---- shared memory across nodes (dsm.c) ---- */

/* Readies the SU's side (the node, before the units start): 0 or -1. */
int su_dsm_open(struct earth_node *n) EARTH_HIDDEN;
void su_dsm_close(void) EARTH_HIDDEN;
/* A stuck job: this node's threads that wait and on what, the locks,
 * barriers and flags it manages that have waiters; the threads that
 * wait. */
unsigned su_dsm_stuck_report(FILE *f) EARTH_HIDDEN;
/* A W_DSM message's name by its kind (field n), for the trace. */
const char *su_dsm_msg_name(unsigned what) EARTH_HIDDEN;
struct dsm_stats;
/* The SU's statistics of shared memory into *st (after the units ended). */
void su_dsm_stats(struct dsm_stats *st, double tsc_per_ns) EARTH_HIDDEN;
/* A program thread's request (SU_OP_DSM). */
void su_dsm_request(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
/* A W_DSM message from node from (this node's own never come here). */
void su_dsm_receive(struct earth_node *n, uint32_t from,
		    const struct wire_hdr *h, const void *payload) EARTH_HIDDEN;
void su_coll_receive(struct earth_node *n, uint32_t from,
		     const struct wire_hdr *h) EARTH_HIDDEN;

/* ---- stuck jobs (quiet.c) ---- */

/* The node is about to sleep; eu_idle: the EU sleeps (or, on a
 * single-core node, has nothing ready or spilled). Answers node 0's wave,
 * tells node 0 of activity since the last answer, or (node 0) starts or
 * judges a wave and declares the job stuck. Same threads as su_step.
 * Returns true when only another thread of the process (which may signal)
 * kept the node from counting as idle for good: that thread may end
 * without an event that wakes the node, so the caller sleeps at most
 * SU_QUIET_RECHECK_NS and asks again. */
bool su_quiet_idle(struct earth_node *n, bool eu_idle) EARTH_HIDDEN;
#define SU_QUIET_RECHECK_NS 20000000u /* 20 ms */
/* W_PROBE, W_PROBE_ACK, W_SHUTDOWN with WIRE_F_STUCK from a peer. */
void su_quiet_receive(struct earth_node *n, uint32_t from,
		      const struct wire_hdr *h) EARTH_HIDDEN;

/* ---- requests (handle.c) ---- */

void su_handle(struct earth_node *n, const struct su_req *r) EARTH_HIDDEN;
/* A GET_SYNC's source word (local, or a segment mapped here) is at src:
 * the value to its destination, the slot signalled (su_ready_value). */
void su_get_done(struct earth_node *n, const struct su_req *r,
		 const void *src) EARTH_HIDDEN;

/* ---- the SU thread (loop.c) ---- */

void *su_thread(void *node) EARTH_HIDDEN;
/* One round of SU work: up to EARTH_SU_BATCH requests, the inbox, queued
 * messages, arrivals (when poll_net), spilled ready fibers, tokens; then
 * publishes the ready ring and flushes the transport. Returns how much it
 * did. The thread doing the SU's work: the SU thread, or the one thread of
 * a single-core node (node/single.c) outside an interrupt. */
unsigned su_step(struct earth_node *n, bool poll_net) EARTH_HIDDEN;
/* Nothing to do: ask a peer for a token, after a while or at once
 * (su_balance_idle; same threads as su_step). */
void su_idle_step(struct earth_node *n, bool at_once) EARTH_HIDDEN;
/* Anything for the SU: requests, inbox, spilled fibers, tokens, queued or
 * arrived messages? */
bool su_has_pending(struct earth_node *n) EARTH_HIDDEN;
void su_publish_counters(struct su_state *su) EARTH_HIDDEN;
/* The end of the job on this node: node 0 tells the others; queued
 * messages go out (5 s at most). */
void su_end_job(struct earth_node *n) EARTH_HIDDEN;
/* Makes room for `extra` more spilled ready fibers without allocating
 * later (ready.c): an interrupt handler may spill, never allocate. */
void su_ready_reserve(struct su_state *su, size_t extra) EARTH_HIDDEN;

#endif /* EARTH_SU_H */
