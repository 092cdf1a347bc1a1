/* SPDX-License-Identifier: MIT */
/*
 * eu.h - internals of the Execution Unit: frame allocation, posting
 * requests to the SU, the EU thread. Everything here runs on the EU thread.
 */
#ifndef EARTH_EU_H
#define EARTH_EU_H

#ifndef EARTH_INTERNAL
#error "eu.h is internal to the EARTH runtime"
#endif

#include "gas/registry.h"
#include "unit/req_line.h"
#include "unit/unit.h"

#include <stddef.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define EU_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define EU_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define EU_POISON(p, n) ((void)(p), (void)(n))
#define EU_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct frame_chunk {
	struct frame_chunk *next;
};

/* Owned by the EU thread. */
struct eu_state {
	struct q_ring *req;   /* producer side */
	struct q_ring *ready; /* consumer side */
	struct deque *tokens; /* owner side (eu_link.tokens) */
	/* The next word to write in the request message being filled
	 * (queues/req_line.h), in the ring or the last of the overflow list;
	 * NULL when none is open. The payload ends the 64-byte message, and
	 * an open message has room left (a full one goes at once), so line_next
	 * alone gives the message (eu_line_msg) and its room (eu_line_room):
	 * a record stores its words and line_next, nothing else. Every store
	 * counts: stores leave the core in order, each behind the ring slot's,
	 * which waits for its line to come back from the SU's core. */
	uint64_t *line_next;
	/* Requests posted while the ring was full, oldest first. */
	struct q_msg *ovf;
	size_t ovf_head, ovf_len, ovf_cap;
	void *free_list[EARTH_FRAME_CLASSES];
	struct frame_chunk *chunks;
	void *main_frame;
	bool main_done;
	bool in_fiber;
	/* This EU's number, shifted to where a frame header keeps its owner
	 * (frame_hdr.cls): in the padding here, so no field moves. */
	uint32_t owner_tag;
	uint64_t ops[EARTH_OP_COUNT_];
	uint64_t fibers_run, req_overflow, frames_allocated, sleeps;
	uint64_t tokens_run; /* taken from its own deque */
	/* Signals to slots of this node, SPAWN and INVOKE on it, performed
	 * by the EU itself (post.c, eu_local_ok): allowed in this node mode
	 * (dual, not observed); the requests posted to the SU, and the SU's
	 * count of them performed as last seen (eu_link.req_done). */
	bool local_sig;
	uint64_t req_posted, req_seen;
	/* Something to do at the fiber's end: a request message was begun
	 * since the last one (eu_post_begin), requests wait in the overflow
	 * list, or the SU has not performed every request posted (loop.c,
	 * eu_fiber_posted). One test at the end of a fiber that posted
	 * nothing. */
	bool posted;
	/* A node of k > 1 EUs (eu/steal.c): a token this EU pushes may wake
	 * a sleeping sibling (eu_token_pushed), and an idle EU steals from
	 * its siblings. Set before the EU starts. */
	bool siblings;
	/* Signals to one slot of this node, combined (post.c, signal_here):
	 * the slot the EU signalled last, how many signals to it since are
	 * not yet performed, and the operation of the last of them (for its
	 * errors). They are performed, in one compare-and-swap, before
	 * anything the EU does after them could tell: another slot's signal,
	 * a request, SPAWN, INVOKE, INCR_SYNC, INIT_SYNC, END_FUNCTION, the
	 * fiber's end (eu_comb_perform). While comb_count is not 0 no request
	 * waits for the SU (eu_local_ok held, and a request performs them
	 * first), so no message is open. */
	earth_slot *comb_slot;
	uint64_t comb_count;
	const char *comb_op;
	/* Fibers made ready by those, oldest first: a circular list
	 * of own_ready_cap (a power of two) entries. The loop runs them when
	 * the ready ring is empty. */
	struct eu_ready {
		earth_fiber_fn fiber;
		void *frame;
	} * own_ready;
	size_t own_ready_head, own_ready_len, own_ready_cap;
	uint64_t slot_signals, fibers_ready; /* counted as the SU's are */
	uint64_t gets_direct; /* GETs read from another node's mapped
			       * segment (the direct table, post.c) */
	uint64_t idle_ticks;
	/* Registered segments the EU's checks found lately (post.c). */
	struct reg_cache regs;
	/* What it shares with the SU (earth_node.link[i]): its rings (req
	 * and ready above point into it), its sleep word and the SU's count
	 * of its requests performed. Last: the fields above keep their
	 * places. */
	struct eu_link *link;
	/* Frames of other EUs' lists this EU ended and sent back to them
	 * (eu_frame_free_foreign), and lists of its own frames it took back
	 * from remote_free (eu_frame_refill). */
	uint64_t frames_sent_back, remote_lists_taken;
	/* Frames of this EU's lists that ended on another EU, per size
	 * class: a Treiber stack other EUs push on (compare-and-swap,
	 * release), which this EU takes whole with one exchange (acquire)
	 * when its own list of the class is empty, before it refills from
	 * the heap (eu/frame.c). A line of its own: the only field of
	 * eu_state other threads write. */
	_Atomic(void *) remote_free[EARTH_FRAME_CLASSES] q_aligned_line;
	/* Stealing between EUs (eu/steal.c): the generator that picks the
	 * first sibling to look at (xorshift64; 0 until the first steal), and
	 * the tokens taken from siblings. */
	uint64_t steal_rng, tokens_taken;
	/* Fibers its slot signals made ready on siblings' frames
	 * (eu_ready_elsewhere). */
	uint64_t fibers_elsewhere;
} q_aligned_line;

/* The counters of earth_stats (ops, fibers_run, tokens_run, req_overflow,
 * frames_allocated, sleeps, slot_signals, fibers_ready, idle_ticks): only
 * their EU's thread writes them, with eu_count, so that earth_stats_get
 * may read a sibling's while the node runs (eu_count_get, a relaxed load):
 * each counter whole, the snapshot not one instant. On x86-64 eu_count is
 * the one add to memory that ++ compiles to (no lock: an aligned 8-byte
 * store is whole), which a relaxed atomic store would make a load, an add
 * and a store (end_thread 0.2 ns slower); elsewhere, and under TSan,
 * which must see the store, it is that relaxed atomic store. */
static inline void eu_count(uint64_t *c, uint64_t n)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
	__asm__("addq %1, %0" : "+m"(*c) : "er"(n));
#else
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
#endif
}
static inline uint64_t eu_count_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* EU 0's state: the one EU of a node of one, and the EU the node's own
 * thread sets up and reads back (node/node.c, stats.c, stuck.c). */
extern struct eu_state eu_first EARTH_HIDDEN;
/* EU i's state, i < the node's eus: EU 0's is eu_first, the others' are
 * allocated by the node before it starts them (node/node.c). */
extern struct eu_state *eu_rest EARTH_HIDDEN;
static inline struct eu_state *eu_at(unsigned i)
{
	return i ? &eu_rest[i - 1] : &eu_first;
}
/* How many EU states exist for a node of eus EUs (0: not chosen yet):
 * EU 0's always, the siblings' once the node has set them up (a start
 * that failed before has EU 0's only). */
static inline unsigned eu_states(unsigned eus)
{
	return eus && eu_rest ? eus : 1;
}
/* The calling thread's EU: an EU thread points it at its own state as it
 * starts (eu_thread); on every other thread (the node's, the SU's, a
 * single-core node's one thread, a program's own) it stays at its initial
 * value, EU 0's. An initial-exec thread-local: one %fs-relative load, read
 * once into a local by each operation (post.c) and never by the loop,
 * which is given its EU. */
extern __thread struct eu_state *eu_self EARTH_HIDDEN
    __attribute__((tls_model("initial-exec")));

/* The fibers the SU makes ready for the EU (unit.h: invoke_fiber,
 * token_gone_fiber): a remote INVOKE's trampoline allocates the frame,
 * copies the arguments, frees the buffer and runs the entry fiber; a
 * token's frame that left for another node goes back to its free list. */
void eu_invoke_trampoline(void *buf) EARTH_HIDDEN;
void eu_token_gone(void *frame) EARTH_HIDDEN;

/* The entry fiber of a token's frame (its header names the function). */
static inline earth_fiber_fn eu_token_fiber(void *frame)
{
	return ((const struct frame_hdr *)frame - 1)->fn->entry;
}

/* True on the EU thread while it runs a fiber. */
extern __thread bool eu_in_fiber EARTH_HIDDEN
    __attribute__((tls_model("initial-exec")));
/* The fiber running now, or the last that ran (for error messages). */
extern __thread earth_fiber_fn eu_cur_fiber EARTH_HIDDEN
    __attribute__((tls_model("initial-exec")));
/* &eu_cur_fiber of the thread that runs this node's fibers, set once as it
 * starts: the stuck report, on the SU's thread while the EU sleeps, names
 * the last fiber that ran (node/stuck.c). */
extern earth_fiber_fn *eu_cur_fiber_at EARTH_HIDDEN;

/* main's frame ends: stops the job if one of its slots still waits
 * (Threaded-C programs, by the source table; mainend.c). */
void eu_main_end_check(void *frame) EARTH_HIDDEN EARTH_COLD;
/* Usage error in operation `op`: names the running fiber and exits. */
_Noreturn void eu_misuse(const char *op, const char *fmt, ...) EARTH_HIDDEN
    __attribute__((format(printf, 2, 3), cold));

#define EU_CHECK_IN_FIBER(op)                                                  \
	do {                                                                   \
		if (q_unlikely(!eu_in_fiber))                                  \
			eu_misuse(op, "called outside a fiber: split-phase "   \
				      "operations may only be issued by "      \
				      "fibers running on the EU");             \
	} while (0)

/* ---- frames (frame.c) ---- */

void *eu_frame_refill(struct eu_state *eu, unsigned cls) EARTH_HIDDEN;
void *eu_frame_alloc_large(struct eu_state *eu,
			   const struct earth_tfunc *f) EARTH_HIDDEN;
void eu_frame_free_large(struct frame_hdr *h) EARTH_HIDDEN;
/* A frame that is not of this EU's lists (another EU's: back onto its
 * remote-free list), or a large one. */
void eu_frame_free_foreign(struct eu_state *eu,
			   struct frame_hdr *h) EARTH_HIDDEN;
/* Frees EU eu's chunks (its frames are gone with them). */
void eu_frames_release_all(struct eu_state *eu) EARTH_HIDDEN;
/* Frees the node's large frames, live and ended (after every EU ended). */
void eu_frames_release_large(void) EARTH_HIDDEN;

static inline unsigned eu_frame_class(size_t total)
{
	return total <= 64 ? 0
			   : 64 - (unsigned)__builtin_clzll((total - 1) >> 6);
}

/* Frame h of class cls, from its free list, becomes f's. */
static inline __attribute__((always_inline)) void *
eu_frame_take(struct eu_state *eu, const struct earth_tfunc *f, unsigned cls,
	      struct frame_hdr *h)
{
	void *next = *(void **)(h + 1);
	eu->free_list[cls] = next;
	/* The next frame of this class may have been written by the SU (slot
	 * signals, results) before it was freed: start taking its lines back
	 * now, so the next INVOKE/TOKEN does not stall on them. */
	if (next) {
		__builtin_prefetch(next, 1, 3);
		if (cls)
			__builtin_prefetch((char *)next + 64, 1, 3);
	}
	EU_UNPOISON(h + 1, f->frame_size);
	h->fn = f;
	h->cls = cls | eu->owner_tag;
	h->magic = FRAME_LIVE;
	eu_count(&eu->frames_allocated, 1);
	return h + 1;
}

/* A frame for f (uninitialised but for nothing; args not copied). */
static inline void *eu_frame_alloc(struct eu_state *eu,
				   const struct earth_tfunc *f)
{
	unsigned cls = eu_frame_class(f->frame_size + sizeof(struct frame_hdr));
	if (q_unlikely(cls >= EARTH_FRAME_CLASSES))
		return eu_frame_alloc_large(eu, f);
	struct frame_hdr *h = eu->free_list[cls];
	if (q_unlikely(!h))
		h = eu_frame_refill(eu, cls);
	return eu_frame_take(eu, f, cls, h);
}

static inline void eu_frame_free(struct eu_state *eu, void *frame)
{
	struct frame_hdr *h = (struct frame_hdr *)frame - 1;
	if (q_unlikely(h->magic != FRAME_LIVE))
		eu_misuse("END_FUNCTION",
			  "frame %p is not a live frame (ended twice, or not "
			  "the frame of a threaded function)",
			  frame);
	h->magic = FRAME_FREE;
	/* One test for both slow cases: the class of a frame of this EU's
	 * lists is below EARTH_FRAME_CLASSES once its owner is taken out; a
	 * large frame's (FRAME_CLASS_LARGE) and another EU's frame's are not.
	 */
	unsigned cls = h->cls ^ eu->owner_tag;
	if (q_unlikely(cls >= EARTH_FRAME_CLASSES)) {
		eu_frame_free_foreign(eu, h);
		return;
	}
	size_t body = ((size_t)64 << cls) - sizeof(*h);
	*(void **)frame = eu->free_list[cls];
	EU_POISON((char *)frame + sizeof(void *), body - sizeof(void *));
	eu->free_list[cls] = h;
}

/* Copies a TOKEN's or INVOKE's n argument bytes into its new frame:
 * argument blocks are small and their size known only at run time, so
 * two overlapping moves of the largest width that fits, inline, instead
 * of a call into the C library's memcpy; reads and writes only the n
 * bytes. */
static inline __attribute__((always_inline)) void
eu_copy_args(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	if (q_likely(n >= 16 && n <= 64)) {
		if (n <= 32) {
			__builtin_memcpy(d, s, 16);
			__builtin_memcpy(d + n - 16, s + n - 16, 16);
		} else {
			__builtin_memcpy(d, s, 32);
			__builtin_memcpy(d + n - 32, s + n - 32, 32);
		}
	} else if (n >= 8 && n < 16) {
		__builtin_memcpy(d, s, 8);
		__builtin_memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		__builtin_memcpy(d, s, 4);
		__builtin_memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		memcpy(d, s, n);
	}
}

/* ---- posting requests (post.c) ---- */

struct q_msg *eu_post_spill(struct eu_state *eu) EARTH_HIDDEN;
/* Moves spilled requests into the ring while it has room. */
void eu_ovf_drain(struct eu_state *eu) EARTH_HIDDEN;

/* Takes ready message m (then released) into r as a list of fibers; a
 * READY_VALUE message first stores its GET_SYNC's value where the fiber
 * expects it (req.h), so the fiber sees it like any value the SU stored.
 * EU thread. */
static inline void eu_ready_take(struct eu_state *eu, struct q_msg *m,
				 struct ready_msg *r)
{
	*r = *ready_of(m);
	q_ring_release(eu->ready);
	if (q_unlikely(r->e[0].fiber == READY_VALUE)) {
		uint64_t v = r->e[2].frame;
		req_value_copy((void *)(uintptr_t)r->e[2].fiber, &v,
			       (unsigned)r->e[0].frame);
		r->e[0] = r->e[1];
		r->e[1].fiber = 0;
	}
}

/*
 * The signals combined so far (eu_state.comb_slot), and the EU's own ready
 * list, before what they must precede. Three calls, from cheapest:
 *   eu_comb_perform       inline, one test: performs the combined signals
 *                         if there are any. Call it before anything the
 *                         EU does that they must come before (another
 *                         slot's signal, SPAWN or INVOKE on the EU,
 *                         INIT_SYNC, the fiber's end).
 *   eu_comb_perform_slow  out of line, no test: the work of the one above.
 *                         Call it only where comb_count is already known
 *                         to be non-zero (a cold path that tested it).
 *   eu_own_ready_to_su    out of line: performs the combined signals, then
 *                         sends the EU's own ready list to the SU as
 *                         SPAWNs. Call it before posting a request while
 *                         eu_own_work_pending: the fibers a request makes
 *                         ready come through the ring and would otherwise
 *                         run before the list (post.c).
 */
void eu_comb_perform_slow(struct eu_state *eu) EARTH_HIDDEN;
static inline __attribute__((always_inline)) void
eu_comb_perform(struct eu_state *eu)
{
	if (q_unlikely(eu->comb_count))
		eu_comb_perform_slow(eu);
}
void eu_own_ready_to_su(struct eu_state *eu) EARTH_HIDDEN;
/* Signals combined or fibers on the EU's own ready list: what must go
 * before a request (eu_own_ready_to_su). */
static inline bool eu_own_work_pending(const struct eu_state *eu)
{
	return eu->comb_count || eu->own_ready_len;
}

/* Requests still with the SU: has it performed them (eu_local_ok)? Pairs
 * with the release store in su_ready_flush. */
static inline __attribute__((always_inline)) void
eu_seen_refresh(struct eu_state *eu)
{
	if (eu->req_posted != eu->req_seen)
		eu->req_seen = atomic_load_explicit(&eu->link->req_done,
						    memory_order_acquire);
}

/* A message to fill: in the ring, or appended to the overflow list while
 * the ring is full (order is kept: once one request spills, the next ones
 * spill too until the list drains). */
static inline struct q_msg *eu_post_begin(struct eu_state *eu)
{
	eu->posted = true;
	if (q_likely(!eu->ovf_len)) {
		struct q_msg *m = q_ring_reserve(eu->req);
		if (q_likely(m))
			return m;
	}
	return eu_post_spill(eu);
}

/* After publishing requests: an SU that dozes while the EU computes
 * (su/loop.c, su_try_sleep) is woken. The SU stores SLEEPING, runs the heavy
 * half of the asymmetric fence (base.h) and looks at the ring; we stored
 * the ring, and look at its word after a compiler barrier: one of the two
 * sees the other's store. A plain load of a line the SU rarely writes. */
static inline bool eu_su_asleep(void)
{
	earth_fence_light();
	return q_unlikely(
	    atomic_load_explicit(earth_node_g.su_wordp, memory_order_relaxed) ==
	    UNIT_SLEEPING);
}

static inline void eu_su_nudge(void)
{
	if (eu_su_asleep())
		earth_su_wake(&earth_node_g);
}

/* A whole-message record (struct su_req's layout) into message m: the head,
 * then slot, a, b, c, spare, as three 16-byte stores rather than six (each
 * store leaves the core behind the ring slot's, eu_state.line_next). */
static inline __attribute__((always_inline)) void
eu_wide_write(struct q_msg *m, uint64_t head, uint64_t slot, uint64_t a,
	      uint64_t b, uint64_t c, uint64_t spare)
{
	q_words2 *w = (q_words2 *)m->w;
	w[0] = (q_words2){head, slot};
	w[1] = (q_words2){a, b};
	w[2] = (q_words2){c, spare};
}

/* Message m (from eu_post_begin) is complete: it goes to the SU (HWQ: now;
 * SW: at the next batch or flush), or waits in the overflow list. */
static inline void eu_msg_end(struct eu_state *eu, struct q_msg *m)
{
	if (q_likely(!eu->ovf_len) && q_ring_publish(eu->req, m))
		eu_su_nudge();
}

static_assert(offsetof(struct q_msg, w) + sizeof(((struct q_msg *)0)->w) ==
		  sizeof(struct q_msg),
	      "the request payload ends its message (eu_state.line_next)");

/* Bytes left in the open message (0: none is open, line_next NULL). */
static inline size_t eu_line_room(const struct eu_state *eu)
{
	return -(uintptr_t)eu->line_next & (sizeof(struct q_msg) - 1);
}

/* The open message; line_next may point just past it (full). */
static inline struct q_msg *eu_line_msg(const struct eu_state *eu)
{
	return (struct q_msg *)(((uintptr_t)eu->line_next - 1) &
				~(uintptr_t)(sizeof(struct q_msg) - 1));
}

/* Ends the open request message: a zero head after its last record. */
static inline void eu_line_close(struct eu_state *eu)
{
	if (eu_line_room(eu))
		*eu->line_next = 0;
	eu_msg_end(eu, eu_line_msg(eu));
	eu->line_next = NULL;
}

/* A message of its own for a whole-message record, after the open one:
 * the open-message state is not touched (see eu_state.line_next). */
static inline struct q_msg *eu_msg_begin(struct eu_state *eu)
{
	if (q_unlikely(eu_own_work_pending(eu)))
		eu_own_ready_to_su(eu);
	if (eu->line_next)
		eu_line_close(eu);
	return eu_post_begin(eu);
}

/* Room for a record of `words` words where the open message has none:
 * closes it and opens a new one (post.c). */
uint64_t *eu_line_open(struct eu_state *eu, unsigned words) EARTH_HIDDEN;

/* Room for a record of `words` words (<= REQ_LINE_WORDS) in the open
 * message, or a new one. */
static inline uint64_t *eu_rec_begin(struct eu_state *eu, unsigned words)
{
	if (q_likely(eu_line_room(eu) >= words * sizeof(uint64_t)))
		return eu->line_next;
	return eu_line_open(eu, words);
}

/* The record at w of `words` words is written; a full message goes now. */
static inline void eu_rec_end(struct eu_state *eu, uint64_t *w, unsigned words)
{
	eu->line_next = w + words;
	if (!eu_line_room(eu))
		eu_line_close(eu);
}

/* END_THREAD, and before the EU idles: what the fiber posted leaves.
 * Inline in the EU's loop: a fiber that posted nothing pays two tests. */
static inline __attribute__((always_inline)) void
eu_post_flush(struct eu_state *eu)
{
	if (eu->line_next)
		eu_line_close(eu);
	if (q_ring_flush(eu->req))
		eu_su_nudge();
}

/* ---- slots signalled on the EU (post.c) ---- */

/* Grows the EU's ready list (full). */
void eu_ready_grow(struct eu_state *eu) EARTH_HIDDEN;

/* Onto the EU's ready list, which has room. */
static inline __attribute__((always_inline)) void
eu_ready_put(struct eu_state *eu, earth_fiber_fn fiber, void *frame)
{
	eu->own_ready[(eu->own_ready_head + eu->own_ready_len++) &
		      (eu->own_ready_cap - 1)] =
	    (struct eu_ready){fiber, frame};
	eu_count(&eu->fibers_ready, 1);
}

static inline void eu_ready_push(struct eu_state *eu, earth_fiber_fn fiber,
				 void *frame)
{
	if (q_unlikely(eu->own_ready_len == eu->own_ready_cap))
		eu_ready_grow(eu);
	eu_ready_put(eu, fiber, frame);
}

/* INVOKE on the EU: after the signals combined before it. */
static inline void eu_ready_local(struct eu_state *eu, earth_fiber_fn fiber,
				  void *frame)
{
	eu_comb_perform(eu);
	eu_ready_push(eu, fiber, frame);
}

/* A fiber made ready on the EU for a frame of another EU: onto that EU's
 * sibling list (eu_link.sib), waking it if it sleeps; through the SU as a
 * SPAWN only when that list is full (post.c). Never a request on the way:
 * the EU keeps performing its own signals (eu_local_ok). */
void eu_ready_elsewhere(struct eu_state *eu, earth_fiber_fn fiber,
			void *frame) EARTH_HIDDEN;
/* May a fiber on `frame` run on this EU? Always on a node of one EU. */
static inline bool eu_frame_here(struct eu_state *eu, const void *frame)
{
	return q_likely(!eu->siblings) ||
	       unit_frame_eu(&eu->regs, frame, unit_eus(&earth_node_g)) ==
		   eu->owner_tag >> FRAME_OWNER_SHIFT;
}
/* A fiber a signal on the EU made ready: onto its own list, or, for
 * another EU's frame, to it through the SU. */
static inline void eu_ready_fired(struct eu_state *eu, earth_fiber_fn fiber,
				  void *frame)
{
	if (q_likely(eu_frame_here(eu, frame)))
		eu_ready_push(eu, fiber, frame);
	else
		eu_ready_elsewhere(eu, fiber, frame);
}

/* ---- tokens between the EUs of a node (steal.c) ---- */

/* EU eu's index on its node (its link's). */
static inline unsigned eu_index(const struct earth_node *n,
				const struct eu_state *eu)
{
	return (unsigned)(eu->link - n->link);
}
/* A token's frame (fiber 0 not run: only its arguments written) taken
 * from a sibling, moved into one of EU eu's lists: the token's fibers run
 * here (unit_frame_eu); the old frame goes back to its EU. */
void *eu_frame_rehome(struct eu_state *eu, void *frame) EARTH_HIDDEN;
/* The oldest token of a sibling, in a frame of eu's own (eu_frame_rehome):
 * one pass over the others from one picked at random. NULL when each
 * looked empty. EU eu's thread. */
void *eu_steal_sibling(struct earth_node *n, struct eu_state *eu) EARTH_HIDDEN;
/* Does a sibling's deque hold a token (a moment ago)? */
bool eu_sib_tokens(struct earth_node *n,
		   const struct eu_state *eu) EARTH_HIDDEN;
/* The idle wait of a node of k > 1 EUs (loop.c, eu_idle), in order: a
 * sibling's token onto the EU's own deque, where its loop takes it (true:
 * one is there); into the idle count; the same steal while it spins; into
 * the sleeping count before the last look (false: the asymmetric fence
 * could not run, so it sleeps a while only, EU_SIB_RECHECK_NS); out of the
 * sleeping count; out of the idle count, waking a sleeping sibling when
 * tokens wait and no other EU spins. */
bool eu_steal_into(struct earth_node *n, struct eu_state *eu) EARTH_HIDDEN;
void eu_idle_enter(struct earth_node *n) EARTH_HIDDEN;
bool eu_sleep_begin(struct earth_node *n) EARTH_HIDDEN;
void eu_sleep_end(struct earth_node *n) EARTH_HIDDEN;
void eu_idle_leave(struct earth_node *n, struct eu_state *eu) EARTH_HIDDEN;
#define EU_SIB_RECHECK_NS 1000000u /* 1 ms */
/* Wakes EU i if its word says it sleeps (a CAS from SLEEPING, then the
 * futex): true if it did. The caller fenced after what EU i must see. */
bool eu_wake_if_asleep(struct earth_node *n, unsigned i) EARTH_HIDDEN;
/* Wakes one sleeping sibling of eu, if one sleeps. */
void eu_wake_sibling(struct earth_node *n,
		     struct eu_state *eu) EARTH_HIDDEN EARTH_COLD;

/* A token was pushed on this EU's deque (TOKEN): on a node of k > 1 EUs a
 * sleeping sibling is woken when none spins (a spinning one steals it).
 * Dekker with eu_sleep_begin: we stored the deque's bottom, then look at
 * the count after a compiler barrier; a sleeper adds itself to the count,
 * runs the heavy half of the asymmetric fence (base.h), then looks at our
 * deque: one of the two sees the other's store. k = 1: one test of a field
 * of this EU's own line. */
static inline __attribute__((always_inline)) void
eu_token_pushed(struct eu_state *eu)
{
	if (q_likely(!eu->siblings))
		return;
	earth_fence_light();
	uint64_t w =
	    atomic_load_explicit(&earth_node_g.eus_idle, memory_order_relaxed);
	if (q_unlikely(unit_idle_asleep(w) &&
		       unit_idle_waiting(w) == unit_idle_asleep(w)))
		eu_wake_sibling(&earth_node_g, eu);
}

/* ---- the EU thread (loop.c) ---- */

struct eu_start {
	struct earth_node *node;
	/* Main's function and arguments: node 0's EU 0 runs its entry fiber
	 * (NULL for every other EU). */
	const struct earth_tfunc *main_fn;
	const void *args;
	size_t size;
	/* The EU this thread is (eu_at(index)). */
	unsigned index;
	/* Main's frame when the node allocated it before the EU threads
	 * started (node 0, k > 1: every EU knows it, eu_state.main_frame);
	 * NULL: EU 0 allocates it as it starts. */
	void *main_frame;
};
void *eu_thread(void *start) EARTH_HIDDEN;
/* Nothing ready for EU eu: steal from a sibling, spin, then block until
 * the SU or a sibling wakes it (the loop's EU_LOOP_IDLE). Returns with
 * something to look at, or without. */
void eu_idle(struct earth_node *n, struct eu_state *eu) EARTH_HIDDEN;

/* Shared memory (eu/dsm.c): a request of a program thread to the SU
 * (dsm/pt.h, enum dsm_req), posted as SU_OP_DSM. */
void eu_post_dsm(unsigned what, uint64_t thread, uint64_t b,
		 uint64_t c) EARTH_HIDDEN;
/* A fiber's split-phase request (enum dsm_req, DSM_R_F_*): the slot the
 * SU signals (a global slot's bits when gslot), the posting fiber in a,
 * b, c and d (su_req.spare) as dsm/pt.h says. */
void eu_post_dsm_fiber(unsigned what, uint64_t slot, bool gslot, uint64_t b,
		       uint64_t c, uint64_t d) EARTH_HIDDEN;
struct dsm_pt;
/* The fiber that runs a program thread (its frame: struct dsm_pt). */
void eu_dsm_run(void *pt) EARTH_HIDDEN;
/* The program thread running now, or NULL. */
struct dsm_pt *eu_dsm_self(void) EARTH_HIDDEN;
/* The EU's fault handler installed (at a fiber's first operation on
 * shared memory too: a fiber that touches a page it did not acquire is
 * named, eu/dsm.c). */
void eu_dsm_faults_on(void) EARTH_HIDDEN;
/* From a program thread: posts request req (enum dsm_req) with b and c,
 * waits until the SU lets the thread go on; its answer. `what` names the
 * call for a misuse message. */
int64_t eu_dsm_call(const char *what, unsigned req, uint64_t b,
		    uint64_t c) EARTH_HIDDEN;
struct dsm_stats;
/* The EU's statistics of shared memory into *st (before eu_dsm_fini). */
void eu_dsm_stats(struct dsm_stats *st) EARTH_HIDDEN;
/* The fault handler's signal stacks given back (node end). */
void eu_dsm_fini(void) EARTH_HIDDEN;

#endif /* EARTH_EU_H */
