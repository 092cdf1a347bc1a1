/* SPDX-License-Identifier: MIT */
/*
 * dsm/fault.h - a program thread that touches a page of the shared region
 * it may not touch yet faults (SIGSEGV on the page's protection); the
 * EU's handler asks the node for the page and, while it comes, gives the
 * EU to another thread: the faulting thread switches to the EU's scheduler
 * from inside the handler and is resumed there later; the handler then
 * returns and the access runs again.
 *
 * The handler runs on an alternate signal stack, so that a thread whose
 * stack overflowed (into its guard page) still gets a report. A thread
 * that waits keeps the alternate stack its handler runs on: the EU
 * registers another one from its pool before it switches away (one
 * sigaltstack call per fault that waits, made once the thread has
 * switched away: the kernel refuses it on the stack in use), and the one
 * registered when the
 * thread resumes goes back to the pool (the kernel registers the thread's
 * own again when the handler returns).
 *
 * A fault outside the region is the program's bug: the handler writes
 * "<prefix>segmentation fault at ADDR (not in shared memory)", or names a
 * program thread's stack overflow, and the default action ends the
 * process as it would have without it.
 */
#ifndef EARTH_DSM_FAULT_H
#define EARTH_DSM_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "dsm/region.h"
#include "dsm/thread.h"

/* What the node does about a fault on page (write: the access writes),
 * called in the handler on the faulting thread's EU: */
enum dsm_fault_do {
	DSM_FAULT_RETRY, /* the page is usable now: run the access again */
	DSM_FAULT_WAIT,	 /* the page was asked for: the thread waits */
	DSM_FAULT_BUG,	 /* no access the program may make: end it */
	/* A fiber (no program thread) touched a page it may not use now:
	 * it did not acquire it (earth_dsm_fiber.h); end it saying so. */
	DSM_FAULT_FIBER,
};
typedef enum dsm_fault_do (*dsm_fault_fn)(void *arg, uint32_t page, bool write);

#define DSM_ALT_STACKS 64 /* threads of one EU that may wait on a fault */

/* One EU's side: the region, what to call, the thread it runs. */
struct dsm_faults {
	struct dsm_region *region;
	dsm_fault_fn on_fault;
	void *arg;
	struct dsm_thread *cur; /* the program thread running, or NULL */
	struct dsm_ctx *sched;	/* where a waiting thread switches to */
	void *alt_free[DSM_ALT_STACKS];
	unsigned nfree;
	void *alt_registered;	/* the alternate stack registered now */
	bool alt_swap;		/* a thread waits on it: register another */
	void *alt_map;		/* every alternate stack, one mapping */
	uint64_t faults, waits; /* counters */
	char prefix[48];	/* of the crash report */
};

/* Installs the SIGSEGV handler for the process (once; later calls do
 * nothing). Returns 0 or -1 with errno. */
int dsm_fault_install(void);

/* Readies f for the calling thread (an EU) and registers its first
 * alternate stack. Returns 0, or -1 with errno (ENOMEM). */
int dsm_faults_init(struct dsm_faults *f, struct dsm_region *region,
		    dsm_fault_fn on_fault, void *arg, struct dsm_ctx *sched,
		    const char *prefix);

/* Unregisters and unmaps the calling thread's alternate stacks. */
void dsm_faults_fini(struct dsm_faults *f);

/* Runs program thread t on the calling EU until it switches back to the
 * scheduler (it waits on a fault, or it ended: t->finished). Returns 0,
 * or -1 with errno when the next alternate stack cannot be registered. */
int dsm_faults_run(struct dsm_faults *f, struct dsm_thread *t);

#endif
