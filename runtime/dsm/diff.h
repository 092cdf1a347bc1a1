/* SPDX-License-Identifier: MIT */
/*
 * dsm/diff.h - what a writer changed in one page of shared memory,
 * against the twin copied before its first write, as runs of changed
 * bytes (home-based multi-writer release consistency: a release sends
 * each written page's diff to the page's home, which applies it).
 *
 * Byte runs, never words: two nodes may write different bytes of one word
 * in a data-race-free program (C11's memory locations are bytes), and
 * their diffs must merge at the home. For the same reason a diff never
 * carries a byte that did not change, even to join two runs: it would
 * overwrite another writer's byte at the home.
 *
 * Encoding, little-endian, one run after another, nothing else:
 *   u16 offset   first changed byte, from the start of the page
 *   u16 count-1  how many changed bytes (1 .. 65536)
 *   count bytes  their new values
 * Runs are ascending and do not overlap. A page is at most
 * DSM_DIFF_PAGE_MAX bytes. An empty diff (no run) is valid: nothing
 * changed.
 */
#ifndef EARTH_DSM_DIFF_H
#define EARTH_DSM_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define DSM_DIFF_PAGE_MAX 65536u
#define DSM_DIFF_RUN_HDR 4u

/* The most bytes the diff of a page of page_size bytes can take: every
 * other byte changed, each a run of its own. */
static inline size_t dsm_diff_bound(size_t page_size)
{
	return (page_size + 1) / 2 * DSM_DIFF_RUN_HDR + page_size;
}

/* Encodes the bytes of page that differ from twin (both page_size bytes,
 * page_size at most DSM_DIFF_PAGE_MAX) into out, which
 * holds cap bytes; returns the diff's length, or (size_t)-1 when it does
 * not fit (cap >= dsm_diff_bound(page_size) always fits). */
size_t dsm_diff_encode(const void *page, const void *twin, size_t page_size,
		       void *out, size_t cap);

/* What is wrong with a diff that failed its check: what (a sentence), the
 * run (from 0) and the byte of the diff where that run starts. */
struct dsm_diff_fault {
	const char *what;
	uint32_t run, at;
};

/* Checks a diff that came from elsewhere (untrusted) against a page of
 * page_size bytes: every run inside the page, ascending, not overlapping,
 * the runs filling len exactly. Returns 0, or -1 with *f (if f) saying
 * what is wrong first. */
int dsm_diff_check(const void *diff, size_t len, size_t page_size,
		   struct dsm_diff_fault *f);

/* Checks the diff (dsm_diff_check), then writes its runs into page. A
 * diff that fails the check changes nothing: returns -1 with *f. */
int dsm_diff_apply(void *page, size_t page_size, const void *diff, size_t len,
		   struct dsm_diff_fault *f);

/* Cutting a diff of our own into parts of at most a message each: every
 * part a diff of its own (its runs ascending, a run that does not fit cut
 * in two), applying the parts in order the same as applying the whole. */
struct dsm_diff_cutter {
	const uint8_t *diff;
	size_t len;
	size_t at;   /* the next run's header */
	size_t done; /* bytes of that run already in a part */
};

static inline void dsm_diff_cut_init(struct dsm_diff_cutter *c,
				     const void *diff, size_t len)
{
	c->diff = diff;
	c->len = len;
	c->at = 0;
	c->done = 0;
}

/* The next part into out (cap bytes, more than DSM_DIFF_RUN_HDR): its
 * length, 0 when the diff is all cut. */
size_t dsm_diff_cut(struct dsm_diff_cutter *c, void *out, size_t cap);

/* How many runs and changed bytes a checked diff holds. */
void dsm_diff_count(const void *diff, size_t len, uint32_t *runs,
		    uint32_t *bytes);

#endif
