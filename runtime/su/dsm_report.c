/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_report.c - what the SU's shared memory says when asked
 * (su/dsm_int.h): the threads and fibers a stuck job's node has waiting,
 * and on what (node/stuck.c asks), and its statistics (--stats).
 */
#define EARTH_INTERNAL 1
#include "dsm/pt.h"
#include "dsm/sync.h"
#include "su/dsm_fiber.h"
#include "su/dsm_int.h"
#include "su/su.h"

#include <stdio.h>

/* ---- a stuck job (node/stuck.c asks) ---- */

static const char *const req_names[DSM_R_COUNT_] = {
    [DSM_R_LOCK] = "lock",
    [DSM_R_BARRIER] = "barrier",
    [DSM_R_FLAG_WAIT] = "flag",
};

static uint32_t thread_of(uint32_t node, uint32_t slot)
{
	return slot * su_dsm_g.n->num_nodes + node;
}

unsigned su_dsm_stuck_report(FILE *f)
{
	if (!su_dsm_g.n)
		return 0;
	unsigned self = su_dsm_g.n->id, waiting = 0;
	for (unsigned i = 0; i < DSM_WAITERS_PER_NODE; i++) {
		struct dsm_pt *pt = su_dsm_g.by_slot[i];
		if (!pt || !pt->wait_req)
			continue;
		waiting++;
		if (pt->fiber)
			fprintf(f,
				"earth: node %u: stuck: a fiber (%s) waits for "
				"%s 0x%x (made by node %u)\n",
				self, su_dsm_fiber_name(pt->ffiber),
				req_names[pt->wait_req], pt->wait_id,
				dsm_id_node(pt->wait_id));
		else if (pt->wait_req == DSM_R_WAIT_END)
			fprintf(f,
				"earth: node %u: stuck: thread %u waits for "
				"%u thread%s to end, and %u did\n",
				self, pt->id, su_dsm_g.end_want,
				su_dsm_g.end_want == 1 ? "" : "s",
				su_dsm_g.ended);
		else
			fprintf(f,
				"earth: node %u: stuck: thread %u waits for "
				"%s 0x%x (made by node %u)\n",
				self, pt->id, req_names[pt->wait_req],
				pt->wait_id, dsm_id_node(pt->wait_id));
	}
	/* What the objects this node manages say. */
	uint32_t nl = atomic_load(&dsm_g.nlocks),
		 nb = atomic_load(&dsm_g.nbarriers),
		 nf = atomic_load(&dsm_g.nflags);
	for (uint32_t k = 0; k < nl && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w = dsm_sync_waiting(&su_dsm_g.sync, DSM_SYNC_LOCK, k);
		int64_t h = dsm_sync_holder(&su_dsm_g.sync, k);
		if (!w)
			continue;
		if (h >= 0 &&
		    h % DSM_WAITERS_PER_NODE >= DSM_THREADS_PER_NODE) {
			fprintf(f,
				"earth: node %u: stuck: lock 0x%x is held by "
				"the fibers of node %u, and %u wait%s for it: "
				"unlock it on every path "
				"(earth_dsm_unlock_sync)\n",
				self, dsm_id(self, k),
				(unsigned)(h / DSM_WAITERS_PER_NODE), w,
				w == 1 ? "s" : "");
			continue;
		}
		fprintf(f,
			"earth: node %u: stuck: lock 0x%x is held by thread %u "
			"(node %u), and %u thread%s wait%s for it: release it "
			"on every path (earth_dsm_unlock, UNLOCK)\n",
			self, dsm_id(self, k),
			h < 0 ? 0
			      : thread_of((uint32_t)(h / DSM_WAITERS_PER_NODE),
					  (uint32_t)(h % DSM_WAITERS_PER_NODE)),
			h < 0 ? 0 : (unsigned)(h / DSM_WAITERS_PER_NODE), w,
			w == 1 ? "" : "s", w == 1 ? "s" : "");
	}
	for (uint32_t k = 0; k < nb && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w =
		    dsm_sync_waiting(&su_dsm_g.sync, DSM_SYNC_BARRIER, k);
		if (w)
			fprintf(f,
				"earth: node %u: stuck: barrier 0x%x has %u "
				"thread%s waiting for the others: every "
				"thread of the count must reach it\n",
				self, dsm_id(self, k), w, w == 1 ? "" : "s");
	}
	for (uint32_t k = 0; k < nf && k < DSM_OBJECTS_PER_NODE; k++) {
		uint32_t w = dsm_sync_waiting(&su_dsm_g.sync, DSM_SYNC_FLAG, k);
		if (w)
			fprintf(f,
				"earth: node %u: stuck: flag 0x%x is not set, "
				"and %u thread%s wait%s for it\n",
				self, dsm_id(self, k), w, w == 1 ? "" : "s",
				w == 1 ? "s" : "");
	}
	return waiting;
}

void su_dsm_stats(struct dsm_stats *st, double tsc_per_ns)
{
	if (!su_dsm_g.n)
		return;
	const struct dsm_proto_stats *p = &su_dsm_g.p.st;
	st->read_faults = p->read_faults;
	st->write_faults = p->write_faults;
	st->fetches = p->fetches;
	st->fetches_direct = su_dsm_g.fetch_direct;
	st->home_kept = p->home_kept;
	st->early_sends = su_dsm_g.early_sends;
	st->grant_pages = su_dsm_g.grant_pages_sent;
	st->msgs_net = su_dsm_g.msgs_net;
	st->refreshes = p->refreshes;
	st->pretwins = p->pretwins;
	st->claims_ahead = p->claims_ahead;
	st->twins = p->twins;
	st->twin_bytes = p->twins * dsm_g.region.page_size;
	st->diffs = p->diffs;
	st->diff_bytes = p->diff_bytes;
	st->invalidations = p->invalidations;
	st->protections =
	    atomic_load_explicit(&dsm_g.region.changes, memory_order_relaxed);
	st->intervals = p->intervals;
	st->notice_bytes = su_dsm_g.notice_bytes;
	st->notices_held = su_dsm_g.p.log.held_bytes;
	for (unsigned k = 1; k < M_COUNT_; k++)
		st->msgs_sent += su_dsm_g.msgs[k];
	st->barrier_msgs = su_dsm_g.barrier_msgs;
	st->lock_local = su_dsm_g.lock_local;
	st->lock_remote = su_dsm_g.lock_remote;
	st->lock_handoffs = su_dsm_g.sync.handoffs;
	st->barriers = su_dsm_g.sync.barriers_done;
	su_dsm_fiber_stats(st);
	for (unsigned k = 0; k < DSM_WAIT_CAUSES_; k++)
		st->wait_ns[k] = (uint64_t)((double)su_dsm_g.wait_ticks[k] /
					    (tsc_per_ns > 0 ? tsc_per_ns : 1));
}
