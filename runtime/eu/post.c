/* SPDX-License-Identifier: MIT */
/*
 * post.c - the split-phase operations as the EU issues them: check the
 * arguments, write one request record into the open EU->SU message
 * (several small records share a message, queues/req_line.h), return. The
 * EU never waits here; when the ring is full the message is kept in the
 * EU's overflow list and the EU goes on running fibers. SYNC, INCR_SYNC
 * and DATA_SYNC whose slot (and destination) are on this node the EU
 * performs itself when that keeps the ordering rules (eu_local_ok), and
 * so GET_SYNC of 1-8 bytes whose source it can read here (this node's
 * memory, or another node's global segment mapped in this process).
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "eu/eu.h"
#include "gas/gmem.h"
#include "gas/registry.h"
#include "net/net.h"
#include "unit/slot.h"

#include <stdlib.h>
#include <string.h>

struct q_msg *eu_post_spill(struct eu_state *eu)
{
	if (eu->ovf_head + eu->ovf_len == eu->ovf_cap) {
		if (eu->ovf_head > eu->ovf_cap / 2) {
			memmove(eu->ovf, eu->ovf + eu->ovf_head,
				eu->ovf_len * sizeof(*eu->ovf));
			eu->ovf_head = 0;
		} else {
			size_t cap = eu->ovf_cap ? eu->ovf_cap * 2 : 256;
			struct q_msg *p = NULL;
			if (posix_memalign((void **)&p, 64, cap * sizeof(*p)))
				earth_fatal("out of memory: %zu requests wait "
					    "for the SU",
					    eu->ovf_len);
			if (eu->ovf_len)
				memcpy(p, eu->ovf + eu->ovf_head,
				       eu->ovf_len * sizeof(*p));
			free(eu->ovf);
			eu->ovf = p;
			eu->ovf_cap = cap;
			eu->ovf_head = 0;
		}
	}
	eu_count(&eu->req_overflow, 1);
	return &eu->ovf[eu->ovf_head + eu->ovf_len++];
}

uint64_t *eu_line_open(struct eu_state *eu, unsigned words)
{
	/* No message is open while signals are combined or fibers wait on
	 * the EU's own list (they are made ready only when every request
	 * was performed, and a request puts them first). */
	if (q_unlikely(eu_own_work_pending(eu))) {
		eu_own_ready_to_su(eu);
		if (eu_line_room(eu) >= words * sizeof(uint64_t))
			return eu->line_next;
	}
	if (eu->line_next)
		eu_line_close(eu);
	struct q_msg *m = eu_post_begin(eu);
	eu->line_next = m->w;
	return eu->line_next;
}

/* A request that takes a whole message (struct su_req's layout); `where`:
 * spare is the fiber that posts it (REQ_WIDE_WHERE). */
static inline void post_wide(struct eu_state *eu, enum su_op op, unsigned size,
			     unsigned flags, int32_t n, uint64_t slot,
			     uint64_t a, uint64_t b, uint64_t c, uint64_t spare,
			     bool where)
{
	struct q_msg *m = eu_msg_begin(eu);
	eu->req_posted++;
	eu_wide_write(m,
		      req_head(op, size, flags, (uint32_t)n) | REQ_WIDE |
			  (where ? REQ_WIDE_WHERE : 0),
		      slot, a, b, c, spare);
	eu_msg_end(eu, m);
}

/* A request bound for another node (its data, its slot or both): a whole
 * message that names the fiber posting it, so a node that refuses it
 * names the line of source that issued it (base/srctab.h, origins). The
 * local paths never come here. */
static __attribute__((noinline)) void post_remote(enum su_op op, unsigned size,
						  unsigned flags, int32_t n,
						  uint64_t slot, uint64_t a,
						  uint64_t b)
{
	post_wide(eu_self, op, size, flags, n, slot, a, b, 0,
		  (uintptr_t)eu_cur_fiber, true);
}

/* A compact record: the slot (in the head when it fits), then `nargs` of
 * the words a, b. */
static inline __attribute__((always_inline)) void
post_small(struct eu_state *eu, enum su_op op, unsigned size, unsigned flags,
	   uint64_t slot, unsigned nargs, uint64_t a, uint64_t b)
{
	uint64_t *w, *p;
	unsigned words;
	eu->req_posted++;
	if (q_likely(!req_slot_words(flags, slot))) {
		/* The slot rides in the head. */
		words = 1 + nargs;
		w = eu_rec_begin(eu, words);
		w[0] = req_head(op, size, flags, slot);
		p = w + 1;
	} else {
		words = 2 + nargs;
		w = eu_rec_begin(eu, words);
		w[0] = req_head(op, size, flags, 0);
		w[1] = slot;
		p = w + 2;
	}
	if (nargs > 0)
		p[0] = a;
	if (nargs > 1)
		p[1] = b;
	eu_rec_end(eu, w, words);
}

/* SPAWN, INVOKE: no slot, two words. */
static inline void post_pair(struct eu_state *eu, enum su_op op, uint64_t a,
			     uint64_t b)
{
	uint64_t *w = eu_rec_begin(eu, 3);
	eu->req_posted++;
	w[0] = req_head(op, 0, SU_REQ_NOSLOT, 0);
	w[1] = a;
	w[2] = b;
	eu_rec_end(eu, w, 3);
}

/*
 * A request after fibers the EU made ready itself (its own list, and those
 * the combined signals make ready now): they go to the SU first, as SPAWNs.
 * The EU runs its list only when the ready ring is empty, and the fibers
 * this request makes ready come through the ring: they would run first
 * (posting order, docs/architecture.md). Counted once, by the SU.
 */
void eu_own_ready_to_su(struct eu_state *eu)
{
	eu_comb_perform(eu);
	size_t n = eu->own_ready_len, head = eu->own_ready_head;
	eu->own_ready_len = 0;
	eu->own_ready_head = 0;
	eu_count(&eu->fibers_ready, (uint64_t)0 - n);
	for (size_t i = 0; i < n; i++) {
		struct eu_ready e =
		    eu->own_ready[(head + i) & (eu->own_ready_cap - 1)];
		post_pair(eu, SU_OP_SPAWN, (uintptr_t)e.fiber,
			  (uintptr_t)e.frame);
	}
}

void eu_ready_elsewhere(struct eu_state *eu, earth_fiber_fn fiber, void *frame)
{
	struct earth_node *n = &earth_node_g;
	unsigned to = unit_frame_eu(&eu->regs, frame, unit_eus(n));
	struct q_mpsc *q = &n->link[to].sib;
	struct q_msg *m = q_mpsc_reserve(q);
	eu->fibers_elsewhere++;
	if (q_unlikely(!m)) {
		/* Its list is full: through the SU, which counts it when it
		 * makes it ready. */
		post_pair(eu, SU_OP_SPAWN, (uintptr_t)fiber, (uintptr_t)frame);
		return;
	}
	m->w[0] = (uintptr_t)fiber;
	m->w[1] = (uintptr_t)frame;
	q_mpsc_publish(q, m);
	eu_count(&eu->fibers_ready, 1);
	/* Dekker with eu_idle: it stores SLEEPING, fences, then looks at
	 * the list; we published, fence, then look at its word. */
	atomic_thread_fence(memory_order_seq_cst);
	(void)eu_wake_if_asleep(n, to);
}

void eu_ovf_drain(struct eu_state *eu)
{
	/* The open message may be the last of the list: it goes as it is. */
	if (eu->line_next)
		eu_line_close(eu);
	while (eu->ovf_len) {
		struct q_msg *m = q_ring_reserve(eu->req);
		if (!m)
			break;
		memcpy(m->w, eu->ovf[eu->ovf_head].w, sizeof(m->w));
		q_ring_publish(eu->req, m);
		eu->ovf_head++;
		eu->ovf_len--;
	}
	if (!eu->ovf_len)
		eu->ovf_head = 0;
	q_ring_flush(eu->req);
	eu_su_nudge();
}

/* ---- argument checks (cold paths out of line) ---- */

static inline void check_slot(const char *op, const earth_slot *slot)
{
	if (q_unlikely(!slot))
		eu_misuse(op, "null slot: pass the address of an earth_slot "
			      "set up with earth_slot_init (INIT_SYNC)");
}

static EARTH_COLD void bad_node(const char *op, const char *what, uint32_t node)
{
	eu_misuse(op,
		  "%s names node %u, but the job has %u node%s (nodes are "
		  "0..%u)",
		  what, node, earth_node_g.num_nodes,
		  earth_node_g.num_nodes == 1 ? "" : "s",
		  earth_node_g.num_nodes - 1);
}

static inline void check_gptr(const char *op, const char *what, earth_gptr g)
{
	if (q_unlikely(earth_gptr_node(g) >= earth_node_g.num_nodes))
		bad_node(op, what, earth_gptr_node(g));
	if (q_unlikely(!earth_gptr_addr(g)))
		eu_misuse(op, "%s is a null global pointer", what);
}

static inline void check_gslot(const char *op, earth_gslot s)
{
	if (q_unlikely(earth_gslot_node(s) >= earth_node_g.num_nodes))
		bad_node(op, "the slot pointer", earth_gslot_node(s));
	if (q_unlikely(!earth_gslot_addr(s)))
		eu_misuse(op, "null global slot pointer: make one with "
			      "earth_slot_global (SLOT_ADR)");
}

/*
 * Memory a global pointer names on this node must be registered memory
 * (gas/registry.h), whoever performs the access: another node's SU
 * refuses the rest, so the same rule holds here on every node count and
 * a program that breaks it stops at its first such access, on one node
 * too. Checked through the EU's cache of segments (lock-free on a hit).
 */
static EARTH_COLD void unregistered(const char *op, const char *what,
				    uint64_t addr, uint64_t len)
{
	eu_misuse(op,
		  "%s [%#llx, +%llu) is not registered memory: memory that a "
		  "global pointer names must be registered on every node "
		  "count (other nodes refuse the rest): register a buffer "
		  "from malloc or mmap with earth_register_memory (and "
		  "unregister it before freeing it), or use global memory "
		  "(earth_galloc) or a frame field; a C function's local "
		  "variable never qualifies",
		  what, (unsigned long long)addr, (unsigned long long)len);
}

static inline __attribute__((always_inline)) void
check_mine(const char *op, const char *what, const void *addr, uint64_t len)
{
	if (q_unlikely(!reg_mem_cached(&eu_self->regs, (uintptr_t)addr, len)))
		unregistered(op, what, (uintptr_t)addr, len);
}

static EARTH_COLD void get_dst_unregistered(const char *op, const void *dst,
					    unsigned size)
{
	eu_misuse(op,
		  "the destination [%p, +%u) is not registered memory: a GET "
		  "writes it when the value arrives, which may be after this "
		  "fiber ended, and another node's answer into it is refused: "
		  "use a frame field, static data, global memory "
		  "(earth_galloc) or a buffer registered with "
		  "earth_register_memory; a C function's local variable never "
		  "qualifies",
		  dst, size);
}

/* A GET's destination: registered memory on every node count, as the
 * answer from another node (su/remote.c) requires. */
static inline __attribute__((always_inline)) void
check_get_dst(const char *op, const void *dst, unsigned size)
{
	if (q_unlikely(!reg_mem_cached(&eu_self->regs, (uintptr_t)dst, size)))
		get_dst_unregistered(op, dst, size);
}

static EARTH_COLD void not_a_slot_here(const char *op, const void *s)
{
	eu_misuse(op,
		  "the slot pointer names %p on this node, which is not an "
		  "aligned slot in registered memory: make global slot "
		  "pointers with earth_slot_global (SLOT_ADR) of a slot in a "
		  "frame, in static data or in registered memory",
		  s);
}

/* The slot of a global slot pointer naming this node: a slot as another
 * node's SU would check it (su/remote.c). */
static inline void check_slot_mine(const char *op, const earth_slot *s)
{
	if (q_unlikely(
		((uintptr_t)s & 7) ||
		!reg_mem_cached(&eu_self->regs, (uintptr_t)s, sizeof(*s))))
		not_a_slot_here(op, s);
}

/* A global slot pointer (checked by check_gslot): its slot if it names
 * this node. */
static inline void check_gslot_here(const char *op, earth_gslot g)
{
	if (earth_gslot_node(g) == earth_node_g.id)
		check_slot_mine(op, earth_gslot_addr(g));
}

/* ---- INIT_SYNC, global pointers ---- */

void earth_slot_init(earth_slot *slot, int32_t count, int32_t reset,
		     earth_fiber_fn fiber, void *frame)
{
	check_slot("INIT_SYNC", slot);
	if (q_unlikely(count < 1))
		eu_misuse("INIT_SYNC",
			  "count %d for slot %p: a slot needs "
			  "count >= 1 (use SPAWN to make a fiber ready now)",
			  count, (void *)slot);
	if (q_unlikely(reset < 0))
		eu_misuse("INIT_SYNC",
			  "reset %d for slot %p: use reset >= 1 "
			  "to re-arm the slot, 0 for a one-shot slot",
			  reset, (void *)slot);
	if (q_unlikely(!fiber))
		eu_misuse("INIT_SYNC", "null fiber for slot %p", (void *)slot);
	/* Signals the fiber gave before count against the old arming. */
	if (eu_in_fiber)
		eu_comb_perform(eu_self);
	slot->count = count;
	slot->reset = reset;
	slot->fiber = fiber;
	slot->frame = frame;
	/* Before any signal can reach the slot (a later post); last, so the
	 * rare miss is a tail call. */
	reg_fiber_add(fiber);
}

earth_gptr earth_to_global(const void *addr)
{
	return earth_gptr_make(earth_node_g.id, addr);
}

earth_gslot earth_slot_global(earth_slot *slot)
{
	return (earth_gslot){earth_gptr_make(earth_node_g.id, slot).bits};
}

/* ---- slots signalled on the EU ---- */

/*
 * May the EU perform a signal to a slot of this node, a SPAWN or an INVOKE
 * on this node itself, now? Only in a node mode that allows it
 * (eu_state.local_sig), and only once the SU has performed every request
 * the EU posted before (req_posted == req_seen; the loop reloads req_seen
 * after a fiber and when it takes a ready message): requests are performed in
 * the order they were posted, and a fiber this makes ready runs after every
 * ready message the SU published for them (docs/architecture.md, "Ordering
 * rules").
 */
static inline bool eu_local_ok(const struct eu_state *eu)
{
	return q_likely(eu->local_sig) && eu->req_posted == eu->req_seen;
}

static inline bool gslot_here(earth_gslot g)
{
	return earth_gslot_node(g) == earth_node_g.id;
}

/* One more signal to the slot signalled last (eu_state.comb_slot). Three plain
 * stores: storing the name and the flag only when they change (a load and a
 * branch each) measured slower. */
static inline __attribute__((always_inline)) void combine(struct eu_state *eu,
							  const char *op)
{
	eu->comb_count++;
	eu->comb_op = op;
	eu->posted = true;
}

static inline __attribute__((always_inline)) void
signal_first(struct eu_state *eu, earth_slot *s, const char *op)
{
	eu_comb_perform(eu);
	eu_count(&eu->slot_signals, 1);
	if (slot_count_down(s, op))
		eu_ready_fired(eu, slot_checked_fiber(s, op), s->frame);
	eu->comb_slot = s;
}

/*
 * A signal the EU performs: the count goes down with the SU's
 * compare-and-swap (unit/slot.h), the same checks and errors; at zero the
 * fiber joins the EU's own ready list. The signals that follow to the same
 * slot are combined: one add here, and the count goes down by all of them
 * in one compare-and-swap when the EU does anything they must come before
 * (eu_comb_perform). A fiber that signals one slot in a loop, a GET or DATA
 * per element, pays one atomic operation, not one each. Nothing can tell
 * the difference: the fibers they make ready join the EU's own list, which
 * runs only after this fiber ends, in the same order; the SU's signals to
 * the same slot meet an exact count either way.
 */
static inline __attribute__((always_inline)) void
signal_here(struct eu_state *eu, earth_slot *s, const char *op)
{
	if (eu->comb_slot == s) {
		combine(eu, op);
	} else {
		signal_first(eu, s, op);
	}
}

__attribute__((noinline)) void eu_comb_perform_slow(struct eu_state *eu)
{
	earth_slot *s = eu->comb_slot;
	uint64_t k = eu->comb_count;
	eu->comb_count = 0;
	eu_count(&eu->slot_signals, k);
	while (k) {
		bool fired;
		k -= slot_count_take(s, k, &fired, eu->comb_op);
		if (fired)
			eu_ready_fired(eu, slot_checked_fiber(s, eu->comb_op),
				       s->frame);
	}
}

void eu_ready_grow(struct eu_state *eu)
{
	size_t cap = eu->own_ready_cap ? eu->own_ready_cap * 2 : 256;
	struct eu_ready *p = malloc(cap * sizeof(*p));
	if (!p)
		earth_fatal("out of memory: %zu fibers made ready on the EU "
			    "wait to run",
			    eu->own_ready_len);
	for (size_t i = 0; i < eu->own_ready_len; i++)
		p[i] = eu->own_ready[(eu->own_ready_head + i) &
				     (eu->own_ready_cap - 1)];
	free(eu->own_ready);
	eu->own_ready = p;
	eu->own_ready_cap = cap;
	eu->own_ready_head = 0;
}

/* ---- SYNC, INCR_SYNC, SPAWN ---- */

static inline void post_sync(enum su_op op, unsigned flags, int32_t n,
			     uint64_t slot)
{
	struct eu_state *eu = eu_self;
	if (op == SU_OP_SYNC)
		post_small(eu, op, 0, flags, slot, 0, 0, 0);
	else
		post_small(eu, op, 0, flags, slot, 1, (uint32_t)n, 0);
}

/*
 * The common signal, tested first with no call on its way (the operations'
 * fast paths below): the compiler then saves no registers for it, and each
 * push would be a store. A signal that combines with the ones before it,
 * or a first one whose fiber the registry finds at its hash position,
 * with room on the EU's list and nothing combined waiting; false, having
 * done nothing, otherwise (the operation's full path, which says what is
 * wrong). s is not null.
 */
static inline __attribute__((always_inline)) bool
fast_sig_ok(const struct eu_state *eu, const earth_slot *s)
{
	if (eu->comb_slot == s)
		return true;
	/* With siblings, the fiber may be another EU's (eu_ready_fired). */
	return !eu->comb_count && eu->own_ready_len < eu->own_ready_cap &&
	       !eu->siblings && !((uintptr_t)s & 7) && s->fiber &&
	       reg_fiber_hit(s->fiber);
}

static inline __attribute__((always_inline)) void
fast_sig(struct eu_state *eu, earth_slot *s, const char *op)
{
	if (eu->comb_slot == s) {
		combine(eu, op);
		return;
	}
	eu_count(&eu->slot_signals, 1);
	if (slot_count_down(s, op))
		eu_ready_put(eu, s->fiber, s->frame);
	eu->comb_slot = s;
}

/* The slot of an operation's slot argument when the fast path may signal
 * it: a local slot, or a global one naming a slot of this node in memory
 * the EU's cache holds; NULL otherwise. */
static inline __attribute__((always_inline)) earth_slot *
fast_slot(const struct eu_state *eu, unsigned flags, uint64_t slot)
{
	if (!(flags & SU_REQ_GSLOT))
		return (earth_slot *)(uintptr_t)slot;
	earth_gslot g = {slot};
	earth_slot *s = earth_gslot_addr(g);
	if (!gslot_here(g) || !s ||
	    !reg_mem_hit(&eu->regs, (uintptr_t)s, sizeof(*s)))
		return NULL;
	return s;
}

static inline __attribute__((always_inline)) bool fast_ok(struct eu_state *eu,
							  const earth_slot *s)
{
	return q_likely(eu_in_fiber) && s && eu_local_ok(eu) &&
	       fast_sig_ok(eu, s);
}

static __attribute__((noinline)) void sync_full(earth_slot *slot)
{
	EU_CHECK_IN_FIBER("SYNC");
	check_slot("SYNC", slot);
	struct eu_state *eu = eu_self;
	if (eu_local_ok(eu))
		signal_here(eu, slot, su_op_names[SU_OP_SYNC]);
	else
		post_sync(SU_OP_SYNC, 0, 0, (uintptr_t)slot);
	eu_count(&eu->ops[EARTH_OP_SYNC], 1);
}

void earth_sync(earth_slot *slot)
{
	struct eu_state *eu = eu_self;
	if (fast_ok(eu, slot)) {
		fast_sig(eu, slot, su_op_names[SU_OP_SYNC]);
		eu_count(&eu->ops[EARTH_OP_SYNC], 1);
		return;
	}
	sync_full(slot);
}

void earth_rsync(earth_gslot slot)
{
	EU_CHECK_IN_FIBER("RSYNC");
	struct eu_state *eu = eu_self;
	if (q_unlikely(!gslot_here(slot))) {
		check_gslot("RSYNC", slot);
		post_remote(SU_OP_SYNC, 0, SU_REQ_GSLOT, 0, slot.bits, 0, 0);
		eu_count(&eu->ops[EARTH_OP_RSYNC], 1);
		return;
	}
	if (q_unlikely(!earth_gslot_addr(slot)))
		check_gslot("RSYNC", slot);
	check_slot_mine("RSYNC", earth_gslot_addr(slot));
	if (eu_local_ok(eu))
		signal_here(eu, earth_gslot_addr(slot),
			    su_op_names[SU_OP_SYNC]);
	else
		post_sync(SU_OP_SYNC, SU_REQ_GSLOT, 0, slot.bits);
	eu_count(&eu->ops[EARTH_OP_RSYNC], 1);
}

void earth_incr_sync(earth_slot *slot, int32_t n)
{
	EU_CHECK_IN_FIBER("INCR_SYNC");
	check_slot("INCR_SYNC", slot);
	if (q_unlikely(n < 1))
		eu_misuse("INCR_SYNC", "increment %d: must be >= 1", n);
	struct eu_state *eu = eu_self;
	if (eu_local_ok(eu)) {
		eu_comb_perform(eu);
		slot_incr(slot, n, su_op_names[SU_OP_INCR_SYNC]);
	} else {
		post_sync(SU_OP_INCR_SYNC, 0, n, (uintptr_t)slot);
	}
	eu_count(&eu->ops[EARTH_OP_INCR_SYNC], 1);
}

void earth_incr_rsync(earth_gslot slot, int32_t n)
{
	EU_CHECK_IN_FIBER("INCR_SYNC");
	check_gslot("INCR_SYNC", slot);
	check_gslot_here("INCR_SYNC", slot);
	if (q_unlikely(n < 1))
		eu_misuse("INCR_SYNC", "increment %d: must be >= 1", n);
	struct eu_state *eu = eu_self;
	if (q_unlikely(!gslot_here(slot)))
		post_remote(SU_OP_INCR_SYNC, 0, SU_REQ_GSLOT, n, slot.bits, 0,
			    0);
	else if (eu_local_ok(eu)) {
		eu_comb_perform(eu);
		slot_incr(earth_gslot_addr(slot), n,
			  su_op_names[SU_OP_INCR_SYNC]);
	} else
		post_sync(SU_OP_INCR_SYNC, SU_REQ_GSLOT, n, slot.bits);
	eu_count(&eu->ops[EARTH_OP_INCR_SYNC], 1);
}

void earth_spawn(earth_fiber_fn fiber, void *frame)
{
	EU_CHECK_IN_FIBER("SPAWN");
	if (q_unlikely(!fiber))
		eu_misuse("SPAWN", "null fiber");
	struct eu_state *eu = eu_self;
	if (eu_local_ok(eu)) {
		/* After the signals combined before; onto this EU's list, or
		 * handed to the EU of another's frame, as a slot's fiber. */
		eu_comb_perform(eu);
		eu_ready_fired(eu, fiber, frame);
	} else {
		post_pair(eu, SU_OP_SPAWN, (uintptr_t)fiber, (uintptr_t)frame);
	}
	eu_count(&eu->ops[EARTH_OP_SPAWN], 1);
}

/* ---- BLKMOV ---- */

/* Is a request with these flags and slot bits bound for another node
 * through its slot? (Constant false for the variants with a local slot.) */
static inline bool slot_remote(unsigned flags, uint64_t slot)
{
	return (flags & SU_REQ_GSLOT) && !gslot_here((earth_gslot){slot});
}

/* A GET's, DATA's or BLKMOV's slot, on this node (an earth_slot *, or a global
 * slot with SU_REQ_GSLOT). */
static inline earth_slot *slot_here(unsigned flags, uint64_t slot)
{
	return (flags & SU_REQ_GSLOT) ? earth_gslot_addr((earth_gslot){slot})
				      : (earth_slot *)(uintptr_t)slot;
}

/*
 * A block move the EU performs itself: both ends in this node's memory, at
 * most EARTH_EU_BLKMOV_MAX bytes (a copy that costs the EU less than
 * posting the request), a slot on this node, and the EU may signal it
 * (eu_local_ok: every request posted before has been performed). The
 * bytes land before the signal, as the SU's memmove does.
 */
static inline __attribute__((always_inline)) bool
blkmov_here_ok(const struct eu_state *eu, earth_gptr src, earth_gptr dst,
	       size_t n)
{
	return n <= EARTH_EU_BLKMOV_MAX &&
	       earth_gptr_node(src) == earth_node_g.id &&
	       earth_gptr_node(dst) == earth_node_g.id && eu_local_ok(eu);
}

static void blkmov_here(struct eu_state *eu, earth_gptr src, earth_gptr dst,
			size_t n, earth_slot *slot)
{
	memmove(earth_gptr_addr(dst), earth_gptr_addr(src), n);
	eu_count(&eu->ops[EARTH_OP_BLKMOV_SYNC], 1);
	signal_here(eu, slot, su_op_names[SU_OP_BLKMOV_SYNC]);
}

static inline void post_blkmov(const char *op, earth_gptr src, earth_gptr dst,
			       size_t n, unsigned flags, uint64_t slot)
{
	EU_CHECK_IN_FIBER(op);
	check_gptr(op, "the source", src);
	check_gptr(op, "the destination", dst);
	if (earth_gptr_node(src) == earth_node_g.id)
		check_mine(op, "the source", earth_gptr_addr(src), n);
	if (earth_gptr_node(dst) == earth_node_g.id)
		check_mine(op, "the destination", earth_gptr_addr(dst), n);
	struct eu_state *eu = eu_self;
	if (!slot_remote(flags, slot) && blkmov_here_ok(eu, src, dst, n)) {
		blkmov_here(eu, src, dst, n, slot_here(flags, slot));
		return;
	}
	/* The posting fiber rides along (a whole message anyway): used only
	 * when the move involves another node. */
	post_wide(eu, SU_OP_BLKMOV_SYNC, 0, flags, 0, slot, src.bits, dst.bits,
		  n, (uintptr_t)eu_cur_fiber, true);
	eu_count(&eu->ops[EARTH_OP_BLKMOV_SYNC], 1);
	/* Statistics: a read from another node into this one. */
	if (q_unlikely(acct_on) && earth_gptr_node(src) != earth_node_g.id &&
	    earth_gptr_node(dst) == earth_node_g.id)
		acct_read_posted();
}

/* An end of a block move that this node holds is in a segment the EU's
 * cache holds; one of another node is checked by the SU. */
static inline __attribute__((always_inline)) bool blkmov_end_ok(earth_gptr g,
								size_t n)
{
	uint64_t a = (uintptr_t)earth_gptr_addr(g);
	if (earth_gptr_node(g) != earth_node_g.id)
		return earth_gptr_node(g) < earth_node_g.num_nodes && a;
	return reg_mem_hit(&eu_self->regs, a, n);
}

enum fast { FAST_NO, FAST_DONE, FAST_WAKE, FAST_HERE };

/*
 * The common BLKMOV_SYNC without a call on its way: every check passes in
 * the EU's cache, no message is open, nothing waits before it, the ring
 * has credits. A call the path might make would have the compiler save
 * registers at the entry, and every push is a store that leaves the core
 * behind the ring slot's (eu_state.line_next). FAST_NO when anything needs more
 * (nothing done: post_blkmov takes it, and says what is wrong); FAST_WAKE
 * when the SU must be woken.
 */
static inline __attribute__((always_inline)) enum fast
blkmov_fast(earth_gptr src, earth_gptr dst, size_t n, unsigned flags,
	    uint64_t slot)
{
	struct eu_state *eu = eu_self;
	if (q_unlikely(!eu_in_fiber || !slot))
		return FAST_NO;
	if (q_unlikely(!blkmov_end_ok(src, n) || !blkmov_end_ok(dst, n)))
		return FAST_NO;
	if (!(flags & SU_REQ_GSLOT) && blkmov_here_ok(eu, src, dst, n))
		return FAST_HERE;
	if (q_unlikely(acct_on))
		return FAST_NO;
	if (q_unlikely(eu->line_next || eu->comb_count || eu->own_ready_len ||
		       eu->ovf_len))
		return FAST_NO;
	struct q_msg *m = q_ring_reserve_now(eu->req);
	if (q_unlikely(!m))
		return FAST_NO;
	eu->posted = true;
	eu->req_posted++;
	eu_wide_write(m,
		      req_head(SU_OP_BLKMOV_SYNC, 0, flags, 0) | REQ_WIDE |
			  REQ_WIDE_WHERE,
		      slot, src.bits, dst.bits, n, (uintptr_t)eu_cur_fiber);
	eu_count(&eu->ops[EARTH_OP_BLKMOV_SYNC], 1);
	if (q_ring_publish(eu->req, m) && eu_su_asleep())
		return FAST_WAKE;
	return FAST_DONE;
}

static __attribute__((noinline)) void
blkmov_sync_slow(earth_gptr src, earth_gptr dst, size_t n, earth_slot *slot)
{
	check_slot("BLKMOV_SYNC", slot);
	post_blkmov("BLKMOV_SYNC", src, dst, n, 0, (uintptr_t)slot);
}

void earth_blkmov_sync(earth_gptr src, earth_gptr dst, size_t n,
		       earth_slot *slot)
{
	enum fast f = blkmov_fast(src, dst, n, 0, (uintptr_t)slot);
	if (q_likely(f == FAST_DONE))
		return;
	if (f == FAST_HERE)
		blkmov_here(eu_self, src, dst, n, slot);
	else if (f == FAST_WAKE)
		earth_su_wake(&earth_node_g);
	else
		blkmov_sync_slow(src, dst, n, slot);
}

void earth_blkmov_rsync(earth_gptr src, earth_gptr dst, size_t n,
			earth_gslot slot)
{
	check_gslot("BLKMOV_RSYNC", slot);
	check_gslot_here("BLKMOV_RSYNC", slot);
	post_blkmov("BLKMOV_RSYNC", src, dst, n, SU_REQ_GSLOT, slot.bits);
}

/* ---- typed GET_SYNC / DATA_SYNC ---- */

static EARTH_COLD void misplaced_source(const char *op, earth_gptr src)
{
	uint64_t a = (uintptr_t)earth_gptr_addr(src);
	eu_misuse(op,
		  "the source names node %u, but its address %#llx lies in "
		  "node %llu's global memory segment: no node serves it (make "
		  "global pointers to global memory with earth_garray_at, or "
		  "keep the one earth_galloc returned)",
		  earth_gptr_node(src), (unsigned long long)a,
		  (unsigned long long)((a - GMEM_BASE) / gmem_g.seg));
}

/*
 * A GET from another node's memory, or into a slot there. Performed by
 * the EU when the source is another node's global segment mapped here (the
 * direct table, with the SU's bounds check), the slot is here and the EU
 * may signal it (eu_local_ok: every request posted before has
 * been performed, so the source holds what the SU would read); otherwise
 * a whole-message request naming its fiber. A source that names one node
 * but lies in another's segment is refused here, in the fiber's terms.
 */
static __attribute__((noinline)) void get_remote(const char *op, earth_gptr src,
						 void *dst, unsigned size,
						 unsigned flags, uint64_t slot)
{
	check_gptr(op, "the source", src);
	if (q_unlikely(!dst))
		eu_misuse(op, "null destination address");
	check_get_dst(op, dst, size);
	struct eu_state *eu = eu_self;
	uint32_t node = earth_gptr_node(src);
	uint64_t a = (uintptr_t)earth_gptr_addr(src);
	if (node != earth_node_g.id) {
		const void *from = gmem_direct_ptr(node, a, size, false);
		if (!from && q_unlikely(gmem_misplaced(node, a)))
			misplaced_source(op, src);
		if (from && !slot_remote(flags, slot) && eu_local_ok(eu)) {
			eu->gets_direct++;
			req_value_copy(dst, from, size);
			signal_here(eu, slot_here(flags, slot),
				    su_op_names[SU_OP_GET_SYNC]);
			return;
		}
	} else {
		check_mine(op, "the source", (const void *)(uintptr_t)a, size);
	}
	post_remote(SU_OP_GET_SYNC, size, flags, 0, slot, src.bits,
		    (uintptr_t)dst);
	if (q_unlikely(acct_on) && node != earth_node_g.id)
		acct_read_posted();
}

/*
 * GET_SYNC: performed by the EU when it may signal the slot itself
 * (eu_local_ok, as above) and the source is this node's memory (read
 * where it is, as the SU reads it); the value lands before the signal, as
 * with a local DATA_SYNC. Otherwise a request to the SU.
 */
static inline __attribute__((always_inline)) void
post_get(const char *op, earth_gptr src, void *dst, unsigned size,
	 unsigned flags, uint64_t slot)
{
	EU_CHECK_IN_FIBER(op);
	struct eu_state *eu = eu_self;
	eu_count(&eu->ops[EARTH_OP_GET_SYNC], 1);
	if (q_unlikely(earth_gptr_node(src) != earth_node_g.id ||
		       slot_remote(flags, slot))) {
		get_remote(op, src, dst, size, flags, slot);
		return;
	}
	if (q_unlikely(!earth_gptr_addr(src)))
		check_gptr(op, "the source", src);
	if (q_unlikely(!dst))
		eu_misuse(op, "null destination address");
	check_mine(op, "the source", earth_gptr_addr(src), size);
	check_get_dst(op, dst, size);
	if (eu_local_ok(eu)) {
		req_value_copy(dst, earth_gptr_addr(src), size);
		signal_here(eu, slot_here(flags, slot),
			    su_op_names[SU_OP_GET_SYNC]);
		return;
	}
	post_small(eu, SU_OP_GET_SYNC, size, flags, slot, 2, src.bits,
		   (uintptr_t)dst);
}

static inline __attribute__((always_inline)) void
post_data(const char *op, uint64_t value, earth_gptr dst, unsigned size,
	  unsigned flags, uint64_t slot)
{
	EU_CHECK_IN_FIBER(op);
	struct eu_state *eu = eu_self;
	eu_count(&eu->ops[EARTH_OP_DATA_SYNC], 1);
	if (q_unlikely(earth_gptr_node(dst) != earth_node_g.id ||
		       slot_remote(flags, slot))) {
		/* To another node's memory, or signalling a slot there. */
		check_gptr(op, "the destination", dst);
		if (earth_gptr_node(dst) == earth_node_g.id)
			check_mine(op, "the destination", earth_gptr_addr(dst),
				   size);
		post_remote(SU_OP_DATA_SYNC, size, flags, 0, slot, value,
			    dst.bits);
		return;
	}
	if (q_unlikely(!earth_gptr_addr(dst)))
		check_gptr(op, "the destination", dst);
	check_mine(op, "the destination", earth_gptr_addr(dst), size);
	if (eu_local_ok(eu)) {
		/* The value lands before the signal: a fiber the signal
		 * makes ready, here or on the SU, sees it (acq_rel count). */
		req_value_copy(earth_gptr_addr(dst), &value, size);
		signal_here(eu, slot_here(flags, slot),
			    su_op_names[SU_OP_DATA_SYNC]);
	} else {
		post_small(eu, SU_OP_DATA_SYNC, size, flags, slot, 2, value,
			   dst.bits);
	}
}

static inline uint64_t bits_of(const void *v, size_t size)
{
	uint64_t b = 0;
	memcpy(&b, v, size);
	return b;
}

/* GET_SYNC of this node's memory, into a slot the fast path may signal
 * (above): the slot, or NULL. */
static inline __attribute__((always_inline)) earth_slot *
get_fast(struct eu_state *eu, earth_gptr src, const void *dst, unsigned size,
	 unsigned flags, uint64_t slot)
{
	uint64_t a = (uintptr_t)earth_gptr_addr(src);
	earth_slot *s = fast_slot(eu, flags, slot);
	if (fast_ok(eu, s) && earth_gptr_node(src) == earth_node_g.id && a &&
	    dst && reg_mem_hit2(&eu->regs, a, (uintptr_t)dst, size))
		return s;
	return NULL;
}

/* DATA_SYNC into this node's memory, likewise. */
static inline __attribute__((always_inline)) earth_slot *
data_fast(struct eu_state *eu, earth_gptr dst, unsigned size, unsigned flags,
	  uint64_t slot)
{
	uint64_t a = (uintptr_t)earth_gptr_addr(dst);
	earth_slot *s = fast_slot(eu, flags, slot);
	if (fast_ok(eu, s) && earth_gptr_node(dst) == earth_node_g.id && a &&
	    reg_mem_hit(&eu->regs, a, size))
		return s;
	return NULL;
}

/* A GET's or DATA's slot argument: a local slot, or with SU_REQ_GSLOT a
 * global one. */
static inline void check_slot_arg(const char *op, unsigned flags, uint64_t slot)
{
	if (flags & SU_REQ_GSLOT) {
		check_gslot(op, (earth_gslot){slot});
		check_gslot_here(op, (earth_gslot){slot});
	} else {
		check_slot(op, (earth_slot *)(uintptr_t)slot);
	}
}

static __attribute__((noinline)) void get_full(const char *op, earth_gptr src,
					       void *dst, unsigned size,
					       unsigned flags, uint64_t slot)
{
	check_slot_arg(op, flags, slot);
	post_get(op, src, dst, size, flags, slot);
}

static __attribute__((noinline)) void data_full(const char *op, uint64_t value,
						earth_gptr dst, unsigned size,
						unsigned flags, uint64_t slot)
{
	check_slot_arg(op, flags, slot);
	post_data(op, value, dst, size, flags, slot);
}

/* The typed operations: the fast path, else the full one. */
static inline __attribute__((always_inline)) void
get_op(const char *op, earth_gptr src, void *dst, unsigned size, unsigned flags,
       uint64_t slot)
{
	struct eu_state *eu = eu_self;
	earth_slot *s = get_fast(eu, src, dst, size, flags, slot);
	if (s) {
		req_value_copy(dst, earth_gptr_addr(src), size);
		fast_sig(eu, s, su_op_names[SU_OP_GET_SYNC]);
		eu_count(&eu->ops[EARTH_OP_GET_SYNC], 1);
		return;
	}
	get_full(op, src, dst, size, flags, slot);
}

static inline __attribute__((always_inline)) void
data_op(const char *op, uint64_t value, earth_gptr dst, unsigned size,
	unsigned flags, uint64_t slot)
{
	struct eu_state *eu = eu_self;
	earth_slot *s = data_fast(eu, dst, size, flags, slot);
	if (s) {
		req_value_copy(earth_gptr_addr(dst), &value, size);
		fast_sig(eu, s, su_op_names[SU_OP_DATA_SYNC]);
		eu_count(&eu->ops[EARTH_OP_DATA_SYNC], 1);
		return;
	}
	data_full(op, value, dst, size, flags, slot);
}

#define TYPED_OPS(sfx, T)                                                      \
	void earth_get_sync_##sfx(earth_gptr src, T *dst, earth_slot *slot)    \
	{                                                                      \
		get_op("GET_SYNC_" #sfx, src, dst, sizeof(T), 0,               \
		       (uintptr_t)slot);                                       \
	}                                                                      \
	void earth_get_rsync_##sfx(earth_gptr src, T *dst, earth_gslot slot)   \
	{                                                                      \
		get_op("GET_RSYNC_" #sfx, src, dst, sizeof(T), SU_REQ_GSLOT,   \
		       slot.bits);                                             \
	}                                                                      \
	void earth_data_sync_##sfx(T value, earth_gptr dst, earth_slot *slot)  \
	{                                                                      \
		data_op("DATA_SYNC_" #sfx, bits_of(&value, sizeof(T)), dst,    \
			sizeof(T), 0, (uintptr_t)slot);                        \
	}                                                                      \
	void earth_data_rsync_##sfx(T value, earth_gptr dst, earth_gslot slot) \
	{                                                                      \
		data_op("DATA_RSYNC_" #sfx, bits_of(&value, sizeof(T)), dst,   \
			sizeof(T), SU_REQ_GSLOT, slot.bits);                   \
	}
TYPED_OPS(c, char)
TYPED_OPS(s, short)
TYPED_OPS(i, int)
TYPED_OPS(l, long)
TYPED_OPS(f, float)
TYPED_OPS(d, double)
TYPED_OPS(g, earth_gptr)
#undef TYPED_OPS

/* ---- collectives ---- */

static inline void post_coll(const char *op, unsigned type, int32_t rop,
			     uint64_t value, void *result, earth_slot *done)
{
	EU_CHECK_IN_FIBER(op);
	check_slot(op, done);
	if (q_unlikely(type && (rop < EARTH_SUM || rop > EARTH_MAX)))
		eu_misuse(op,
			  "reduction %d: use EARTH_SUM, EARTH_MIN or "
			  "EARTH_MAX",
			  rop);
	if (q_unlikely(type && !result))
		eu_misuse(op, "null result address");
	struct eu_state *eu = eu_self;
	post_wide(eu, SU_OP_COLL, type, 0, rop, (uintptr_t)done, value,
		  (uintptr_t)result, 0, 0, false);
	eu_count(&eu->ops[EARTH_OP_COLLECTIVE], 1);
	if (q_unlikely(acct_on))
		acct_coll_posted();
}

void earth_barrier(earth_slot *done)
{
	post_coll("BARRIER", 0, 0, 0, NULL, done);
}

void earth_allreduce_i(int value, enum earth_reduce_op op, int *result,
		       earth_slot *done)
{
	post_coll("ALLREDUCE_I", 1, op, (uint64_t)(int64_t)value, result, done);
}

void earth_allreduce_l(long value, enum earth_reduce_op op, long *result,
		       earth_slot *done)
{
	post_coll("ALLREDUCE_L", 2, op, (uint64_t)value, result, done);
}

void earth_allreduce_d(double value, enum earth_reduce_op op, double *result,
		       earth_slot *done)
{
	post_coll("ALLREDUCE_D", 3, op, bits_of(&value, 8), result, done);
}

/* ---- INVOKE, TOKEN, END_FUNCTION ---- */

static inline __attribute__((always_inline)) void *
new_frame(struct eu_state *eu, const char *op, const struct earth_tfunc *f,
	  const void *args, size_t size)
{
	if (q_unlikely(!f || !f->entry))
		eu_misuse(op, "null threaded function (define it with "
			      "EARTH_THREADED_FUNCTION)");
	if (q_unlikely(f->args_size > f->frame_size))
		eu_misuse(op,
			  "%s declares %u bytes of arguments but a %u-byte "
			  "frame: the frame must start with the argument block",
			  f->name, f->args_size, f->frame_size);
	if (q_unlikely(size != f->args_size))
		eu_misuse(op, "%zu bytes of arguments for %s, which takes %u",
			  size, f->name, f->args_size);
	if (q_unlikely(size && !args))
		eu_misuse(op, "null argument block for %s", f->name);
	void *frame = eu_frame_alloc(eu, f);
	eu_copy_args(frame, args, size);
	return frame;
}

/* INVOKE on another node: the arguments travel, the frame is made there.
 * Not cold: pipelined remote INVOKEs are a hot path of multi-node jobs. */
static void invoke_remote(uint32_t node, const struct earth_tfunc *f,
			  const void *args, size_t size)
{
	if (!f || !f->entry)
		eu_misuse("INVOKE", "null threaded function (define it with "
				    "EARTH_THREADED_FUNCTION)");
	if (size != f->args_size || (size && !args))
		eu_misuse("INVOKE",
			  "%zu bytes of arguments for %s, which "
			  "takes %u",
			  size, f->name, f->args_size);
	if (reg_tfunc_id(f) < 0)
		eu_misuse("INVOKE",
			  "%s is not in the table of threaded "
			  "functions: define it with EARTH_THREADED_FUNCTION "
			  "so every node numbers it the same way",
			  f->name);
	struct eu_state *eu = eu_self;
	if (size <= SU_REQ_INLINE_MAX) {
		/* Small arguments ride in the request: no allocation here,
		 * no free on the SU (the common spawn and call cases). */
		uint64_t w[4] = {0, 0, 0, 0};
		if (size)
			memcpy(w, args, size);
		post_wide(eu, SU_OP_INVOKE_REMOTE, 0,
			  SU_REQ_NOSLOT | SU_REQ_INLINE, (int32_t)node, w[0],
			  (uintptr_t)f, w[1], w[2], w[3], false);
		return;
	}
	uint32_t most = net_msg_max(earth_node_g.net);
	if (q_unlikely(size > most))
		eu_misuse(
		    "INVOKE",
		    "%s takes %zu bytes of arguments, more than a message "
		    "between nodes carries (%u bytes; over shm a quarter "
		    "of earthrun's --ring-kb, at most 64 KiB): give it a "
		    "global pointer to the data and move them with "
		    "BLKMOV_SYNC",
		    f->name, size, most);
	void *copy = malloc(size);
	if (!copy)
		earth_fatal("out of memory for INVOKE arguments");
	memcpy(copy, args, size);
	post_wide(eu, SU_OP_INVOKE_REMOTE, 0, SU_REQ_NOSLOT, 0, 0, (uintptr_t)f,
		  (uintptr_t)copy, node, 0, false);
}

void earth_invoke(uint32_t node, const struct earth_tfunc *f, const void *args,
		  size_t size)
{
	EU_CHECK_IN_FIBER("INVOKE");
	if (q_unlikely(node >= earth_node_g.num_nodes))
		bad_node("INVOKE", "the target", node);
	if (q_unlikely(node != earth_node_g.id)) {
		invoke_remote(node, f, args, size);
		eu_count(&eu_self->ops[EARTH_OP_INVOKE], 1);
		return;
	}
	struct eu_state *eu = eu_self;
	void *frame = new_frame(eu, "INVOKE", f, args, size);
	if (eu_local_ok(eu))
		eu_ready_local(eu, f->entry, frame);
	else
		post_pair(eu, SU_OP_INVOKE, (uintptr_t)f, (uintptr_t)frame);
	eu_count(&eu->ops[EARTH_OP_INVOKE], 1);
}

static __attribute__((noinline)) void token_push(void *frame)
{
	struct eu_state *eu = eu_self;
	if (q_unlikely(!deque_push(eu->tokens, frame)))
		eu_misuse("TOKEN",
			  "%zu tokens already wait on node %u, the most "
			  "EARTH_TOKEN_DEQUE_MAX allows (or out of memory): "
			  "post fewer tokens before running them, or rebuild "
			  "with a larger EARTH_TOKEN_DEQUE_MAX",
			  deque_size(eu->tokens), earth_node_g.id);
	eu_token_pushed(eu);
	eu_count(&eu->ops[EARTH_OP_TOKEN], 1);
}

static __attribute__((noinline)) void token_full(const struct earth_tfunc *f,
						 const void *args, size_t size)
{
	EU_CHECK_IN_FIBER("TOKEN");
	token_push(new_frame(eu_self, "TOKEN", f, args, size));
}

/*
 * TOKEN without a call on its way (see fast_sig_ok): a function whose
 * frame class has a free frame, arguments of 4 to 64 bytes or none, room
 * on the deque; else the full path, which says what is wrong.
 */
void earth_token(const struct earth_tfunc *f, const void *args, size_t size)
{
	struct eu_state *eu = eu_self;
	if (q_likely(eu_in_fiber) && f && f->entry && size == f->args_size &&
	    size <= f->frame_size && (size == 0 || (args && size >= 4)) &&
	    size <= 64) {
		unsigned cls =
		    eu_frame_class(f->frame_size + sizeof(struct frame_hdr));
		struct frame_hdr *h =
		    cls < EARTH_FRAME_CLASSES ? eu->free_list[cls] : NULL;
		if (q_likely(h)) {
			void *frame = eu_frame_take(eu, f, cls, h);
			eu_copy_args(frame, args, size);
			if (q_unlikely(!deque_push_now(eu->tokens, frame))) {
				token_push(frame);
				return;
			}
			eu_token_pushed(eu);
			eu_count(&eu->ops[EARTH_OP_TOKEN], 1);
			return;
		}
	}
	token_full(f, args, size);
}

static inline __attribute__((always_inline)) void end_function(void *frame)
{
	struct eu_state *eu = eu_self;
	if (q_unlikely(!frame))
		eu_misuse("END_FUNCTION", "null frame");
	if (q_unlikely(frame == eu->main_frame)) {
		eu_main_end_check(frame);
		eu->main_done = true;
	}
	eu_frame_free(eu, frame);
	eu_count(&eu->ops[EARTH_OP_END_FUNCTION], 1);
}

/* A combined signal may name a slot in the frame: performed first. */
static __attribute__((noinline)) void end_function_signalled(void *frame)
{
	eu_comb_perform_slow(eu_self);
	end_function(frame);
}

void earth_end_function(void *frame)
{
	EU_CHECK_IN_FIBER("END_FUNCTION");
	if (q_unlikely(eu_self->comb_count))
		end_function_signalled(frame);
	else
		end_function(frame);
}

void earth_set_exit_status(int status)
{
	EU_CHECK_IN_FIBER("earth_set_exit_status");
	earth_node_g.exit_status = status;
}

/* ---- shared memory (eu/dsm.c) ---- */

void eu_post_dsm(unsigned what, uint64_t thread, uint64_t b, uint64_t c)
{
	post_wide(eu_self, SU_OP_DSM, 0, SU_REQ_NOSLOT, (int32_t)what, 0,
		  thread, b, c, 0, false);
}

void eu_post_dsm_fiber(unsigned what, uint64_t slot, bool gslot, uint64_t b,
		       uint64_t c, uint64_t d)
{
	void *fiber = *(void **)&eu_cur_fiber;
	post_wide(eu_self, SU_OP_DSM, 0, gslot ? SU_REQ_GSLOT : 0,
		  (int32_t)what, slot, (uintptr_t)fiber, b, c, d, false);
}
