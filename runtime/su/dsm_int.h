/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_int.h - inside the SU's shared memory: the state its files share
 * (su_dsm_g) and what each asks of the others. su/dsm.c runs this node's
 * side of the protocol and the managers of the objects it made;
 * su/dsm_job.c serves the job (node 0's allocator and homes, the
 * program's globals, threads' creation and end); su/dsm_report.c says
 * what it holds (the stuck report, statistics). Only these files include
 * it.
 */
#ifndef EARTH_SU_DSM_INT_H
#define EARTH_SU_DSM_INT_H

#include "base/base.h"
#include "dsm/alloc.h"
#include "dsm/proto.h"
#include "dsm/pt.h"
#include "dsm/sync.h"
#include "net/wire.h"
#include "su/dsm_msg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct earth_node;

/* A message kept for later, its payload after it. */
struct kept {
	struct kept *next;
	uint32_t from;
	struct wire_hdr h;
	uint8_t payload[];
};
struct kept_list {
	struct kept *head, *tail;
	uint32_t n;
};

/* A thread's request held until this node's release completes (its
 * diffs acknowledged): what comes after a release leaves after it. */
struct held {
	struct dsm_pt *pt;
	unsigned req;
	uint64_t b, c;
};

/* A lock's pages pretwinned at its next grant here (lock_pages_note):
 * at most this many a lock, for this many locks at once. */
#define LOCK_PAGES_MAX 8
#define LOCK_PAGES_SETS 64

/* What the SU keeps for shared memory: one per node (process). */
struct su_dsm {
	struct earth_node *n;
	struct dsm_proto p;
	struct dsm_sync sync;	/* the objects this node made */
	struct dsm_alloc alloc; /* node 0 */
	struct dsm_pt **pwait;	/* per page: threads waiting for it */
	struct dsm_pt *by_slot[DSM_WAITERS_PER_NODE];
	struct held *held;
	size_t nheld, held_cap;
	uint32_t *sent; /* [mgr * nodes + k]: what node mgr has of our log */
	uint32_t *told; /* node 0: [node * nodes + k], told at CREATE */
	uint8_t *buf;	/* one payload being built */
	/* Notices that take more than one message: all of them, and the
	 * NOTICES message being cut from them (encode_since). */
	uint8_t *big, *cut;
	size_t big_cap;
	/* Lock grants between hosts carry up to grant_pages pages homed here
	 * that their notices name; a grant that came with some: its pages
	 * (u32 numbers, then the bytes) from node carry_from, while its
	 * notices are learnt (op_refresh takes them). */
	uint32_t grant_pages, ncarry, carry_from;
	const uint8_t *carry;
	uint64_t grant_pages_sent;
	/* Per lock this node took lately (a small table, by the lock's id):
	 * the copies of other nodes' pages that the critical section it
	 * released last wrote, pretwinned when the lock is granted here
	 * again (at most lock_pretwin, EARTH_DSM_LOCK_PRETWIN). */
	struct lock_pages {
		uint64_t lock;
		uint32_t n;
		uint32_t page[LOCK_PAGES_MAX];
	} lockpg[LOCK_PAGES_SETS];
	uint32_t lock_pretwin;
	uint32_t ended; /* node 0: threads ended */
	uint8_t *done;	/* node 0: per thread id, ended */
	/* Node 0: allocations waiting for every node to have their homes. */
	struct placing {
		struct placing *next;
		uint64_t id;
		uint32_t acks, first, from;
		uint64_t slot;
		uint8_t *acked; /* per node: said it has the homes */
	} * placing;
	uint64_t place_seq;
	struct dsm_pt *end_waiter;
	uint32_t end_want;
	bool globals_sent;
	bool said_no_room; /* node 0: an allocation got NULL (said once) */
	uint64_t msgs[M_COUNT_];
	/* The grants of one barrier's or flag's sweep (gathering: mgr_go
	 * while dsm_sync lets its waiters go), one message a node: per node,
	 * the first waiter's grant, then the slots of the others
	 * (GRANT_MORE); sent by grants_flush. */
	bool gathering;
	struct grant_batch {
		uint8_t *msg; /* NULL: none gathered; else len bytes, then
			       * room for the others' slots and their count */
		size_t len;
		uint64_t a, slot, id;
		uint32_t nmore;
	} * batch;
	/* Statistics (the protocol keeps its own). */
	uint64_t notice_bytes, barrier_msgs, lock_local, lock_remote;
	uint64_t fetch_direct;
	/* Per node: this node's diffs to it not yet acknowledged; requests
	 * that went out behind such diffs instead of waiting for their
	 * acknowledgements (early_sends). */
	uint32_t *diff_to;
	uint64_t early_sends;
	uint64_t msgs_net; /* of the messages, to other nodes */
	/* Pages being read one-sided through the transport (dsm_get), and
	 * records of finished ones, reused. */
	struct rfetch {
		struct rfetch *next;
		uint32_t home, page;
		uint8_t data[];
	} * rfree;
	uint64_t wait_ticks[DSM_WAIT_CAUSES_];
	/* Barriers made here, the episode under way (made at first use):
	 * per node, the threads arrived and the least vector time they
	 * sent. An episode every node of the job reached lets every node
	 * drop the notices that least vector time covers: each holds them
	 * (a node's vector time only grows), so no grant needs them again;
	 * a request sent with an older vector time is answered from the
	 * oldest notice still held (since()), which its node has. */
	struct bar_ep {
		uint32_t *arrived, *least;
	} * bar[DSM_OBJECTS_PER_NODE];
	bool collect_now; /* the grants being sent end such an episode */
	const uint32_t *collect_to;
	uint32_t *vt_tmp; /* since()'s */
	/* Messages to this node itself, and whether they are being
	 * handled. */
	struct kept_list local;
	bool draining;
	/* Per page: fetches and diffs that came before this node heard it
	 * is the page's home (a first-touch page it claimed: the claimant
	 * hears of it from node 0, others may hear first). */
	struct kept_list *early;
	uint32_t early_hi; /* every page with messages kept is below it */
	/* While first writes claimed ahead wait for their homes
	 * (dsm_proto claims_out): the threads' requests, and the messages
	 * that bring an acquire's notices, put off until the last answer. */
	bool claim_ahead;
	struct su_req *parked;
	size_t nparked, parked_cap;
	struct kept_list after_claims;
	/* The most payload a DSM message carries: the transport's
	 * (net_msg_max: a quarter of a ring over shm), at most BUF_CAP.
	 * Notices, carried pages and globals are cut to it, a diff that exceeds
	 * it goes in parts (op_diff); a page always fits (node_dsm_open refuses
	 * pages that do not). */
	size_t cap;
	uint8_t *dpart;	    /* a part of a diff, cap bytes */
	uint32_t early_max; /* messages kept for a page not yet homed */
};

extern struct su_dsm su_dsm_g EARTH_HIDDEN;

/* The most payload this part builds in one message. */
#define BUF_CAP WIRE_MAX_PAYLOAD

/* ---- su/dsm.c gives ---- */

/* Refuses message h from node `from`: field `field` is wrong, why. */
EARTH_COLD _Noreturn void su_dsm_bad(const struct wire_hdr *h, uint32_t from,
				     const char *field,
				     const char *why) EARTH_HIDDEN;
/* Sends a message of kind what to node (to this node: kept and handled
 * once the handler that sends it is done). */
void su_dsm_send(uint32_t node, unsigned what, uint64_t a, uint64_t b,
		 uint64_t c, const void *payload, size_t len) EARTH_HIDDEN;
/* Handles message h from node `from` (every field checked). */
void su_dsm_handle(uint32_t from, const struct wire_hdr *h,
		   const void *payload) EARTH_HIDDEN;
/* Thread or fiber record pt may go on, with result. */
void su_dsm_resume(struct dsm_pt *pt, int64_t result) EARTH_HIDDEN;
/* The thread of slot (in field `field` of h) that waits for an answer of
 * kind what: it waits no more. Refuses h when none does. */
struct dsm_pt *su_dsm_waiting(const struct wire_hdr *h, uint32_t from,
			      const char *field, uint64_t slot,
			      unsigned what) EARTH_HIDDEN;
/* The write notices of an acquire of this node that h carries. */
void su_dsm_learn(const struct wire_hdr *h, uint32_t from, const void *buf,
		  size_t len) EARTH_HIDDEN;
/* The last home of the first writes claimed ahead came: what waited for
 * it goes on. */
void su_dsm_claims_done(void) EARTH_HIDDEN;
/* The program threads this node runs changed: the protocol counts them. */
void su_dsm_threads_counted(void) EARTH_HIDDEN;

/* ---- su/dsm_job.c gives ---- */

/* The job's messages: ALLOC, PLACED, PLACED_ACK, ALLOCATED, FREE,
 * GLOBALS, CREATE, DONE, CLAIM and HOME. */
void su_dsm_job_receive(uint32_t from, const struct wire_hdr *h,
			const void *payload) EARTH_HIDDEN;
/* Node 0's globals to every other node (before the first CREATE). */
void su_dsm_send_globals(void) EARTH_HIDDEN;

#endif /* EARTH_SU_DSM_INT_H */
