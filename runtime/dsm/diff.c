/* SPDX-License-Identifier: MIT */
/*
 * dsm/diff.c - encoding a page's changes against its twin as byte runs,
 * cutting it into parts, checking a diff from elsewhere, applying it
 * (dsm/diff.h).
 *
 * The encoder compares eight bytes at a time: an equal word is skipped
 * whole, a word whose eight bytes all differ is taken whole, and the
 * first equal or differing byte of a mixed word is found from the XOR of
 * the two words (little-endian: the lowest byte is the first).
 */
#include "dsm/diff.h"

#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "dsm/diff.c reads bytes from words little-endian");

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The lowest byte of x that is zero has its top bit set in the result
 * (higher bits may be set wrongly; the lowest is exact); 0 if none. */
static inline uint64_t zero_bytes(uint64_t x)
{
	return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* The first byte at or after i where page and twin differ (n if none). */
static size_t next_diff(const uint8_t *p, const uint8_t *t, size_t i, size_t n)
{
	while (i + 8 <= n) {
		uint64_t x = ld64(p + i) ^ ld64(t + i);
		if (x)
			return i + (size_t)__builtin_ctzll(x) / 8;
		i += 8;
	}
	while (i < n && p[i] == t[i])
		i++;
	return i;
}

/* The first byte at or after i where page and twin are equal (n if
 * none). */
static size_t next_same(const uint8_t *p, const uint8_t *t, size_t i, size_t n)
{
	while (i + 8 <= n) {
		uint64_t z = zero_bytes(ld64(p + i) ^ ld64(t + i));
		if (z)
			return i + (size_t)__builtin_ctzll(z) / 8;
		i += 8;
	}
	while (i < n && p[i] != t[i])
		i++;
	return i;
}

size_t dsm_diff_encode(const void *page, const void *twin, size_t page_size,
		       void *out, size_t cap)
{
	const uint8_t *p = page, *t = twin;
	uint8_t *o = out;
	size_t len = 0, n = page_size;
	for (size_t i = next_diff(p, t, 0, n); i < n;
	     i = next_diff(p, t, i, n)) {
		size_t e = next_same(p, t, i + 1, n), k = e - i;
		if (cap - len < DSM_DIFF_RUN_HDR + k)
			return (size_t)-1;
		uint16_t off = (uint16_t)i, cnt = (uint16_t)(k - 1);
		memcpy(o + len, &off, 2);
		memcpy(o + len + 2, &cnt, 2);
		memcpy(o + len + DSM_DIFF_RUN_HDR, p + i, k);
		len += DSM_DIFF_RUN_HDR + k;
		i = e;
	}
	return len;
}

int dsm_diff_check(const void *diff, size_t len, size_t page_size,
		   struct dsm_diff_fault *f)
{
	const uint8_t *d = diff;
	const char *what = NULL;
	size_t at = 0, end = 0; /* end: the first byte after the last run */
	uint32_t run = 0;
	if (page_size == 0 || page_size > DSM_DIFF_PAGE_MAX)
		what = "the page size is 0 or above 65536 bytes";
	for (; !what && at < len; run++) {
		if (len - at < DSM_DIFF_RUN_HDR) {
			what = "the diff ends inside a run's header";
			break;
		}
		uint16_t off, cnt;
		memcpy(&off, d + at, 2);
		memcpy(&cnt, d + at + 2, 2);
		size_t k = (size_t)cnt + 1;
		if (run && off < end)
			what = "a run starts before the end of the one before "
			       "it (runs are ascending and do not overlap)";
		else if (off + k > page_size)
			what = "a run goes past the end of the page";
		else if (len - at - DSM_DIFF_RUN_HDR < k)
			what = "the diff ends inside a run's bytes";
		if (what)
			break;
		end = off + k;
		at += DSM_DIFF_RUN_HDR + k;
	}
	if (!what)
		return 0;
	if (f) {
		f->what = what;
		f->run = run;
		f->at = (uint32_t)at;
	}
	return -1;
}

int dsm_diff_apply(void *page, size_t page_size, const void *diff, size_t len,
		   struct dsm_diff_fault *f)
{
	if (dsm_diff_check(diff, len, page_size, f))
		return -1;
	const uint8_t *d = diff;
	for (size_t at = 0; at < len;) {
		uint16_t off, cnt;
		memcpy(&off, d + at, 2);
		memcpy(&cnt, d + at + 2, 2);
		memcpy((uint8_t *)page + off, d + at + DSM_DIFF_RUN_HDR,
		       (size_t)cnt + 1);
		at += DSM_DIFF_RUN_HDR + (size_t)cnt + 1;
	}
	return 0;
}

size_t dsm_diff_cut(struct dsm_diff_cutter *c, void *out, size_t cap)
{
	uint8_t *o = out;
	size_t len = 0;
	while (c->at < c->len && cap - len > DSM_DIFF_RUN_HDR) {
		uint16_t off, cnt;
		memcpy(&off, c->diff + c->at, 2);
		memcpy(&cnt, c->diff + c->at + 2, 2);
		size_t left = (size_t)cnt + 1 - c->done;
		size_t k = cap - len - DSM_DIFF_RUN_HDR;
		if (k > left)
			k = left;
		uint16_t o16 = (uint16_t)(off + c->done),
			 c16 = (uint16_t)(k - 1);
		memcpy(o + len, &o16, 2);
		memcpy(o + len + 2, &c16, 2);
		memcpy(o + len + DSM_DIFF_RUN_HDR,
		       c->diff + c->at + DSM_DIFF_RUN_HDR + c->done, k);
		len += DSM_DIFF_RUN_HDR + k;
		if (k == left) {
			c->at += DSM_DIFF_RUN_HDR + (size_t)cnt + 1;
			c->done = 0;
		} else {
			c->done += k;
		}
	}
	return len;
}

void dsm_diff_count(const void *diff, size_t len, uint32_t *runs,
		    uint32_t *bytes)
{
	const uint8_t *d = diff;
	uint32_t r = 0, b = 0;
	for (size_t at = 0; at + DSM_DIFF_RUN_HDR <= len; r++) {
		uint16_t cnt;
		memcpy(&cnt, d + at + 2, 2);
		b += (uint32_t)cnt + 1;
		at += DSM_DIFF_RUN_HDR + (size_t)cnt + 1;
	}
	*runs = r;
	*bytes = b;
}
