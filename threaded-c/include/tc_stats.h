/* SPDX-License-Identifier: MIT */
/*
 * tc_stats.h - Table 3 counters of Threaded-C programs: fiber starts
 * (context switches) and variables restored at fiber starts and saved at
 * fiber ends. The code earthcc generates updates them; they are plain
 * counters because only the EU thread runs fibers. The generated main
 * prints them when EARTH_TC_STATS=1 (threaded-c/runtime/tc_stats.c).
 */
#ifndef EARTH_TC_STATS_H
#define EARTH_TC_STATS_H

#include <stdint.h>

struct tc_stats {
	uint64_t switches; /* fibers started                     */
	uint64_t restored; /* variables loaded from frames       */
	uint64_t saved;	   /* variables stored to frames         */
};
extern struct tc_stats tc_stats;

#define TC_STATS_FIBER(nrestored)                                              \
	(tc_stats.switches++, tc_stats.restored += (nrestored))
#define TC_STATS_SAVE(nsaved) (tc_stats.saved += (nsaved))

/* Prints the counters on stderr if EARTH_TC_STATS=1. After earth_run. */
void tc_stats_report(const char *program);

#endif /* EARTH_TC_STATS_H */
