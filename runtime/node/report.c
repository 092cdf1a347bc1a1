/* SPDX-License-Identifier: MIT */
/*
 * report.c - the time breakdown and switch accounting of base/acct.h:
 * turning it on, the table printed at exit, the JSON record
 * (EARTH_STATS_JSON=FILE: FILE.<id>.node<k>.part, joined by earthrun
 * --stats=json FILE; without a launcher a one-node job writes FILE, node k of a
 * larger job FILE.node<k>.json). Format: docs/user-guide.md.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "base/jsonparts.h"
#include "base/settings.h"
#include "node/node.h"
#include "dsm/pt.h"
#include "eu/eu.h"
#include "su/su.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const sw_names[ACCT_SW_KINDS_] = {
    [ACCT_SW_READY] = "ready", [ACCT_SW_REMOTE] = "remote",
    [ACCT_SW_SAME] = "same",   [ACCT_SW_TAIL] = "tail",
    [ACCT_SW_IDLE] = "idle",
};
static const char *const sw_text[ACCT_SW_KINDS_] = {
    [ACCT_SW_READY] = "another fiber ready (useful work)",
    [ACCT_SW_REMOTE] = "none ready, waiting on remote reads",
    [ACCT_SW_SAME] = "none ready, all on the same remote read",
    [ACCT_SW_TAIL] = "none ready, waiting in a collective",
    [ACCT_SW_IDLE] = "none ready, nothing remote outstanding",
};
static const char *const bucket_names[ACCT_OVERLAP_BUCKETS] = {
    "0", "1", "2-3", "4-7", "8-15", "16+"};

int acct_open(struct earth_node *n)
{
	unsigned k = n->eus ? n->eus : 1;
	memset(&acct_eu0, 0, sizeof(acct_eu0));
	free(acct_eu_rest);
	acct_eu_rest = NULL;
	if (k > 1) {
		acct_eu_rest =
		    aligned_alloc(64, (k - 1) * sizeof(*acct_eu_rest));
		if (!acct_eu_rest) {
			fprintf(stderr,
				"earth: node %u: out of memory for the "
				"statistics of %u Execution Units\n",
				n->id, k);
			return -1;
		}
		memset(acct_eu_rest, 0, (k - 1) * sizeof(*acct_eu_rest));
	}
	acct_eus = k;
	acct_node_wide = k > 1;
	memset(&acct_posted, 0, sizeof(acct_posted));
	memset(&acct_su, 0, sizeof(acct_su));
	memset(&acct_shared, 0, sizeof(acct_shared));
	/* EARTH_STATS_JSON set but empty was refused when the node started
	 * (base/settings.c). EARTH_TIMING alone keeps only the units' busy
	 * and idle time (node.h): no per-fiber timing. */
	acct_on = n->opts.print_stats ||
		  earth_setting_given(EARTH_SET_STATS_JSON) ||
		  earth_setting_given(EARTH_SET_TRACE);
	return 0;
}

struct breakdown {
	double wall, eu_fiber, eu_runtime, eu_idle;
	double su_serve, su_recv, su_send, su_idle;
};

/* Every EU's record added up (EU 0's alone in a node of one). */
static struct acct_eu eu_sum;
/* What every EU of the node posted, by earth_op, and the GETs it served
 * itself from another node's mapped segment (eu_sum_up). */
static uint64_t eus_posted[EARTH_OP_COUNT_], eus_gets_direct;

/* The CPU EU i of node n is pinned to. */
static int eu_cpu_of(const struct earth_node *n, unsigned i)
{
	return n->eu_cpus ? n->eu_cpus[i] : n->eu_cpu;
}

static void eu_sum_up(void)
{
	memset(&eu_sum, 0, sizeof(eu_sum));
	for (unsigned i = 0; i < acct_eus; i++) {
		const struct acct_eu *a = acct_eu_of(i);
		eu_sum.fiber_ticks += a->fiber_ticks;
		eu_sum.runtime_ticks += a->runtime_ticks;
		eu_sum.idle_ticks += a->idle_ticks;
		for (int k = 0; k < ACCT_SW_KINDS_; k++)
			eu_sum.sw[k] += a->sw[k];
		for (int k = 0; k < ACCT_OVERLAP_BUCKETS; k++)
			eu_sum.overlap_hist[k] += a->overlap_hist[k];
		eu_sum.overlap_sum += a->overlap_sum;
		if (a->overlap_max > eu_sum.overlap_max)
			eu_sum.overlap_max = a->overlap_max;
	}
	struct earth_stats st;
	earth_stats_get(&st);
	memcpy(eus_posted, st.ops, sizeof(eus_posted));
	eus_gets_direct = 0;
	for (unsigned i = 0; i < acct_eus; i++)
		eus_gets_direct += eu_at(i)->gets_direct;
}

static void breakdown_of(const struct earth_node *n, struct breakdown *b)
{
	double tpn = n->tsc_per_ns > 0 ? n->tsc_per_ns : 1.0;
	b->wall = (double)(n->end_tsc - n->start_tsc) / tpn;
	b->eu_fiber = eu_sum.fiber_ticks / tpn;
	b->eu_runtime = eu_sum.runtime_ticks / tpn;
	b->eu_idle = eu_sum.idle_ticks / tpn;
	b->su_serve = acct_su.serve_ticks / tpn;
	b->su_recv = acct_su.recv_ticks / tpn;
	b->su_send = acct_su.send_ticks / tpn;
	b->su_idle = acct_su.idle_ticks / tpn;
}

/* What the transport did with BLK_DATA payloads (tcp; else zeros). */
static void blk_bytes(const struct earth_node *n, struct net_blk_bytes *b)
{
	memset(b, 0, sizeof(*b));
	if (n->net && n->net->ops->blk_bytes)
		n->net->ops->blk_bytes(n->net, b);
}

/* The earth_op an acct op is posted as; -1: none (a DSM request). */
static int earth_op_of(unsigned op)
{
	switch (op) {
	case SU_OP_SYNC:
		return EARTH_OP_SYNC;
	case SU_OP_INCR_SYNC:
		return EARTH_OP_INCR_SYNC;
	case SU_OP_SPAWN:
		return EARTH_OP_SPAWN;
	case SU_OP_GET_SYNC:
		return EARTH_OP_GET_SYNC;
	case SU_OP_DATA_SYNC:
		return EARTH_OP_DATA_SYNC;
	case SU_OP_BLKMOV_SYNC:
		return EARTH_OP_BLKMOV_SYNC;
	case SU_OP_INVOKE:
		return EARTH_OP_INVOKE;
	case SU_OP_TOKEN:
		return EARTH_OP_TOKEN;
	case SU_OP_COLL:
		return EARTH_OP_COLLECTIVE;
	case ACCT_OP_RSYNC:
		return EARTH_OP_RSYNC;
	default:
		return -1;
	}
}

/* Requests of kind op: what the EUs posted of it, those the SU performed
 * and those an EU performed itself (signals, SPAWN, INVOKE, GET, DATA and
 * small block moves on this node: docs/architecture.md, "Signals on the
 * EU"; TOKENs go to the deques). Never fewer than the SU performed. */
static uint64_t handled_of(unsigned op)
{
	int e = earth_op_of(op);
	uint64_t su = op == SU_OP_TOKEN ? 0 : acct_su.ops[op];
	return e >= 0 && eus_posted[e] > su ? eus_posted[e] : su;
}

/* Requests of kind op that stayed on this node, and those that needed
 * another (a TOKEN the SU stole for another node is remote; a GET an EU
 * read from another node's mapped segment). */
static uint64_t remote_of(unsigned op)
{
	uint64_t r = acct_su.remote[op];
	if (op == SU_OP_GET_SYNC)
		r += eus_gets_direct;
	return r < handled_of(op) ? r : handled_of(op);
}

static uint64_t local_of(unsigned op)
{
	return handled_of(op) - remote_of(op);
}

static uint64_t switches(void)
{
	uint64_t s = 0;
	for (int k = 0; k < ACCT_SW_KINDS_; k++)
		s += eu_sum.sw[k];
	return s;
}

static const char *const dsm_cause_names[DSM_WAIT_CAUSES_] = {
    "page", "lock", "barrier", "flag", "other"};

/* Shared memory's counters of this node (a program under earth_dsm_main). */
static void dsm_stats_of(const struct earth_node *n, struct dsm_stats *st)
{
	memset(st, 0, sizeof(*st));
	su_dsm_stats(st, n->tsc_per_ns);
	eu_dsm_stats(st);
	node_dsm_fiber_stats(st);
}

static void print_dsm(FILE *f, const struct earth_node *n)
{
	struct dsm_stats d;
	dsm_stats_of(n, &d);
	fprintf(f,
		"  shared memory: faults (by %s) %" PRIu64 " read, %" PRIu64
		" write (the EU took %" PRIu64 "); fetches %" PRIu64
		" (%" PRIu64 " one-sided, %" PRIu64
		" at an acquire); twins %" PRIu64 " (%" PRIu64
		" made before the write); diffs %" PRIu64 " of %" PRIu64
		" bytes, from %" PRIu64 " bytes twinned; intervals %" PRIu64
		"; invalidations %" PRIu64 "; protection changes %" PRIu64
		"; home pages left writable at a release %" PRIu64 "\n",
		dsm_region_faults_name(&dsm_g.region), d.read_faults,
		d.write_faults, d.eu_faults, d.fetches, d.fetches_direct,
		d.refreshes, d.twins, d.pretwins, d.diffs, d.diff_bytes,
		d.twin_bytes, d.intervals, d.invalidations, d.protections,
		d.home_kept);
	fprintf(
	    f,
	    "  shared memory: lock acquires %" PRIu64 " here, %" PRIu64
	    " on another node, %" PRIu64 " handed over here; barriers %" PRIu64
	    " done here, %" PRIu64 " barrier messages sent; messages %" PRIu64
	    " (%" PRIu64 " to other nodes), write notices %" PRIu64
	    " bytes sent, %" PRIu64 " held at the end; thread switches %" PRIu64
	    "; requests sent behind diffs %" PRIu64
	    "; pages lock grants carried %" PRIu64
	    "; first writes claimed ahead %" PRIu64 "\n",
	    d.lock_local, d.lock_remote, d.lock_handoffs, d.barriers,
	    d.barrier_msgs, d.msgs_sent, d.msgs_net, d.notice_bytes,
	    d.notices_held, d.switches, d.early_sends, d.grant_pages,
	    d.claims_ahead);
	if (d.f_acquires || d.f_releases)
		fprintf(f,
			"  shared memory: fibers' acquisitions %" PRIu64
			" (%" PRIu64 " hits, %" PRIu64
			" of them on the EU), %" PRIu64
			" waits joined a fetch out, %" PRIu64
			" releases; invalidations and protections put off "
			"for held pages %" PRIu64 "\n",
			d.f_acquires, d.f_hits, d.f_hits_eu, d.f_coalesced,
			d.f_releases, d.f_deferred);
	fprintf(f, "  shared memory: time waiting (every thread):");
	for (int k = 0; k < DSM_WAIT_CAUSES_; k++)
		fprintf(f, " %s %.3f ms", dsm_cause_names[k],
			(double)d.wait_ns[k] / 1e6);
	fputc('\n', f);
}

static void json_dsm(FILE *f, const struct earth_node *n)
{
	struct dsm_stats d;
	dsm_stats_of(n, &d);
	fprintf(f,
		",\"dsm\":{\"faults_by\":\"%s\",\"read_faults\":%" PRIu64
		",\"write_faults\":%" PRIu64 ",\"eu_faults\":%" PRIu64
		",\"fetches\":%" PRIu64 ",\"fetches_direct\":%" PRIu64
		",\"refreshes\":%" PRIu64 ",\"home_writes_eu\":%" PRIu64
		",\"home_kept\":%" PRIu64 ",\"twins\":%" PRIu64
		",\"pretwins\":%" PRIu64 ",\"twin_bytes\":%" PRIu64
		",\"diffs\":%" PRIu64 ",\"diff_bytes\":%" PRIu64
		",\"intervals\":%" PRIu64 ",\"invalidations\":%" PRIu64
		",\"protections\":%" PRIu64 ",\"notice_bytes\":%" PRIu64
		",\"notices_held\":%" PRIu64 ",\"msgs_sent\":%" PRIu64
		",\"msgs_net\":%" PRIu64 ",\"barrier_msgs\":%" PRIu64
		",\"lock_local\":%" PRIu64 ",\"lock_remote\":%" PRIu64
		",\"lock_handoffs\":%" PRIu64 ",\"barriers\":%" PRIu64
		",\"switches\":%" PRIu64 ",\"early_sends\":%" PRIu64
		",\"grant_pages\":%" PRIu64 ",\"claims_ahead\":%" PRIu64
		",\"fiber_acquires\":%" PRIu64 ",\"fiber_hits\":%" PRIu64
		",\"fiber_hits_eu\":%" PRIu64 ",\"fiber_coalesced\":%" PRIu64
		",\"fiber_releases\":%" PRIu64 ",\"fiber_deferred\":%" PRIu64
		",\"wait_ns\":{",
		dsm_region_faults_name(&dsm_g.region), d.read_faults,
		d.write_faults, d.eu_faults, d.fetches, d.fetches_direct,
		d.refreshes, d.home_writes_eu, d.home_kept, d.twins, d.pretwins,
		d.twin_bytes, d.diffs, d.diff_bytes, d.intervals,
		d.invalidations, d.protections, d.notice_bytes, d.notices_held,
		d.msgs_sent, d.msgs_net, d.barrier_msgs, d.lock_local,
		d.lock_remote, d.lock_handoffs, d.barriers, d.switches,
		d.early_sends, d.grant_pages, d.claims_ahead, d.f_acquires,
		d.f_hits, d.f_hits_eu, d.f_coalesced, d.f_releases,
		d.f_deferred);
	for (int k = 0; k < DSM_WAIT_CAUSES_; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "",
			dsm_cause_names[k], d.wait_ns[k]);
	fprintf(f, "}}");
}

static void print_table(FILE *f, const struct earth_node *n,
			const struct breakdown *b)
{
	double w = b->wall > 0 ? b->wall : 1.0;
#define PCT(x) (x) / 1e6, 100.0 * (x) / w
	unsigned m = (unsigned)n->opts.node_mode;
	fprintf(f, "earth: node %u time breakdown (wall %.3f ms)\n", n->id,
		b->wall / 1e6);
	if (m == EARTH_MODE_DUAL)
		fprintf(f, "  mode dual: EU on CPU %d, SU on CPU %d%s\n",
			n->eu_cpu, n->su_cpu,
			n->oversubscribed ? " (CPUs shared: oversubscribed)"
					  : "");
	else
		fprintf(f, "  mode %s: EU and SU on CPU %d%s\n",
			m < 3 ? earth_mode_names[m] : "?", n->eu_cpu,
			n->oversubscribed ? " (CPU shared: oversubscribed)"
					  : "");
	if (n->net) {
		char how[1024] = "";
		if (n->net->ops->describe)
			n->net->ops->describe(n->net, how, sizeof(how));
		fprintf(f, "  transport %s%s%s\n", n->net->ops->name,
			*how ? ": " : "", how);
	}
	if (acct_eus > 1) {
		/* k EUs: their sum against k walls, then each EU. */
		double tpn = n->tsc_per_ns > 0 ? n->tsc_per_ns : 1.0;
		w *= acct_eus;
		fprintf(f,
			"  EUs fibers  %10.3f ms %5.1f%%   runtime %10.3f ms "
			"%5.1f%%   idle %10.3f ms %5.1f%% (%u EUs)\n",
			PCT(b->eu_fiber), PCT(b->eu_runtime), PCT(b->eu_idle),
			acct_eus);
		w = b->wall > 0 ? b->wall : 1.0;
		for (unsigned i = 0; i < acct_eus; i++) {
			const struct acct_eu *a = acct_eu_of(i);
			const struct eu_state *e = eu_at(i);
			fprintf(f,
				"  EU %-3u fibers %10.3f ms %5.1f%%   runtime "
				"%10.3f ms %5.1f%%   idle %10.3f ms %5.1f%%   "
				"CPU %d, fibers run %" PRIu64
				", tokens from siblings %" PRIu64
				", fibers to siblings %" PRIu64 "\n",
				i, PCT(a->fiber_ticks / tpn),
				PCT(a->runtime_ticks / tpn),
				PCT(a->idle_ticks / tpn), eu_cpu_of(n, i),
				e->fibers_run, e->tokens_taken,
				e->fibers_elsewhere);
		}
	} else {
		fprintf(f,
			"  EU  fibers  %10.3f ms %5.1f%%   runtime %10.3f ms "
			"%5.1f%%   idle %10.3f ms %5.1f%%\n",
			PCT(b->eu_fiber), PCT(b->eu_runtime), PCT(b->eu_idle));
	}
	fprintf(f,
		"  SU  serve   %10.3f ms %5.1f%%   receive %10.3f ms %5.1f%%"
		"   send %10.3f ms %5.1f%%   idle %10.3f ms %5.1f%%\n",
		PCT(b->su_serve), PCT(b->su_recv), PCT(b->su_send),
		PCT(b->su_idle));
#undef PCT
	struct net_blk_bytes bb;
	blk_bytes(n, &bb);
	double in = (double)(bb.recv_direct + bb.recv_copied);
	if (in > 0)
		fprintf(f,
			"  block payloads received %.3f MiB: %.1f%% "
			"straight into place, %.1f%% copied from receive "
			"buffers\n",
			in / (1 << 20), 100.0 * (double)bb.recv_direct / in,
			100.0 * (double)bb.recv_copied / in);
	double out = (double)(bb.sent_ref + bb.sent_copied);
	if (out > 0)
		fprintf(f,
			"  block payloads sent %.3f MiB: %.1f%% from where "
			"they lie, %.1f%% copied into send buffers\n",
			out / (1 << 20), 100.0 * (double)bb.sent_ref / out,
			100.0 * (double)bb.sent_copied / out);
	const struct su_state *su = &su_g;
	double q = (double)(su->queued_ref + su->queued_copied);
	if (q > 0)
		fprintf(f,
			"  payloads queued while the transport was full "
			"%.3f MiB: %.1f%% by reference, %.1f%% copied\n",
			q / (1 << 20), 100.0 * (double)su->queued_ref / q,
			100.0 * (double)su->queued_copied / q);
	fprintf(f, "  %-14s %12s %12s\n", "request", "local", "remote");
	for (unsigned op = 1; op < ACCT_OP_COUNT_; op++) {
		if (!handled_of(op))
			continue;
		fprintf(f, "  %-14s %12" PRIu64 " %12" PRIu64 "\n",
			acct_op_name(op), local_of(op), remote_of(op));
	}
	uint64_t s = switches();
	double sd = s ? (double)s : 1.0;
	fprintf(f, "  fiber ends %" PRIu64 ":\n", s);
	for (int k = 0; k < ACCT_SW_KINDS_; k++)
		fprintf(f, "    %-42s %12" PRIu64 " %5.1f%%\n", sw_text[k],
			eu_sum.sw[k], 100.0 * eu_sum.sw[k] / sd);
	fprintf(
	    f,
	    "  remote reads in flight at a fiber end: mean %.2f, max %" PRIu64
	    ";",
	    eu_sum.overlap_sum / sd, eu_sum.overlap_max);
	for (int k = 0; k < ACCT_OVERLAP_BUCKETS; k++)
		fprintf(f, " %s: %" PRIu64, bucket_names[k],
			eu_sum.overlap_hist[k]);
	fputc('\n', f);
	if (n->dsm_on)
		print_dsm(f, n);
}

/* The statistics table and the breakdown, with one write(2) (node.h). */
static void print_tables(const struct earth_node *n, const struct breakdown *b)
{
	struct earth_stats st;
	earth_stats_get(&st);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		stats_print_to(stderr, &st);
		print_table(stderr, n, b);
		return;
	}
	stats_print_to(f, &st);
	print_table(f, n, b);
	if (fclose(f) == 0)
		stats_write_err(buf, len);
	free(buf);
}

/* 0, or -1 after an error said on stderr (nothing partial is left). */
static int write_json(const struct earth_node *n, const struct breakdown *b,
		      const char *base)
{
	char part[4096];
	unsigned long job =
	    earth_setting_given(EARTH_SET_PARTS_ID)
		? (unsigned long)earth_setting_u64(EARTH_SET_PARTS_ID)
		: (unsigned long)getpid();
	if (!jsonparts_name(part, sizeof(part), base, job, n->id)) {
		fprintf(stderr, "earth: EARTH_STATS_JSON: path too long\n");
		return -1;
	}
	FILE *f = fopen(part, "w");
	if (!f) {
		fprintf(stderr,
			"earth: node %u: EARTH_STATS_JSON: cannot create "
			"%s: %s\n",
			n->id, part, strerror(errno));
		return -1;
	}
	struct earth_stats st;
	earth_stats_get(&st);
	struct net_blk_bytes bb;
	blk_bytes(n, &bb);
	fprintf(
	    f,
	    "{\"node\":%u,\"nodes\":%u,\"eus\":%u,\"wall_ns\":%.0f,"
	    "\"eu\":{\"fiber_ns\":%.0f,\"runtime_ns\":%.0f,\"idle_ns\":%.0f},"
	    "\"su\":{\"serve_ns\":%.0f,\"recv_ns\":%.0f,\"send_ns\":%.0f,"
	    "\"idle_ns\":%.0f},\"ops\":{",
	    n->id, n->num_nodes, n->eus, b->wall, b->eu_fiber, b->eu_runtime,
	    b->eu_idle, b->su_serve, b->su_recv, b->su_send, b->su_idle);
	/* INVOKE_REMOTE requests are counted as remote INVOKEs. */
	for (unsigned op = 1; op < ACCT_OP_COUNT_; op++)
		if (op != SU_OP_INVOKE_REMOTE)
			fprintf(f,
				"%s\"%s\":{\"local\":%" PRIu64
				",\"remote\":%" PRIu64 "}",
				op > 1 ? "," : "", acct_op_name(op),
				local_of(op), remote_of(op));
	fprintf(f, "},\"switches\":{");
	for (int k = 0; k < ACCT_SW_KINDS_; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", sw_names[k],
			eu_sum.sw[k]);
	uint64_t s = switches();
	fprintf(f,
		"},\"reads_in_flight\":{\"mean\":%.4f,\"max\":%" PRIu64
		",\"hist\":{",
		s ? (double)eu_sum.overlap_sum / (double)s : 0.0,
		eu_sum.overlap_max);
	for (int k = 0; k < ACCT_OVERLAP_BUCKETS; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", bucket_names[k],
			eu_sum.overlap_hist[k]);
	fprintf(f,
		"}},\"fibers_run\":%" PRIu64 ",\"msgs_sent\":%" PRIu64
		",\"msgs_received\":%" PRIu64 ",\"tokens_run\":%" PRIu64
		",\"tokens_stolen\":%" PRIu64 ",\"tokens_given\":%" PRIu64
		",\"steal_requests\":%" PRIu64
		",\"blk_recv\":{\"direct\":%" PRIu64 ",\"copied\":%" PRIu64
		"},\"blk_sent\":{\"referenced\":%" PRIu64 ",\"copied\":%" PRIu64
		"},\"queued\":{\"referenced\":%" PRIu64 ",\"copied\":%" PRIu64
		"}",
		st.fibers_run, st.msgs_sent, st.msgs_received, st.tokens_run,
		st.tokens_stolen, st.tokens_given, st.steal_requests,
		bb.recv_direct, bb.recv_copied, bb.sent_ref, bb.sent_copied,
		su_g.queued_ref, su_g.queued_copied);
	/* Each EU: its time, fibers, tokens taken from its siblings and
	 * fibers its signals made ready on their frames. */
	double tpn = n->tsc_per_ns > 0 ? n->tsc_per_ns : 1.0;
	fprintf(f, ",\"per_eu\":[");
	for (unsigned i = 0; i < acct_eus; i++) {
		const struct acct_eu *a = acct_eu_of(i);
		const struct eu_state *e = eu_at(i);
		fprintf(f,
			"%s{\"eu\":%u,\"cpu\":%d,\"fiber_ns\":%.0f,"
			"\"runtime_ns\":%.0f,"
			"\"idle_ns\":%.0f,\"fibers_run\":%" PRIu64
			",\"tokens_run\":%" PRIu64
			",\"tokens_from_siblings\":%" PRIu64
			",\"fibers_to_siblings\":%" PRIu64
			",\"sleeps\":%" PRIu64 "}",
			i ? "," : "", i, eu_cpu_of(n, i), a->fiber_ticks / tpn,
			a->runtime_ticks / tpn, a->idle_ticks / tpn,
			e->fibers_run, e->tokens_run, e->tokens_taken,
			e->fibers_elsewhere, e->sleeps);
	}
	fputc(']', f);
	if (n->dsm_on)
		json_dsm(f, n);
	fprintf(f, "}\n");
	int werr = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !werr)
		werr = errno;
	if (werr) {
		fprintf(stderr,
			"earth: node %u: EARTH_STATS_JSON: cannot write "
			"%s: %s\n",
			n->id, part, strerror(werr));
		unlink(part);
		return -1;
	}
	if (earth_setting_on(EARTH_SET_STATS_PARTS))
		return 0; /* earthrun joins the parts */
	char out[4096], err[512];
	if (n->num_nodes > 1)
		snprintf(out, sizeof(out), "%s.node%u.json", base, n->id);
	else
		snprintf(out, sizeof(out), "%s", base);
	const char *p = part;
	if (jsonparts_join(out, &p, 1, "{\"nodes\":[\n", "\n]}\n", 0, err,
			   sizeof(err))) {
		fprintf(stderr, "earth: node %u: EARTH_STATS_JSON: %s\n", n->id,
			err);
		return -1;
	}
	return 0;
}

int acct_close(struct earth_node *n)
{
	if (!acct_on)
		return 0;
	/* From each unit's last segment to the node's end: the EU leaving
	 * its loop, the SU with nothing more to do. */
	for (unsigned i = 0; i < acct_eus; i++) {
		struct acct_eu *a = acct_eu_of(i);
		if (n->end_tsc > a->mark)
			a->runtime_ticks += n->end_tsc - a->mark;
	}
	eu_sum_up();
	if (n->end_tsc > acct_su.mark)
		acct_su.idle_ticks += n->end_tsc - acct_su.mark;
	struct breakdown b;
	breakdown_of(n, &b);
	if (n->opts.print_stats)
		print_tables(n, &b);
	const char *js = earth_setting_str(EARTH_SET_STATS_JSON);
	int bad = js ? write_json(n, &b, js) : 0;
	acct_on = false;
	return bad;
}
