/* SPDX-License-Identifier: MIT */
/*
 * remote_ops.c - Table 1 of the EARTH-MANNA paper over the shm transport:
 * spawn thread, load word, store word, function call; sequential (one at a
 * time, waiting for each) and pipelined (issued back to back, per op);
 * local (node 0 to itself) and remote (node 0 to node 1). Also the remote
 * GET round trip against a raw two-process shared-memory ping-pong of the
 * same run, block-move bandwidth against memcpy, and a 2-node barrier.
 *
 *   op_latency.<spawn|load|store|call>.<seq|pipe>.<local|remote>.<shm|tcp>
 *   get_remote_rtt_su.<shm|tcp>  pingpong_rtt.<shm|tcp>  blkmov_bw.<shm|tcp>
 *   memcpy_bw  tcp_stream_bw  barrier.<shm|tcp>
 *
 * Run it directly: it measures the floors, then starts itself under
 * earthrun -n 2 over each transport (build/rel/bin/earthrun).
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

#define BLK (8u << 20)
static long target_word = 7;
static long store_word;
static unsigned char blk_src[BLK], blk_dst[BLK];

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
	  OP_BARRIER, OP_COUNT };
static const char *const op_names[] = {"spawn", "load", "store", "call"};

struct phase {
	enum op op;
	int pipe;   /* 0: one at a time; 1: back to back */
	int target; /* node */
	int count;  /* ops per repetition */
	double v[64];
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
	} else {
		m->i = 0;
		earth_slot_init(&m->s_seq, 1, 1, seq_step, m);
		seq_step(m);
	}
}

static void main_entry(void *f)
{
	struct main_frame *m = f;
	m->ph = m->rep = 0;
	run_phase(m);
}
EARTH_THREADED_FUNCTION(remote_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void add(enum op op, int pipe, int target, int count)
{
	phases[nphases++] = (struct phase){op, pipe, target, count, {0}, 0};
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
	pid_t c = fork();
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

int main(int argc, char **argv)
{
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
	add(OP_GETRTT, 0, 1, k);
	add(OP_BLK, 0, 1, 1);
	add(OP_BARRIER, 0, 0, k);
	int ret = earth_main(argc, argv, &remote_main);
	if (earth_node_id() != 0 || ret)
		return ret;
	const char *tr = getenv("EARTH_TRANSPORT");
	const char *sfx = tr && !strcmp(tr, "tcp") ? "tcp" : "shm";
	for (int i = 0; i < nphases; i++) {
		struct phase *p = &phases[i];
		double med = bench_median(p->v, p->nv);
		char name[128];
		switch (p->op) {
		case OP_GETRTT:
			snprintf(name, sizeof(name), "get_remote_rtt_su.%s", sfx);
			bench_metric_ns(name, med);
			break;
		case OP_BLK:
			snprintf(name, sizeof(name), "blkmov_bw.%s", sfx);
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
		}
	}
	return 0;
}
