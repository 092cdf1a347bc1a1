/* SPDX-License-Identifier: MIT */
/*
 * unit.h - what the units of a node share: the node's identity and
 * tuning, each EU's ring pair with the SU (eu_link) and the inbox, the
 * flags that end the node, each unit's sleep word, the frame header and the
 * remote INVOKE buffer (laid out by one unit, read by the other). Each unit's
 * own state is in its folder (eu/eu.h, su/su.h), out of the other's reach. Each
 * field group says which thread owns it; a field read by the other thread is
 * atomic and says what it pairs with.
 */
#ifndef EARTH_UNIT_H
#define EARTH_UNIT_H

#ifndef EARTH_INTERNAL
#error "unit/unit.h is internal to the EARTH runtime"
#endif

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"
#include "base/config.h"
#include "earth.h"
#include "net/net.h"
#include "queues/q_mpsc.h"
#include "queues/q_ring.h"
#include "unit/req.h"
#include "unit/deque.h"

/* Frame header, 16 bytes before the frame a fiber sees: the EU lays it
 * out (eu/frame.c); the SU reads the function of a token's frame it sends
 * to another node, and the EU whose frame it is (frame_owner) to make a
 * fiber of it ready there. */
struct frame_hdr {
	const struct earth_tfunc *fn;
	/* The size class (FRAME_CLASS_BITS low bits), or FRAME_CLASS_LARGE;
	 * the EU whose lists it came from above them (FRAME_OWNER_SHIFT).
	 * Written by the allocating EU only. */
	uint32_t cls;
	uint32_t magic; /* FRAME_LIVE or FRAME_FREE */
};
#define FRAME_CLASS_BITS 8u
#define FRAME_OWNER_SHIFT FRAME_CLASS_BITS
#define FRAME_CLASS_MASK ((1u << FRAME_CLASS_BITS) - 1)
#define FRAME_CLASS_LARGE FRAME_CLASS_MASK
_Static_assert(EARTH_FRAME_CLASSES < FRAME_CLASS_MASK,
	       "size classes fit below FRAME_CLASS_LARGE");
_Static_assert(EARTH_EUS_MAX < (1u << (32 - FRAME_OWNER_SHIFT)),
	       "an EU's number fits above the size class");
/* The EU whose lists frame header h came from. */
static inline unsigned frame_owner(const struct frame_hdr *h)
{
	return h->cls >> FRAME_OWNER_SHIFT;
}
#define FRAME_LIVE 0x4541524cu /* "EARL" */
#define FRAME_FREE 0x46524545u /* "FREE" */
struct reg_cache;
/* The EU whose fibers run on `frame` on a node of k EUs: a frame's
 * fibers run one at a time, on the EU whose lists it came from (a token
 * a sibling steals moves first, eu_frame_rehome); memory that is not a
 * live frame runs its fibers on EU 0. A frame is aligned, its header in
 * registered memory (through cache c, the caller's) and, in ASan
 * builds, not poisoned (a global's red zone), and it reads FRAME_LIVE.
 * The EU and the SU both ask it (eu_frame_here, su_eu_of_frame_slow). */
unsigned unit_frame_eu(struct reg_cache *c, const void *frame,
		       unsigned k) EARTH_HIDDEN;

struct earth_node {
	struct earth_options opts;
	uint32_t id, num_nodes;
	uint32_t local_rank, local_size; /* nodes of the job on this host */
	struct net *net;		 /* NULL for a one-node job */
	int eu_cpu, su_cpu, numa_node;
	bool oversubscribed;
	bool timing; /* busy/idle time accounting on */
	/* Execution Units (EARTH_EUS, at most EARTH_EUS_MAX; topology.c), in
	 * the padding before spin_ticks: no field of the units moves. */
	uint16_t eus;
	uint64_t spin_ticks; /* spin this long before blocking */
	/* A dozing SU measures whether it shares a core with a busy thread
	 * (su_probe), and then spins this long (su/loop.c, su_spin_ticks). */
	bool su_probe;
	uint64_t shared_spin_ticks, probe_every_ticks;
	/* Set by the SU once it has measured itself at its start, before
	 * the EU thread exists (node.c waits for it when su_probe). */
	_Atomic uint32_t su_measured;
	uint64_t steal_ticks; /* dry this long before asking for a token */
	uint64_t yield_ticks; /* oversubscribed: poll this long, then yield */
	uint64_t
	    busy_yield_ticks; /* oversubscribed: yield once per this busy */
	double tsc_per_ns;
	uint64_t start_tsc, end_tsc;
	/* What each EU shares with the SU: eus entries (node.c), EU i's
	 * at link[i]. */
	struct eu_link *link;
	/* EU i's CPU (eus entries, node/topology.c; eu_cpus[0] is eu_cpu). */
	int *eu_cpus;
	struct q_mpsc inbox q_aligned_line; /* other threads -> SU */
	/* The node's EUs in idle (k > 1 only; unit_idle_*): the low half
	 * counts those in their idle wait, spinning or asleep, the high half
	 * (UNIT_IDLE_ASLEEP each) those of them asleep or about to be. An
	 * atomic add by an EU on its way into and out of its idle wait and
	 * into and out of its sleep, nothing on its busy path; read by the SU
	 * (asking peers for tokens only when every EU idles, su/balance.c;
	 * stuck detection, su/quiet.c) and by an EU that pushed a token
	 * (eu/steal.c: it wakes a sleeper when no sibling spins). Its own
	 * line. */
	_Atomic uint64_t eus_idle q_aligned_line;
	/* Set once by the EU when main's frame ends, release; the SU loads it
	 * acquire on each idle poll and when it wakes. */
	_Atomic bool shutdown q_aligned_line;
	/* Set by the SU when node 0 ends the job (W_SHUTDOWN), with the
	 * job's exit status; release, paired with the EU's acquire loads in
	 * its loop and before it blocks. */
	_Atomic bool stop;
	int stop_status;
	/* The job's exit status as main's fiber set it (node 0); written by
	 * the EU before it sets shutdown, read by the SU after it saw it. */
	int exit_status;
	/* Fibers the SU makes ready on the EU's behalf (set by the node before
	 * the units start; never chosen by a message): a remote INVOKE's
	 * trampoline, and the one returning a frame whose token left. */
	earth_fiber_fn invoke_fiber, token_gone_fiber;
	/* Shared memory across nodes (earth_dsm.h), set by the node when the
	 * program uses it: the fiber that runs a program thread (its frame
	 * the thread's record, dsm/pt.h), and whether the SU serves it. */
	earth_fiber_fn dsm_fiber;
	bool dsm_on;
	/* Stuck-job detection (su/quiet.c), set by the node before the units
	 * start: may a thread other than the node's own still signal a slot
	 * here (earth_sync_from_thread)? And the report of this node's
	 * waiting slots, printed by the SU while the EU sleeps. */
	bool (*may_signal)(struct earth_node *n);
	void (*stuck_report)(struct earth_node *n);
	/* Set by node 0's SU when it declares the job stuck: its end of the
	 * job sends W_SHUTDOWN with WIRE_F_STUCK. SU only. */
	bool stuck;
	/* Futex word of the SU, paired with the EU in earth_su_wake and with
	 * inbox producers in earth_sync_from_thread. With a transport the SU
	 * sleeps on su_wordp in shared memory instead, where peers can wake
	 * it; su_wordp points to su_word otherwise. */
	_Atomic uint32_t su_word q_aligned_line;
	_Atomic uint32_t *su_wordp;
	/* The SU may sleep while the EU runs (su/loop.c, su_try_sleep): a dual
	 * node without a transport, EARTH_SU_DOZE on, and the kernel's
	 * asymmetric fence registered. Set before the units start. */
	bool su_doze;
};

/* What EU i and the SU share (earth_node.link[i]): one SPSC ring pair,
 * the EU's sleep word and the SU's count of the EU's requests performed,
 * each on lines of its own. The SU serves the k request rings round robin
 * (su/loop.c, su_step). */
struct eu_link {
	struct q_ring req;   /* EU i -> SU */
	struct q_ring ready; /* SU -> EU i */
	/* Futex word of EU i: UNIT_SLEEPING while it blocks. Stored seq_cst
	 * by the EU before its last look at its ready ring; the SU stores
	 * the ready ring, fences, then loads it (Dekker pair in su_wake_eu).
	 */
	_Atomic uint32_t word q_aligned_line;
	/* Requests from EU i's request ring the SU has performed, in the
	 * EU's posting order (eu_state.req_posted counts them as posted).
	 * Stored release by the SU after the ready ring it filled meanwhile
	 * is published and nothing waits in its overflow list for EU i
	 * (su_ready_flush); the EU loads it acquire before it signals a slot,
	 * SPAWNs or INVOKEs itself (eu/post.c, eu_local_ok). */
	_Atomic uint64_t req_done q_aligned_line;
	/* EU i's tokens (deque.h): EU i pushes and pops at the bottom; its
	 * siblings (eu/steal.c) and the SU, for other nodes (su/balance.c),
	 * steal the oldest at the top. Its two ends on lines of their own. */
	struct deque tokens;
	/* Fibers EU i's siblings made ready for its frames (a slot one of
	 * them signalled, eu/post.c, eu_ready_elsewhere): any sibling
	 * publishes, EU i takes them in its loop after its own ready list
	 * and before its tokens, and looks here before it sleeps (the
	 * publisher fences, then wakes it if its word says SLEEPING). Set up
	 * for k > 1 only. */
	struct q_mpsc sib;
};

/* Sets up n->link for n->eus EUs: each ring pair with `slots` messages
 * (0: every link left empty). Returns 0 or -errno; unit_links_fini undoes
 * it (and a partial setup). */
int unit_links_init(struct earth_node *n, enum q_mode mode,
		    uint32_t slots) EARTH_HIDDEN;
void unit_links_fini(struct earth_node *n) EARTH_HIDDEN;
/* Sets up each EU's token deque (after unit_links_init), holding at most
 * max tokens; shared: thieves run on other threads (deque_init: k > 1, or
 * peers the SU steals for). Returns 0 or -1; unit_links_fini frees them. */
int unit_tokens_init(struct earth_node *n, size_t max,
		     bool shared) EARTH_HIDDEN;

/* The node's EUs: n->eus, or 1 where a node set up by hand left it 0. */
static inline unsigned unit_eus(const struct earth_node *n)
{
	return n->eus ? n->eus : 1u;
}

/* Does any EU's deque hold a token (a moment ago)? Any thread. */
static inline bool unit_tokens_any(struct earth_node *n)
{
	for (unsigned i = 0; i < unit_eus(n); i++)
		if (deque_size(&n->link[i].tokens))
			return true;
	return false;
}

/* earth_node.eus_idle: one EU in its idle wait, and one of them asleep. */
#define UNIT_IDLE_ONE 1ull
#define UNIT_IDLE_ASLEEP (1ull << 32)
static inline unsigned unit_idle_waiting(uint64_t w)
{
	return (uint32_t)w;
}
static inline unsigned unit_idle_asleep(uint64_t w)
{
	return (uint32_t)(w >> 32);
}

/* Is every EU of the node in its idle wait? k = 1 keeps no count (its EU
 * enters and leaves idle around every remote round trip, and the SU
 * reading a line it writes there would cost it a miss each time): true,
 * and the callers' own tests (no token, every ready message consumed)
 * decide as they did for the one EU. Any thread; relaxed. */
static inline bool unit_eus_all_idle(struct earth_node *n)
{
	if (unit_eus(n) == 1)
		return true;
	return unit_idle_waiting(atomic_load_explicit(
		   &n->eus_idle, memory_order_relaxed)) == unit_eus(n);
}

/* A remote INVOKE on its way to the EU: the SU fills it, the EU's
 * trampoline fiber allocates the frame, copies the arguments, frees it and
 * runs the entry fiber. */
struct eu_invoke_buf {
	const struct earth_tfunc *fn;
	unsigned char args[];
};

/* The node of this process. */
extern struct earth_node earth_node_g EARTH_HIDDEN;

/* Wakes the SU if it sleeps. Any thread; the caller has already made its
 * work visible and issued a seq_cst fence. */
void earth_su_wake(struct earth_node *n) EARTH_HIDDEN;
/* Wakes every EU that sleeps on its word (n->link[i].word). Any thread;
 * the caller has made its work (ready ring, stop) visible and issued a
 * seq_cst fence: the Dekker pair of the EU's idle wait. */
void earth_eus_wake(struct earth_node *n) EARTH_HIDDEN;
/* The same for EU i alone. */
void earth_eu_wake(struct earth_node *n, unsigned i) EARTH_HIDDEN;
/* The calling unit blocks on its word while it holds expected (unit.c):
 * the SU's word under a transport that wakes the SU its own way (tcp)
 * blocks in the transport, which also wakes on arrivals; otherwise a
 * futex. Returns on a change, a wake or a signal: callers recheck. */
void earth_unit_wait(struct earth_node *n, _Atomic uint32_t *word,
		     uint32_t expected) EARTH_HIDDEN;

/* The pause between two polls of an idle unit (EU or SU thread). Alone on
 * its CPU it spins; oversubscribed it polls n->yield_ticks from `since`
 * (a partner on another CPU answers sooner than sched_yield returns), then
 * yields; *yielding keeps the switch, the TSC is read every 16 polls
 * (10-20 ns a read in a VM). */
static inline void earth_idle_pause(const struct earth_node *n, uint64_t since,
				    unsigned poll, bool *yielding)
{
	if (q_likely(!n->oversubscribed)) {
		q_cpu_relax();
		return;
	}
	if (!*yielding && (poll & 15) == 0)
		*yielding = q_tsc() - since > n->yield_ticks;
	if (*yielding)
		sched_yield();
	else
		q_cpu_relax();
}

#endif /* EARTH_UNIT_H */
