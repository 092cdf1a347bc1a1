/* SPDX-License-Identifier: MIT */
/*
 * tc_stats.h - Table 3 counters of Threaded-C programs: fiber starts
 * (context switches) and variables restored at fiber starts and saved at
 * fiber ends. The code earthcc generates updates them. Each thread that
 * runs fibers (every EU of a node) counts in a record of its own, made at
 * its first fiber and never freed, so that the counts stay plain
 * increments; the generated main sums them and prints the sums when
 * EARTH_TC_STATS=1 (threaded-c/runtime/tc_stats.c), after earth_run,
 * when every EU has ended.
 */
#ifndef EARTH_TC_STATS_H
#define EARTH_TC_STATS_H

#include <stdint.h>

struct tc_stats {
	uint64_t switches;     /* fibers started                     */
	uint64_t restored;     /* variables loaded from frames       */
	uint64_t saved;	       /* variables stored to frames         */
	struct tc_stats *next; /* the other threads' records     */
};

/* The calling thread's record, or NULL before its first fiber. */
extern __thread struct tc_stats *tc_stats_mine
    __attribute__((tls_model("initial-exec")));
/* Makes the calling thread's record (out of memory: a shared record that
 * counts nothing). */
struct tc_stats *tc_stats_join(void);

static inline struct tc_stats *tc_stats_here(void)
{
	struct tc_stats *s = tc_stats_mine;
	return __builtin_expect(s != 0, 1) ? s : tc_stats_join();
}

#define TC_STATS_FIBER(nrestored)                                              \
	do {                                                                   \
		struct tc_stats *tc_s_ = tc_stats_here();                      \
		tc_s_->switches++;                                             \
		tc_s_->restored += (nrestored);                                \
	} while (0)
#define TC_STATS_SAVE(nsaved) (tc_stats_here()->saved += (nsaved))

/* Prints the counters on stderr if EARTH_TC_STATS=1. After earth_run. */
void tc_stats_report(const char *program);

#endif /* EARTH_TC_STATS_H */
