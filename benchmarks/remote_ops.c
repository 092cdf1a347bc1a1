/* SPDX-License-Identifier: MIT */
/*
 * remote_ops.c - Table 1 of the EARTH-MANNA paper over both transports:
 * spawn thread, load word, store word, function call; sequential (one at a
 * time, waiting for each) and pipelined (issued back to back, per op);
 * local (node 0 to itself) and remote (node 0 to node 1, through node 1's
 * SU: the words are static data). For pipelined ops also the EU's own
 * cost, the time to post them (op_eu_post), remote against local. The
 * remote GET round trip on a word of node 1's global memory (over shm by
 * the direct one-sided path) and on its static data (through node 1's
 * SU), against a raw two-process ping-pong; block-move bandwidth from node
 * 1's global memory against memcpy of the same bytes by node 0 and a raw
 * TCP stream; a 2-node barrier; TOKEN load balancing on fib and N-Queens:
 * each node's EU busy share and the tokens stolen.
 *
 *   op_latency.<spawn|load|store|call>.<seq|pipe>.<local|remote>.<shm|tcp>
 *   op_eu_post.<op>.<local|remote>.<shm|tcp>  op_eu_post_ratio.<op>.<tr>
 *   get_remote_rtt.<shm|tcp>  get_remote_rtt_su.shm  pingpong_rtt.<shm|tcp>
 *   get_remote_rtt_over_pingpong.<shm|tcp>  get_remote_rtt_su_over_pingpong.shm
 *   blkmov_bw.<shm|tcp>  blkmov_bw_su.shm  memcpy_bw  tcp_stream_bw
 *   blkmov_bw_over_memcpy.shm  blkmov_bw_over_stream.tcp
 *   barrier.<shm|tcp>
 *   balance.<fib|nqueens>.<busy_share.min|busy_share.max|work_share.min|
 *                          steals|time>
 *
 * Run it directly: it is the driver. The vCPUs of a shared host move
 * between placements (a cache-line round trip of ~110 ns or ~500 ns), so
 * every target ratio is taken pair by pair: the driver measures a floor
 * (ping-pong, TCP stream), then at once starts a short 2-node job that
 * measures what is compared with it (REMOTE_OPS_PART=pair), several times
 * over; a ratio metric is the median of the pairs' ratios. memcpy_bw is
 * measured inside that job by node 0's EU, copying the very bytes a block
 * move fetches (node 1's segment, mapped here) into the same destination,
 * alternated with the moves. Then one longer job per transport measures
 * Table 1 and the barrier (REMOTE_OPS_PART=table), and two more the
 * balancing (REMOTE_OPS_APP=fib|nqueens). Inside a job every figure is
 * measured in rounds that visit every phase of a block once, after one
 * round that is not recorded (first touches, frame lists, node 1 falling
 * asleep), so that local and remote ops, or a block move and its memcpy,
 * see the same conditions.
 */
#define _GNU_SOURCE 1
#include "bench.h"
#include "lib/job.h"

#include <earth.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fib_tf.h"
#include "nqueens_tf.h"

#define BLK (8u << 20)
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

/* ---- the driver on node 0 ---- */

enum op { OP_SPAWN, OP_LOAD, OP_STORE, OP_CALL, OP_GETRTT, OP_BLK,
	  OP_BARRIER, OP_GETRTT_G, OP_BLK_G, OP_MEMCPY_G, OP_COUNT };
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
		earth_data_sync_l(5, earth_gptr_make((uint32_t)p->target,
						     &store_word),
				  s);
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
		memcpy(blk_dst, earth_gptr_addr(earth_garray_at(&garr, GBLOCK + 64)),
		       BLK);
		record(m, p);
		return;
	}
	m->t0 = q_tsc_ordered();
	if (p->pipe) {
		earth_slot_init(&m->s_pipe, p->count, 0, pipe_done, m);
		for (int i = 0; i < p->count; i++)
			issue(m, p, &m->s_pipe);
		p->post[p->nv] = bench_ns((double)(q_tsc_ordered() - m->t0)) /
				 p->count;
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

/* Both nodes allocate the global array (symmetric), then the phases. */
static void main_entry(void *f)
{
	struct main_frame *m = f;
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
	phases[nphases++] = (struct phase){.op = op, .block = cur_block,
					   .pipe = pipe, .target = target,
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
static const long nq_known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724,
				2680, 14200, 73712, 365596};
static const long fib_known[] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89,
				 144, 233, 377, 610, 987, 1597, 2584, 4181,
				 6765, 10946, 17711, 28657, 46368, 75025,
				 121393, 196418, 317811, 514229};

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

/* A node of a balancing job: the program, then its own figures. */
static int app_node(int argc, char **argv)
{
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

/* ---- the floor: two processes, one shared line each way ---- */

static double pingpong_rtt_shm(long rounds)
{
	_Atomic uint64_t *pp = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	_Atomic uint64_t *ping = pp, *pong = pp + 8;
	atomic_store(ping, 0);
	atomic_store(pong, 0);
	int eu, su;
	bench_cpus(&eu, &su);
	pid_t c = fork();
	if (c == 0) {
		bench_pin(su);
		for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
			while (atomic_load_explicit(ping, memory_order_acquire) != i)
				q_cpu_relax();
			atomic_store_explicit(pong, i, memory_order_release);
		}
		_exit(0);
	}
	bench_pin(eu);
	uint64_t t0 = 0;
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		if (i == (uint64_t)rounds / 10 + 1)
			t0 = q_tsc_ordered();
		atomic_store_explicit(ping, i, memory_order_release);
		while (atomic_load_explicit(pong, memory_order_acquire) != i)
			q_cpu_relax();
	}
	uint64_t t1 = q_tsc_ordered();
	waitpid(c, NULL, 0);
	munmap(pp, 4096);
	return bench_ns((double)(t1 - t0)) / (double)(rounds - rounds / 10);
}

/* ---- the tcp floor: loopback socket pair between two processes ---- */

static int tcp_pair(int *a, int *b)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&sa, &len))
		return -1;
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	*b = accept(l, NULL, NULL);
	close(l);
	int one = 1;
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return *b < 0 ? -1 : 0;
}

/* Spins on recv(MSG_DONTWAIT) for n bytes, as a polling SU would. */
static void recv_all(int fd, char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
		if (r > 0)
			got += (size_t)r;
		else if (r == 0)
			_exit(1);
	}
}

/* 64-byte ping-pong; returns ns per round trip. */
static double pingpong_rtt_tcp(long rounds)
{
	int a, b;
	if (tcp_pair(&a, &b))
		return -1;
	int eu, su;
	bench_cpus(&eu, &su);
	char buf[64] = {0};
	pid_t c = fork();
	if (c == 0) {
		bench_pin(su);
		close(a);
		for (long i = 0; i < rounds; i++) {
			recv_all(b, buf, sizeof(buf));
			if (send(b, buf, sizeof(buf), 0) != sizeof(buf))
				_exit(1);
		}
		_exit(0);
	}
	close(b);
	bench_pin(eu);
	uint64_t t0 = 0;
	for (long i = 0; i < rounds; i++) {
		if (i == rounds / 10)
			t0 = q_tsc_ordered();
		if (send(a, buf, sizeof(buf), 0) != sizeof(buf))
			return -1;
		recv_all(a, buf, sizeof(buf));
	}
	uint64_t t1 = q_tsc_ordered();
	waitpid(c, NULL, 0);
	close(a);
	return bench_ns((double)(t1 - t0)) / (double)(rounds - rounds / 10);
}

/* One process streams `bytes` to another over loopback; MB/s. */
static double tcp_stream_bw(size_t bytes)
{
	int a, b;
	if (tcp_pair(&a, &b))
		return -1;
	int eu, su;
	bench_cpus(&eu, &su);
	static char chunk[1 << 16];
	pid_t c = fork();
	if (c == 0) {
		bench_pin(su);
		close(a);
		size_t got = 0;
		while (got < bytes) {
			ssize_t r = recv(b, chunk, sizeof(chunk), 0);
			if (r <= 0)
				_exit(1);
			got += (size_t)r;
		}
		if (send(b, chunk, 1, 0) != 1)
			_exit(1);
		_exit(0);
	}
	close(b);
	bench_pin(eu);
	uint64_t t0 = q_tsc_ordered();
	for (size_t sent = 0; sent < bytes;) {
		ssize_t r = send(a, chunk, sizeof(chunk), 0);
		if (r <= 0)
			return -1;
		sent += (size_t)r;
	}
	if (recv(a, chunk, 1, 0) != 1)
		return -1;
	uint64_t t1 = q_tsc_ordered();
	waitpid(c, NULL, 0);
	close(a);
	return (double)bytes / bench_ns((double)(t1 - t0)) * 1e3;
}

/* Runs this program as a 2-node job over `transport` with variable
 * `var`=`val` set, its standard output (at most cap - 1 bytes kept) into
 * out; returns the job's exit status (1: it could not run). */
static int run_job(const char *earthrun, const char *self,
		   const char *transport, const char *var, const char *val,
		   char *out, size_t cap)
{
	int fds[2];
	if (pipe(fds))
		return 1;
	pid_t c = bench_fork_job();
	if (c == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv(var, val, 1);
		execl(earthrun, earthrun, "-n", "2", "--transport", transport,
		      self, (char *)NULL);
		perror("remote_ops: cannot start earthrun");
		_exit(127);
	}
	close(fds[1]);
	size_t len = 0;
	ssize_t r;
	char sink[4096];
	while ((r = read(fds[0], len < cap - 1 ? out + len : sink,
			 len < cap - 1 ? cap - 1 - len : sizeof(sink))) > 0)
		len += len < cap - 1 ? (size_t)r : 0;
	out[len] = 0;
	close(fds[0]);
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Runs a 2-node balancing job of `app` over shm, its output into the
 * log as comments; METRIC lines from the nodes' figures. 0 on success. */
static int run_balance(const char *earthrun, const char *self,
		       const char *app)
{
	static char out[16384];
	setenv("EARTH_TIMING", "1", 1);
	int st = run_job(earthrun, self, "shm", "REMOTE_OPS_APP", app, out,
			 sizeof(out));
	unsetenv("EARTH_TIMING");
	double share_min = 101, share_max = -1, steals = 0, time_ns = -1;
	double fib_min = -1, fib_sum = 0; /* fibers run per node */
	int nodes = 0, ok = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned id;
		unsigned long long busy, wall, stolen, given, fibers;
		double t;
		printf("# %s\n", line);
		if (sscanf(line, "balance-node %u busy_ns %llu wall_ns %llu "
				 "stolen %llu given %llu fibers %llu",
			   &id, &busy, &wall, &stolen, &given, &fibers) == 6) {
			double sh = wall ? 100.0 * (double)busy / (double)wall
					 : 0;
			share_min = sh < share_min ? sh : share_min;
			share_max = sh > share_max ? sh : share_max;
			steals += (double)stolen;
			fib_sum += (double)fibers;
			if (fib_min < 0 || (double)fibers < fib_min)
				fib_min = (double)fibers;
			nodes++;
		} else if (strstr(line, "balance-app ") && strstr(line, "correct") &&
			   !strstr(line, "WRONG")) {
			char *p = strstr(line, "time_ns ");
			if (p && sscanf(p, "time_ns %lf", &t) == 1) {
				time_ns = t;
				ok = 1;
			}
		}
	}
	if (st || !ok || nodes != 2) {
		printf("# balance %s: the job failed\n", app);
		return 1;
	}
	char name[96];
	snprintf(name, sizeof(name), "balance.%s.busy_share.min", app);
	bench_metric(name, share_min, "%");
	snprintf(name, sizeof(name), "balance.%s.busy_share.max", app);
	bench_metric(name, share_max, "%");
	/* the smallest node's part of all fibers run (50% is even on 2) */
	snprintf(name, sizeof(name), "balance.%s.work_share.min", app);
	bench_metric(name, fib_sum > 0 ? 100.0 * fib_min / fib_sum : 0, "%");
	snprintf(name, sizeof(name), "balance.%s.steals", app);
	bench_metric(name, steals, "tokens");
	snprintf(name, sizeof(name), "balance.%s.time", app);
	bench_metric_ns(name, time_ns);
	return 0;
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
				 op_names[p->op], p->target ? "remote" : "local",
				 sfx);
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
		switch (p->op) {
		case OP_GETRTT_G:
			printf("pair get_remote_rtt.%s %.3f\n", sfx, med);
			break;
		case OP_GETRTT:
			printf("pair get_remote_rtt_su.%s %.3f\n", sfx, med);
			break;
		case OP_BLK_G:
			printf("pair blkmov_bw.%s %.3f\n", sfx, BLK / med * 1e3);
			break;
		case OP_BLK:
			printf("pair blkmov_bw_su.%s %.3f\n", sfx, BLK / med * 1e3);
			break;
		case OP_MEMCPY_G:
			printf("pair memcpy_bw %.3f\n", BLK / med * 1e3);
			break;
		default:
			break;
		}
	}
}

static int job_node(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	const char *tr = getenv("EARTH_TRANSPORT");
	const char *sfx = tr && !strcmp(tr, "tcp") ? "tcp" : "shm";
	const char *part = getenv("REMOTE_OPS_PART");
	int shm = !strcmp(sfx, "shm"), pair = part && !strcmp(part, "pair");
	const char *rm = getenv("EARTH_REMOTE");
	int direct = shm && !(rm && !strcmp(rm, "su"));
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
	       !shm     ? "through the remote SU (tcp)"
	       : direct ? "direct, one-sided"
			: "through the remote SU (EARTH_REMOTE=su)");
	print_table(sfx);
	return 0;
}

/* ---- the driver ---- */

/* The value of "pair NAME VALUE" in a pair job's output, or -1. */
static double pair_value(const char *out, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = strstr(out, "pair "); p; p = strstr(p + 1, "pair ")) {
		if (!strncmp(p + 5, name, l) && p[5 + l] == ' ')
			return atof(p + 6 + l);
	}
	return -1;
}

/* One figure measured pair by pair: its samples, its floor's, their
 * ratios. */
struct paired {
	char name[64], floor[64], ratio[64];
	const char *unit;
	double v[64], f[64], r[64];
	int n;
};

static void paired_init(struct paired *p, const char *name, const char *floor,
			const char *ratio, const char *unit)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->floor, sizeof(p->floor), "%s", floor);
	snprintf(p->ratio, sizeof(p->ratio), "%s", ratio);
	p->unit = unit;
}

static void paired_add(struct paired *p, double v, double floor)
{
	if (v <= 0 || floor <= 0 || p->n == 64)
		return;
	p->v[p->n] = v;
	p->f[p->n] = floor;
	p->r[p->n] = v / floor;
	p->n++;
}

/* METRIC lines: the figure's median, its floor's (print_floor) and the
 * median of the pairs' ratios. 0, or 1 when no pair gave a sample. */
static int paired_print(struct paired *p, int print_floor)
{
	if (p->n == 0) {
		printf("# remote_ops: no sample of %s\n", p->name);
		return 1;
	}
	int ns = !strcmp(p->unit, "ns");
	double v = bench_median(p->v, p->n), f = bench_median(p->f, p->n);
	if (ns)
		bench_metric_ns(p->name, v);
	else
		bench_metric(p->name, v, p->unit);
	if (print_floor && ns)
		bench_metric_ns(p->floor, f);
	else if (print_floor)
		bench_metric(p->floor, f, p->unit);
	bench_metric(p->ratio, bench_median(p->r, p->n), "x");
	return 0;
}

/* Pairs over `tr`: a floor, then at once a short job measuring what is
 * compared with it; `rounds` times. */
static int run_pairs(const char *earthrun, const char *self, const char *tr,
		     int rounds)
{
	int tcp = !strcmp(tr, "tcp"), bad = 0;
	struct paired rtt, rtt_su, bw, bw_su;
	char n[4][64];
	snprintf(n[0], 64, "get_remote_rtt.%s", tr);
	snprintf(n[1], 64, "pingpong_rtt.%s", tr);
	snprintf(n[2], 64, "get_remote_rtt_over_pingpong.%s", tr);
	paired_init(&rtt, n[0], n[1], n[2], "ns");
	snprintf(n[0], 64, "blkmov_bw.%s", tr);
	snprintf(n[2], 64, "blkmov_bw_over_%s.%s", tcp ? "stream" : "memcpy",
		 tr);
	paired_init(&bw, n[0], tcp ? "tcp_stream_bw" : "memcpy_bw", n[2],
		    "MB/s");
	paired_init(&rtt_su, "get_remote_rtt_su.shm", n[1],
		    "get_remote_rtt_su_over_pingpong.shm", "ns");
	paired_init(&bw_su, "blkmov_bw_su.shm", "memcpy_bw",
		    "blkmov_bw_su_over_memcpy.shm", "MB/s");
	static char out[8192];
	for (int r = 0; r < rounds; r++) {
		double pp = tcp ? pingpong_rtt_tcp(bench_quick ? 5000 : 20000)
				: pingpong_rtt_shm(bench_quick ? 20000 : 100000);
		double sb = tcp ? tcp_stream_bw(bench_quick ? (64u << 20)
							    : (256u << 20))
				: 0;
		if (run_job(earthrun, self, tr, "REMOTE_OPS_PART", "pair", out,
			    sizeof(out))) {
			printf("# remote_ops: pair job %d over %s failed:\n%s\n",
			       r, tr, out);
			bad = 1;
			continue;
		}
		double g = pair_value(out, rtt.name);
		double b = pair_value(out, bw.name);
		printf("# pair %d %s: pingpong %.0f ns, get %.0f ns", r, tr, pp, g);
		paired_add(&rtt, g, pp);
		if (tcp) {
			printf(", stream %.0f MB/s, blkmov %.0f MB/s\n", sb, b);
			paired_add(&bw, b, sb);
			continue;
		}
		double gs = pair_value(out, rtt_su.name);
		double bs = pair_value(out, bw_su.name);
		double mc = pair_value(out, "memcpy_bw");
		printf(", get through the SU %.0f ns, memcpy %.0f MB/s, blkmov "
		       "%.0f MB/s (through the SU %.0f)\n",
		       gs, mc, b, bs);
		paired_add(&rtt_su, gs, pp);
		paired_add(&bw, b, mc);
		paired_add(&bw_su, bs, mc);
	}
	bad |= paired_print(&rtt, 1);
	bad |= paired_print(&bw, 1);
	if (!tcp) {
		bad |= paired_print(&rtt_su, 0);
		bad |= paired_print(&bw_su, 0);
	}
	return bad;
}

/* The table job over `tr`, its output echoed. */
static int run_table(const char *earthrun, const char *self, const char *tr)
{
	static char out[65536];
	int st = run_job(earthrun, self, tr, "REMOTE_OPS_PART", "table", out,
			 sizeof(out));
	fputs(out, stdout);
	if (st)
		printf("# remote_ops: the %s job failed (status %d)\n", tr, st);
	return st != 0;
}

int main(int argc, char **argv)
{
	if (getenv("REMOTE_OPS_APP") && getenv("EARTH_NODES")) {
		const char *q = getenv("QUICK");
		bench_quick = q && *q && strcmp(q, "0");
		return app_node(argc, argv);
	}
	if (getenv("EARTH_NODES"))
		return job_node(argc, argv);
	bench_init("remote_ops", argc, argv);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("# remote_ops: 2 nodes x 2 threads on %ld cores%s\n", cores,
	       cores < 4 ? " (oversubscribed: the paths through node 1's SU "
			   "are reported, not judged)"
			 : "");
	char self[PATH_MAX], run[PATH_MAX + 32];
	if (bench_self_and_earthrun(self, sizeof(self), run, sizeof(run)))
		return 1;
	int rounds = bench_quick ? 5 : 9, bad = 0;
	for (int t = 0; t < 2; t++) {
		const char *tr = t ? "tcp" : "shm";
		bad |= run_pairs(run, self, tr, rounds);
		bad |= run_table(run, self, tr);
	}
	printf("# balance: 2 nodes x 2 threads on %ld cores (shm)\n", cores);
	bad |= run_balance(run, self, "fib");
	bad |= run_balance(run, self, "nqueens");
	return bad;
}
