/* SPDX-License-Identifier: MIT */
/*
 * dsm/proto.c - one node's side of home-based multi-writer lazy release
 * consistency (dsm/proto.h).
 */
#include "dsm/proto.h"
#include "dsm/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a page waits for: nothing, its home's copy (asked again if a
 * notice made the answer stale), or node 0's word on a first-touch page
 * (claimed to read, or to write). */
enum {
	FETCH_NONE,
	FETCH_OUT,
	FETCH_STALE,
	CLAIM_READ,
	CLAIM_WRITE,
	CLAIM_AHEAD, /* written here meanwhile, against a twin of zeros */
};

/* A page's refreshes ended (dsm_proto::fresh): it was invalidated, and
 * fresh counts the notices since, up to 254; 255: refreshed by the
 * acquire under way. */
enum { FRESH_ENDED = 128, FRESH_NOW = 255 };

int dsm_proto_init(struct dsm_proto *p, struct dsm_region *r, uint32_t self,
		   uint32_t nodes, const struct dsm_proto_ops *ops, void *ctx)
{
	memset(p, 0, sizeof(*p));
	if (dsm_log_init(&p->log, nodes, self, r->pages))
		return -1;
	p->r = r;
	p->self = self;
	p->nodes = nodes;
	p->ops = ops;
	p->ctx = ctx;
	p->refresh_max = DSM_REFRESH_MAX;
	p->home_keep = DSM_HOME_KEEP;
	p->threads = 1;
	size_t n = r->pages;
	p->home = calloc(n, sizeof(*p->home));
	p->twin = calloc(n, sizeof(*p->twin));
	p->fetching = calloc(n, 1);
	p->dirty = calloc(n, 1);
	p->dirty_list = calloc(n, sizeof(*p->dirty_list));
	p->dbuf = malloc(dsm_diff_bound(r->page_size));
	p->pin = calloc(n, sizeof(*p->pin));
	p->deferred = calloc(n, 1);
	p->shrinking = calloc(n, 1);
	p->kept = calloc(n, sizeof(*p->kept));
	p->hot = calloc(n, sizeof(*p->hot));
	p->span = calloc(n, 1);
	p->wrote = calloc(n, sizeof(*p->wrote));
	p->wr_hint = calloc(n, 1);
	p->pretwin = calloc(n, 1);
	p->fresh = calloc(n, 1);
	p->fresh_grow = calloc(n, 1);
	p->now = calloc(n, sizeof(*p->now));
	p->pend = calloc(n, 1);
	p->pend_list = calloc(n, sizeof(*p->pend_list));
	p->pend_lo = UINT32_MAX;
	if (!p->home || !p->twin || !p->fetching || !p->dirty ||
	    !p->dirty_list || !p->dbuf || !p->pin || !p->deferred ||
	    !p->shrinking || !p->kept || !p->hot || !p->span || !p->wrote ||
	    !p->wr_hint || !p->pretwin || !p->fresh || !p->fresh_grow ||
	    !p->now || !p->pend || !p->pend_list) {
		dsm_proto_fini(p);
		errno = ENOMEM;
		return -1;
	}
	/* Homed on node 0, none of them mapped there yet: node 0 maps a
	 * page at its placement or at its first access (dsm_proto_access),
	 * so the region costs memory only for what the job uses. */
	return 0;
}

void dsm_proto_fini(struct dsm_proto *p)
{
	if (p->twin && p->r)
		for (uint32_t i = 0; i < p->twin_hi; i++)
			free(p->twin[i]);
	free(p->home);
	free(p->twin);
	free(p->fetching);
	free(p->dirty);
	free(p->dirty_list);
	free(p->dbuf);
	free(p->pin);
	free(p->deferred);
	free(p->shrinking);
	free(p->kept);
	free(p->hot);
	free(p->span);
	free(p->wrote);
	free(p->wr_hint);
	free(p->pretwin);
	free(p->fresh);
	free(p->fresh_grow);
	free(p->now);
	free(p->pend);
	free(p->pend_list);
	dsm_log_fini(&p->log);
	memset(p, 0, sizeof(*p));
}

/* A first write claimed ahead (claim_ahead, below) no longer waits for
 * node 0's answer; its twin dropped unless its diff goes to a home
 * elsewhere. */
static void claim_ahead_end(struct dsm_proto *p, uint32_t page, bool drop_twin)
{
	p->fetching[page] = FETCH_NONE;
	p->claims_out--;
	if (drop_twin) {
		free(p->twin[page]);
		p->twin[page] = NULL;
	}
}

int dsm_proto_set_home(struct dsm_proto *p, uint32_t first, uint32_t n,
		       uint32_t home)
{
	if (first > p->r->pages || n > p->r->pages - first ||
	    (home >= p->nodes && home != DSM_HOME_NONE)) {
		errno = EINVAL;
		return -1;
	}
	for (uint32_t i = first; i < first + n; i++) {
		p->home[i] = (uint16_t)home;
		p->hot[i] = p->span[i] = 0;
		p->wrote[i] = 0;
		p->wr_hint[i] = 0;
		p->fresh[i] = p->fresh_grow[i] = 0;
		if (p->fetching[i] == CLAIM_AHEAD)
			/* Placed anew while claimed ahead (written after
			 * its free): no answer counts for it now (its twin
			 * goes below, with any other's). */
			claim_ahead_end(p, i, false);
		if (p->fetching[i] >= CLAIM_READ)
			p->fetching[i] = FETCH_NONE;
		/* Written here since the last release, and placed anew
		 * before it (a write after its free): the writes belong to
		 * no allocation, so no diff goes to the new one's home, nor
		 * to no home at all. */
		free(p->twin[i]);
		p->twin[i] = NULL;
		p->pretwin[i] = 0;
	}
	return dsm_region_set(
	    p->r, first, n, home == p->self ? DSM_PAGE_HOME : DSM_PAGE_INVALID);
}

static void invalidate(void *arg, uint32_t page);
static void acquire_end(struct dsm_proto *p);

/* An invalidation put off for a fiber's hold, done now (outside an
 * acquire: it ends at once). */
static void invalidate_now(struct dsm_proto *p, uint32_t page)
{
	invalidate(p, page);
	acquire_end(p);
}

/* The SU is about to take access to page away: false when a fiber holds
 * it (nothing changes then); true: go on, then shrunk (dsm_hold_try says
 * why this order). */
static bool may_shrink(struct dsm_proto *p, uint32_t page)
{
	atomic_store(&p->shrinking[page], 1);
	if (!atomic_load(&p->pin[page]))
		return true;
	atomic_store_explicit(&p->shrinking[page], 0, memory_order_release);
	return false;
}

static void shrunk(struct dsm_proto *p, uint32_t page)
{
	atomic_store_explicit(&p->shrinking[page], 0, memory_order_release);
}

static void mark_dirty(struct dsm_proto *p, uint32_t page)
{
	if (!p->dirty[page]) {
		p->dirty[page] = 1;
		p->dirty_list[p->ndirty++] = page;
	}
}

/* Page goes to state at the end of the acquire or release under way
 * (dsm_proto::pend); its entry and protection stay as they are until
 * then. */
static void pend_add(struct dsm_proto *p, uint32_t page,
		     enum dsm_page_state state)
{
	p->pend[page] = (uint8_t)(state + 1);
	p->pend_list[p->npend++] = page;
	if (page < p->pend_lo)
		p->pend_lo = page;
	if (page >= p->pend_hi)
		p->pend_hi = page + 1;
}

/* Pages first .. end - 1 changed: no longer pending, then(p, page) for
 * each (then may be NULL). */
static void pend_done(struct dsm_proto *p, uint32_t first, uint32_t end,
		      void (*then)(struct dsm_proto *, uint32_t))
{
	for (uint32_t q = first; q < end; q++) {
		p->pend[q] = 0;
		if (then)
			then(p, q);
	}
}

/* Invalidates the runs drop[0 .. n) in one change (dsm_region_invalidate)
 * and lets their pages go. */
static void pend_drop(struct dsm_proto *p, const struct dsm_run *drop,
		      uint32_t n, void (*then)(struct dsm_proto *, uint32_t))
{
	dsm_region_invalidate(p->r, drop, n);
	for (uint32_t k = 0; k < n; k++)
		pend_done(p, drop[k].first, drop[k].first + drop[k].n, then);
}

/* Makes the changes pend_add gathered, a run of consecutive pages bound
 * for one state at a time (the runs to invalidate DSM_REGION_RUNS at a
 * time); then, for each page of the run, then(p, page) (may be NULL). The
 * list in page order: read off the marks where the pages are dense in
 * [pend_lo, pend_hi), else sorted. */
static void pend_apply(struct dsm_proto *p,
		       void (*then)(struct dsm_proto *, uint32_t))
{
	uint32_t n = p->npend, *list = p->pend_list, ndrop = 0;
	struct dsm_run drop[DSM_REGION_RUNS];
	if (n && p->pend_hi - p->pend_lo <= 4 * (uint64_t)n) {
		n = 0;
		for (uint32_t i = p->pend_lo; i < p->pend_hi; i++)
			if (p->pend[i])
				list[n++] = i;
	} else if (n) {
		dsm_pages_sort(list, n);
	}
	for (uint32_t k = 0; k < n;) {
		uint32_t first = list[k++], end = first + 1;
		uint8_t to = p->pend[first];
		if (!to)
			continue;
		while (k < n && list[k] == end && p->pend[end] == to) {
			end++;
			k++;
		}
		/* Invalidations (an acquire's) go together, several runs a
		 * system call; protections one a run. */
		if (to - 1 == DSM_PAGE_INVALID) {
			drop[ndrop++] = (struct dsm_run){first, end - first};
			if (ndrop == DSM_REGION_RUNS) {
				pend_drop(p, drop, ndrop, then);
				ndrop = 0;
			}
			continue;
		}
		dsm_region_set(p->r, first, end - first,
			       (enum dsm_page_state)(to - 1));
		pend_done(p, first, end, then);
	}
	if (ndrop)
		pend_drop(p, drop, ndrop, then);
	p->npend = 0;
	p->pend_lo = UINT32_MAX;
	p->pend_hi = 0;
}

/* Twins page from its bytes now and makes it writable and written in the
 * open interval; false when out of memory (nothing changed). */
static bool twin_make(struct dsm_proto *p, uint32_t page)
{
	uint8_t *t = malloc(p->r->page_size);
	if (!t)
		return false;
	memcpy(t, dsm_region_alias(p->r, page), p->r->page_size);
	p->twin[page] = t;
	if (page >= p->twin_hi) /* (the end scans no further) */
		p->twin_hi = page + 1;
	mark_dirty(p, page);
	dsm_region_set(p->r, page, 1, DSM_PAGE_WRITE);
	return true;
}

/* twin_make, counted; pre: before any write (a pretwin). */
static bool twin_take(struct dsm_proto *p, uint32_t page, bool pre)
{
	if (!twin_make(p, page))
		return false;
	p->st.twins++;
	if (pre) {
		p->pretwin[page] = 1;
		p->st.pretwins++;
	}
	return true;
}

/* A thread's first write to a page no node has written yet, as far as
 * this node knows: the claim goes to node 0 and the thread writes on at
 * once, against a twin of zeros (every copy of a page with no home is
 * zeros). Node 0's answer (dsm_proto_homed) makes this node the home (the
 * twin is dropped) or names another (the twin stays: the release sends
 * the diff there). Until every such answer came, this node neither
 * releases nor acquires (claims_out). */
static enum dsm_access claim_ahead(struct dsm_proto *p, uint32_t page)
{
	memset(dsm_region_alias(p->r, page), 0, p->r->page_size);
	if (!twin_make(p, page))	/* counted if its home is elsewhere */
		return DSM_ACCESS_WAIT; /* no memory: try later */
	p->fetching[page] = CLAIM_AHEAD;
	p->claims_out++;
	p->st.claims_ahead++;
	p->ops->claim(p->ctx, page, true);
	return DSM_ACCESS_OK;
}

enum dsm_access dsm_proto_access(struct dsm_proto *p, uint32_t page, bool write,
				 bool again)
{
	uint8_t st = dsm_region_state(p->r, page);
	if (!again) {
		++*(write ? &p->st.write_faults : &p->st.read_faults);
		/* In use: refreshed again; read again soon after its
		 * refreshes ended, refreshed longer the next time. */
		if (p->fresh[page] >= FRESH_ENDED)
			p->fresh_grow[page] =
			    p->fresh[page] - FRESH_ENDED >= DSM_REFRESH_AGE ? 0
			    : p->fresh_grow[page] < DSM_REFRESH_GROW
				? p->fresh_grow[page] + 1
				: p->fresh_grow[page];
		p->fresh[page] = 0;
	}
	if (atomic_load(&p->deferred[page])) {
		/* Its holds gone (an EU's hit that backed off may have
		 * put it off): done now; else dsm_proto_unpin wakes it. */
		if (!atomic_load(&p->pin[page]))
			invalidate_now(p, page);
		if (atomic_load(&p->deferred[page]))
			return DSM_ACCESS_WAIT;
		st = dsm_region_state(p->r, page);
	}
	if (p->home[page] == DSM_HOME_NONE) {
		if (st == DSM_PAGE_READ && !write)
			return DSM_ACCESS_OK; /* zeros: no home yet */
		/* A write, or a read of a page never seen: node 0 decides;
		 * a read claim out when a write comes is followed by a
		 * write claim once it is answered. */
		if (write && p->claim_ahead && p->fetching[page] == FETCH_NONE)
			return claim_ahead(p, page);
		if (p->fetching[page] == FETCH_NONE) {
			p->fetching[page] = write ? CLAIM_WRITE : CLAIM_READ;
			p->ops->claim(p->ctx, page, write);
		}
		return DSM_ACCESS_WAIT;
	}
	if (p->home[page] == p->self) {
		if (write && st != DSM_PAGE_WRITE) {
			mark_dirty(p, page);
			dsm_region_set(p->r, page, 1, DSM_PAGE_WRITE);
		} else if (st == DSM_PAGE_INVALID) { /* not mapped yet */
			dsm_region_set(p->r, page, 1, DSM_PAGE_HOME);
		}
		return DSM_ACCESS_OK;
	}
	if (st == DSM_PAGE_INVALID) {
		if (p->fetching[page] == FETCH_NONE) {
			p->fetching[page] = FETCH_OUT;
			p->st.fetches++;
			p->ops->fetch(p->ctx, p->home[page], page);
		}
		return DSM_ACCESS_WAIT;
	}
	if (write && st == DSM_PAGE_READ) {
		if (!twin_take(p, page, false))
			return DSM_ACCESS_WAIT; /* no memory: try later */
		p->wr_hint[page] = 1;
	}
	return DSM_ACCESS_OK;
}

bool dsm_proto_pretwin(struct dsm_proto *p, uint32_t page)
{
	if (page >= p->r->pages || p->home[page] == p->self ||
	    p->home[page] == DSM_HOME_NONE || p->twin[page] || p->dirty[page] ||
	    p->fetching[page] != FETCH_NONE || atomic_load(&p->deferred[page]))
		return false; /* dirty: its earlier diff must be noticed */
	uint8_t st = dsm_region_state(p->r, page);
	if (st == DSM_PAGE_INVALID) { /* the home's copy first, if it can */
		if (!p->ops->refresh ||
		    !p->ops->refresh(p->ctx, p->home[page], page,
				     dsm_region_alias(p->r, page)) ||
		    !twin_take(p, page, true))
			return false;
		p->fresh[page] = 0;
		p->st.fetches++;
		p->st.refreshes++;
		return true;
	}
	return st == DSM_PAGE_READ && twin_take(p, page, true);
}

int dsm_proto_page_in(struct dsm_proto *p, uint32_t from, uint32_t page,
		      const void *data, size_t len, const char **why)
{
	if (page >= p->r->pages)
		*why = "a page past the end of the region";
	else if (p->home[page] != from)
		*why = "a page from a node that is not its home";
	else if (p->fetching[page] != FETCH_OUT &&
		 p->fetching[page] != FETCH_STALE)
		*why = "a page this node did not ask for";
	else if (len != p->r->page_size)
		*why = "a page of the wrong size";
	else
		*why = NULL;
	if (*why)
		return -1;
	if (p->fetching[page] == FETCH_STALE) {
		p->fetching[page] = FETCH_OUT;
		p->st.fetches++;
		p->ops->fetch(p->ctx, from, page);
		return 0;
	}
	p->fetching[page] = FETCH_NONE;
	memcpy(dsm_region_alias(p->r, page), data, len);
	dsm_region_set(p->r, page, 1, DSM_PAGE_READ);
	return 1;
}

/* Home side: is a message of node from about page one this node may
 * answer? NULL, or why not. */
static const char *home_check(const struct dsm_proto *p, uint32_t from,
			      uint32_t page)
{
	if (page >= p->r->pages)
		return "a page past the end of the region";
	if (p->home[page] != p->self)
		return "a page this node is not the home of";
	if (from == p->self || from >= p->nodes)
		return "a message from this node itself or from no node";
	return NULL;
}

const void *dsm_proto_serve(const struct dsm_proto *p, uint32_t from,
			    uint32_t page, const char **why)
{
	if ((*why = home_check(p, from, page)))
		return NULL;
	return dsm_region_alias(p->r, page);
}

int dsm_proto_apply(struct dsm_proto *p, uint32_t from, uint32_t page,
		    const void *diff, size_t len, const char **why)
{
	if ((*why = home_check(p, from, page)))
		return -1;
	struct dsm_diff_fault f;
	if (dsm_diff_apply(dsm_region_alias(p->r, page), p->r->page_size, diff,
			   len, &f)) {
		*why = f.what;
		return -1;
	}
	return 0;
}

int dsm_proto_homed(struct dsm_proto *p, uint32_t page, uint32_t home,
		    const char **why)
{
	if (page >= p->r->pages)
		*why = "a page past the end of the region";
	else if (home >= p->nodes && home != DSM_HOME_NONE)
		*why = "a home that is no node of the job";
	else if (p->home[page] != DSM_HOME_NONE && p->home[page] != home)
		*why = "a page that has another home";
	else if (home == DSM_HOME_NONE && p->fetching[page] != CLAIM_READ)
		*why = "no home for a page this node did not claim to read";
	else if (p->fetching[page] == CLAIM_AHEAD &&
		 p->home[page] != DSM_HOME_NONE)
		*why = "a second home for a page this node wrote first";
	else
		*why = NULL;
	if (*why)
		return -1;
	if (p->fetching[page] == CLAIM_AHEAD) {
		/* Written here meanwhile: its home now, or a diff for it. */
		claim_ahead_end(p, page, home == p->self);
		p->home[page] = (uint16_t)home;
		if (home != p->self) {
			p->st.twins++;
			p->wr_hint[page] = 1;
		}
		return 1;
	}
	/* (A fetch may be out already: the word came before the answer.) */
	if (p->fetching[page] >= CLAIM_READ)
		p->fetching[page] = FETCH_NONE;
	if (home == DSM_HOME_NONE) {
		/* Never written anywhere: zeros, read-only. */
		memset(dsm_region_alias(p->r, page), 0, p->r->page_size);
		dsm_region_set(p->r, page, 1, DSM_PAGE_READ);
		return 1;
	}
	if (p->home[page] == home)
		return 1; /* said already (a claim answered after the word) */
	p->home[page] = (uint16_t)home;
	if (home == p->self) {
		/* The first writer: the home copy starts as zeros. */
		memset(dsm_region_alias(p->r, page), 0, p->r->page_size);
		dsm_region_set(p->r, page, 1, DSM_PAGE_HOME);
	} else {
		dsm_region_set(p->r, page, 1, DSM_PAGE_INVALID);
	}
	return 1;
}

void dsm_proto_home_written(struct dsm_proto *p, uint32_t page)
{
	if (page < p->r->pages && p->home[page] == p->self &&
	    dsm_region_state(p->r, page) == DSM_PAGE_WRITE)
		mark_dirty(p, page);
}

bool dsm_proto_claiming(const struct dsm_proto *p, uint32_t page)
{
	return page < p->r->pages && p->home[page] == DSM_HOME_NONE &&
	       (p->fetching[page] == CLAIM_WRITE ||
		p->fetching[page] == CLAIM_AHEAD);
}

int dsm_proto_diff_acked(struct dsm_proto *p)
{
	if (!p->diffs_out)
		return -1;
	p->diffs_out--;
	return 0;
}

uint32_t dsm_proto_sendable(const struct dsm_proto *p)
{
	return p->diffs_out ? p->done : p->log.vt[p->self];
}

/* Page's diff against its twin to its home; the twin replaced by next
 * (freed). */
static size_t diff_out(struct dsm_proto *p, uint32_t page, uint8_t *next)
{
	size_t len = dsm_diff_encode(dsm_region_alias(p->r, page),
				     p->twin[page], p->r->page_size, p->dbuf,
				     dsm_diff_bound(p->r->page_size));
	free(p->twin[page]);
	p->twin[page] = next;
	if (len) {
		p->ops->diff(p->ctx, p->home[page], page, p->dbuf, len);
		if (!p->diffs_out) /* the closed intervals' diffs are home */
			p->done = p->log.vt[p->self];
		p->diffs_out++;
		p->st.diffs++;
		p->st.diff_bytes += len;
	}
	return len;
}

/* Page's diff to its home; the page is write-protected first (so no write
 * can follow the diff), its twin freed. The diff's length (0: nothing
 * changed, nothing sent), or -1. */
static long send_diff(struct dsm_proto *p, uint32_t page)
{
	if (dsm_region_set(p->r, page, 1, DSM_PAGE_READ))
		return -1;
	return (long)diff_out(p, page, NULL);
}

/* A held page's diff at a release: a new twin taken first, then the diff
 * against the old one, so that a write the holder makes meanwhile is in
 * the next diff if not in this one; the page stays writable and
 * written. The diff's length (0: nothing changed since the last), or -1
 * (ENOMEM). */
static long send_diff_held(struct dsm_proto *p, uint32_t page)
{
	uint8_t *t = malloc(p->r->page_size);
	if (!t)
		return -1;
	memcpy(t, dsm_region_alias(p->r, page), p->r->page_size);
	return (long)diff_out(p, page, t);
}

void dsm_proto_threads(struct dsm_proto *p, uint32_t n)
{
	p->threads = n ? (n < 256 ? n : 256) : 1; /* hot stays in 16 bits */
}

/* A home page written in this interval (DSM_HOME_KEEP): whether it
 * stays writable through this release. Its keep doubles each time it is
 * written again right after the last one ended (DSM_HOME_KEEP_GROW).
 * Counted in rounds of p->threads releases. */
static bool home_keeps(struct dsm_proto *p, uint32_t page)
{
	uint32_t cur = p->log.vt[p->self] + 1; /* the interval closing */
	if (p->hot[page]) {
		if (--p->hot[page])
			return true;
	} else if (p->home_keep && p->wrote[page] &&
		   cur - p->wrote[page] <= p->home_keep * p->threads) {
		uint32_t most = p->home_keep * DSM_HOME_KEEP_GROW,
			 span =
			     p->span[page] ? 2u * p->span[page] : p->home_keep;
		if (most > UINT8_MAX)
			most = UINT8_MAX;
		if (span > most)
			span = most;
		p->span[page] = (uint8_t)span;
		p->hot[page] = (uint16_t)(span * p->threads);
		return true;
	} else {
		p->span[page] = 0; /* after a pause: start over */
	}
	p->wrote[page] = cur;
	return false;
}

int dsm_proto_release(struct dsm_proto *p)
{
	if (p->nodes == 1) {
		/* No other node to notice anything: every page is homed here
		 * and stays as the program made it (writable once written). */
		for (uint32_t i = 0; i < p->ndirty; i++)
			p->dirty[p->dirty_list[i]] = 0;
		p->ndirty = 0;
		return 0;
	}
	uint32_t nkept = 0, nlog = 0; /* dirty_list[0 .. nlog): noticed */
	for (uint32_t i = 0; i < p->ndirty; i++) {
		uint32_t page = p->dirty_list[i];
		if (p->fetching[page] == CLAIM_AHEAD) {
			/* No home yet (a fiber's release: a thread's waits
			 * for the homes): the next release's. */
			p->kept[nkept++] = page;
			continue;
		}
		p->dirty_list[nlog++] = page;
		if (p->home[page] == p->self && !p->twin[page] &&
		    dsm_region_state(p->r, page) == DSM_PAGE_WRITE &&
		    home_keeps(p, page)) {
			/* Written in a row: noticed, left writable. */
			p->kept[nkept++] = page;
			p->st.home_kept++;
			continue;
		}
		if (dsm_region_state(p->r, page) == DSM_PAGE_WRITE &&
		    !may_shrink(p, page)) {
			/* Held by a fiber: written on, noticed now if its
			 * diff says it was written since the last release
			 * (a home page has none: always). */
			long len = p->twin[page] ? send_diff_held(p, page) : 1;
			if (len < 0)
				return -1;
			if (!len)
				nlog--;
			p->kept[nkept++] = page;
			p->deferred_n++;
			continue;
		}
		/* Write-protected with the others (by runs, below), then
		 * its diff: no write can follow the diff. */
		if (p->twin[page])
			pend_add(p, page, DSM_PAGE_READ);
		else if (p->home[page] == p->self &&
			 dsm_region_state(p->r, page) == DSM_PAGE_WRITE)
			pend_add(p, page, DSM_PAGE_HOME);
		p->dirty[page] = 2; /* closing: its end below */
	}
	pend_apply(p, NULL);
	uint32_t w = 0;
	for (uint32_t i = 0; i < nlog; i++) {
		uint32_t page = p->dirty_list[i];
		bool noticed = true;
		if (p->dirty[page] == 2) {
			if (p->twin[page]) {
				size_t len = diff_out(p, page, NULL);
				/* Pretwinned, not written: no notice. */
				if (!len && p->pretwin[page]) {
					p->wr_hint[page] = 0;
					noticed = false;
				}
				p->pretwin[page] = 0;
			}
			shrunk(p, page);
			p->dirty[page] = 0;
		}
		if (noticed)
			p->dirty_list[w++] = page;
	}
	nlog = w;
	if (dsm_log_close(&p->log, p->dirty_list, nlog))
		return -1;
	if (nlog)
		p->st.intervals++;
	p->ndirty = nkept;
	memcpy(p->dirty_list, p->kept, nkept * sizeof(*p->kept));
	return (int)p->diffs_out;
}

/* A copy this node reads (no twin, nothing out for it), refreshed from
 * the home's copy in place where the ops can (p->refresh_left): it stays
 * readable, so neither its protection nor a later fault changes hands.
 * A thread of this node that reads it meanwhile reads a word the notice
 * names only if it races with the write the notice carries (a
 * data-race-free program does not), and any other word with its value
 * unchanged. Written here last time: twinned and writable too. */
static bool refresh_in_place(struct dsm_proto *p, uint32_t page)
{
	if (p->fresh[page] == FRESH_NOW) /* by this acquire already */
		return true;
	if (p->fresh[page] >= FRESH_ENDED) { /* unread since they ended */
		if (p->fresh[page] < FRESH_NOW - 1)
			p->fresh[page]++;
		return false;
	}
	if (p->fresh[page] >= (DSM_REFRESH_AGE << p->fresh_grow[page])) {
		p->fresh[page] = FRESH_ENDED; /* invalidated: in use? */
		return false;
	}
	if (p->pend[page] || p->twin[page] || p->fetching[page] != FETCH_NONE ||
	    !p->refresh_left || !p->ops->refresh ||
	    dsm_region_state(p->r, page) != DSM_PAGE_READ ||
	    !p->ops->refresh(p->ctx, p->home[page], page,
			     dsm_region_alias(p->r, page)))
		return false;
	p->refresh_left--;
	p->st.fetches++;
	p->st.refreshes++;
	/* Its count goes up when the acquire ends (which may name the page
	 * again meanwhile), and then its pretwin. */
	p->now[p->nnow++] = (struct dsm_fresh_now){page, p->fresh[page]};
	p->fresh[page] = FRESH_NOW;
	return true;
}

/* The acquire's refreshes done: each page's count, and the pretwin of a
 * page written here the last time (twinned and writable). */
static void refreshes_end(struct dsm_proto *p)
{
	for (uint32_t i = 0; i < p->nnow; i++) {
		uint32_t page = p->now[i].page;
		p->fresh[page] = (uint8_t)(p->now[i].fresh + 1);
		if (p->wr_hint[page] && !p->dirty[page] && !p->twin[page] &&
		    dsm_region_state(p->r, page) == DSM_PAGE_READ)
			twin_take(p, page, true);
	}
	p->nnow = 0;
}

/* An invalidation made (pend_apply): the hold handshake ends. */
static void invalidated(struct dsm_proto *p, uint32_t page)
{
	atomic_store(&p->deferred[page], 0); /* after the state */
	shrunk(p, page);
}

static void acquire_end(struct dsm_proto *p)
{
	pend_apply(p, invalidated);
	refreshes_end(p);
}

static void invalidate(void *arg, uint32_t page)
{
	struct dsm_proto *p = arg;
	if (p->home[page] == p->self || p->fetching[page] == CLAIM_AHEAD)
		return; /* (no acquire meets a page claimed ahead) */
	if (p->pend[page]) {
		/* Named again by this acquire, invalid already: counted as
		 * a notice of a page not refreshed, nothing else. */
		refresh_in_place(p, page);
		return;
	}
	if (!may_shrink(p, page)) { /* held by a fiber: when it lets go */
		if (!atomic_load(&p->deferred[page]))
			p->deferred_n++;
		atomic_store(&p->deferred[page], 1);
		return;
	}
	if (!refresh_in_place(p, page)) {
		if (p->twin[page]) {
			send_diff(p, page); /* stays dirty: noticed at the
					     * release */
			p->pretwin[page] = 0;
		}
		if (p->fetching[page] == FETCH_OUT)
			p->fetching[page] = FETCH_STALE;
		if (dsm_region_state(p->r, page) != DSM_PAGE_INVALID) {
			/* Its protection with the others' at the end; it
			 * stays shrinking (and deferred) until then. */
			pend_add(p, page, DSM_PAGE_INVALID);
			p->st.invalidations++;
			return;
		}
	}
	atomic_store(&p->deferred[page], 0); /* done: after the state */
	shrunk(p, page);
}

int dsm_proto_pin(struct dsm_proto *p, uint32_t page)
{
	if (atomic_load(&p->pin[page]) >= UINT16_MAX)
		return -1;
	atomic_fetch_add(&p->pin[page], 1);
	return 0;
}

int dsm_proto_unpin(struct dsm_proto *p, uint32_t page)
{
	if (!atomic_load(&p->pin[page]))
		return -1;
	if (atomic_fetch_sub(&p->pin[page], 1) != 1 ||
	    !atomic_load(&p->deferred[page]))
		return 0;
	invalidate_now(p, page);
	return !atomic_load(&p->deferred[page]);
}

int dsm_proto_acquire(struct dsm_proto *p, const void *buf, size_t len,
		      struct dsm_notice_fault *f)
{
	p->refresh_left = p->refresh_max;
	int rc = dsm_log_add(&p->log, buf, len, invalidate, p, f);
	acquire_end(p);
	return rc;
}

int dsm_proto_learn(struct dsm_proto *p, const void *buf, size_t len,
		    struct dsm_notice_fault *f)
{
	return dsm_log_add(&p->log, buf, len, NULL, NULL, f);
}
