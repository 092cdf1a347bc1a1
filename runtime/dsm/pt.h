/* SPDX-License-Identifier: MIT */
/*
 * dsm/pt.h - what the EU and the SU of a node share about shared memory
 * (earth_dsm.h): the region, the program threads, the requests a thread
 * posts to its SU, and the ids of the synchronisation objects this node
 * manages. Set up by the node before either unit runs; then each field
 * says who writes it.
 *
 * A program thread runs on the EU inside a fiber (the node's dsm_fiber,
 * its frame the thread's record): it runs until it waits (a fault, a
 * lock, a barrier, a flag, the end of others) or ends. To wait it posts a
 * request (SU_OP_DSM, its kind in n, the thread in a) and switches back
 * to the fiber, which ends; the SU makes the fiber ready again with the
 * same record when the thread may go on, after writing the result. Any
 * EU of the node may run it then: each EU has its own fault handling and
 * scheduler context (struct dsm_eu), and a thread holds none of them
 * while it waits (dsm/fault.h).
 */
#ifndef EARTH_DSM_PT_H
#define EARTH_DSM_PT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dsm/fault.h"
#include "dsm/region.h"
#include "dsm/thread.h"

/* What a program thread asks of its SU (su_req.n); b and c as said. */
enum dsm_req {
	DSM_R_FAULT = 1,  /* b = page, c = 1 for a write                   */
	DSM_R_LOCK,	  /* b = lock id                                   */
	DSM_R_UNLOCK,	  /* b = lock id                                   */
	DSM_R_BARRIER,	  /* b = barrier id, c = count                     */
	DSM_R_FLAG_SET,	  /* b = flag id                                   */
	DSM_R_FLAG_WAIT,  /* b = flag id                                   */
	DSM_R_FLAG_CLEAR, /* b = flag id                                  */
	DSM_R_ALLOC,	  /* b = bytes, c = place | arg << 8 -> result, value */
	DSM_R_FREE,	  /* b = first page                               */
	DSM_R_CREATE,	  /* b = function's index, c = thread id (node 0) */
	DSM_R_END,	  /* the thread ended: a release, then node 0 told */
	DSM_R_WAIT_END,	  /* b = threads (node 0): wait until that many ended */
	/* Fibers' split-phase operations (earth_dsm_fiber.h): a = the
	 * posting fiber (for messages), the slot in su_req.slot (a global
	 * slot with SU_REQ_GSLOT), b and c as said. */
	DSM_R_F_ACQUIRE,   /* b = address, c = length << 1 | write     */
	DSM_R_F_RELEASE,   /* b = address, c = length                  */
	DSM_R_F_LOCK,	   /* b = lock id                              */
	DSM_R_F_UNLOCK,	   /* b = lock id                              */
	DSM_R_F_BARRIER,   /* b = barrier id, c = count                */
	DSM_R_F_FLAG_SET,  /* b = flag id                            */
	DSM_R_F_FLAG_WAIT, /* b = flag id                            */
	DSM_R_F_ALLOC,	   /* b = bytes, c = place | arg << 8, spare = the
			      void * the address goes to (NULL: none)  */
	DSM_R_F_FREE,	   /* b = first page                           */
	DSM_R_COUNT_
};

/* What a program thread waited for, for the time spent waiting. */
enum dsm_cause {
	DSM_WAIT_PAGE,
	DSM_WAIT_LOCK,
	DSM_WAIT_BARRIER,
	DSM_WAIT_FLAG,
	DSM_WAIT_OTHER, /* allocation, creation, the end of threads */
	DSM_WAIT_CAUSES_
};

/* A node's statistics of shared memory (--stats, JSON). */
struct dsm_stats {
	/* The protocol (dsm/proto.h). */
	uint64_t read_faults, write_faults, fetches, twins, twin_bytes, diffs,
	    diff_bytes, invalidations, intervals;
	uint64_t fetches_direct; /* of the fetches, read one-sided */
	/* Changes of pages' protections or mappings (system calls): the
	 * region's (dsm/region.h), by the SU and the EUs. */
	uint64_t protections;
	/* Sent by this node: write notices' bytes, messages, of which for
	 * barriers (arrivals and their grants). */
	uint64_t notice_bytes, msgs_sent, barrier_msgs;
	/* Write notices this node holds at the end (barriers that every
	 * thread reaches let every node drop what all hold). */
	uint64_t notices_held;
	/* Lock acquires by this node's threads, its manager here or on
	 * another node; handed from one waiter to the next here. */
	uint64_t lock_local, lock_remote, lock_handoffs;
	uint64_t barriers; /* episodes completed by barriers made here */
	/* The EU: faults taken, program threads switched out. */
	uint64_t eu_faults, switches;
	uint64_t home_writes_eu; /* home pages' first writes the EU took */
	uint64_t home_kept; /* home pages a release left writable (proto.h) */
	/* Requests sent behind this node's diffs, not after their
	 * acknowledgements (su/dsm.c: all to the node the message goes to). */
	uint64_t early_sends;
	uint64_t refreshes;   /* of the fetches, made at an acquire (proto.h) */
	uint64_t pretwins;    /* of the twins, made before the write (at a
			       * refresh, or at a lock's grant: su/dsm.c) */
	uint64_t grant_pages; /* pages this node's lock grants carried */
	uint64_t claims_ahead; /* first writes that went on while node 0
				* decided their home (proto.h) */
	uint64_t msgs_net;     /* of msgs_sent, to other nodes (the rest: to
				* this node itself) */
	uint64_t wait_ns[DSM_WAIT_CAUSES_]; /* by cause, every thread */
	/* Fibers (earth_dsm_fiber.h): range acquisitions, of which every
	 * page was usable at once (hits), and the waits for a page that
	 * joined a fetch or claim another acquisition had out (coalesced);
	 * invalidations and write protections a fiber's hold put off. */
	uint64_t f_acquires, f_hits, f_coalesced, f_deferred, f_releases;
	uint64_t f_hits_eu; /* of the hits, found by the EU (no request) */
};

/* Threads one node runs at most (one waiting slot each at the managers). */
#define DSM_THREADS_PER_NODE 64
/* Waiting slots at the managers per node: the threads', then as many for
 * fibers' lock, barrier and flag operations (earth_dsm_fiber.h) under
 * way at once, or locks fibers of the node hold. */
#define DSM_WAITERS_PER_NODE (2 * DSM_THREADS_PER_NODE)
/* Objects one node manages at most, of each kind. */
#define DSM_OBJECTS_PER_NODE 4096
/* Home pages the EU may note written before the SU takes them. */
#define DSM_HOME_W_CAP 1024u

/* An object's id: the managing node, then its number there plus 1, so
 * that an id with low bits 0 (a zeroed variable: a lock, barrier or flag
 * never made) names none. */
#define DSM_ID_SHIFT 16
static inline uint32_t dsm_id(uint32_t node, uint32_t k)
{
	return node << DSM_ID_SHIFT | (k + 1);
}
static inline uint32_t dsm_id_node(uint64_t id)
{
	return (uint32_t)(id >> DSM_ID_SHIFT);
}
/* Its number on its node; UINT32_MAX for an id that names none. */
static inline uint32_t dsm_id_index(uint64_t id)
{
	uint32_t low = (uint32_t)(id & ((1u << DSM_ID_SHIFT) - 1));
	return low ? low - 1 : UINT32_MAX;
}

/* One program thread of this node. */
struct dsm_pt {
	struct dsm_thread t; /* first: the fault path knows the thread */
	uint32_t id;	     /* in the job: main 0, then creation order */
	uint32_t slot;	     /* on this node: id / nodes */
	void (*fn)(void);    /* what it runs (a created thread)          */
	struct dsm_pt *next; /* SU: on a waiting list */
	int64_t result;	     /* SU -> thread: the answer to its request */
	/* SU: its fault, while it waits for a page. */
	uint32_t wait_page;
	bool wait_write;
	uint8_t waits; /* SU: the answer it waits for (su/dsm.c), or 0 */
	/* SU: the request it waits on (enum dsm_req) and its object, for
	 * the report of a stuck job; 0 when it waits for none. */
	uint8_t wait_req;
	uint32_t wait_id;
	/* SU: when its request came and what for (statistics). */
	uint64_t wait_t0;
	uint8_t wait_cause;
	/* A fiber's operation (earth_dsm_fiber.h), not a thread: the slot
	 * the SU signals when it is done (a global slot: fgslot), the fiber
	 * that posted it (messages), and the lock it holds once granted
	 * (fibers of the node hold it together until one unlocks it). */
	bool fiber, fgslot, holds;
	uint64_t fslot;
	uint64_t ffiber;
	/* An allocation's: where the SU stores its address (a void * of the
	 * fiber's) before it signals; 0 for any other operation. */
	uint64_t fout;
};

/* The node's shared-memory state (one per process). */
struct dsm_node {
	struct dsm_region region;
	uint32_t self, nodes;
	/* The table of functions threads may run (earth_dsm.h, CREATE):
	 * the linker's section, the same on every node. */
	const void *fns;
	uint32_t nfns;
	/* The program's globals (node 0 sends them at the first CREATE):
	 * [data, data + data_len) and [bss, bss + bss_len). */
	uint8_t *data, *bss;
	size_t data_len, bss_len;
	/* Objects this node manages, made so far (EU: new; SU: checks). */
	_Atomic uint32_t nlocks, nbarriers, nflags;
	/* Node 0's EU: threads created so far, main included. */
	uint32_t created;
	/* Node 0: main's thread (slot 0), made before the units start. */
	struct dsm_pt *main_pt;
	size_t stack_size; /* of each program thread */
	/* On one host under earthrun: every node's region, read-only,
	 * node k's at peer_base + k * peer_seg (pages fetched one-sided);
	 * NULL otherwise. */
	const uint8_t *peer_base;
	uint64_t peer_seg;
	/* Every EU's side (struct dsm_eu), newest first: an EU pushes its
	 * own (release) at the first thread it runs; the SU walks them
	 * (acquire), the node frees them once the units ended. */
	struct dsm_eu *_Atomic eus;
	uint64_t start_ns;
	/* Fibers' holds (dsm/proto.h, dsm_hold_try), the SU's arrays the
	 * EU's hits use, and per page the live allocation that holds it
	 * (placed: DSM_PLACED_*; short_by: on an allocation's last page, the
	 * bytes of it past the allocation's end, else 0). The SU writes
	 * them, the EU reads them. Set by the SU's opening. */
	_Atomic uint32_t *hold;
	const _Atomic uint8_t *shrinking, *deferred;
	uint8_t *placed;
	uint16_t *short_by;
};

/* dsm_g.placed: a page of no live allocation, the first page of one, a
 * later page of one. */
enum { DSM_PLACED_NONE, DSM_PLACED_START, DSM_PLACED_IN };

/* One EU's side of program threads (eu/dsm.c), made on that EU. */
struct dsm_eu {
	struct dsm_faults faults; /* its handler's state, the thread it runs */
	struct dsm_ctx sched;	  /* its loop: where threads switch back to */
	uint64_t calls;		  /* waits through eu_dsm_call */
	uint64_t home_writes;	  /* home pages made writable here */
	struct dsm_eu *next;
	/* Pages homed here this EU made writable at their first write in
	 * an interval (claimed: state, mprotect, then here): the SU notes every
	 * EU's before it performs any request, so before any release. One
	 * producer (this EU), one consumer (the SU). */
	_Atomic uint32_t home_w_tail __attribute__((aligned(64)));
	_Atomic uint32_t home_w_head __attribute__((aligned(64)));
	uint32_t home_w[DSM_HOME_W_CAP];
};

/* A request's name for the trace ("DSM LOCK"), or "DSM ?". */
const char *dsm_req_name(unsigned req) __attribute__((visibility("hidden")));

/* A created thread's body: pt->fn(). */
void dsm_pt_entry(void *pt) __attribute__((visibility("hidden")));

extern struct dsm_node dsm_g __attribute__((visibility("hidden")));

/* The record of the thread a fault or call came from. */
static inline struct dsm_pt *dsm_pt_of(struct dsm_thread *t)
{
	return (struct dsm_pt *)(void *)t;
}

#endif
