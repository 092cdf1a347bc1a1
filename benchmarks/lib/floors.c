/* SPDX-License-Identifier: MIT */
/*
 * floors.c - the floors the benchmarks compare the runtime with (see
 * floors.h).
 */
#define _GNU_SOURCE 1
#include "floors.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench.h"

/* ---- shm: two processes, one shared line each way ---- */

double bench_pingpong_rtt_shm(long rounds)
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
			while (atomic_load_explicit(ping,
						    memory_order_acquire) != i)
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

/* ---- tcp: a loopback socket pair between two processes ---- */

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

double bench_pingpong_rtt_tcp(long rounds)
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

double bench_tcp_stream_bw(size_t bytes)
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

/* ---- signal latency ---- */

/* The busy child's work: the same fixed arithmetic as remote_load's busy
 * fibers. */
static volatile uint64_t sf_sink;
static void sf_work(long iters)
{
	uint64_t x = sf_sink;
	for (long i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sf_sink = x;
}

struct sigfloor {
	_Atomic uint64_t t_recv;
	_Atomic int tid, ready;
};
static struct sigfloor *g_sf;
static void sf_handler(int sig)
{
	(void)sig;
	atomic_store(&g_sf->t_recv, q_tsc());
}

double bench_signal_floor_ns(int busy, int n, double *send_ns)
{
	double vs[256];
	g_sf = mmap(NULL, sizeof(*g_sf), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sf == MAP_FAILED)
		return NAN;
	int sig = SIGRTMIN + 4;
	pid_t c = fork();
	if (c == 0) {
		bench_pin(1);
		signal(sig, sf_handler);
		atomic_store(&g_sf->tid, (int)syscall(SYS_gettid));
		atomic_store(&g_sf->ready, 1);
		for (;;) {
			if (busy)
				sf_work(1000);
			else
				pause();
		}
	}
	bench_pin(0);
	while (!atomic_load(&g_sf->ready))
		sched_yield();
	double v[256];
	if (n > 256)
		n = 256;
	int k = 0;
	for (int i = 0; i < n; i++) {
		atomic_store(&g_sf->t_recv, 0);
		usleep(500);
		int tid = atomic_load(&g_sf->tid);
		uint64_t t0 = q_tsc();
		syscall(SYS_tgkill, c, tid, sig);
		vs[i] =
		    bench_ns((double)(q_tsc() - t0)); /* the sender's cost */
		uint64_t dl = t0 + (uint64_t)(1e9 / bench_ns(1.0)); /* 1 s */
		uint64_t t1;
		while (!(t1 = atomic_load(&g_sf->t_recv)) && q_tsc() < dl)
			;
		if (t1)
			v[k++] = bench_ns((double)(t1 - t0));
	}
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	munmap(g_sf, sizeof(*g_sf));
	*send_ns = n > 0 ? bench_median(vs, n) : NAN;
	return k ? bench_median(v, k) : NAN;
}
