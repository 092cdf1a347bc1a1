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
 * SU), against a raw two-process ping-pong of the same run; block-move
 * bandwidth from node 1's global memory against memcpy and a raw TCP
 * stream; a 2-node barrier; TOKEN load balancing on fib and N-Queens: each
 * node's EU busy share and the tokens stolen.
 *
 *   op_latency.<spawn|load|store|call>.<seq|pipe>.<local|remote>.<shm|tcp>
 *   op_eu_post.<op>.<local|remote>.<shm|tcp>  op_eu_post_ratio.<op>.<tr>
 *   get_remote_rtt.<shm|tcp>  get_remote_rtt_su.shm  pingpong_rtt.<shm|tcp>
 *   blkmov_bw.<shm|tcp>  blkmov_bw_su.shm  memcpy_bw  tcp_stream_bw
 *   barrier.<shm|tcp>
 *   balance.<fib|nqueens>.<busy_share.min|busy_share.max|work_share.min|
 *                          steals|time>
 *
 * Run it directly: it measures the floors, then starts itself under
 * earthrun -n 2 over each transport (build/rel/bin/earthrun), and twice
 * more for the balancing runs (REMOTE_OPS_APP=fib|nqueens).
 */
#define _GNU_SOURCE 1
#include "bench.h"

#include <earth.h>
#include <arpa/inet.h>
#include <libgen.h>
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
	  OP_BARRIER, OP_GETRTT_G, OP_BLK_G, OP_COUNT };
static const char *const op_names[] = {"spawn", "load", "store", "call"};

struct phase {
	enum op op;
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
	int ph, rep, i;
	uint64_t t0;
	long got;
	earth_slot s_seq, s_pipe;
};
static void issue(struct main_frame *m, struct phase *p, earth_slot *s);
static void run_phase(struct main_frame *m);

static void record(struct main_frame *m, struct phase *p)
{
	uint64_t t1 = q_tsc_ordered();
	p->v[p->nv++] = bench_ns((double)(t1 - m->t0)) / p->count;
	if (++m->rep == bench_reps) {
		m->rep = 0;
		m->ph++;
	}
	run_phase(m);
}

static void seq_step(void *f)
{
	struct main_frame *m = f;
	struct phase *p = &phases[m->ph];
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
	if (p->op == OP_BARRIER && m->rep == 0) {
		/* node 1 joins every barrier of all repetitions */
		struct barriers_args a = {p->count * bench_reps};
		earth_invoke(1, &barriers, &a, sizeof(a));
	}
	m->t0 = q_tsc_ordered();
	if (p->pipe) {
		earth_slot_init(&m->s_pipe, p->count, 0, pipe_done, m);
		for (int i = 0; i < p->count; i++)
			issue(m, p, &m->s_pipe);
		p->post[p->nv] = bench_ns((double)(q_tsc_ordered() - m->t0)) /
				 p->count;
	} else {
		m->i = 0;
		earth_slot_init(&m->s_seq, 1, 1, seq_step, m);
		seq_step(m);
	}
}

static void main_start(void *f)
{
	struct main_frame *m = f;
	m->ph = m->rep = 0;
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

static void add(enum op op, int pipe, int target, int count)
{
	phases[nphases++] = (struct phase){.op = op, .pipe = pipe, .target = target, .count = count};
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

/* Runs this program as a 2-node job over `transport`; 0 on success. */
static int run_job(const char *earthrun, const char *self,
		   const char *transport)
{
	fflush(stdout);
	pid_t c = bench_fork_job();
	if (c == 0) {
		execl(earthrun, earthrun, "-n", "2", "--transport", transport,
		      self, (char *)NULL);
		perror("remote_ops: cannot start earthrun");
		_exit(127);
	}
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Runs a 2-node balancing job of `app` over shm, its output into the
 * log as comments; METRIC lines from the nodes' figures. 0 on success. */
static int run_balance(const char *earthrun, const char *self,
		       const char *app)
{
	int fds[2];
	if (pipe(fds))
		return 1;
	fflush(stdout);
	pid_t c = bench_fork_job();
	if (c == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv("REMOTE_OPS_APP", app, 1);
		setenv("EARTH_TIMING", "1", 1);
		execl(earthrun, earthrun, "-n", "2", self, (char *)NULL);
		perror("remote_ops: cannot start earthrun");
		_exit(127);
	}
	close(fds[1]);
	static char out[16384];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof(out) - 1 &&
	       (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	close(fds[0]);
	int st;
	waitpid(c, &st, 0);
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
	if (!WIFEXITED(st) || WEXITSTATUS(st) || !ok || nodes != 2) {
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

int main(int argc, char **argv)
{
	if (getenv("REMOTE_OPS_APP") && getenv("EARTH_NODES")) {
		const char *q = getenv("QUICK");
		bench_quick = q && *q && strcmp(q, "0");
		return app_node(argc, argv);
	}
	if (!getenv("EARTH_NODES")) {
		bench_init("remote_ops", argc, argv);
		double v[64];
		for (int r = 0; r < bench_reps; r++)
			v[r] = pingpong_rtt_shm(bench_quick ? 20000 : 100000);
		bench_metric_ns("pingpong_rtt.shm", bench_median(v, bench_reps));
		for (int r = 0; r < bench_reps; r++)
			v[r] = pingpong_rtt_tcp(bench_quick ? 5000 : 20000);
		bench_metric_ns("pingpong_rtt.tcp", bench_median(v, bench_reps));
		for (int r = 0; r < bench_reps; r++)
			v[r] = tcp_stream_bw(bench_quick ? (64u << 20) : (256u << 20));
		bench_metric("tcp_stream_bw", bench_median(v, bench_reps), "MB/s");
		for (int r = 0; r < bench_reps; r++) {
			uint64_t t0 = q_tsc_ordered();
			memcpy(blk_dst, blk_src, BLK);
			uint64_t t1 = q_tsc_ordered();
			v[r] = BLK / bench_ns((double)(t1 - t0)) * 1e3;
		}
		bench_metric("memcpy_bw", bench_median(v, bench_reps), "MB/s");
		printf("# remote_ops: 2 nodes x 2 threads on %ld cores%s\n",
		       sysconf(_SC_NPROCESSORS_ONLN),
		       sysconf(_SC_NPROCESSORS_ONLN) < 4
			       ? " (oversubscribed: reported, not judged)"
			       : "");
		fflush(stdout);
		char self[PATH_MAX], run[PATH_MAX + 32];
		ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (l < 0)
			return 1;
		self[l] = 0;
		snprintf(run, sizeof(run), "%s/../bin/earthrun",
			 dirname(strdup(self)));
		int bad = run_job(run, self, "shm");
		bad |= run_job(run, self, "tcp");
		printf("# balance: 2 nodes x 2 threads on %ld cores (shm)\n",
		       sysconf(_SC_NPROCESSORS_ONLN));
		bad |= run_balance(run, self, "fib");
		bad |= run_balance(run, self, "nqueens");
		return bad;
	}
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	bench_reps = bench_quick ? 5 : 9;
	int k = bench_quick ? 200 : 1000;
	for (int t = 0; t < 2; t++)
		for (int pipe = 0; pipe < 2; pipe++)
			for (enum op op = OP_SPAWN; op <= OP_CALL; op++)
				add(op, pipe, t, k);
	const char *tr = getenv("EARTH_TRANSPORT");
	const char *sfx = tr && !strcmp(tr, "tcp") ? "tcp" : "shm";
	const char *rm = getenv("EARTH_REMOTE");
	int shm = !strcmp(sfx, "shm");
	add(OP_GETRTT_G, 0, 1, k);
	if (shm)
		add(OP_GETRTT, 0, 1, k);
	add(OP_BLK_G, 0, 1, 1);
	if (shm)
		add(OP_BLK, 0, 1, 1);
	add(OP_BARRIER, 0, 0, k);
	int ret = earth_main(argc, argv, &remote_main);
	if (earth_node_id() != 0 || ret)
		return ret;
	printf("# remote_ops %s: global memory %s\n", sfx,
	       !shm ? "through the remote SU (tcp)"
	       : rm && !strcmp(rm, "su") ? "through the remote SU (EARTH_REMOTE=su)"
					 : "direct, one-sided");
	double post[2][OP_COUNT] = {{0}};
	for (int i = 0; i < nphases; i++) {
		struct phase *p = &phases[i];
		double med = bench_median(p->v, p->nv);
		char name[128];
		switch (p->op) {
		case OP_GETRTT_G:
			snprintf(name, sizeof(name), "get_remote_rtt.%s", sfx);
			bench_metric_ns(name, med);
			break;
		case OP_GETRTT:
			snprintf(name, sizeof(name), "get_remote_rtt_su.%s", sfx);
			bench_metric_ns(name, med);
			break;
		case OP_BLK_G:
			snprintf(name, sizeof(name), "blkmov_bw.%s", sfx);
			bench_metric(name, BLK / med * 1e3, "MB/s");
			break;
		case OP_BLK:
			snprintf(name, sizeof(name), "blkmov_bw_su.%s", sfx);
			bench_metric(name, BLK / med * 1e3, "MB/s");
			break;
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
	return 0;
}
