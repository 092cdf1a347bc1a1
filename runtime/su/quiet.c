/* SPDX-License-Identifier: MIT */
/*
 * quiet.c - stuck-job detection: a job whose every node is idle with
 * nothing in flight, while main has not ended, can never move again; it
 * stops with a report of the slots still waiting and EARTH_EXIT_STUCK.
 *
 * One node: idle (the EU sleeps having consumed every ready message, the
 * SU has nothing pending) and no other thread may signal (the node's
 * may_signal hook) is enough: nothing else can make work.
 *
 * Several nodes: Mattern's four-counter waves over the SUs, run by node 0.
 * Each SU already counts the messages it sends and receives (the
 * detection's own messages are not counted). When node 0 is about to
 * sleep and there was activity since its last wave, it sends W_PROBE to
 * every peer; a peer answers (W_PROBE_ACK, its two counts) only when it is
 * itself about to sleep, idle in the same sense. An idle node becomes
 * active again only through a message, which its receive count shows.
 * Node 0 declares the job stuck when two consecutive waves give the same
 * totals with sent = received, node 0 having stayed idle and unchanged:
 * then nothing was in flight and no node moved between the two waves.
 * Waves are bounded: a new one starts only on new activity (node 0's own,
 * or a peer's W_PROBE_ACK with wave 0: a peer that answered and was active
 * since tells node 0 once, when it is idle again), so an idle job sleeps
 * after at most two waves. Nothing here runs on the busy path: only where
 * a unit is about to sleep, and on the detection's own messages.
 */
#define EARTH_INTERNAL 1
#include "su/su.h"

#include <string.h>

/* Is the node idle: every EU asleep (eu_idle) and, with k > 1, counted
 * idle, with every ready message consumed and no token in any deque (work
 * in flight), SU with nothing pending, not ending? */
static bool node_idle(struct earth_node *n, bool eu_idle)
{
	return eu_idle && unit_eus_all_idle(n) && !su_has_pending(n) &&
	       !unit_tokens_any(n) && !su_ready_unconsumed(&su_g) &&
	       !atomic_load_explicit(&n->stop, memory_order_acquire) &&
	       !atomic_load_explicit(&n->shutdown, memory_order_acquire);
}

static bool others_may_signal(struct earth_node *n)
{
	return n->may_signal && n->may_signal(n);
}

/* A detection message: not counted with the program's. */
static void send_ctl(struct earth_node *n, uint32_t peer, uint8_t type,
		     int32_t wave, uint64_t b, uint64_t c)
{
	struct wire_hdr h = {.type = type, .n = wave, .b = b, .c = c};
	su_net_send(n, peer, &h, NULL);
	su_g.msgs_sent--;
}

/* Node 0: the job is stuck. Report, then end like main's end with the
 * stuck status (the EU leaves its loop on stop; su_end_job sends
 * W_SHUTDOWN with WIRE_F_STUCK). The EU sleeps: what it wrote is visible (the
 * caller's acquire load of its sleep word). */
static EARTH_COLD void declare_stuck(struct earth_node *n)
{
	n->stuck = true;
	n->exit_status = EARTH_EXIT_STUCK;
	if (n->stuck_report)
		n->stuck_report(n);
	/* Pairs with the EU's acquire loads of stop. */
	atomic_store_explicit(&n->stop, true, memory_order_release);
	su_wake_eu(n);
}

static void activity(const struct su_state *su, uint64_t act[4])
{
	act[0] = su->msgs_sent;
	act[1] = su->msgs_received;
	act[2] = su->handled;
	act[3] = su->fibers_ready;
}

static void start_wave(struct earth_node *n)
{
	struct su_quiet *q = &su_g.quiet;
	q->wave++;
	q->active = true;
	q->done = false;
	q->dirty = false;
	q->acks_left = n->num_nodes - 1;
	q->sum_sent = q->sum_recv = 0;
	activity(&su_g, q->act);
	for (uint32_t p = 1; p < n->num_nodes; p++)
		send_ctl(n, p, W_PROBE, (int32_t)q->wave, 0, 0);
	n->net->ops->flush(n->net);
}

/* Node 0, idle. True: held by another thread (su_quiet_idle). */
static bool node0_idle(struct earth_node *n)
{
	struct su_state *su = &su_g;
	struct su_quiet *q = &su->quiet;
	if (q->active)
		return false; /* answers still to come */
	uint64_t act[4];
	activity(su, act);
	bool moved = q->dirty || memcmp(act, q->act, sizeof(act)) != 0;
	if (q->done) {
		q->done = false;
		uint64_t s = q->sum_sent + act[0], r = q->sum_recv + act[1];
		bool clean = !moved && s == r;
		if (clean && q->have_prev && s == q->prev_sent &&
		    r == q->prev_recv) {
			q->have_prev = false;
			if (!others_may_signal(n)) {
				declare_stuck(n);
				return false;
			}
			/* A thread may still signal: wait for activity, or
			 * for the thread to end (asked again soon). */
			q->dirty = true;
			return true;
		}
		q->have_prev = clean;
		q->prev_sent = s;
		q->prev_recv = r;
		if (clean || moved)
			start_wave(
			    n); /* confirm, or look again after activity */
		/* Else messages are in flight: their receivers tell us. */
		return false;
	}
	if (q->wave == 0 || moved)
		start_wave(n);
	return false;
}

/* A peer, idle. True: held by another thread (su_quiet_idle). */
static bool peer_idle(struct earth_node *n)
{
	struct su_state *su = &su_g;
	struct su_quiet *q = &su->quiet;
	if (q->owed) {
		if (others_may_signal(n))
			return true; /* not idle for good: answer later */
		send_ctl(n, 0, W_PROBE_ACK, (int32_t)q->owed, su->msgs_sent,
			 su->msgs_received);
		q->owed = 0;
		q->watching = true;
		q->mark_sent = su->msgs_sent;
		q->mark_recv = su->msgs_received;
		n->net->ops->flush(n->net);
	} else if (q->watching && (su->msgs_sent != q->mark_sent ||
				   su->msgs_received != q->mark_recv)) {
		send_ctl(n, 0, W_PROBE_ACK, 0, 0, 0);
		q->watching = false;
		n->net->ops->flush(n->net);
	}
	return false;
}

bool su_quiet_idle(struct earth_node *n, bool eu_idle)
{
	if (!node_idle(n, eu_idle))
		return false;
	if (n->num_nodes == 1) {
		if (others_may_signal(n))
			return true;
		declare_stuck(n);
		return false;
	}
	return n->id == 0 ? node0_idle(n) : peer_idle(n);
}

void su_quiet_receive(struct earth_node *n, uint32_t from,
		      const struct wire_hdr *h)
{
	struct su_state *su = &su_g;
	struct su_quiet *q = &su->quiet;
	switch (h->type) {
	case W_PROBE:
		q->owed = (uint32_t)h->n;
		q->watching = false;
		return;
	case W_PROBE_ACK:
		if (h->n == 0) {
			q->dirty = true; /* active since it answered */
		} else if (q->active && (uint32_t)h->n == q->wave &&
			   q->acks_left) {
			q->sum_sent += h->b;
			q->sum_recv += h->c;
			if (--q->acks_left == 0) {
				q->active = false;
				q->done = true;
			}
		}
		(void)from;
		return;
	case W_SHUTDOWN: /* with WIRE_F_STUCK; the caller ends the node */
		/* Idle since its last answer (else node 0 would not have
		 * decided): the EU sleeps. Peers end with status 0 (node 0
		 * sends 0) after their part of the report: the job's status
		 * is node 0's (a peer ending non-zero first would look like a
		 * death to earthrun). */
		if (n->stuck_report)
			n->stuck_report(n);
		return;
	}
}
