/* SPDX-License-Identifier: MIT */
/*
 * eu_overhead.c - Table 2 of the EARTH-MANNA paper on this machine: the
 * EU's cost per operation issued back to back, and the SU's cost to
 * perform it, for both queue modes; END_THREAD and END_FUNCTION as the
 * time from one fiber's end to the next one's start; and the sequential
 * latency of a local GET_SYNC.
 *
 *   eu_overhead.<op>.<sw|hwq>  su_cost.<op>.<sw|hwq>  end_thread[.sw]
 *   eu_overhead.<op>.<sw|hwq>_over_queue_msg: the EU's cost per operation
 *   over the cost per message of streaming the software ring between the
 *   same CPUs (queue_msg.sw, lib/qstream.h), measured right before each
 *   run: below 1 when several requests share a message.
 *   end_thread_over_dispatch[.sw]: END_THREAD over an empty function
 *   called through a table on the EU's CPU right before each run
 *   (bench_dispatch_ns): the host slows a vCPU for seconds at a time.
 *   get_sync_local_seq[.sw] (no suffix: the default queue mode, hwq), and
 *   its ratio to a cache-line round trip
 *   between the same CPUs measured right before each run
 *   (get_sync_local_seq_over_xcore[.hwq]): the hypervisor moves vCPUs, so
 *   only a ratio taken in the same moment compares.
 *
 * GET_SYNC reads a word of the node's own memory: in a dual node the EU
 * performs it itself (eu/post.c), and an INVOKE on its own node too (the
 * frame, then the fiber on the EU's own ready list); EARTH_EU_SIGNALS=0
 * sends them through the SU.
 *
 * White-box: the END_THREAD gate reads the SU's published counters
 * (runtime/eu/eu.h, runtime/su/su.h) so the timed fibers are all queued before
 * timing.
 */
#define EARTH_INTERNAL 1
#include "bench.h"
#include "lib/qstream.h"
#include "eu/eu.h"
#include "su/su.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum bop {
	B_SYNC,
	B_GET_SYNC,
	B_DATA_SYNC,
	B_BLKMOV_SYNC,
	B_INVOKE,
	B_END_FUNCTION,
	B_END_THREAD,
	B_GET_SEQ,
	B_COUNT
};
static const char *const bop_names[B_COUNT] = {
    "sync",   "get_sync",     "data_sync",  "blkmov_sync",
    "invoke", "end_function", "end_thread", "get_sync_local_seq",
};

#define BURST 256
#define MAX_SAMPLES 4096
#define BLK 256

static enum bop cur_op;
static int bursts;
static int burst_len;
static double samples[MAX_SAMPLES];
static int nsamples;
static int shared_runs, probed_runs;
static uint64_t probe_least, probe_lo = UINT64_MAX, probe_hi;

struct nop_frame {
	int arg;
};
static void nop_entry(void *f)
{
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(nop_fn, nop_entry, struct nop_frame, sizeof(int));

struct mframe {
	struct earth_main_args a;
	int burst;
	uint64_t t0, base_handled;
	earth_slot next, sink;
	long src, dst;
	char blk_src[BLK], blk_dst[BLK];
};
static void burst_fiber(void *f);
static void gate_fiber(void *f);
static void stop_fiber(void *f);
static void empty_fiber(void *f)
{
	(void)f;
}
static void never_fiber(void *f)
{
	(void)f;
	abort();
}

/* Issue burst_len operations back to back; the SYNC to `next` after them
 * fires the next burst once the SU has handled them all. */
static void burst_fiber(void *frame)
{
	struct mframe *m = frame;
	if (m->burst++ == bursts) {
		EARTH_END_FUNCTION(m);
	}
	earth_gptr gsrc = earth_to_global(&m->src);
	earth_gptr gdst = earth_to_global(&m->dst);
	earth_gptr bsrc = earth_to_global(m->blk_src);
	earth_gptr bdst = earth_to_global(m->blk_dst);
	int arg = 7;
	uint64_t t0 = q_tsc_ordered();
	switch (cur_op) {
	case B_SYNC:
		for (int i = 0; i < burst_len; i++)
			earth_sync(&m->sink);
		break;
	case B_GET_SYNC:
		for (int i = 0; i < burst_len; i++)
			earth_get_sync_l(gsrc, &m->dst, &m->sink);
		break;
	case B_DATA_SYNC:
		for (int i = 0; i < burst_len; i++)
			earth_data_sync_l(i, gdst, &m->sink);
		break;
	case B_BLKMOV_SYNC:
		for (int i = 0; i < burst_len; i++)
			earth_blkmov_sync(bsrc, bdst, BLK, &m->sink);
		break;
	case B_INVOKE:
		for (int i = 0; i < burst_len; i++)
			earth_invoke(0, &nop_fn, &arg, sizeof(arg));
		break;
	default:
		abort();
	}
	uint64_t t1 = q_tsc_ordered();
	if (m->burst > 2 && nsamples < MAX_SAMPLES) /* two warm-up bursts */
		samples[nsamples++] = (double)(t1 - t0) / burst_len;
	earth_sync(&m->next);
}

/* END_THREAD / END_FUNCTION: queue gate, burst_len fibers, stop; time
 * from the gate's end to the stop fiber's start. A block move first, one
 * too large for the EU to copy itself (EARTH_EU_BLKMOV_MAX): a dual
 * node's EU would make the fibers ready in its own list; after a request
 * the SU performs, they go through the SU in posting order and come back
 * in the ready ring, the path whose END_THREAD this measures. */
#define GATE_BLK (2 * EARTH_EU_BLKMOV_MAX)
static char gate_src[GATE_BLK], gate_dst[GATE_BLK];
static void end_burst(struct mframe *m)
{
	if (m->burst++ == bursts) {
		EARTH_END_FUNCTION(m);
	}
	m->base_handled =
	    atomic_load_explicit(&su_g.pub_handled, memory_order_relaxed);
	earth_blkmov_sync(earth_to_global(gate_src), earth_to_global(gate_dst),
			  GATE_BLK, &m->sink);
	earth_spawn(gate_fiber, m);
	int arg = 3;
	for (int i = 0; i < burst_len; i++) {
		if (cur_op == B_END_THREAD)
			earth_spawn(empty_fiber, m);
		else
			earth_invoke(0, &nop_fn, &arg, sizeof(arg));
	}
	earth_spawn(stop_fiber, m);
}

static void gate_fiber(void *frame)
{
	struct mframe *m = frame;
	/* The SU publishes its counters once idle, after flushing every
	 * ready fiber: then all burst_len + 2 are in the ring (after the
	 * block move). Requests that did not fit the request ring wait in the
	 * EU's overflow list, which the EU drains only between fibers: drain
	 * it here. */
	while (atomic_load_explicit(&su_g.pub_handled, memory_order_relaxed) <
	       m->base_handled + (uint64_t)burst_len + 3) {
		if (eu_self->ovf_len)
			eu_ovf_drain(eu_self);
		q_cpu_relax();
	}
	m->t0 = q_tsc_ordered();
}

static void stop_fiber(void *frame)
{
	struct mframe *m = frame;
	uint64_t t1 = q_tsc_ordered();
	if (m->burst > 2 && nsamples < MAX_SAMPLES)
		samples[nsamples++] = (double)(t1 - m->t0) / (burst_len + 1);
	end_burst(m);
}

/* Sequential GET_SYNC latency: each fiber issues one and ends; the slot
 * fires the next. */
static void seq_fiber(void *frame)
{
	struct mframe *m = frame;
	if (m->burst == 0)
		m->t0 = q_tsc_ordered();
	if (m->burst++ == burst_len) {
		uint64_t t1 = q_tsc_ordered();
		if (nsamples < MAX_SAMPLES)
			samples[nsamples++] = (double)(t1 - m->t0) / burst_len;
		EARTH_END_FUNCTION(m);
	}
	earth_get_sync_l(earth_to_global(&m->src), &m->dst, &m->next);
}

static void main_entry(void *frame)
{
	struct mframe *m = frame;
	m->burst = 0;
	m->src = 42;
	memset(m->blk_src, 1, BLK);
	earth_slot_init(&m->sink, INT32_MAX, INT32_MAX, never_fiber, m);
	switch (cur_op) {
	case B_END_THREAD:
	case B_END_FUNCTION:
		end_burst(m);
		break;
	case B_GET_SEQ:
		earth_slot_init(&m->next, 1, 1, seq_fiber, m);
		seq_fiber(m);
		break;
	default:
		earth_slot_init(&m->next, 1, 1, burst_fiber, m);
		burst_fiber(m);
	}
}
EARTH_THREADED_FUNCTION(bench_main, main_entry, struct mframe,
			sizeof(struct earth_main_args));

/* One node run of op in mode; returns median ticks per op (EU side) and
 * sets *su_ns to the SU's busy time per handled request. */
static double run_op(enum bop op, enum earth_queue_mode mode, double *su_ns)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	cur_op = op;
	nsamples = 0;
	switch (op) {
	case B_END_THREAD:
	case B_END_FUNCTION:
		burst_len = 2048;
		bursts = bench_quick ? 12 : 40;
		break;
	case B_GET_SEQ:
		burst_len = bench_quick ? 20000 : 100000;
		bursts = 1;
		break;
	default:
		burst_len = BURST;
		bursts = bench_quick ? 200 : 2000;
	}
	struct earth_main_args a = {0, NULL};
	if (earth_run(&o, &bench_main, &a, sizeof(a)) != 0) {
		fprintf(stderr, "eu_overhead: node failed\n");
		exit(1);
	}
	/* The SU's measure of its core (su/loop.c, su_spin_ticks). */
	shared_runs += su_g.shared_seen > 0;
	probed_runs += su_g.probe_at > 0;
	if (su_g.probe_at) {
		probe_least = su_g.probe_least;
		if (su_g.probe_last < probe_lo)
			probe_lo = su_g.probe_last;
		if (su_g.probe_last > probe_hi)
			probe_hi = su_g.probe_last;
	}
	struct earth_stats st;
	earth_stats_get(&st);
	*su_ns =
	    st.su_handled ? (double)st.su_busy_ns / (double)st.su_handled : 0;
	return bench_median(samples, nsamples);
}

int main(int argc, char **argv)
{
	bench_init("eu_overhead", argc, argv);
	int cpu_eu, cpu_su;
	bench_cpus(&cpu_eu, &cpu_su);
	setenv("EARTH_TIMING", "1", 1);
	const char *mode_names[2] = {"sw", "hwq"};
	for (int mode = 0; mode < 2; mode++) {
		for (enum bop op = 0; op < B_COUNT; op++) {
			if (argc > 1 && !strstr(argv[1], bop_names[op]))
				continue;
			double eu[64], su[64], ratio[64];
			bool timed = op != B_END_THREAD &&
				     op != B_END_FUNCTION && op != B_GET_SEQ;
			for (int r = 0; r < bench_reps; r++) {
				double floor = 0;
				if (op == B_GET_SEQ)
					floor = bench_xcore_rtt_ns(
					    cpu_eu, cpu_su,
					    bench_quick ? 20000 : 100000);
				else if (op == B_END_THREAD)
					floor = bench_dispatch_ns(cpu_eu);
				else if (timed)
					floor = bench_queue_msg_ns(
					    Q_MODE_SW, cpu_eu, cpu_su,
					    bench_quick ? 200000 : 1000000);
				eu[r] = bench_ns(run_op(
				    op, (enum earth_queue_mode)mode, &su[r]));
				ratio[r] = floor > 0 ? eu[r] / floor : 0;
			}
			printf("# eu_overhead: %s.%s: the SU measured its core "
			       "in %d of %d runs (least %llu, last %llu to "
			       "%llu TSC cycles), shared with a busy thread "
			       "in %d\n",
			       bop_names[op], mode_names[mode], probed_runs,
			       bench_reps, (unsigned long long)probe_least,
			       (unsigned long long)(probed_runs ? probe_lo : 0),
			       (unsigned long long)probe_hi, shared_runs);
			shared_runs = probed_runs = 0;
			probe_lo = UINT64_MAX;
			probe_hi = 0;
			double e = bench_median(eu, bench_reps);
			double s = bench_median(su, bench_reps);
			char name[128];
			if (op == B_END_THREAD || op == B_GET_SEQ) {
				snprintf(name, sizeof(name), "%s%s",
					 bop_names[op], mode ? "" : ".sw");
				bench_metric_ns(name, e);
				snprintf(name, sizeof(name), "%s_over_%s%s",
					 bop_names[op],
					 op == B_GET_SEQ ? "xcore" : "dispatch",
					 mode ? "" : ".sw");
				bench_metric(name,
					     bench_median(ratio, bench_reps),
					     "ratio");
				continue;
			}
			snprintf(name, sizeof(name), "eu_overhead.%s.%s",
				 bop_names[op], mode_names[mode]);
			bench_metric_ns(name, e);
			if (op == B_END_FUNCTION)
				continue;
			snprintf(name, sizeof(name),
				 "eu_overhead.%s.%s_over_queue_msg",
				 bop_names[op], mode_names[mode]);
			bench_metric(name, bench_median(ratio, bench_reps),
				     "ratio");
			snprintf(name, sizeof(name), "su_cost.%s.%s",
				 bop_names[op], mode_names[mode]);
			bench_metric_ns(name, s);
		}
	}
	return 0;
}
