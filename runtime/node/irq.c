/* SPDX-License-Identifier: MIT */
/*
 * irq.c - the interrupt handler of a single-interrupt node, its deferral
 * buffer and the fixed pool that queued messages come from while it runs
 * (irq.h says why each exists). One node per process: the state is
 * static, owned by the node's thread and its handler, which never run at
 * the same time (the handler returns at once inside critical sections).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/irq.h"
#include "base/stamp.h"
#include "su/su.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread volatile sig_atomic_t irq_pending
    __attribute__((tls_model("initial-exec")));
/* The node's thread (other threads ignore a stray SIGIO). */
static __thread volatile sig_atomic_t irq_mine
    __attribute__((tls_model("initial-exec")));

static struct earth_node *irq_node;
/* Where earth_sync_from_thread sends the interrupt: published by
 * irq_start before irq_local_armed (release), taken by the exchange in
 * irq_raise_local (acquire). */
static int irq_pid, irq_tid;
static _Atomic int irq_local_armed;
static bool irq_send_ok; /* transport sends never allocate (shm) */
static volatile sig_atomic_t irq_more; /* handler stopped with work left */
static struct sigaction old_rt, old_io;
static int irq_sig;
static struct {
	uint64_t signals, ran, deferred_signals, deferred_msgs, msgs;
} counts;

/* ---- the deferral buffer: (from, wire header, payload) records ---- */

struct defer_rec {
	uint32_t from, bytes; /* bytes of the whole record */
	struct wire_hdr h;
	unsigned char payload[];
};
static unsigned char *dbuf;
static size_t dr, dw; /* read and write offsets; both 0 when empty */

bool irq_backlog(void)
{
	return dw != dr || irq_more || irq_pending;
}

static void defer_msg(uint32_t from, const struct wire_hdr *h,
		      const void *payload)
{
	size_t len = h->flags & WIRE_F_PLACED ? 0 : h->len;
	size_t bytes = sizeof(struct defer_rec) + ((len + 7) & ~7ul);
	if (dw + bytes > EARTH_IRQ_DEFER_BYTES)
		earth_fatal("interrupt: deferral buffer overrun (%zu + %zu of "
			    "%u bytes): a transport delivered more than "
			    "EARTH_IRQ_DEFER_ROOM in one poll",
			    dw, bytes, EARTH_IRQ_DEFER_BYTES);
	struct defer_rec *r = (struct defer_rec *)(void *)(dbuf + dw);
	r->from = from;
	r->bytes = (uint32_t)bytes;
	r->h = *h;
	/* A placed payload (tcp BLK_DATA) is already at its destination. */
	if (h->len && !(h->flags & WIRE_F_PLACED))
		memcpy(r->payload, payload, h->len);
	dw += bytes;
	counts.deferred_msgs++;
}

/* ---- in the handler ---- */

/* Can h be handled now without allocating? */
static bool irq_safe(struct earth_node *n, const struct wire_hdr *h)
{
	const struct su_state *su = &su_g;
	const struct su_eu *e = su->eu; /* the one EU */
	size_t room = e->rovf_cap - e->rovf_head - e->rovf_len;
	switch (h->type) {
	case W_SYNC:
		return h->n <= 0 || (size_t)h->n <= room;
	case W_SHUTDOWN: /* a stuck job's report prints: not here */
		return !(h->flags & WIRE_F_STUCK);
	case W_INCR:
		return true;
	case W_BLK_DATA:
		if (!(h->flags & WIRE_F_LAST) || (h->flags & WIRE_F_NOSLOT))
			return true;
		if (earth_gslot_node((earth_gslot){h->a}) == n->id)
			return room >= 1;
		return irq_send_ok && su_out_pool_free() >= 1;
	case W_BLK_REQ:
		return irq_send_ok && h->n >= 0 && h->n <= EARTH_IRQ_SMALL &&
		       su_out_pool_free() >= 2 && room >= 1;
	default:
		return false;
	}
}

static void irq_deliver(void *ctx, uint32_t from, const struct wire_hdr *h,
			const void *payload)
{
	struct earth_node *n = ctx;
	counts.msgs++;
	if (dw != dr || !irq_safe(n, h)) {
		defer_msg(from, h, payload);
		return;
	}
	su_net_deliver(n, from, h, payload);
}

/* The SU's work for arrivals, in the handler: the inbox of other threads
 * (SYNCs only, each needs one ready entry at most), then poll one message
 * at a time while the deferral buffer has room for what one poll may
 * bring. */
static void irq_run(struct earth_node *n)
{
	struct net *t = n->net;
	struct su_state *su = &su_g;
	unsigned got = 0;
	struct q_msg *m;
	irq_more = 0;
	while ((m = q_mpsc_peek(&n->inbox))) {
		if (su->eu->rovf_cap - su->eu->rovf_head - su->eu->rovf_len <
		    1) {
			irq_more = 1;
			break;
		}
		su_handle(n, req_of(m));
		q_mpsc_release(&n->inbox);
		got++;
	}
	for (; t;) {
		if (EARTH_IRQ_DEFER_BYTES - dw < EARTH_IRQ_DEFER_ROOM) {
			irq_more = 1;
			break;
		}
		unsigned k = t->ops->poll(t, n, irq_deliver, 1);
		if (!k)
			break;
		got += k;
	}
	if (got) {
		su_ready_flush();
		if (t && irq_send_ok)
			t->ops->flush(t);
	}
}

void irq_raise_local(void)
{
	if (!atomic_load_explicit(&irq_local_armed, memory_order_relaxed) ||
	    !atomic_exchange_explicit(&irq_local_armed, 0,
				      memory_order_acquire))
		return;
	syscall(SYS_tgkill, irq_pid, irq_tid, irq_sig);
}

static void irq_on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	if (!irq_mine)
		return;
	EARTH_STAMP(STAMP_IRQ_ENTER);
	int saved = errno;
	struct earth_node *n = irq_node;
	counts.signals++;
	/* Re-arm first: what arrives from now on raises a new signal; what
	 * arrived before is seen by the poll below or at the safe point. */
	atomic_store_explicit(&irq_local_armed, 1, memory_order_seq_cst);
	if (n->net && n->net->ops->irq_arm)
		n->net->ops->irq_arm(n->net, true);
	if (irq_defer) {
		irq_pending = 1;
		counts.deferred_signals++;
		errno = saved;
		return;
	}
	irq_defer = 1;
	su_out_pool = 1;
	atomic_signal_fence(memory_order_seq_cst);
	counts.ran++;
	irq_run(n);
	atomic_signal_fence(memory_order_seq_cst);
	su_out_pool = 0;
	irq_defer = 0;
	errno = saved;
}

/* ---- at safe points ---- */

unsigned irq_safe_point(struct earth_node *n)
{
	unsigned k = 0;
	/* Read and cleared in one instruction: a signal landing between a
	 * load and a store would be lost (the handler only sets it while
	 * we are in the runtime). */
	bool poll = __atomic_exchange_n(&irq_pending, 0, __ATOMIC_RELAXED) ||
		    irq_more || (n->net && n->net->sends_out);
	irq_more = 0;
	while (dr < dw) {
		struct defer_rec *r = (struct defer_rec *)(void *)(dbuf + dr);
		dr += r->bytes;
		su_net_deliver(n, r->from, &r->h,
			       r->h.len && !(r->h.flags & WIRE_F_PLACED)
				   ? r->payload
				   : NULL);
		k++;
	}
	dr = dw = 0;
	/* Room for what the next handler may spill. */
	struct su_state *su = &su_g;
	const struct su_eu *e = su->eu; /* the one EU */
	if (e->rovf_cap - e->rovf_head - e->rovf_len < EARTH_IRQ_READY_ROOM)
		su_ready_reserve(su, EARTH_IRQ_READY_ROOM);
	return k + su_step(n, poll);
}

/* ---- start and stop ---- */

bool irq_start(struct earth_node *n)
{
	struct net *t = n->net;
	if (t && !t->ops->irq) {
		fprintf(stderr,
			"earth: node %u: note: the %s transport cannot raise "
			"interrupts: this single-interrupt node polls at the "
			"end of each fiber instead\n",
			n->id, t->ops->name);
		return false;
	}
	if (!dbuf) {
		dbuf = malloc(EARTH_IRQ_DEFER_BYTES);
		if (!dbuf)
			earth_fatal("out of memory for the interrupt deferral "
				    "buffer (%u bytes)",
				    EARTH_IRQ_DEFER_BYTES);
	}
	dr = dw = 0;
	irq_more = 0;
	irq_pending = 0;
	su_out_pool_reset();
	memset(&counts, 0, sizeof(counts));
	su_ready_reserve(&su_g, EARTH_IRQ_READY_ROOM);
	irq_node = n;
	irq_send_ok = t && !strcmp(t->ops->name, "shm");
	irq_sig = SIGRTMIN + EARTH_IRQ_SIGNAL;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = irq_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, irq_sig);
	sigaddset(&sa.sa_mask, SIGIO);
	if (sigaction(irq_sig, &sa, &old_rt) || sigaction(SIGIO, &sa, &old_io))
		earth_fatal("interrupt: sigaction: %s", strerror(errno));
	irq_mine = 1;
	irq_defer = 1;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, irq_sig);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	irq_pid = (int)getpid();
	irq_tid = (int)syscall(SYS_gettid);
	atomic_store_explicit(&irq_local_armed, 1, memory_order_release);
	if (t)
		t->ops->irq(t, irq_pid, irq_tid, irq_sig);
	/* Arrivals before the signal was published: the first safe point
	 * polls. */
	irq_pending = 1;
	return true;
}

void irq_stop(struct earth_node *n)
{
	struct net *t = n->net;
	if (irq_node != n)
		return;
	atomic_store_explicit(&irq_local_armed, 0, memory_order_seq_cst);
	if (t)
		t->ops->irq(t, 0, 0, 0);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, irq_sig);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	irq_mine = 0;
	/* A disposition of SIG_DFL would end the process for a signal a
	 * peer raised late; such a signal is now blocked on this thread, and
	 * dies with it. Other threads keep what they had. */
	sigaction(irq_sig, &old_rt, NULL);
	sigaction(SIGIO, &old_io, NULL);
	irq_node = NULL;
}

void irq_stats_fill(struct earth_stats *st)
{
	if (earth_node_g.opts.node_mode != EARTH_MODE_SINGLE_IRQ)
		return;
	st->irq_signals = counts.signals;
	st->irq_in_fiber = counts.ran;
	st->irq_deferred_msgs = counts.deferred_msgs;
}
