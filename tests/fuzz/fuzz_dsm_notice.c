/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dsm_notice.c - libFuzzer target for the write notices a grant
 * carries (runtime/dsm/notice.c). Input: a byte chooses the job's nodes
 * (1 .. 8) and this node, the rest is the encoded intervals, added to a
 * log that holds two intervals of its own. A refusal must name a reason
 * and change nothing; an addition must keep every node's intervals
 * contiguous, end at its vector time, invalidate only pages of the
 * region, and encode back to intervals another log accepts (one that holds none
 * of its own among them).
 *
 *   make fuzz-dsm_notice  (tests/fuzz/module.mk)
 */
#define EARTH_INTERNAL 1
#include "dsm/notice.h"

#include <stdlib.h>
#include <string.h>

#define PAGES 128u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inval(void *arg, uint32_t page)
{
	(void)arg;
	if (page >= PAGES)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint32_t nodes = (data[0] & 7) + 1, self = (data[0] >> 3) % nodes;
	struct dsm_log l, m;
	if (dsm_log_init(&l, nodes, self, PAGES) ||
	    dsm_log_init(&m, nodes, (self + 1) % nodes, PAGES))
		abort();
	uint32_t w[] = {1, 2, 3};
	dsm_log_close(&l, w, 3);
	dsm_log_close(&l, w + 1, 2);
	uint32_t before[8];
	memcpy(before, l.vt, nodes * sizeof(*before));
	struct dsm_notice_fault f = {0};
	if (dsm_log_add(&l, data + 1, size - 1, inval, NULL, &f)) {
		if (!f.what || memcmp(before, l.vt, nodes * sizeof(*before)))
			abort();
	} else {
		for (uint32_t n = 0; n < nodes; n++) {
			const struct dsm_node_log *g = &l.log[n];
			if (l.vt[n] < before[n] || g->first != 1 ||
			    g->n != l.vt[n])
				abort();
			for (uint32_t i = 0; i < g->n; i++)
				if (g->iv[i].seq != i + 1)
					abort();
		}
		/* m takes what l holds, but for m's own intervals (l may
		 * have some that m never made: m must refuse those). */
		static uint8_t buf[1 << 20];
		if (l.vt[m.self])
			goto out;
		size_t len = dsm_log_encode_since(&l, m.vt, UINT32_MAX, buf,
						  sizeof(buf));
		if (len >= (size_t)-2 ||
		    dsm_log_add(&m, buf, len, inval, NULL, &f))
			abort();
	}
out:
	dsm_log_fini(&l);
	dsm_log_fini(&m);
	return 0;
}
