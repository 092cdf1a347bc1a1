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
#include <stdlib.h>
#include <string.h>

/* This EU's side (dsm/pt.h), made at the first program thread it runs. */
static __thread struct dsm_eu *eu_dsm_mine
    __attribute__((tls_model("initial-exec")));

/* The first write to a page homed here in an interval: claimed and made
 * writable here (no twin: the page is the home's copy), then noted for
 * the SU, which makes it read-only again at the next release: so the SU
 * never sees a writable page it was not told of, and never re-protects
 * one whose claim is half done (dsm_region_claim). False when the list
 * is full, or another EU claims the page at once (the SU answers then). */
static bool home_written(struct dsm_eu *e, uint32_t page)
{
	uint32_t t =
	    atomic_load_explicit(&e->home_w_tail, memory_order_relaxed);
	uint32_t h =
	    atomic_load_explicit(&e->home_w_head, memory_order_acquire);
	if (t - h >= DSM_HOME_W_CAP ||
	    dsm_region_claim(&dsm_g.region, page, DSM_PAGE_HOME))
		return false;
	e->home_w[t % DSM_HOME_W_CAP] = page;
	atomic_store_explicit(&e->home_w_tail, t + 1, memory_order_release);
	e->home_writes++;
	return true;
}

/* A fault on page of the region (in the handler, on the EU). */
static enum dsm_fault_do eu_dsm_fault(void *arg, uint32_t page, bool write)
{
	struct dsm_eu *e = arg;
	if (!e->faults.cur) /* a fiber's: it must acquire (earth_dsm_fiber.h) */
		return dsm_g.hold ? DSM_FAULT_FIBER : DSM_FAULT_BUG;
	uint8_t st = dsm_region_state(&dsm_g.region, page);
	if (dsm_page_allows(st, write))
		return DSM_FAULT_RETRY; /* the SU made it usable meanwhile */
	if (st == DSM_PAGE_HOME && home_written(e, page))
		return DSM_FAULT_RETRY;
	eu_post_dsm(DSM_R_FAULT, (uintptr_t)dsm_pt_of(e->faults.cur), page,
		    write);
	return DSM_FAULT_WAIT;
}

static EARTH_COLD struct dsm_eu *eu_dsm_open(void)
{
	struct dsm_eu *e = NULL;
	if (posix_memalign((void **)&e, 64, sizeof(*e)))
		earth_fatal("shared memory: out of memory");
	memset(e, 0, sizeof(*e));
	char prefix[40];
	snprintf(prefix, sizeof(prefix), "earth: node %u: ", dsm_g.self);
	dsm_ctx_self(&e->sched);
	if (dsm_fault_install() ||
	    dsm_faults_init(&e->faults, &dsm_g.region, eu_dsm_fault, e,
			    &e->sched, prefix))
		earth_fatal("shared memory: cannot set up the fault handler "
			    "and its signal stack: %m");
	e->next = atomic_load_explicit(&dsm_g.eus, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&dsm_g.eus, &e->next, e,
						      memory_order_release,
						      memory_order_relaxed))
		;
	eu_dsm_mine = e;
	return e;
}

void eu_dsm_faults_on(void)
{
	if (q_unlikely(!eu_dsm_mine))
		eu_dsm_open();
}

struct dsm_pt *eu_dsm_self(void)
{
	struct dsm_eu *e = eu_dsm_mine;
	return e && e->faults.cur ? dsm_pt_of(e->faults.cur) : NULL;
}

void eu_dsm_run(void *arg)
{
	struct dsm_pt *pt = arg;
	struct dsm_eu *e = eu_dsm_mine;
	if (q_unlikely(!e))
		e = eu_dsm_open();
	dsm_faults_run(&e->faults, &pt->t);
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
	st->eu_faults = st->switches = st->home_writes_eu = 0;
	for (struct dsm_eu *e = atomic_load(&dsm_g.eus); e; e = e->next) {
		st->eu_faults += e->faults.faults;
		st->switches += e->faults.waits + e->calls;
		st->home_writes_eu += e->home_writes;
	}
}

void eu_dsm_fini(void)
{
	struct dsm_eu *e = atomic_exchange(&dsm_g.eus, NULL);
	while (e) {
		struct dsm_eu *next = e->next;
		dsm_faults_fini(&e->faults);
		free(e);
		e = next;
	}
	eu_dsm_mine = NULL;
}

int64_t eu_dsm_call(const char *what, unsigned req, uint64_t b, uint64_t c)
{
	struct dsm_pt *pt = eu_dsm_self();
	if (!pt)
		eu_misuse(what, "called outside a program thread of shared "
				"memory (earth_dsm.h: main under "
				"earth_dsm_main, or a thread started by "
				"EARTH_DSM_CREATE)");
	struct dsm_eu *e = eu_dsm_mine;
	eu_post_dsm(req, (uintptr_t)pt, b, c);
	e->calls++;
	e->faults.cur = NULL;
	dsm_switch(&pt->t.ctx, &e->sched);
	/* Resumed by eu_dsm_run, on this EU or another (which set its cur). */
	return pt->result;
}
