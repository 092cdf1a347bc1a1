/* SPDX-License-Identifier: MIT */
/*
 * dsm/fault.h - a program thread that touches a page of the shared region
 * it may not touch yet faults (SIGBUS from userfaultfd, or SIGSEGV on the
 * page's protection: dsm/region.h); the EU's handler asks the node for
 * the page and, while it comes, gives the EU to another thread.
 *
 * The handler itself never switches: when the thread must wait it returns
 * into a resume path on the thread's own stack (below the interrupted code's
 * red zone), which saves every general register, the flags and the whole
 * FP/vector state (XSAVE) there, switches to the EU's scheduler as any
 * wait does, and once resumed (on whichever EU runs it then) restores them
 * all and runs the faulting access again. So a waiting thread holds
 * nothing of the EU's (no signal stack, no signal frame), and the signal
 * is over before any switch (what TSan's signal handling needs).
 *
 * The handler runs on an alternate signal stack, one per EU, so that a
 * thread whose stack overflowed (into its guard page) still gets a report.
 *
 * A fault outside the region is the program's bug: the handler writes
 * "<prefix>segmentation fault at ADDR (not in shared memory)" (or "bus
 * error at"), or names a program thread's stack overflow, and the default
 * action ends the process as it would have without it; so does a signal
 * on the region that its protocol cannot raise (a machine check).
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

/* One EU's side: the region, what to call, the thread it runs. */
struct dsm_faults {
	struct dsm_region *region;
	dsm_fault_fn on_fault;
	void *arg;
	struct dsm_thread *cur; /* the program thread running, or NULL */
	struct dsm_ctx *sched;	/* where a waiting thread switches to */
	void *alt;		/* the alternate signal stack */
	uint64_t faults, waits; /* counters */
	char prefix[48];	/* of the crash report */
};

/* Installs the SIGSEGV and SIGBUS handler for the process: once, whichever of a
 * node's EUs calls first (several may at once; the others wait for it).
 * Returns 0 or -1 with errno. */
int dsm_fault_install(void);

/* Readies f for the calling thread (an EU) and registers its alternate
 * stack. Returns 0, or -1 with errno (ENOMEM). */
int dsm_faults_init(struct dsm_faults *f, struct dsm_region *region,
		    dsm_fault_fn on_fault, void *arg, struct dsm_ctx *sched,
		    const char *prefix);

/* Unmaps f's alternate stack, and unregisters it where it is the calling
 * thread's (any thread, once no program thread runs on f's EU). */
void dsm_faults_fini(struct dsm_faults *f);

/* Runs program thread t on the calling EU until it switches back to the
 * scheduler, f->sched (it waits, or it ended: t->finished, having switched
 * to t->back, which this sets to f->sched). */
void dsm_faults_run(struct dsm_faults *f, struct dsm_thread *t);

#endif
