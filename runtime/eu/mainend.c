/* SPDX-License-Identifier: MIT */
/*
 * mainend.c - main's frame ends (END_FUNCTION) while one of its slots
 * still waits: the answers it waits for would land in freed memory and
 * never be read, and the job would end as if all was well. For a
 * Threaded-C program the source table gives main's SYNC_SLOTS; a slot that
 * waits is one with a fiber and a count above 0 that is one-shot or not at
 * its reset count (a reset slot back at its reset count may be idle and is
 * not taken as waiting). The job stops with the END_FUNCTION's line and
 * each waiting slot's INIT_SYNC line. Runs once, when main ends.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "base/srctab.h"

#include <stdio.h>

void eu_main_end_check(void *frame)
{
	const struct frame_hdr *h = (const struct frame_hdr *)frame - 1;
	uint32_t at, k;
	if (!h->fn || !src_slots(h->fn->entry, h->fn->frame_size, &at, &k))
		return;
	const earth_slot *slots =
	    (const earth_slot *)(const void *)((const char *)frame + at);
	char list[768] = "";
	size_t used = 0;
	unsigned waiting = 0;
	for (uint32_t i = 0; i < k; i++) {
		const earth_slot *s = &slots[i];
		if (s->count <= 0 || !s->fiber ||
		    (s->reset > 0 && s->count == s->reset))
			continue;
		waiting++;
		const struct earth_src_row *r = src_init_sync(s->fiber, (int)i);
		const struct earth_src_row *f = src_fiber(s->fiber);
		if (used + 160 >= sizeof(list))
			continue;
		int n = snprintf(
		    list + used, sizeof(list) - used,
		    "%sslot %u still waits for %d signal%s (INIT_SYNC at "
		    "%s:%u, fiber %s)",
		    waiting > 1 ? "; " : "", (unsigned)i, s->count,
		    s->count == 1 ? "" : "s", r && r->file ? r->file : "?",
		    r ? (unsigned)r->line : 0u,
		    f && f->fiber_name ? f->fiber_name : "?");
		used += n > 0 ? (size_t)n : 0;
	}
	if (!waiting)
		return;
	eu_misuse("END_FUNCTION",
		  "main ends while %s: the answers it waits for would be lost; "
		  "fix: end this fiber with END_THREAD() and end main in the "
		  "fiber the slot enables",
		  list);
}
