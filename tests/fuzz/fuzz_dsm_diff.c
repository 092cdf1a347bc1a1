/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dsm_diff.c - libFuzzer target for the page diffs a home receives
 * from writers (runtime/dsm/diff.c). Input: two bytes choose the page
 * size (1 .. 65536), the rest is the diff. It is applied to a page: a
 * refused diff must leave the page as it was and name a reason; an
 * accepted one must change only bytes inside its runs, and encoding the
 * result against the page before must give a diff that rebuilds it.
 *
 *   make fuzz-dsm_diff  (tests/fuzz/module.mk; part of make test with
 *   clang-14)
 */
#define EARTH_INTERNAL 1
#include "dsm/diff.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t before[DSM_DIFF_PAGE_MAX], page[DSM_DIFF_PAGE_MAX],
	    again[DSM_DIFF_PAGE_MAX];
	static bool in_run[DSM_DIFF_PAGE_MAX];
	static uint8_t enc[DSM_DIFF_PAGE_MAX * 3];
	if (size < 2)
		return 0;
	size_t n = ((size_t)data[0] | (size_t)data[1] << 8) + 1;
	const uint8_t *d = data + 2;
	size_t len = size - 2;
	for (size_t i = 0; i < n; i++)
		before[i] = page[i] = (uint8_t)(i * 31 + 7);
	struct dsm_diff_fault f = {0};
	if (dsm_diff_apply(page, n, d, len, &f)) {
		if (!f.what || memcmp(page, before, n))
			abort(); /* a refusal with no reason, or a partial one
				  */
		return 0;
	}
	/* Only bytes inside the runs may have changed. */
	memset(in_run, 0, n);
	for (size_t at = 0; at < len;) {
		uint16_t off, cnt;
		memcpy(&off, d + at, 2);
		memcpy(&cnt, d + at + 2, 2);
		for (size_t k = 0; k <= cnt; k++)
			in_run[off + k] = true;
		at += DSM_DIFF_RUN_HDR + (size_t)cnt + 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!in_run[i] && page[i] != before[i])
			abort();
	size_t el = dsm_diff_encode(page, before, n, enc, sizeof(enc));
	if (el == (size_t)-1 || el > dsm_diff_bound(n))
		abort();
	memcpy(again, before, n);
	if (dsm_diff_apply(again, n, enc, el, &f) || memcmp(again, page, n))
		abort();
	return 0;
}
