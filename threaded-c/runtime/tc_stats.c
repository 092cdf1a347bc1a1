/* SPDX-License-Identifier: MIT */
/*
 * tc_stats.c - the Threaded-C counters (tc_stats.h): each thread's record,
 * and the report of their sums.
 */
#include "tc_stats.h"
#include "base/settings.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread struct tc_stats *tc_stats_mine
    __attribute__((tls_model("initial-exec")));
/* Every thread's record, pushed at its first fiber. */
static struct tc_stats *_Atomic all;
/* Where a thread counts when no memory was left for its record: its own,
 * not summed. */
static __thread struct tc_stats lost;

struct tc_stats *tc_stats_join(void)
{
	struct tc_stats *s = calloc(1, sizeof(*s));
	if (!s)
		return tc_stats_mine = &lost;
	s->next = atomic_load_explicit(&all, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(
	    &all, &s->next, s, memory_order_release, memory_order_relaxed))
		;
	return tc_stats_mine = s;
}

void tc_stats_report(const char *program)
{
	/* The settings earth_run loaded (base/settings.h). */
	if (!earth_setting_on(EARTH_SET_TC_STATS))
		return;
	const char *base = program ? strrchr(program, '/') : NULL;
	base = base ? base + 1 : (program ? program : "?");
	struct tc_stats t = {0};
	for (struct tc_stats *s =
		 atomic_load_explicit(&all, memory_order_acquire);
	     s; s = s->next) {
		t.switches += s->switches;
		t.restored += s->restored;
		t.saved += s->saved;
	}
	double n = t.switches ? (double)t.switches : 1.0;
	fprintf(stderr,
		"earth_tc %s: switches %llu restored %llu saved %llu "
		"restored_avg %.3f saved_avg %.3f save_restore_avg %.3f\n",
		base, (unsigned long long)t.switches,
		(unsigned long long)t.restored, (unsigned long long)t.saved,
		t.restored / n, t.saved / n, (t.restored + t.saved) / n);
}
