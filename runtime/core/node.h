/* SPDX-License-Identifier: MIT */
/*
 * node.h - the state of the one node this process runs: its options, the
 * two EU<->SU rings, and the private state of each unit. Each field group
 * says which thread owns it; a field read by the other thread is atomic and
 * says what it pairs with.
 */
#ifndef EARTH_NODE_H
#define EARTH_NODE_H

#ifndef EARTH_INTERNAL
#error "node.h is internal to the EARTH runtime"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "earth.h"
#include "net.h"
#include "q_mpsc.h"
#include "q_ring.h"
#include "req.h"

#define EARTH_HIDDEN __attribute__((visibility("hidden")))
#define EARTH_COLD __attribute__((cold, noinline))

/* Sleep states of a unit (futex words). */
enum { UNIT_RUNNING = 0, UNIT_SLEEPING = 1 };

/* Frame header, 16 bytes before the frame a fiber sees. */
struct frame_hdr {
	const struct earth_tfunc *fn;
	uint32_t cls;   /* size class, or FRAME_CLASS_LARGE */
	uint32_t magic; /* FRAME_LIVE or FRAME_FREE */
};
#define FRAME_CLASS_LARGE 0xffffffffu
#define FRAME_LIVE 0x4541524cu /* "EARL" */
#define FRAME_FREE 0x46524545u /* "FREE" */

struct frame_chunk {
	struct frame_chunk *next;
};

/* Owned by the EU thread. */
struct eu_state {
	struct q_ring *req;   /* producer side */
	struct q_ring *ready; /* consumer side */
	/* Requests posted while the ring was full, oldest first. */
	struct q_msg *ovf;
	size_t ovf_head, ovf_len, ovf_cap;
	void *free_list[EARTH_FRAME_CLASSES];
	struct frame_chunk *chunks;
	void *main_frame;
	bool main_done;
	bool in_fiber;
	int exit_status;
	uint64_t ops[EARTH_OP_COUNT_];
	uint64_t fibers_run, req_overflow, frames_allocated, sleeps;
	uint64_t idle_ticks;
	/* Futex word: UNIT_SLEEPING while the EU blocks. Stored seq_cst by the
	 * EU before its last look at the ready ring; the SU stores the ready
	 * ring, fences, then loads it (Dekker pair in su_ready_flush). */
	_Atomic uint32_t state q_aligned_line;
};

/* Owned by the SU thread; counters also published for earth_stats_get. */
struct su_state {
	struct q_ring *req;   /* consumer side */
	struct q_ring *ready; /* producer side */
	struct q_msg *rmsg;   /* ready message being filled, or NULL */
	unsigned rfill;
	bool wake_check;      /* published since su_wake_eu last looked */
	unsigned batches;     /* busy batches, for EARTH_SU_WAKE_EVERY */
	/* Ready fibers that did not fit the ring, oldest first. */
	struct ready_entry {
		earth_fiber_fn fiber;
		void *frame;
	} *rovf;
	size_t rovf_head, rovf_len, rovf_cap;
	/* Tokens not yet given to the EU, newest last (LIFO). */
	struct ready_entry *tokens;
	size_t ntokens, tokens_cap;
	/* Load balancing (su/balance.c): nodes that asked us for work in
	 * vain, and our own asking. */
	bool *hungry;
	uint32_t nhungry;
	bool steal_out;       /* a STEAL is on its way, no answer yet */
	bool steal_quiet;     /* every peer said no: wait for new work */
	uint32_t steal_tries; /* NONE answers since the last success */
	uint64_t rng;
	uint64_t tokens_stolen, tokens_given;
	uint64_t steal_requests; /* STEALs sent */
	uint64_t dry_since;      /* TSC when the node ran dry; 0: it has work */
	uint32_t dry_polls;
	/* Messages for peers whose transport had no room, oldest first. */
	struct su_out_msg {
		struct su_out_msg *next;
		struct wire_hdr h;
		/* The payload: where a block-move chunk lies (it stays
		 * put until the move's slot is signalled), or NULL when
		 * it is copied below. */
		const void *ref;
		unsigned char payload[];
	} **out_head, **out_tail;
	size_t out_pending;
	/* Payload bytes of messages queued for a transport with no room:
	 * by reference (block-move chunks) and copied. */
	uint64_t queued_ref, queued_copied;
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
	uint64_t busy_ticks;
	/* Copies of the counters above, stored relaxed by the SU when it goes
	 * idle; read relaxed by earth_stats_get on the EU. */
	_Atomic uint64_t pub_handled, pub_fibers_ready, pub_slot_signals,
		pub_ready_overflow, pub_sleeps, pub_busy_ticks;
	/* Futex word: see eu_state.state; paired with the EU in eu_wake_su
	 * and with inbox producers in earth_sync_from_thread. With a
	 * transport the SU sleeps on statep in shared memory instead, where
	 * peers can wake it; statep points to `state` otherwise. */
	_Atomic uint32_t state q_aligned_line;
	_Atomic uint32_t *statep;
};

struct earth_node {
	struct earth_options opts;
	uint32_t id, num_nodes;
	uint32_t local_rank, local_size; /* nodes of the job on this host */
	struct net *net;                 /* NULL for a one-node job */
	int eu_cpu, su_cpu, numa_node;
	bool oversubscribed;
	bool timing;          /* busy/idle time accounting on */
	uint64_t spin_ticks;  /* spin this long before blocking */
	uint64_t steal_ticks; /* dry this long before asking for a token */
	uint64_t yield_ticks; /* oversubscribed: poll this long, then yield */
	uint64_t busy_yield_ticks; /* oversubscribed: yield once per this busy */
	uint32_t token_backlog; /* see EARTH_TOKEN_BACKLOG */
	double tsc_per_ns;
	uint64_t start_tsc, end_tsc;
	struct q_ring req q_aligned_line; /* EU -> SU */
	struct q_ring ready;              /* SU -> EU */
	struct q_mpsc inbox;              /* other threads -> SU */
	/* Set once by the EU when main's frame ends, release; the SU loads it
	 * acquire on each idle poll and when it wakes. */
	_Atomic bool shutdown q_aligned_line;
	/* Set by the SU when node 0 ends the job (W_SHUTDOWN), with the
	 * job's exit status; release, paired with the EU's acquire loads in
	 * its loop and before it blocks. */
	_Atomic bool stop;
	int stop_status;
	struct eu_state eu q_aligned_line;
	struct su_state su q_aligned_line;
};

/* A remote INVOKE on its way to the EU: the SU fills it, the EU's
 * trampoline fiber allocates the frame, copies the arguments, frees it and
 * runs the entry fiber. */
struct eu_invoke_buf {
	const struct earth_tfunc *fn;
	unsigned char args[];
};
void eu_invoke_trampoline(void *buf) EARTH_HIDDEN;
/* Fiber the SU makes ready when a token's frame left for another node:
 * the EU returns the frame to its free list. */
void eu_token_gone(void *frame) EARTH_HIDDEN;

/* The node of this process. */
extern struct earth_node earth_node_g EARTH_HIDDEN;

/* Prints "earth: node N: error: <msg>" and exits with EARTH_EXIT_USAGE. */
_Noreturn void earth_fatal(const char *fmt, ...) EARTH_HIDDEN
	__attribute__((format(printf, 1, 2), cold));

/* Futex wait/wake on a 32-bit unit state word. */
void earth_futex_wait(_Atomic uint32_t *word, uint32_t expected) EARTH_HIDDEN;
void earth_futex_wake(_Atomic uint32_t *word) EARTH_HIDDEN;

/* Wakes the SU if it sleeps. Any thread; the caller has already made its
 * work visible and issued a seq_cst fence. */
void earth_su_wake(struct earth_node *n) EARTH_HIDDEN;

/* Node number, node count and local rank from the environment (job.c).
 * Returns NULL or what is wrong. */
const char *earth_job_from_env(struct earth_node *n) EARTH_HIDDEN;

/* Topology: pick and validate the EU and SU CPUs (topology.c). Returns 0 or
 * -EINVAL after printing why. */
int earth_topology_choose(struct earth_node *n) EARTH_HIDDEN;
/* Pins the calling thread to cpu (>= 0); no-op for -1. */
void earth_topology_pin(int cpu) EARTH_HIDDEN;

/* Prints the statistics table of this node to stderr (stats.c). */
void earth_stats_print(const struct earth_stats *st) EARTH_HIDDEN;

/* EARTH_MODE's values, indexed by enum earth_node_mode (options.c). */
extern const char *const earth_mode_names[3] EARTH_HIDDEN;

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

#endif /* EARTH_NODE_H */
