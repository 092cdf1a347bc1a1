/* SPDX-License-Identifier: MIT */
/*
 * observe.h - what the EU records about its fibers when statistics or a
 * trace were asked for (base/acct.h, base/trace.h): each fiber timed and
 * recorded as a slice, and what the EU found when it ended. Callers test
 * acct_on first, so with both off a fiber costs one predicted branch more.
 * EU only (the thread running fibers).
 */
#ifndef EARTH_EU_OBSERVE_H
#define EARTH_EU_OBSERVE_H

#ifndef EARTH_INTERNAL
#error "observe.h is internal to the EARTH runtime"
#endif

#include "base/acct.h"
#include "eu/eu.h"
#include "base/trace.h"

/* Runs fiber(frame), timed. */
static inline void eu_fiber_observed(earth_fiber_fn fiber, void *frame)
{
	uint64_t t0 = q_tsc();
	fiber(frame);
	uint64_t t1 = q_tsc();
	acct_fiber(t0, t1);
	if (trace_on)
		trace_slice(TRACE_EU, TRACE_FIBER, 0, 0, (uintptr_t)fiber, t0,
			    t1);
}

/* A fiber ended; `batched` says whether the ready message being run has
 * another fiber after it. */
static inline void eu_fiber_ended(struct eu_state *eu, bool batched)
{
	acct_switch(batched || q_ring_peek(eu->ready) != NULL);
}

/* The EU was idle from t0 to now; the trace buffer went out at its start. */
static inline void eu_idle_observed(uint64_t t0)
{
	acct_eu_idle(t0, q_tsc());
}

#endif /* EARTH_EU_OBSERVE_H */
