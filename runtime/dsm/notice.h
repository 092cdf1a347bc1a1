/* SPDX-License-Identifier: MIT */
/*
 * dsm/notice.h - write notices and vector time: what a node knows of the
 * writes made by every node, so that an acquire invalidates exactly the
 * pages written before it in happens-before order (lazy release
 * consistency), transitively: a node that acquires from a node that
 * acquired from a third learns the third's writes too.
 *
 * Each node's execution is cut into intervals at its releases; an
 * interval closes with the pages the node wrote in it (its write
 * notices). A node's vector time vt[n] is the last interval of node n
 * whose notices it has. A grant (of a lock, a barrier, a flag) carries
 * the intervals the granter has and the receiver lacks, found from the
 * receiver's vector time; the receiver adds them in order and invalidates
 * their pages (except those it is home of: a home's copy has every diff
 * before the release that made them completes).
 *
 * Encoded intervals, little-endian (what a grant carries; checked before
 * anything is added):
 *   u32 count of intervals, then each:
 *   u16 node, u16 0, u32 seq (1, 2, ... per node), u32 npages,
 *   npages x u32 page (ascending, each below the region's page count)
 * For each node the intervals come in order of seq; one the receiver has
 * already is skipped; one after a gap is refused (a hostile or broken
 * peer).
 */
#ifndef EARTH_DSM_NOTICE_H
#define EARTH_DSM_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most pages of one interval: a release that wrote more closes as
 * many intervals as it takes, in a row (the same notices), so that one
 * interval always fits in a message (dsm_notice_cut). */
#define DSM_IV_PAGES_MAX 8192u

/* One closed interval of one node. */
struct dsm_interval {
	uint32_t seq, npages;
	uint32_t *pages; /* ascending */
};

/* The intervals of one node this node holds: seq first .. first+n-1. */
struct dsm_node_log {
	uint32_t first; /* the seq of iv[0]; 1 + the last one collected */
	uint32_t n, cap;
	struct dsm_interval *iv;
};

struct dsm_log {
	uint32_t nodes, self, pages; /* pages: of the region */
	uint32_t *vt;		     /* vt[n]: the last interval of n held */
	uint32_t *applied; /* applied[n]: the last one whose pages this node
			    * invalidated (dsm_log_apply); <= vt[n] */
	struct dsm_node_log *log; /* per node */
	uint64_t held_bytes;	  /* of the page lists held */
	uint32_t iv_max;	  /* pages of this node's intervals, at most
				   * DSM_IV_PAGES_MAX (dsm_log_fit) */
};

/* What is wrong with encoded intervals that failed their check. */
struct dsm_notice_fault {
	const char *what;
	uint32_t interval; /* from 0 */
};

int dsm_log_init(struct dsm_log *l, uint32_t nodes, uint32_t self,
		 uint32_t pages);
void dsm_log_fini(struct dsm_log *l);

/* This node's intervals made small enough that one, with the count before
 * it, fits a message of cap bytes (cap at least 20; DSM_IV_PAGES_MAX
 * pages where that fits). Every node of a job must fit the same cap: the
 * intervals go on from node to node whole. */
void dsm_log_fit(struct dsm_log *l, size_t cap);

/* Closes this node's current interval with the pages it wrote (any
 * order, repeats allowed; sorted here): a new interval vt[self] + 1 (more
 * than one past iv_max pages, DSM_IV_PAGES_MAX unless dsm_log_fit). An interval
 * with no page is not made. Returns 0, or -1 (ENOMEM, or a page out of the
 * region: EINVAL). */
int dsm_log_close(struct dsm_log *l, const uint32_t *pages, uint32_t n);

/* Sorts n page numbers ascending, in place (an interval's order). */
void dsm_pages_sort(uint32_t *pages, uint32_t n);

/* The bytes dsm_log_encode_since would write for their vector time. */
size_t dsm_log_size_since(const struct dsm_log *l, const uint32_t *their_vt,
			  uint32_t own_upto);

/* Writes the intervals this node holds that their_vt lacks (every node's,
 * in order of seq; of this node's own, those up to own_upto, UINT32_MAX
 * for all: an interval whose diffs may not be at their homes yet stays
 * back, dsm_proto_sendable) into out (cap bytes); returns the length, or
 * (size_t)-1 when cap is short. An interval collected already
 * (dsm_log_collect) that they lack cannot be sent: returns (size_t)-2
 * (the receiver missed a barrier: a protocol error). */
size_t dsm_log_encode_since(const struct dsm_log *l, const uint32_t *their_vt,
			    uint32_t own_upto, void *out, size_t cap);

/* Encoded intervals (this node's own dsm_log_encode_since, len bytes) cut
 * between intervals, for messages of at most cap bytes: from *at (4 at
 * the start: past the count), as many whole intervals as fit in cap
 * (at least 4),
 * written into out as one encoding of their own; *at moves past them.
 * Returns its length: 4 (no interval) when the next one does not fit in
 * cap (or none is left). */
size_t dsm_notice_cut(const void *enc, size_t len, size_t *at, void *out,
		      size_t cap);

/* Checks encoded intervals from elsewhere, then adds the new ones; with
 * invalidate, then applies every interval of another node held and not
 * applied yet, these and those added before without (dsm_log_apply). A
 * manager adds without: it holds the notices of the releases it receives,
 * to pass them on in its grants, and its own copies stay valid until one
 * of its own threads acquires. Refused whole (nothing added) with *f on a
 * fault. */
int dsm_log_add(struct dsm_log *l, const void *buf, size_t len,
		void (*invalidate)(void *arg, uint32_t page), void *arg,
		struct dsm_notice_fault *f);

/* Calls invalidate(arg, page) for each page of each interval of another
 * node held and not applied yet (a page may come more than once). */
void dsm_log_apply(struct dsm_log *l,
		   void (*invalidate)(void *arg, uint32_t page), void *arg);

/* Drops the intervals every node holds (upto[n]: the least vt[n] over all
 * nodes, as a barrier learns it): what no grant can need again. One not
 * applied here yet stays until it is. */
void dsm_log_collect(struct dsm_log *l, const uint32_t *upto);

#endif
