/* SPDX-License-Identifier: MIT */
/*
 * loop.c - the SU thread: drain each EU's requests, a batch at most from
 * each in turn (the fibers they make ready go back to it), then the inbox
 * of other threads, hand ready fibers to the EUs, steal the EUs' tokens
 * for hungry peers; with nothing to do, spin, and block only when
 * the EU is blocked too (the whole node is idle). Leaves when the EU
 * raises shutdown.
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "unit/req_line.h"
#include "su/su.h"
#include "base/trace.h"

#include <sched.h>

/* Runs of su_core_probe, and additions per run: about 470 TSC cycles a
 * run alone, where the TSC's grain in a guest is 26. */
#define SU_PROBE_RUNS 5
#define SU_PROBE_ADDS 256

struct su_state su_g;

/* su_handle, counted by type, local or remote, and traced (acct.h). */
static EARTH_COLD void handle_observed(struct earth_node *n,
				       const struct su_req *r)
{
	unsigned op = r->op == SU_OP_INVOKE_REMOTE ? SU_OP_INVOKE : r->op;
	unsigned k = acct_op_of(r->op, r->flags & SU_REQ_GSLOT);
	uint64_t t0 = trace_on ? q_tsc() : 0;
	acct_su.sent = false;
	su_handle(n, r);
	if (op < SU_OP_COUNT_) {
		acct_su.ops[k]++;
		acct_su.remote[k] += acct_su.sent;
	}
	/* A shared-memory request's kind rides above the op (trace). */
	if (trace_on)
		trace_slice(TRACE_SU, TRACE_OP,
			    (uint16_t)(op == SU_OP_DSM
					   ? op | (unsigned)(r->n & 0xff) << 8
					   : op),
			    0, 0, t0, q_tsc());
}

static inline void handle(struct earth_node *n, const struct su_req *r,
			  bool observed)
{
	if (q_unlikely(observed))
		handle_observed(n, r);
	else
		su_handle(n, r);
}

static const char *const req_bad_why[] = {
    [REQ_BAD_OP] = "unknown operation, or one that needs a whole message",
    [REQ_BAD_WIDE_POS] = "a whole-message request after other records",
    [REQ_BAD_FLAGS] = "flags not allowed for this operation",
    [REQ_BAD_SIZE] = "value size not 1, 2, 4 or 8 (0 for SYNC/INCR_SYNC)",
    [REQ_BAD_SLOT] = "a global slot flag with a slot address in the head",
    [REQ_BAD_N] = "increment out of range",
    [REQ_BAD_LENGTH] = "record runs past the end of the message",
};

static EARTH_COLD _Noreturn void bad_record(const uint64_t *w, unsigned i,
					    int why)
{
	earth_fatal("SU: request message from the EU rejected: record at "
		    "word %u (head %#llx): %s; the EU's request ring is "
		    "corrupt",
		    i, (unsigned long long)w[i], req_bad_why[-why]);
}

/* One message of the request ring: its records in order (req_line.h),
 * each decoded into a private copy and checked before it is performed. */
static inline unsigned handle_line(struct earth_node *n, const uint64_t *w,
				   bool observed)
{
	unsigned i = 0, k = 0;
	do {
		struct su_req r;
		int len = req_decode(w, i, &r);
		if (q_unlikely(len <= 0)) {
			if (len < 0)
				bad_record(w, i, len);
			break;
		}
		handle(n, &r, observed);
		i += (unsigned)len;
		k++;
		/* A zero head ends the message (req_decode says so too). */
	} while (i < REQ_LINE_WORDS && w[i]);
	su_g.eu->reqs += k; /* eu_state.req_posted's */
	return k;
}

/* Requests from other threads (earth_sync_from_thread). */
static unsigned drain_inbox(struct earth_node *n, bool observed)
{
	unsigned k = 0;
	struct q_msg *m;
	while ((m = q_mpsc_peek(&n->inbox))) {
		handle(n, req_of(m), observed);
		q_mpsc_release(&n->inbox);
		k++;
	}
	return k;
}

void su_publish_counters(struct su_state *su)
{
	atomic_store_explicit(&su->pub_handled, su->handled,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_fibers_ready, su->fibers_ready,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_slot_signals, su->slot_signals,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_ready_overflow, su->ready_overflow,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_sleeps, su->sleeps,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_busy_ticks, su->busy_ticks,
			      memory_order_relaxed);
	atomic_store_explicit(&su->pub_shared_seen, su->shared_seen,
			      memory_order_relaxed);
}

bool su_has_pending(struct earth_node *n)
{
	struct su_state *su = &su_g;
	if (su_ready_held(su) || su->out_pending || q_mpsc_peek(&n->inbox) ||
	    (n->net && n->net->ops->pending(n->net)))
		return true;
	for (unsigned i = 0; i < su->neus; i++)
		if (q_ring_nonempty(su->eus[i].req))
			return true;
	return false;
}

/*
 * Block if nothing is pending and either the EU is blocked too, or it
 * computes and we may doze.
 *
 * held: su_quiet_idle's answer (another thread kept the node from
 * counting as idle): sleep SU_QUIET_RECHECK_NS at most, then ask again.
 * eu_idle: su_quiet_idle saw the EU asleep; if it did not, the SU does not
 * sleep as for an idle node even if the EU sleeps by now: the EU wakes a
 * running SU when it goes to sleep only where the SU dozes, so the
 * stuck-job check would never be asked with the EU asleep (the job idled
 * forever; seen under TSan on a loaded machine, 1 run in 7 to 34). The
 * loop asks again after its next spin.
 *
 * Dozing (n->su_doze: one dual node without a transport): the EU computes
 * and has given us nothing for EARTH_SPIN_US, so sleep until it publishes
 * a request (eu_su_nudge), goes to sleep itself (eu_idle wakes us: then
 * the whole node is idle and the checks above must run), ends the job, or
 * another thread uses the inbox. Polling on would take a share of the core
 * from the EU where the two vCPUs share one (docs/architecture.md, "Idle:
 * spin, then sleep"). The EU does not fence after publishing: it stores
 * the ring, then loads our word after a compiler barrier. The heavy fence
 * runs a full barrier on the EU's CPU between our store of SLEEPING and
 * our look at the ring, so one of the two sees the other's store; without
 * it we do not doze.
 */
static EARTH_COLD void su_try_sleep(struct earth_node *n, bool held,
				    bool eu_idle)
{
	struct su_state *su = &su_g;
	su_publish_counters(su);
	/* Dekker with eu_idle (EU: store its state, fence, look at us) and
	 * with inbox producers (store message, fence, look at us). */
	atomic_store_explicit(n->su_wordp, UNIT_SLEEPING, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	bool eu_asleep = su_eus_asleep(n, memory_order_relaxed);
	bool may = eu_idle ? eu_asleep
			   : n->su_doze && !eu_asleep && earth_fence_heavy();
	if (may && !su_has_pending(n) &&
	    !atomic_load_explicit(&n->shutdown, memory_order_acquire)) {
		su->sleeps++;
		if (held)
			earth_futex_wait_ns(n->su_wordp, UNIT_SLEEPING,
					    SU_QUIET_RECHECK_NS);
		else
			earth_unit_wait(n, n->su_wordp, UNIT_SLEEPING);
	}
	atomic_store_explicit(n->su_wordp, UNIT_RUNNING, memory_order_relaxed);
}

/* Every node as its SU ends: node 0 tells every node the job ended; what
 * the transport holds back goes now (net end), and the messages get out
 * (5 s at most: a peer that does not read is dead or stuck). */
void su_end_job(struct earth_node *n)
{
	struct su_state *su = &su_g;
	if (n->id == 0) {
		for (uint32_t p = 1; p < n->num_nodes; p++) {
			struct wire_hdr h = {
			    .type = W_SHUTDOWN,
			    .flags = n->stuck ? WIRE_F_STUCK : 0,
			    .n = n->stuck ? 0 : n->exit_status};
			su_net_send(n, p, &h, NULL);
		}
	}
	if (n->net->ops->end)
		n->net->ops->end(n->net);
	uint64_t deadline = q_tsc() + (uint64_t)(5e9 * n->tsc_per_ns);
	while (su->out_pending && q_tsc() < deadline) {
		su_net_drain(n);
		n->net->ops->flush(n->net);
		sched_yield();
	}
	n->net->ops->flush(n->net);
}

unsigned su_step(struct earth_node *n, bool poll_net)
{
	struct su_state *su = &su_g;
	unsigned k = 0;
	struct q_msg *m;
	/* Statistics or trace: every stretch of the step is charged to a
	 * segment of acct_su; the time since the last step was idle. */
	bool obs = acct_on;
	if (q_unlikely(obs)) {
		acct_su_to(&acct_su.idle_ticks);
		acct_su.in_step = true;
	}
	/* Each EU's request ring in turn, one batch at most: no EU's stream
	 * holds the others back by more than a batch. The fibers its
	 * requests make ready go to the EU whose frame they run on (a
	 * frame's fibers run one at a time, on its EU: unit_frame_eu), a
	 * new frame's (INVOKE) to the EU that made it (su->eu); with one
	 * EU, to it. */
	su->by_frame = su->neus > 1;
	for (unsigned i = 0; i < su->neus; i++) {
		struct su_eu *e = &su->eus[i];
		unsigned j = 0;
		su->eu = e;
		while (j < EARTH_SU_BATCH && (m = q_ring_peek(e->req))) {
			j += handle_line(n, m->w, obs);
			q_ring_release(e->req);
		}
		k += j;
	}
	/* Everything else (the inbox, peers' messages, completions,
	 * collectives, until the next step's requests) makes a fiber for a
	 * slot ready on the EU whose frame it is, a new frame on the EU with
	 * the shortest ready ring; with one EU, on it. */
	su->eu = &su->eus[0];
	/* Requests from the EU mean this node has work: it may ask peers for
	 * tokens again once it runs dry. Messages alone do not (a
	 * STEAL/STEAL_NONE exchange must not restart itself). */
	if (k && n->net)
		su_balance_busy();
	if (q_unlikely(q_mpsc_peek(&n->inbox)))
		k += drain_inbox(n, obs);
	if (q_unlikely(obs))
		acct_su_to(&acct_su.serve_ticks);
	if (n->net) {
		if (q_unlikely(su->out_pending))
			k += su_net_drain(n); /* flushed below */
		if (q_unlikely(obs))
			acct_su_to(&acct_su.send_ticks);
		/* Delivery charges itself to serve (su_net_deliver). While
		 * the EU is far behind, peers wait (EARTH_READY_BACKLOG_MAX).
		 */
		if (poll_net &&
		    q_likely(su_ready_backlog(su) <= EARTH_READY_BACKLOG_MAX))
			k += n->net->ops->poll(n->net, n, su_net_deliver,
					       EARTH_SU_BATCH);
		if (q_unlikely(obs))
			acct_su_to(&acct_su.recv_ticks);
	}
	if (q_unlikely(su_ready_backlog(su)))
		k += su_ready_drain_ovf(su);
	/* Peers wait for work and an EU has tokens: a stolen token's frame
	 * comes back to its EU as a ready fiber, counted there. */
	if (q_unlikely(su->nhungry) && unit_tokens_any(n)) {
		uint64_t before = su->fibers_ready;
		su_balance_token_added(n);
		k += (unsigned)(su->fibers_ready - before);
	}
	if (k || su_ready_open(su)) {
		su_ready_flush();
		if (q_unlikely(obs))
			acct_su_to(&acct_su.serve_ticks);
		if (n->net)
			n->net->ops->flush(n->net);
	}
	if (q_unlikely(obs)) {
		acct_su_to(&acct_su.send_ticks);
		acct_su.in_step = false;
	}
	return k;
}

void su_idle_step(struct earth_node *n, bool at_once)
{
	struct su_state *su = &su_g;
	if (n->net && !su->steal_out && !su->steal_quiet) {
		su_balance_idle(n, at_once);
		if (su->out_pending || su->steal_out)
			n->net->ops->flush(n->net);
	}
}

/*
 * The SU's own speed, in TSC ticks for a fixed run of independent
 * additions (the least of SU_PROBE_RUNS runs: an interrupt or a host's
 * preemption in one does not count).
 * Where the hypervisor puts the two vCPUs on one physical core (SMT
 * siblings, which the guest cannot see), it takes 1.5 to 1.8 times as long
 * while the other thread computes as alone, and the other thread, our EU,
 * loses as much to a polling SU: docs/architecture.md, "Dozing".
 */
static EARTH_COLD uint64_t su_core_probe(void)
{
	uint64_t least = UINT64_MAX;
	for (int r = 0; r < SU_PROBE_RUNS; r++) {
		uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
		uint64_t t0 = q_tsc_ordered();
		for (unsigned i = 0; i < SU_PROBE_ADDS; i++) {
			a += 1, b += 3, c += 5, d += 7;
			e ^= a, f += 11, g ^= c, h += 13;
			/* Eight registers, no vector code, nothing folded. */
			__asm__ volatile(""
					 : "+r"(a), "+r"(b), "+r"(c), "+r"(d),
					   "+r"(e), "+r"(f), "+r"(g), "+r"(h));
		}
		uint64_t t = q_tsc_ordered() - t0;
		if (t < least)
			least = t;
	}
	return least;
}

/* The least probe time of every node this process has run: a node that
 * starts beside a computing sibling, or just after its own EU's vCPU went
 * idle (a host may poll for a halted vCPU for a while), measures its first
 * probe slowed. Written by the SU threads only, one node at a time
 * (earth_run joins its threads). */
static uint64_t su_probe_floor = UINT64_MAX;

uint64_t su_spin_ticks(const struct earth_node *n, struct su_state *su,
		       uint64_t probe)
{
	su->probe_last = probe;
	if (probe < su->probe_least)
		su->probe_least = probe;
	if (su->probe_least < su_probe_floor)
		su_probe_floor = su->probe_least;
	if (probe * 100 > su->probe_least * EARTH_SHARED_SLOWER_PCT) {
		su->shared_seen++;
		return n->shared_spin_ticks;
	}
	return n->spin_ticks;
}

/* At the SU's start, before the EU thread exists and while the thread
 * that starts the node sleeps (node.c): the least probe alone. The first
 * node of the process probes for EARTH_SHARED_CALIBRATE_NS, every 10 µs;
 * later ones once, against what the first found. */
static EARTH_COLD void su_measure_alone(struct earth_node *n,
					struct su_state *su)
{
	uint64_t t0 = q_tsc(), p = su_core_probe();
	if (su_probe_floor == UINT64_MAX) {
		uint64_t cal = (uint64_t)(EARTH_SHARED_CALIBRATE_NS *
					  n->tsc_per_ns),
			 gap = (uint64_t)(10000 * n->tsc_per_ns);
		for (uint64_t next = t0 + gap; q_tsc() - t0 < cal;
		     next += gap) {
			while (q_tsc() < next)
				q_cpu_relax();
			uint64_t q = su_core_probe();
			if (q < p)
				p = q;
		}
	}
	if (p < su_probe_floor)
		su_probe_floor = p;
	su->probe_least = su_probe_floor;
	atomic_store_explicit(&n->su_measured, 1, memory_order_release);
	earth_futex_wake(&n->su_measured);
}

void *su_thread(void *arg)
{
	struct earth_node *n = arg;
	struct su_state *su = &su_g;
	earth_pin_cpu(n->su_cpu);
	uint64_t idle_since = 0, idle_from = 0, busy_since = 0;
	uint64_t spin = n->spin_ticks; /* of this idle stretch */
	bool yielding = false;	       /* earth_idle_pause */
	unsigned polls = 0;
	if (n->su_probe)
		su_measure_alone(n, su);
	if (acct_on)
		acct_su.mark = n->start_tsc;
	for (;;) {
		uint64_t t0 = n->timing ? q_tsc() : 0;
		if (su_step(n, true) || su_ready_open(su)) {
			if (q_unlikely(++su->batches % EARTH_SU_WAKE_EVERY ==
				       0))
				su_wake_eu(n);
			if (n->timing)
				su->busy_ticks += q_tsc() - t0;
			idle_since = idle_from = 0;
			yielding = false;
			if (q_unlikely(n->oversubscribed)) {
				/* Busy for long on a shared CPU: let the
				 * unit beside us run (it may be the one that
				 * consumes what we send). */
				uint64_t now = q_tsc();
				if (!busy_since)
					busy_since = now;
				else if (now - busy_since >
					 n->busy_yield_ticks) {
					sched_yield();
					busy_since = 0;
				}
			}
			continue;
		}
		/* Idle. */
		busy_since = 0;
		if (su->wake_check)
			su_wake_eu(n);
		su_idle_step(n, false);
		if (atomic_load_explicit(&n->shutdown, memory_order_acquire))
			break;
		if (q_unlikely(n->oversubscribed) && !idle_from)
			idle_from = q_tsc();
		earth_idle_pause(n, idle_from, polls, &yielding);
		if ((++polls & 63) != 0)
			continue;
		uint64_t now = q_tsc();
		if (!idle_since) {
			idle_since = now;
			su_publish_counters(su);
			if (trace_on)
				trace_idle(TRACE_SU);
		}
		/* A core shared with a computing EU calls for a short spin:
		 * measured at the first idle check, then once per
		 * EARTH_SHARED_PROBE_NS at most (the hypervisor moves the
		 * vCPUs onto one core and off it within a fraction of a
		 * second). */
		if (q_unlikely(n->su_probe) &&
		    (!su->probe_at ||
		     now - su->probe_at > n->probe_every_ticks)) {
			su->probe_at = now;
			spin = su_spin_ticks(n, su, su_core_probe());
		}
		if (now - idle_since > spin) {
			su_idle_step(n, true); /* never sleep without asking */
			/* Pairs with the EU's seq_cst store before it sleeps:
			 * what it wrote before is visible to a report. */
			bool eu_idle = su_eus_asleep(n, memory_order_acquire);
			bool held = su_quiet_idle(n, eu_idle);
			su_try_sleep(n, held, eu_idle);
			idle_since = idle_from = 0;
			yielding = false;
		}
	}
	if (n->net)
		su_end_job(n);
	su_publish_counters(su);
	return NULL;
}
