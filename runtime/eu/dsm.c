/* SPDX-License-Identifier: MIT */
/*
 * eu/dsm.c - program threads on the EU (dsm/pt.h): the fiber that runs
 * one until it waits or ends, the fault handler's question (is the page
 * usable now, or must the thread wait while the SU gets it), and the
 * calls by which a thread asks its SU for something and waits for the
 * answer. The protocol itself is the SU's (su/dsm.c).
 */
#define EARTH_INTERNAL 1
#include "dsm/fault.h"
#include "dsm/pt.h"
#include "eu/eu.h"

#include <stdio.h>

/* The EU's side of the fault path, set up on the EU thread at the first
 * program thread it runs. */
static struct dsm_faults eu_faults;
static bool eu_faults_ready;
static uint64_t eu_calls;	/* a thread's waits through eu_dsm_call */
static uint64_t eu_home_writes; /* home pages made writable here */

/* The first write to a page homed here in an interval: made writable
 * here (no twin: the page is the home's copy), then noted for the SU,
 * which makes it read-only again at the next release: so the SU never
 * sees a writable page it was not told of. False when the list is full
 * (the SU does it then). */
static bool home_written(uint32_t page)
{
	uint32_t t =
	    atomic_load_explicit(&dsm_g.home_w_tail, memory_order_relaxed);
	uint32_t h =
	    atomic_load_explicit(&dsm_g.home_w_head, memory_order_acquire);
	if (t - h >= DSM_HOME_W_CAP ||
	    dsm_region_set(&dsm_g.region, page, 1, DSM_PAGE_WRITE))
		return false;
	dsm_g.home_w[t % DSM_HOME_W_CAP] = page;
	atomic_store_explicit(&dsm_g.home_w_tail, t + 1, memory_order_release);
	eu_home_writes++;
	return true;
}

/* A fault on page of the region (in the handler, on the EU). */
static enum dsm_fault_do eu_dsm_fault(void *arg, uint32_t page, bool write)
{
	struct dsm_faults *f = arg;
	if (!f->cur) /* a fiber's: it must acquire (earth_dsm_fiber.h) */
		return dsm_g.hold ? DSM_FAULT_FIBER : DSM_FAULT_BUG;
	uint8_t st =
	    __atomic_load_n(&dsm_g.region.state[page], __ATOMIC_RELAXED);
	if (dsm_page_allows(st, write))
		return DSM_FAULT_RETRY; /* the SU made it usable meanwhile */
	if (st == DSM_PAGE_HOME && home_written(page))
		return DSM_FAULT_RETRY;
	eu_post_dsm(DSM_R_FAULT, (uintptr_t)dsm_pt_of(f->cur), page, write);
	return DSM_FAULT_WAIT;
}

static EARTH_COLD void eu_faults_open(void)
{
	char prefix[40];
	snprintf(prefix, sizeof(prefix), "earth: node %u: ", dsm_g.self);
	/* The EU thread's own context, for the sanitizers' fiber switches
	 * (TSan's fiber of this thread; ASan's stack bounds). */
	dsm_ctx_self(&dsm_g.sched);
	if (dsm_fault_install() ||
	    dsm_faults_init(&eu_faults, &dsm_g.region, eu_dsm_fault, &eu_faults,
			    &dsm_g.sched, prefix))
		earth_fatal("shared memory: cannot set up the fault handler "
			    "and its signal stacks: %m");
	eu_faults_ready = true;
}

void eu_dsm_faults_on(void)
{
	if (q_unlikely(!eu_faults_ready))
		eu_faults_open();
}

struct dsm_pt *eu_dsm_self(void)
{
	return eu_faults.cur ? dsm_pt_of(eu_faults.cur) : NULL;
}

void eu_dsm_run(void *arg)
{
	struct dsm_pt *pt = arg;
	if (q_unlikely(!eu_faults_ready))
		eu_faults_open();
	if (dsm_faults_run(&eu_faults, &pt->t))
		earth_fatal("shared memory: cannot register a signal stack "
			    "for the next fault: %m");
	if (!pt->t.finished)
		return; /* it waits: the SU runs this fiber again */
	dsm_thread_destroy(&pt->t);
	if (pt->id == 0 && dsm_g.self == 0) {
		/* main returned: the job ends with its value. */
		earth_set_exit_status((int)pt->result);
		earth_end_function(eu_self->main_frame);
		return;
	}
	/* Its writes are released, node 0 told; the SU frees the record. */
	eu_post_dsm(DSM_R_END, (uintptr_t)pt, 0, 0);
}

void eu_dsm_stats(struct dsm_stats *st)
{
	st->eu_faults = eu_faults.faults;
	st->switches = eu_faults.waits + eu_calls;
	st->home_writes_eu = eu_home_writes;
}

void eu_dsm_fini(void)
{
	if (eu_faults_ready)
		dsm_faults_fini(&eu_faults);
	eu_faults_ready = false;
	eu_calls = 0;
	eu_home_writes = 0;
}

int64_t eu_dsm_call(const char *what, unsigned req, uint64_t b, uint64_t c)
{
	struct dsm_pt *pt = eu_dsm_self();
	if (!pt)
		eu_misuse(what, "called outside a program thread of shared "
				"memory (earth_dsm.h: main under "
				"earth_dsm_main, or a thread started by "
				"EARTH_DSM_CREATE)");
	eu_post_dsm(req, (uintptr_t)pt, b, c);
	eu_calls++;
	eu_faults.cur = NULL;
	dsm_switch(&pt->t.ctx, &dsm_g.sched);
	/* Resumed by eu_dsm_run (which set cur again). */
	return pt->result;
}
