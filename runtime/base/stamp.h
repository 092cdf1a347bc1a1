/* SPDX-License-Identifier: MIT */
/*
 * stamp.h - per-stage TSC timestamps of one remote load (the breakdown of
 * benchmarks/remote_load.c, Tables 4 and 5 of the EARTH-MANNA paper). A
 * stamp point is one macro call; it compiles to nothing unless the runtime
 * is built with -DEARTH_STAMPS (the library variant the benchmark links),
 * so the normal build's fast paths do not change. Each point keeps the
 * time it was last reached; EARTH_STAMP_IF stamps only when cond holds
 * (remote points stamp only for 8-byte values, so that reading the stamp
 * table with a larger BLKMOV leaves it alone).
 */
#ifndef EARTH_STAMP_H
#define EARTH_STAMP_H

#include <stdint.h>

#include "queues/q_arch.h"

enum earth_stamp_point {
	STAMP_SU_FETCH,	  /* SU takes the GET request from the ring     */
	STAMP_SU_SENT,	  /* request message built and handed to the net */
	STAMP_IRQ_RAISE,  /* a peer raised this node's interrupt (shm)   */
	STAMP_IRQ_ENTER,  /* handler entered                             */
	STAMP_R_READ,	  /* remote: request message read                */
	STAMP_R_GET,	  /* remote: value located and checked           */
	STAMP_R_SENT,	  /* remote: reply built and handed to the net   */
	STAMP_REPLY_READ, /* reply message read                          */
	STAMP_SIGNALLED,  /* value stored, slot signalled                */
	STAMP_READY,	  /* ready message published to the EU           */
	STAMP_EU_FETCH,	  /* EU takes the next fiber                     */
	STAMP_R_IRQ,	  /* remote: STAMP_IRQ_ENTER of this request     */
	STAMP_COUNT_
};

#ifdef EARTH_STAMPS
/* The stamp table (base/stamp.c); exported so a benchmark can read it. */
extern uint64_t earth_stamp_t[STAMP_COUNT_];
#define EARTH_STAMP(p) (earth_stamp_t[(p)] = q_tsc())
#define EARTH_STAMP_IF(cond, p)                                                \
	do {                                                                   \
		if (cond)                                                      \
			EARTH_STAMP(p);                                        \
	} while (0)
/* A remote request of interest was read: keep the handler entry that
 * brought it (later interrupts overwrite STAMP_IRQ_ENTER). */
#define EARTH_STAMP_REQ(cond)                                                  \
	do {                                                                   \
		if (cond) {                                                    \
			earth_stamp_t[STAMP_R_IRQ] =                           \
			    earth_stamp_t[STAMP_IRQ_ENTER];                    \
			EARTH_STAMP(STAMP_R_READ);                             \
		}                                                              \
	} while (0)
#else
#define EARTH_STAMP(p) ((void)0)
#define EARTH_STAMP_IF(cond, p) ((void)0)
#define EARTH_STAMP_REQ(cond) ((void)0)
#endif

#endif /* EARTH_STAMP_H */
