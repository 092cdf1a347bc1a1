/* SPDX-License-Identifier: MIT */
/*
 * tc_stats.c - the Threaded-C counters (tc_stats.h) and their report.
 */
#include "tc_stats.h"
#include "base/settings.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tc_stats tc_stats;

void tc_stats_report(const char *program)
{
	/* The settings earth_run loaded (base/settings.h). */
	if (!earth_setting_on(EARTH_SET_TC_STATS))
		return;
	const char *base = program ? strrchr(program, '/') : NULL;
	base = base ? base + 1 : (program ? program : "?");
	double n = tc_stats.switches ? (double)tc_stats.switches : 1.0;
	fprintf(stderr,
		"earth_tc %s: switches %llu restored %llu saved %llu "
		"restored_avg %.3f saved_avg %.3f save_restore_avg %.3f\n",
		base, (unsigned long long)tc_stats.switches,
		(unsigned long long)tc_stats.restored,
		(unsigned long long)tc_stats.saved, tc_stats.restored / n,
		tc_stats.saved / n, (tc_stats.restored + tc_stats.saved) / n);
}
