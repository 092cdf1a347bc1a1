/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the node's counters: a snapshot for programs, and the table
 * printed at exit when EARTH_STATS=1 or --earth-stats.
 */
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "node/irq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[EARTH_OP_COUNT_] = {
    [EARTH_OP_SYNC] = "SYNC",
    [EARTH_OP_INCR_SYNC] = "INCR_SYNC",
    [EARTH_OP_SPAWN] = "SPAWN",
    [EARTH_OP_GET_SYNC] = "GET_SYNC",
    [EARTH_OP_DATA_SYNC] = "DATA_SYNC",
    [EARTH_OP_BLKMOV_SYNC] = "BLKMOV_SYNC",
    [EARTH_OP_INVOKE] = "INVOKE",
    [EARTH_OP_TOKEN] = "TOKEN",
    [EARTH_OP_END_FUNCTION] = "END_FUNCTION",
    [EARTH_OP_COLLECTIVE] = "COLLECTIVE",
    [EARTH_OP_RSYNC] = "RSYNC",
};

const char *earth_op_name(enum earth_op op)
{
	return (unsigned)op < EARTH_OP_COUNT_ ? names[op] : "?";
}

void earth_stats_get(struct earth_stats *st)
{
	struct earth_node *n = &earth_node_g;
	struct eu_state *eu = &eu_first;
	struct su_state *su = &su_g;
	double tpn = n->tsc_per_ns > 0 ? n->tsc_per_ns : 1.0;
	memset(st, 0, sizeof(*st));
	irq_stats_fill(st);
	/* Every EU's counters: on any EU of the node while it runs (the
	 * siblings' read whole, eu.h, eu_count), on any thread after. */
	for (unsigned i = 0; i < eu_states(n->eus); i++) {
		const struct eu_state *o = eu_at(i);
		for (unsigned op = 0; op < EARTH_OP_COUNT_; op++)
			st->ops[op] += eu_count_get(&o->ops[op]);
		st->fibers_run += eu_count_get(&o->fibers_run);
		st->tokens_run += eu_count_get(&o->tokens_run);
		st->req_overflow += eu_count_get(&o->req_overflow);
		st->frames_allocated += eu_count_get(&o->frames_allocated);
		st->eu_sleeps += eu_count_get(&o->sleeps);
		st->fibers_ready += eu_count_get(&o->fibers_ready);
		st->slot_signals += eu_count_get(&o->slot_signals);
	}
	/* Signals the EUs performed themselves (eu/post.c) count with the
	 * SU's. */
	st->su_handled =
	    atomic_load_explicit(&su->pub_handled, memory_order_relaxed);
	st->fibers_ready +=
	    atomic_load_explicit(&su->pub_fibers_ready, memory_order_relaxed);
	st->slot_signals +=
	    atomic_load_explicit(&su->pub_slot_signals, memory_order_relaxed);
	st->ready_overflow =
	    atomic_load_explicit(&su->pub_ready_overflow, memory_order_relaxed);
	st->su_sleeps =
	    atomic_load_explicit(&su->pub_sleeps, memory_order_relaxed);
	/* Written by the SU; exact once earth_run has returned. */
	if (!n->start_tsc || n->end_tsc) {
		st->msgs_sent = su->msgs_sent;
		st->msgs_received = su->msgs_received;
		st->tokens_stolen = su->tokens_stolen;
		st->tokens_given = su->tokens_given;
		st->steal_requests = su->steal_requests;
	}
	uint64_t end = n->end_tsc ? n->end_tsc : q_tsc();
	uint64_t wall = end - n->start_tsc;
	uint64_t busy =
	    atomic_load_explicit(&su->pub_busy_ticks, memory_order_relaxed);
	st->wall_ns = (uint64_t)(wall / tpn);
	if (n->timing) {
		uint64_t idle = eu_count_get(&eu->idle_ticks);
		uint64_t eidle = idle < wall ? idle : wall;
		uint64_t sbusy = busy < wall ? busy : wall;
		st->eu_idle_ns = (uint64_t)(eidle / tpn);
		st->eu_busy_ns = st->wall_ns - st->eu_idle_ns;
		st->su_busy_ns = (uint64_t)(sbusy / tpn);
		st->su_idle_ns = st->wall_ns - st->su_busy_ns;
	}
}

void stats_write_err(const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(2, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

/* The table is built in memory and written with one write(2): earthrun's
 * prefixing and the terminal see it whole, never mixed with another
 * node's lines. */
void earth_stats_print(const struct earth_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		stats_print_to(stderr, st);
		return;
	}
	stats_print_to(f, st);
	if (fclose(f) == 0)
		stats_write_err(buf, len);
	free(buf);
}

void stats_print_to(FILE *f, const struct earth_stats *st)
{
	const struct earth_node *n = &earth_node_g;
	double wall = st->wall_ns ? (double)st->wall_ns : 1.0;
	fprintf(f,
		"earth: node %u statistics (EU cpu %d, SU cpu %d, queue %s)\n",
		n->id, n->eu_cpu, n->su_cpu,
		n->opts.queue_mode == EARTH_QUEUE_HWQ ? "hwq" : "sw");
	fprintf(f, "  %-14s %14s\n", "operation", "posted");
	for (int i = 0; i < EARTH_OP_COUNT_; i++)
		fprintf(f, "  %-14s %14llu\n", names[i],
			(unsigned long long)st->ops[i]);
	fprintf(f, "  %-14s %14llu\n", "fibers run",
		(unsigned long long)st->fibers_run);
	fprintf(f, "  %-14s %14llu\n", "fibers ready",
		(unsigned long long)st->fibers_ready);
	fprintf(f, "  %-14s %14llu\n", "SU handled",
		(unsigned long long)st->su_handled);
	fprintf(f, "  %-14s %14llu\n", "slot signals",
		(unsigned long long)st->slot_signals);
	fprintf(f, "  %-14s %14llu\n", "frames",
		(unsigned long long)st->frames_allocated);
	fprintf(f, "  %-14s %14llu\n", "req overflow",
		(unsigned long long)st->req_overflow);
	fprintf(f, "  %-14s %14llu\n", "msgs sent",
		(unsigned long long)st->msgs_sent);
	fprintf(f, "  %-14s %14llu\n", "msgs received",
		(unsigned long long)st->msgs_received);
	fprintf(f, "  %-14s %14llu\n", "tokens run",
		(unsigned long long)st->tokens_run);
	fprintf(f, "  %-14s %14llu\n", "tokens stolen",
		(unsigned long long)st->tokens_stolen);
	fprintf(f, "  %-14s %14llu\n", "tokens given",
		(unsigned long long)st->tokens_given);
	fprintf(f, "  %-14s %14llu\n", "steal requests",
		(unsigned long long)st->steal_requests);
	fprintf(f, "  %-14s %14llu\n", "ready overflow",
		(unsigned long long)st->ready_overflow);
	fprintf(f, "  %-14s %14.3f ms\n", "wall", st->wall_ns / 1e6);
	fprintf(f,
		"  %-14s %14.3f ms  (%5.1f%%)   idle %10.3f ms  sleeps %llu\n",
		"EU busy", st->eu_busy_ns / 1e6, 100.0 * st->eu_busy_ns / wall,
		st->eu_idle_ns / 1e6, (unsigned long long)st->eu_sleeps);
	fprintf(f,
		"  %-14s %14.3f ms  (%5.1f%%)   idle %10.3f ms  sleeps %llu\n",
		"SU busy", st->su_busy_ns / 1e6, 100.0 * st->su_busy_ns / wall,
		st->su_idle_ns / 1e6, (unsigned long long)st->su_sleeps);
	if (n->su_probe)
		fprintf(f,
			"  %-14s %14llu  (measures that found the SU's core "
			"shared with a busy thread: it slept after %.0f us, "
			"not %.0f; probe least %llu, last %llu ticks)\n",
			"SU shared",
			(unsigned long long)atomic_load_explicit(
			    &su_g.pub_shared_seen, memory_order_relaxed),
			(double)n->shared_spin_ticks / n->tsc_per_ns / 1e3,
			(double)n->spin_ticks / n->tsc_per_ns / 1e3,
			(unsigned long long)su_g.probe_least,
			(unsigned long long)su_g.probe_last);
	if (st->irq_signals)
		fprintf(f,
			"  %-14s %14llu  (in a fiber %llu, messages deferred "
			"%llu)\n",
			"interrupts", (unsigned long long)st->irq_signals,
			(unsigned long long)st->irq_in_fiber,
			(unsigned long long)st->irq_deferred_msgs);
}
