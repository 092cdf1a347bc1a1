/* SPDX-License-Identifier: MIT */
/*
 * dsm/proto.h - one node's side of the page DSM's protocol: home-based
 * multi-writer lazy release consistency. The SU runs it (one thread owns
 * a struct dsm_proto); program threads reach it by posting their faults.
 *
 * Every page has a home node, whose copy is the page's memory: a home
 * works on its own copy, and receives the others' diffs. Another node
 * caches a page it reads (a fetch from the home), twins it at its first
 * write in an interval, and at a release sends the diff of every page it
 * wrote to the page's home; the release completes when every diff is
 * acknowledged. The release closes an interval with the pages written
 * (dsm/notice.h); an acquire adds the intervals a grant carries and
 * invalidates exactly their pages (a page written here and not yet
 * released sends its diff first, so no write is lost). A home's own pages
 * are read-only at the start of each interval, so that their first write
 * is noticed too (no twin: the home's copy is the page).
 *
 * Protections change on the SU while program threads run, made safe by
 * their order: a page stops being writable (its write protection is
 * complete on every CPU once mprotect returns) before its diff is taken,
 * and a page is filled through the region's writable view before it
 * becomes readable (or, refreshed at an acquire, while it stays readable:
 * what a reader may see then is below).
 *
 * Everything from another node (a page, a diff, a fetch, notices) is
 * checked first: a page of the region, homed where the message says, a
 * fetch this node asked for, a diff inside its page.
 */
#ifndef EARTH_DSM_PROTO_H
#define EARTH_DSM_PROTO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsm/diff.h"
#include "dsm/notice.h"
#include "dsm/region.h"

/* What the protocol sends; the transport's answers come back through
 * dsm_proto_page_in and dsm_proto_diff_acked. */
struct dsm_proto_ops {
	void (*fetch)(void *ctx, uint32_t home, uint32_t page);
	void (*diff)(void *ctx, uint32_t home, uint32_t page, const void *d,
		     size_t len);
	/* A page placed first-touch has no home yet: ask node 0, which
	 * makes the first node that writes it its home (write), or says it
	 * has none yet (a read: the page is zeros); its answer comes back
	 * through dsm_proto_homed. */
	void (*claim)(void *ctx, uint32_t page, bool write);
	/* Optional: copies page's home copy into dst now, where the node
	 * reads it one-sided and its own diffs are all at their homes;
	 * false when it cannot (dsm_proto_acquire then invalidates). */
	bool (*refresh)(void *ctx, uint32_t home, uint32_t page, void *dst);
};

struct dsm_proto_stats {
	uint64_t read_faults, write_faults, fetches, twins, diffs, diff_bytes,
	    invalidations, intervals;
	uint64_t home_kept;    /* home pages a release left writable (below) */
	uint64_t refreshes;    /* of the fetches, made at an acquire (below) */
	uint64_t pretwins;     /* of the twins, made at such a refresh */
	uint64_t claims_ahead; /* first writes that did not wait (below) */
};

/* An acquire that invalidates a page this node holds a copy of (it read
 * it since the last notice, no twin) copies the home's copy into it
 * instead, in place, when the ops can (refresh): the page stays readable,
 * so neither a protection change (an interprocessor interrupt where a
 * program thread runs on another CPU) nor the fault that would follow.
 * At most refresh_max pages per acquire (EARTH_DSM_REFRESH, default
 * DSM_REFRESH_MAX; 0 none), the rest invalidated. A page refreshed
 * DSM_REFRESH_AGE times with no fault of this node's on it since is
 * invalidated at the next notice instead: read again, it faults once and
 * is refreshed again; never read again, it costs no more copies. Read
 * again within DSM_REFRESH_AGE notices of that invalidation, it is
 * refreshed twice as long the next time, up to DSM_REFRESH_GROW doublings
 * (a page read in every interval faults once in 65); read again later,
 * it starts over. An acquire that names a page in several intervals
 * copies it once. A refreshed page this node wrote the last time it had
 * it (its diff was not empty) is twinned and made writable at once too (a
 * pretwin): its next write takes no fault. A pretwinned page left unwritten has
 * an empty diff at the release: it is named in no write notice, and is not
 * pretwinned again until it is written again. */
#define DSM_REFRESH_MAX 16
#define DSM_REFRESH_AGE 8
#define DSM_REFRESH_GROW 3

/* A home page written again within DSM_HOME_KEEP intervals of this node
 * (each write noticed by its fault) stays writable through the next
 * DSM_HOME_KEEP releases: each of them notices it as written without a fault or
 * a protection change (a write notice that may name a page not written since:
 * other nodes then invalidate a copy they could have kept, which release
 * consistency allows). Then it is read-only again, and its next write
 * keeps it writable again at once. A page written again right after its
 * keep ended (within DSM_HOME_KEEP intervals) is kept twice as long the next
 * time, up to DSM_HOME_KEEP_GROW times the first keep (255 releases at most):
 * a page written in every interval faults at its first two writes, then
 * 33, 65 and 129 intervals later, then once in 256, instead of at each.
 * A write after a longer pause starts over at DSM_HOME_KEEP. So a page that
 * stops being written is named in at most one keep's releases more.
 * Intervals and releases are counted in rounds of as many as the node has
 * program threads (dsm_proto_threads): each of them releasing once per
 * barrier, a page written in every episode by one of them is kept as with
 * one thread. */
#define DSM_HOME_KEEP 32
#define DSM_HOME_KEEP_GROW 8

struct dsm_proto {
	struct dsm_region *r;
	uint32_t self, nodes;
	struct dsm_log log;
	const struct dsm_proto_ops *ops;
	void *ctx;
	uint16_t *home;	   /* per page */
	uint8_t **twin;	   /* per page: the twin while written, or NULL */
	uint32_t twin_hi;  /* every page with a twin is below it */
	uint8_t *fetching; /* per page: a fetch is out */
	uint8_t *dirty;	   /* per page: written in the open interval */
	uint32_t *dirty_list, ndirty;
	uint32_t diffs_out; /* sent, not acknowledged */
	uint32_t done;	    /* this node's last interval whose diffs all were */
	uint8_t *dbuf;	    /* one diff */
	/* Fibers' holds (earth_dsm_fiber.h): per page, the acquisitions
	 * that hold it; whether an invalidation waits for the last of them
	 * to let go; pages a release kept writable (held) meanwhile. */
	_Atomic uint32_t *pin;	   /* the EU adds its hits' holds too */
	_Atomic uint8_t *deferred; /* read by the EU too */
	/* Per page: the SU is taking access away (an invalidation, a write
	 * protection); the EU's hit backs off (dsm_proto_may_shrink). */
	_Atomic uint8_t *shrinking;
	uint32_t *kept;
	/* Home pages (DSM_HOME_KEEP): releases each stays writable still,
	 * and the interval of its last write noticed by a fault. */
	uint16_t *hot; /* releases it stays writable still */
	uint8_t *span; /* its last keep, in rounds (0: none since a pause) */
	uint32_t *wrote;
	/* Cached pages: written the last time this node had them (a
	 * pretwin's hint); pretwinned in the open interval. */
	uint8_t *wr_hint, *pretwin;
	/* Per page: refreshes since this node's last fault on it (255:
	 * ended, invalidated), and its doublings of DSM_REFRESH_AGE. */
	uint8_t *fresh, *fresh_grow;
	/* Pages the acquire under way refreshed, and their counts before. */
	struct dsm_fresh_now {
		uint32_t page;
		uint8_t fresh;
	} * now;
	uint32_t nnow;
	/* Protection changes an acquire (invalidations) or a release
	 * (write protections) decided and has not made yet: per page the
	 * state it goes to + 1 (0: none), the pages listed in pend_list and
	 * all in [pend_lo, pend_hi). Made at the acquire's or release's end
	 * by runs of consecutive pages bound for one state: one
	 * dsm_region_set a run, not one a page (each a system call and a
	 * TLB flush). */
	uint8_t *pend;
	uint32_t *pend_list, npend, pend_lo, pend_hi;
	uint64_t deferred_n;   /* invalidations and protections put off */
	uint32_t refresh_left; /* of refresh_max, this acquire */
	uint32_t refresh_max;  /* pages an acquire may refresh */
	uint32_t home_keep;    /* DSM_HOME_KEEP, or EARTH_DSM_HOME_KEEP */
	uint32_t threads;      /* dsm_proto_threads: releases in a round */
	/* A write fault on a page with no home claims it and goes on
	 * (dsm_proto_access, while the caller sets it), and the claims so
	 * made that node 0 has not answered yet. */
	bool claim_ahead;
	uint32_t claims_out;
	struct dsm_proto_stats st;
};

/* The last of this node's intervals whose diffs are all at their homes
 * (acknowledged): what a grant this node makes for another node may
 * carry of its own (dsm_log_encode_since's own_upto). A later one that
 * reached the grantee first would have it copy the pages without them
 * and take the interval as seen, so that no later grant invalidates
 * them. Its own releases need not wait for this: they go once the diffs
 * are acknowledged, or behind them to the one node they all went to. */
uint32_t dsm_proto_sendable(const struct dsm_proto *p);

/* What an access may do now. */
enum dsm_access {
	DSM_ACCESS_OK,	 /* the page is usable (the access runs again) */
	DSM_ACCESS_WAIT, /* a fetch is out: dsm_proto_page_in answers it */
};

/* Readies p for node self of nodes over region r (every page homed on
 * node 0 until dsm_proto_set_home, and left invalid in r: node 0 maps a
 * page of its own at its first access). Returns 0, or -1 with errno. */
int dsm_proto_init(struct dsm_proto *p, struct dsm_region *r, uint32_t self,
		   uint32_t nodes, const struct dsm_proto_ops *ops, void *ctx);
void dsm_proto_fini(struct dsm_proto *p);

/* Homes of pages first .. first+n-1 (every node sets the same); a page
 * homed here becomes read-only and valid, another invalid; DSM_HOME_NONE
 * (dsm/alloc.h): first touch, no home yet. The pages are an allocation's,
 * placed anew: writes made here since the last release (to memory freed
 * meanwhile) are dropped with their twins. 0 or -1. */
int dsm_proto_set_home(struct dsm_proto *p, uint32_t first, uint32_t n,
		       uint32_t home);

/* The program threads this node runs now (0 counts as 1): the releases a
 * keep (DSM_HOME_KEEP) counts as one round. */
void dsm_proto_threads(struct dsm_proto *p, uint32_t n);

/* A program thread of this node faulted on page (write: it writes), or a
 * fiber acquires it. again: the same access asked again (the page came,
 * or it waited for something else), not counted as a fault once more. */
enum dsm_access dsm_proto_access(struct dsm_proto *p, uint32_t page, bool write,
				 bool again);

/* Twins page now and makes it writable (a pretwin, as a refresh's): a
 * copy of another node's page (no twin, nothing out for it, no
 * invalidation waiting) that this node holds for reading, or that is
 * invalid and the ops can refresh from the home's copy now (counted as
 * a fetch and a refresh), which the caller expects the thread it lets go
 * next to write; that write then takes no fault. Left unwritten, its
 * empty diff names it in no notice. true when it did. */
bool dsm_proto_pretwin(struct dsm_proto *p, uint32_t page);

/* The home's answer to a fetch: the page's bytes. Returns 1 when the page
 * is usable now (wake its waiters); 0 when the page was invalidated while
 * the fetch was out, so the answer may predate the notice: it is asked
 * for again and its waiters wait on; -1 with a reason in *why (not asked
 * for, not from its home, wrong size). */
int dsm_proto_page_in(struct dsm_proto *p, uint32_t from, uint32_t page,
		      const void *data, size_t len, const char **why);

/* Home side: the home copy of page for node from to be sent from (the
 * transport copies it; the home's threads may write other bytes of it
 * meanwhile, which the fetcher may not read before it synchronises), or
 * NULL with *why (not homed here, not a page of the region). */
const void *dsm_proto_serve(const struct dsm_proto *p, uint32_t from,
			    uint32_t page, const char **why);

/* Home side: applies node from's diff of page. -1 with *why when the page
 * is not homed here or the diff is refused (nothing applied). */
int dsm_proto_apply(struct dsm_proto *p, uint32_t from, uint32_t page,
		    const void *diff, size_t len, const char **why);

/* Node 0's answer to a claim of a first-touch page (or its word to
 * every node that the page has a home now): home, or DSM_HOME_NONE when
 * the page has none yet (a read claim: it is zeros here, read-only).
 * Returns 1 (wake the page's waiters: they ask again), or -1 with *why
 * (a page that is not first-touch, a home that is no node). */
int dsm_proto_homed(struct dsm_proto *p, uint32_t page, uint32_t home,
		    const char **why);

/* The EU made page, homed here, writable at its first write in this
 * interval (dsm/pt.h): it is noted as written (a notice at the release,
 * which makes it read-only again). */
void dsm_proto_home_written(struct dsm_proto *p, uint32_t page);

/* Whether this node claimed first-touch page to write and waits for node
 * 0's word (a fetch or a diff for it may come first). */
bool dsm_proto_claiming(const struct dsm_proto *p, uint32_t page);

/* A home acknowledged a diff. -1 when none was out. */
int dsm_proto_diff_acked(struct dsm_proto *p);

/* A release: diffs of every page written here to their homes, the
 * interval closed. Returns the diffs not yet acknowledged (the release
 * completes when dsm_proto_diff_acked brings them to 0), or -1 (ENOMEM,
 * or mprotect's errno). */
int dsm_proto_release(struct dsm_proto *p);

/*
 * Fibers hold pages (earth_dsm_fiber.h): a fiber's acquisition holds
 * every page of its range from the moment it is usable until the fiber's
 * release, and while a page is held nothing takes it away: an
 * invalidation a notice asks for waits for the last hold to go (the page
 * counts as invalid meanwhile for every new access: dsm_proto_access
 * answers WAIT, dsm_proto_held true), and a release sends a held page's
 * diff against its twin and twins it again instead of write-protecting
 * it (a home page stays writable and written), so that a fiber never
 * faults on a page it holds.
 */
/* Holds page (a fiber's acquisition found it usable). -1 when 65535
 * acquisitions hold it already. */
int dsm_proto_pin(struct dsm_proto *p, uint32_t page);
/* Lets go of one hold of page; 1 when that was the last and the
 * invalidation that waited for it is done now (wake the page's waiters:
 * they ask again), 0 otherwise, -1 when the page was not held. */
int dsm_proto_unpin(struct dsm_proto *p, uint32_t page);
/* Whether page's invalidation waits for its holds to go (the page is
 * invalid for any new acquisition). */
static inline bool dsm_proto_stale(const struct dsm_proto *p, uint32_t page)
{
	return atomic_load_explicit(&p->deferred[page], memory_order_relaxed);
}

/*
 * Holds the EU takes itself (a hit: every page of a fiber's range usable,
 * no request): it adds one to each page's pin, then reads shrinking,
 * deferred and the state (all seq_cst); the SU, before it takes access to
 * a page away, sets shrinking, then reads the pin. One of the two sees
 * the other: either the SU leaves the page as it is (the hold stands), or
 * the EU takes its holds back and asks the SU (a miss). A page whose
 * invalidation waits keeps deferred set until the invalidation is done.
 */
static inline bool dsm_hold_try(_Atomic uint32_t *pin,
				const _Atomic uint8_t *shrinking,
				const _Atomic uint8_t *deferred,
				const uint8_t *state, uint32_t page, bool write)
{
	atomic_fetch_add(&pin[page], 1);
	if (!atomic_load(&shrinking[page]) && !atomic_load(&deferred[page]) &&
	    dsm_page_allows(__atomic_load_n(&state[page], __ATOMIC_SEQ_CST),
			    write))
		return true;
	atomic_fetch_sub(&pin[page], 1);
	return false;
}

/* An acquire: the intervals a grant carries (dsm/notice.h), checked, then
 * their pages invalidated, with those of every interval learned before
 * and not applied yet. -1 with *f when refused (nothing changed). */
int dsm_proto_acquire(struct dsm_proto *p, const void *buf, size_t len,
		      struct dsm_notice_fault *f);

/* A manager receives a release (an unlock, a barrier arrival, a flag
 * set): the intervals it carries are held, to go on in the grants, but
 * this node's copies are not invalidated until one of its own threads or
 * fibers acquires (dsm_proto_acquire): its threads that did not
 * synchronise with that release may go on reading what they had. -1 with
 * *f when refused. */
int dsm_proto_learn(struct dsm_proto *p, const void *buf, size_t len,
		    struct dsm_notice_fault *f);

#endif
