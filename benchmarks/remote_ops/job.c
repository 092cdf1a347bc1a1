/* SPDX-License-Identifier: MIT */
/*
 * job.c - the in-job program of remote_ops (driver.c starts it as 2-node
 * jobs under earthrun; remote_ops.h lists what it prints). Table 1 of the
 * EARTH-MANNA paper: spawn thread, load word, store word, function call;
 * sequential (one at a time, waiting for each) and pipelined (issued back
 * to back, per op); local (node 0 to itself) and remote (node 0 to node 1,
 * through node 1's SU: the words are static data). For pipelined ops also
 * the EU's own cost, the time to post them. The remote GET round trip on a
 * word of node 1's global memory (over shm read by node 0's EU through the
 * shared mapping)
 * and on its static data (through node 1's SU); block moves from node 1's
 * global memory and, in the same rounds, memcpy of the same bytes by node
 * 0 (the floor of a block move), over ucx also block moves from node 0's
 * static data into node 1's global memory; a 2-node barrier; TOKEN load
 * balancing on fib and N-Queens.
 *
 * Inside a job every figure is measured in rounds that visit every phase
 * of a block once, after one round that is not recorded (first touches,
 * frame lists, node 1 falling asleep), so that local and remote ops, or a
 * block move and its memcpy, see the same conditions.
 */
#define _GNU_SOURCE 1
#include "remote_ops.h"

#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lib/pairs.h"

#include "fib_tf.h"
#include "nqueens_tf.h"

#define BLK REMOTE_OPS_BLK
static long target_word = 7;
static long store_word;
static unsigned char blk_src[BLK], blk_dst[BLK];

/* Global memory: a block of BLK + 64 bytes per node; on node 1 the first
 * word is the GET target, the rest the block-move source. */
#define GBLOCK (BLK + 64)
static earth_garray garr;

struct gsetup_args {
	earth_gslot done;
};
static void gsetup_entry(void *f)
{
	struct gsetup_args *a = f;
	if (earth_garray_alloc(&garr, 2 * (size_t)GBLOCK, 1, GBLOCK)) {
		fprintf(stderr, "remote_ops: earth_garray_alloc failed\n");
		exit(1);
	}
	if (earth_node_id() == 1)
		*(long *)earth_gptr_addr(earth_garray_at(&garr, GBLOCK)) = 7;
	earth_rsync(a->done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(gsetup, gsetup_entry, struct gsetup_args,
			sizeof(struct gsetup_args));

/* ---- functions the ops start ---- */

struct spawned_args {
	earth_gslot done;
};
static void spawned_entry(void *f)
{
	struct spawned_args *a = f;
	earth_rsync(a->done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(spawned, spawned_entry, struct spawned_args,
			sizeof(struct spawned_args));

struct callee_args {
	long x;
	earth_gptr result;
	earth_gslot done;
};
static void callee_entry(void *f)
{
	struct callee_args *a = f;
	earth_data_rsync_l(a->x + 1, a->result, a->done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(callee, callee_entry, struct callee_args,
			sizeof(struct callee_args));

struct barriers_args {
	int count;
};
struct barriers_frame {
	struct barriers_args a;
	int i;
	earth_slot s;
};
static void barriers_step(void *f)
{
	struct barriers_frame *b = f;
	if (b->i++ == b->a.count)
		EARTH_END_FUNCTION(b);
	earth_barrier(&b->s);
}
static void barriers_entry(void *f)
{
	struct barriers_frame *b = f;
	b->i = 0;
	earth_slot_init(&b->s, 1, 1, barriers_step, b);
	barriers_step(b);
}
EARTH_THREADED_FUNCTION(barriers, barriers_entry, struct barriers_frame,
			sizeof(struct barriers_args));

/* ---- the phases, run by node 0 ---- */

enum op {
	OP_SPAWN,
	OP_LOAD,
	OP_STORE,
	OP_CALL,
	OP_GETRTT,
	OP_BLK,
	OP_BARRIER,
	OP_GETRTT_G,
	OP_BLK_G,
	OP_PUT_G,
	OP_MEMCPY_G,
	OP_COUNT
};
static const char *const op_names[] = {"spawn", "load", "store", "call"};

/* Phases run in blocks, one block after the other; a block runs in
 * rounds that visit each of its phases once: bench_reps rounds after one
 * that is not recorded (rep -1). */
struct phase {
	enum op op;
	int block;
	int pipe;   /* 0: one at a time; 1: back to back */
	int target; /* node */
	int count;  /* ops per repetition */
	double v[64];
	double post[64]; /* pipelined: ns per op the EU spent posting */
	int nv;
};
static struct phase phases[32];
static int nphases;

struct main_frame {
	struct earth_main_args a;
	int ph, rep, i; /* rep -1: the round that is not recorded */
	uint64_t t0;
	long got;
	earth_slot s_seq, s_pipe;
};
static void issue(struct main_frame *m, struct phase *p, earth_slot *s);
static void run_phase(struct main_frame *m);

/* Records the phase's sample (not in the first round), then runs the
 * next phase of the round, or the first of the block's next round, or of
 * the next block. */
static void record(struct main_frame *m, struct phase *p)
{
	uint64_t t1 = q_tsc_ordered();
	if (m->rep >= 0)
		p->v[p->nv++] = bench_ns((double)(t1 - m->t0)) / p->count;
	int next = m->ph + 1;
	if (next < nphases && phases[next].block == p->block) {
		m->ph = next;
	} else if (++m->rep < bench_reps) {
		while (m->ph > 0 && phases[m->ph - 1].block == p->block)
			m->ph--;
	} else {
		m->rep = -1;
		m->ph = next;
	}
	run_phase(m);
}

/* One op at a time; the clock starts after a first op (m->i = -1) that
 * is not counted: it pays for waking node 1 and warming the path. */
static void seq_step(void *f)
{
	struct main_frame *m = f;
	struct phase *p = &phases[m->ph];
	if (m->i == 0)
		m->t0 = q_tsc_ordered();
	if (m->i++ == p->count) {
		record(m, p);
		return;
	}
	issue(m, p, &m->s_seq);
}

static void pipe_done(void *f)
{
	struct main_frame *m = f;
	record(m, &phases[m->ph]);
}

static void issue(struct main_frame *m, struct phase *p, earth_slot *s)
{
	earth_gptr word = earth_gptr_make((uint32_t)p->target, &target_word);
	switch (p->op) {
	case OP_LOAD:
	case OP_GETRTT:
		earth_get_sync_l(word, &m->got, s);
		break;
	case OP_STORE:
		earth_data_sync_l(
		    5, earth_gptr_make((uint32_t)p->target, &store_word), s);
		break;
	case OP_SPAWN: {
		struct spawned_args a = {earth_slot_global(s)};
		earth_invoke((uint32_t)p->target, &spawned, &a, sizeof(a));
		break;
	}
	case OP_CALL: {
		struct callee_args a = {1, earth_to_global(&m->got),
					earth_slot_global(s)};
		earth_invoke((uint32_t)p->target, &callee, &a, sizeof(a));
		break;
	}
	case OP_BLK:
		earth_blkmov_sync(earth_gptr_make((uint32_t)p->target, blk_src),
				  earth_to_global(blk_dst), BLK, s);
		break;
	case OP_GETRTT_G:
		earth_get_sync_l(earth_garray_at(&garr, GBLOCK), &m->got, s);
		break;
	case OP_BLK_G:
		earth_blkmov_sync(earth_garray_at(&garr, GBLOCK + 64),
				  earth_to_global(blk_dst), BLK, s);
		break;
	case OP_PUT_G:
		earth_blkmov_sync(earth_to_global(blk_src),
				  earth_garray_at(&garr, GBLOCK + 64), BLK, s);
		break;
	case OP_BARRIER:
		earth_barrier(s);
		break;
	default:
		abort();
	}
}

static void run_phase(struct main_frame *m)
{
	if (m->ph == nphases) {
		EARTH_END_FUNCTION(m);
	}
	struct phase *p = &phases[m->ph];
	if (p->op == OP_BARRIER) {
		/* node 1 joins this round's barriers (the first not timed) */
		struct barriers_args a = {p->count + 1};
		earth_invoke(1, &barriers, &a, sizeof(a));
	}
	if (p->op == OP_MEMCPY_G) {
		/* the floor of a block move: node 0 copies the same bytes to
		 * the same place itself */
		m->t0 = q_tsc_ordered();
		memcpy(blk_dst,
		       earth_gptr_addr(earth_garray_at(&garr, GBLOCK + 64)),
		       BLK);
		record(m, p);
		return;
	}
	m->t0 = q_tsc_ordered();
	if (p->pipe) {
		earth_slot_init(&m->s_pipe, p->count, 0, pipe_done, m);
		for (int i = 0; i < p->count; i++)
			issue(m, p, &m->s_pipe);
		p->post[p->nv] =
		    bench_ns((double)(q_tsc_ordered() - m->t0)) / p->count;
	} else {
		m->i = -1;
		earth_slot_init(&m->s_seq, 1, 1, seq_step, m);
		seq_step(m);
	}
}

static void main_start(void *f)
{
	struct main_frame *m = f;
	m->ph = 0;
	m->rep = -1;
	run_phase(m);
}

/* Both nodes allocate the global array (symmetric), then the phases.
 * The source of the moves into node 1 is written first: bytes never
 * written would be read from the kernel's zero page. */
static void main_entry(void *f)
{
	struct main_frame *m = f;
	for (size_t i = 0; i < BLK; i++)
		blk_src[i] = (unsigned char)(i * 131 + 7);
	if (earth_garray_alloc(&garr, 2 * (size_t)GBLOCK, 1, GBLOCK)) {
		fprintf(stderr, "remote_ops: earth_garray_alloc failed\n");
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(m);
	}
	earth_slot_init(&m->s_seq, 1, 0, main_start, m);
	struct gsetup_args a = {earth_slot_global(&m->s_seq)};
	earth_invoke(1, &gsetup, &a, sizeof(a));
}
EARTH_THREADED_FUNCTION(remote_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static int cur_block;
static void add(enum op op, int pipe, int target, int count)
{
	phases[nphases++] = (struct phase){.op = op,
					   .block = cur_block,
					   .pipe = pipe,
					   .target = target,
					   .count = count};
}

/* ---- TOKEN balancing: fib and N-Queens (REMOTE_OPS_APP) ---- */

struct app_frame {
	struct earth_main_args a;
	int fib, n;
	long nq;
	uint64_t t0;
	earth_slot done;
};
static const long nq_known[] = {1,  1,	 0,   0,    2,	   10,	  4,	 40,
				92, 352, 724, 2680, 14200, 73712, 365596};
static const long fib_known[] = {
    0,	  1,	 1,	2,     3,     5,     8,	     13,     21,     34,
    55,	  89,	 144,	233,   377,   610,   987,    1597,   2584,   4181,
    6765, 10946, 17711, 28657, 46368, 75025, 121393, 196418, 317811, 514229};

static void app_done(void *frame)
{
	struct app_frame *m = frame;
	double ns = bench_ns((double)(q_tsc_ordered() - m->t0));
	const char *app = getenv("REMOTE_OPS_APP");
	long got = strcmp(app, "fib") ? m->nq : m->fib;
	long want = strcmp(app, "fib") ? nq_known[m->n] : fib_known[m->n];
	printf("balance-app %s(%d)=%ld %s time_ns %.0f\n", app, m->n, got,
	       got == want ? "correct" : "WRONG", ns);
	earth_set_exit_status(got != want);
	EARTH_END_FUNCTION(m);
}

static void app_entry(void *frame)
{
	struct app_frame *m = frame;
	const char *app = getenv("REMOTE_OPS_APP");
	earth_slot_init(&m->done, 1, 0, app_done, m);
	m->t0 = q_tsc_ordered();
	if (!strcmp(app, "fib")) {
		m->n = bench_quick ? 24 : 27;
		fib_tf_start(m->n, &m->fib, &m->done);
	} else {
		m->n = bench_quick ? 11 : 12;
		nqueens_tf_start(m->n, 4, &m->nq, &m->done);
	}
}
EARTH_THREADED_FUNCTION(app_main, app_entry, struct app_frame,
			sizeof(struct earth_main_args));

int remote_ops_app_node(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	int ret = earth_main(argc, argv, &app_main);
	struct earth_stats st;
	earth_stats_get(&st);
	printf("balance-node %u busy_ns %llu wall_ns %llu stolen %llu given "
	       "%llu fibers %llu\n",
	       earth_node_id(), (unsigned long long)st.eu_busy_ns,
	       (unsigned long long)st.wall_ns,
	       (unsigned long long)st.tokens_stolen,
	       (unsigned long long)st.tokens_given,
	       (unsigned long long)st.fibers_run);
	return ret;
}

/* ---- a job's node 0: its phases, then its figures ---- */

static void print_table(const char *sfx)
{
	double post[2][OP_COUNT] = {{0}};
	for (int i = 0; i < nphases; i++) {
		struct phase *p = &phases[i];
		double med = bench_median(p->v, p->nv);
		char name[128];
		switch (p->op) {
		case OP_BARRIER:
			snprintf(name, sizeof(name), "barrier.%s", sfx);
			bench_metric_ns(name, med);
			break;
		default:
			snprintf(name, sizeof(name), "op_latency.%s.%s.%s.%s",
				 op_names[p->op], p->pipe ? "pipe" : "seq",
				 p->target ? "remote" : "local", sfx);
			bench_metric_ns(name, med);
			if (!p->pipe)
				break;
			post[p->target][p->op] = bench_median(p->post, p->nv);
			snprintf(name, sizeof(name), "op_eu_post.%s.%s.%s",
				 op_names[p->op],
				 p->target ? "remote" : "local", sfx);
			bench_metric_ns(name, post[p->target][p->op]);
		}
	}
	for (int op = OP_SPAWN; op <= OP_CALL; op++) {
		char name[128];
		snprintf(name, sizeof(name), "op_eu_post_ratio.%s.%s",
			 op_names[op], sfx);
		bench_metric(name, post[1][op] / post[0][op], "x");
	}
}

/* A pair job's figures, one "pair NAME VALUE" line each, for the driver. */
static void print_pair(const char *sfx)
{
	for (int i = 0; i < nphases; i++) {
		struct phase *p = &phases[i];
		double med = bench_median(p->v, p->nv);
		char name[96];
		switch (p->op) {
		case OP_GETRTT_G:
			snprintf(name, sizeof(name), "get_remote_rtt.%s", sfx);
			bench_pair_line(name, med);
			break;
		case OP_GETRTT:
			snprintf(name, sizeof(name), "get_remote_rtt_su.%s",
				 sfx);
			bench_pair_line(name, med);
			break;
		case OP_BLK_G:
			snprintf(name, sizeof(name), "blkmov_bw.%s", sfx);
			bench_pair_line(name, BLK / med * 1e3);
			break;
		case OP_BLK:
			snprintf(name, sizeof(name), "blkmov_bw_su.%s", sfx);
			bench_pair_line(name, BLK / med * 1e3);
			break;
		case OP_MEMCPY_G:
			bench_pair_line("memcpy_bw", BLK / med * 1e3);
			break;
		default:
			break;
		}
	}
}

/* A ucx job's figures, as METRIC lines: the GET and the block move from
 * node 1's global memory through UCX's mapping of its segment over its
 * shared-memory lanes (ucx_shm: the GET a load by node 0's EU, the move a
 * copy by its SU), one-sided (ucp_get_nbx) over other lanes that read
 * remote memory; the block move into it one-sided (ucp_put_nbx) where UCX
 * has a lane that reaches remote memory; through node 1's SU over its tcp
 * lanes; the rest through node 1's SU. */
static void print_ucx(const char *sfx)
{
	for (int i = 0; i < nphases; i++) {
		struct phase *p = &phases[i];
		double med = bench_median(p->v, p->nv);
		char name[96];
		switch (p->op) {
		case OP_GETRTT_G:
			snprintf(name, sizeof(name), "get_remote_rtt.%s", sfx);
			bench_metric_ns(name, med);
			break;
		case OP_GETRTT:
			snprintf(name, sizeof(name), "get_remote_rtt_su.%s",
				 sfx);
			bench_metric_ns(name, med);
			break;
		case OP_BLK_G:
			snprintf(name, sizeof(name), "blkmov_bw.%s", sfx);
			bench_metric(name, BLK / med * 1e3, "MB/s");
			break;
		case OP_PUT_G:
			snprintf(name, sizeof(name), "blkmov_put_bw.%s", sfx);
			bench_metric(name, BLK / med * 1e3, "MB/s");
			break;
		case OP_SPAWN:
			snprintf(name, sizeof(name), "invoke_rtt.%s", sfx);
			bench_metric_ns(name, med);
			break;
		case OP_BARRIER:
			snprintf(name, sizeof(name), "barrier.%s", sfx);
			bench_metric_ns(name, med);
			break;
		default:
			break;
		}
	}
}

/* The suffix of this job's figures: shm, tcp, or ucx_shm / ucx_tcp by
 * the lanes UCX_TLS names (EARTH_TRANSPORT: "shm|tcp|ucx"). */
static const char *transport_sfx(void)
{
	const struct earth_set_value *tr = bench_setting(EARTH_SET_TRANSPORT);
	if (tr->given && tr->u == 2) {
		const char *tls = getenv("UCX_TLS");
		return tls && strstr(tls, "tcp") ? "ucx_tcp" : "ucx_shm";
	}
	return tr->given && tr->u == 1 ? "tcp" : "shm";
}

int remote_ops_job_node(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	const char *sfx = transport_sfx();
	const char *part = getenv("REMOTE_OPS_PART");
	if (part && !strcmp(part, "ucx")) {
		/* GET on node 1's global memory (one-sided) and on its
		 * static data (through its SU), block moves from its global
		 * memory into node 0's static data and back (one-sided, in
		 * the same rounds), an INVOKE that signals back, a barrier. */
		int n = bench_quick ? 200 : 1000;
		bench_reps = bench_quick ? 5 : 9;
		add(OP_GETRTT_G, 0, 1, n);
		cur_block++;
		add(OP_GETRTT, 0, 1, n);
		cur_block++;
		/* as many moves per repetition as ucp_floor puts and gets
		 * blocks of the same size (64 MiB worth, QUICK; else 256) */
		int blks = (int)(((bench_quick ? 64u : 256u) << 20) / BLK);
		add(OP_BLK_G, 0, 1, blks);
		add(OP_PUT_G, 0, 1, blks);
		cur_block++;
		add(OP_SPAWN, 0, 1, n);
		cur_block++;
		add(OP_BARRIER, 0, 0, n);
		int ret = earth_main(argc, argv, &remote_main);
		if (earth_node_id() == 0 && !ret)
			print_ucx(sfx);
		return ret;
	}
	int shm = !strcmp(sfx, "shm"), pair = part && !strcmp(part, "pair");
	/* EARTH_REMOTE: "su|direct" */
	int direct = shm && bench_setting(EARTH_SET_REMOTE)->u != 0;
	int k = bench_quick ? 200 : 1000;
	if (pair) {
		/* What node 0 does alone (over shm) first, while node 1
		 * sleeps: its units share the CPUs with node 0's on a 2-CPU
		 * host, and go to sleep within a millisecond or two of idling
		 * (spin, then a STEAL or two); the first repetition, not
		 * recorded, lasts that long. Block moves alternate with the
		 * memcpy of the same bytes. */
		bench_reps = bench_quick ? 5 : 9;
		add(OP_GETRTT_G, 0, 1, bench_quick ? 2000 : 5000);
		cur_block++;
		add(OP_BLK_G, 0, 1, 1);
		if (direct)
			add(OP_MEMCPY_G, 0, 1, 1);
		if (shm) {
			cur_block++;
			add(OP_GETRTT, 0, 1, k);
			cur_block++;
			add(OP_BLK, 0, 1, 1);
		}
	} else {
		bench_reps = bench_quick ? 5 : 9;
		for (int t = 0; t < 2; t++)
			for (int pipe = 0; pipe < 2; pipe++)
				for (enum op op = OP_SPAWN; op <= OP_CALL; op++)
					add(op, pipe, t, k);
		add(OP_BARRIER, 0, 0, k);
	}
	int ret = earth_main(argc, argv, &remote_main);
	if (earth_node_id() != 0 || ret)
		return ret;
	if (pair) {
		print_pair(sfx);
		return 0;
	}
	printf("# remote_ops %s: global memory %s\n", sfx,
	       !shm	? "through the remote SU (tcp)"
	       : direct ? "direct, one-sided"
			: "through the remote SU (EARTH_REMOTE=su)");
	print_table(sfx);
	return 0;
}
