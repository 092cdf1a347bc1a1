/* SPDX-License-Identifier: MIT */
/*
 * t_rendezvous.c - how the nodes of a tcp job meet: nodes started directly,
 * as srun/mpirun start them (no earthrun), at node 0's rendezvous; the
 * environment errors of the tcp transport; connections with bad hellos
 * (wrong secret, node number or count, global memory size, garbage) and a
 * second connection for the same node rejected and reported while the job
 * goes on; a directly started node killed with SIGKILL stopping the others
 * within 5 s.
 */
#define EARTH_INTERNAL 1 /* net/tcp.h: the hello, written by hand */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "net/tcp.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif
#ifndef T_EARTHRUN
#error "T_EARTHRUN must be defined"
#endif

TestSuite(rendezvous, .timeout = 120);

Test(rendezvous, tcp_environment_errors)
{
	struct t_cmd c;
	t_sh(&c, 30,
	     "env EARTH_NODE=1 EARTH_NODES=2 EARTH_TRANSPORT=tcp "
	     "EARTH_RENDEZVOUS=127.0.0.1:1 %s/multinode 10",
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_JOB_SECRET is not set"), "%s", c.err);
	t_sh(&c, 30,
	     "env EARTH_NODE=1 EARTH_NODES=2 EARTH_JOB_SECRET=abcd "
	     "EARTH_RENDEZVOUS=127.0.0.1:1 %s/multinode 10",
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "32 to 128 hex digits"), "%s", c.err);
	t_sh(&c, 30,
	     "env EARTH_NODE=1 EARTH_NODES=2 EARTH_TRANSPORT=tcp "
	     "EARTH_JOB_SECRET=%s %s/multinode 10",
	     T_SECRET, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "EARTH_RENDEZVOUS is not set"), "%s", c.err);
	t_sh(&c, 30,
	     "env EARTH_NODE=0 EARTH_NODES=2 EARTH_TRANSPORT=udp "
	     "%s/multinode 10",
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "EARTH_TRANSPORT must be shm or tcp"), "%s",
		  c.err);
	/* Nobody at the rendezvous: a bounded wait, then a clear error. */
	t_sh(&c, 30,
	     "env EARTH_NODE=1 EARTH_NODES=2 EARTH_JOB_SECRET=%s "
	     "EARTH_CONNECT_TIMEOUT=0.5 EARTH_RENDEZVOUS=127.0.0.1:1 "
	     "%s/multinode 10",
	     T_SECRET, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "cannot connect to 127.0.0.1:1"), "%s", c.err);
	t_sh(&c, 30, "%s --transport udp -n 2 %s/multinode", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "give shm or tcp"), "%s", c.err);
}

/* Connects to the rendezvous, sends len bytes, waits until node 0 drops
 * the connection (recv returns 0 or an error): true if it did in 10 s. */
static bool intrude(int port, const void *hello, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = -1;
	uint64_t t0 = t_now_ns();
	while (t_now_ns() - t0 < 10000000000ull) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(fd);
		fd = -1;
		usleep(10000);
	}
	if (fd < 0)
		return false;
	if (len && send(fd, hello, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return false;
	}
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char b[256];
	ssize_t r = recv(fd, b, sizeof(b), 0);
	close(fd);
	return r == 0 || (r < 0 && errno == ECONNRESET);
}

/* A hello of the tcp transport (net/tcp.h), written by hand as an
 * intruder would. */
static void t_hello_make(struct tcp_hello *h, uint32_t node, uint32_t nodes,
			 const char *secret_hex)
{
	memset(h, 0, sizeof(*h));
	h->magic = TCP_HELLO_MAGIC;
	h->version = TCP_HELLO_VERSION;
	h->kind = TCP_HELLO_JOIN;
	h->gmem_seg = 64ull << 20; /* the default EARTH_GMEM_MB */
	h->node = node;
	h->nodes = nodes;
	size_t n = strlen(secret_hex) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(secret_hex + 2 * i, "%2x", &v);
		h->secret[i] = (uint8_t)v;
	}
	h->secret_len = (uint32_t)n;
}

Test(rendezvous, tcp_bad_hellos_are_rejected)
{
	char path[2][64], buf[8192], prog[256];
	int port = t_tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/multinode", T_PROG_DIR);
	for (int k = 0; k < 2; k++)
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_tcpb.%d.%d",
			 (int)getpid(), k);
	pid_t p0 = t_tcp_spawn(prog, (const char *[]){"1000", NULL}, 0, 2, port,
			       path[0]);
	struct tcp_hello h;
	/* A wrong secret (right length), a right secret with a node number
	 * out of range, a wrong node count, a stranger's bytes, nothing. */
	t_hello_make(&h, 1, 2,
		     "ffeeddccbbaa99887766554433221100fedcba9876543210");
	cr_assert(intrude(port, &h, sizeof(h)), "wrong secret not dropped");
	t_hello_make(&h, 7, 2, T_SECRET);
	cr_assert(intrude(port, &h, sizeof(h)), "node 7 of 2 not dropped");
	t_hello_make(&h, 1, 3, T_SECRET);
	cr_assert(intrude(port, &h, sizeof(h)), "3 nodes not dropped");
	t_hello_make(&h, 1, 2, T_SECRET);
	h.gmem_seg = 32ull << 20;
	cr_assert(intrude(port, &h, sizeof(h)),
		  "other EARTH_GMEM_MB not dropped");
	memset(&h, 'x', sizeof(h));
	cr_assert(intrude(port, &h, sizeof(h)), "garbage not dropped");
	/* The job still runs once the real node 1 comes. */
	pid_t p1 = t_tcp_spawn(prog, (const char *[]){"1000", NULL}, 1, 2, port,
			       path[1]);
	int s1 = t_wait_pid(p1, 30000000000ull);
	int s0 = t_wait_pid(p0, 30000000000ull);
	t_slurp(path[0], buf, sizeof(buf));
	cr_assert_eq(s0, 0, "node 0: status %d\n%s", s0, buf);
	cr_assert(strstr(buf, "multinode: 2 nodes, 1000-byte blocks: all "
			      "correct"),
		  "%s", buf);
	cr_assert(strstr(buf, "earth: node 0: tcp: rejected a connection from "
			      "127.0.0.1:"),
		  "%s", buf);
	cr_assert(strstr(buf, ": wrong job secret"), "%s", buf);
	cr_assert(strstr(buf, ": node number out of range"), "%s", buf);
	cr_assert(strstr(buf, ": node count differs"), "%s", buf);
	cr_assert(strstr(buf, ": global memory per node (EARTH_GMEM_MB) "
			      "differs"),
		  "%s", buf);
	cr_assert(strstr(buf, ": not an EARTH hello"), "%s", buf);
	t_slurp(path[1], buf, sizeof(buf));
	cr_assert_eq(s1, 0, "node 1: status %d\n%s", s1, buf);
	for (int k = 0; k < 2; k++)
		unlink(path[k]);
}

Test(rendezvous, tcp_duplicate_node_is_rejected)
{
	char path[64], buf[8192], prog[256];
	int port = t_tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/hang", T_PROG_DIR);
	snprintf(path, sizeof(path), "/tmp/t_mn_tcpd.%d", (int)getpid());
	pid_t p0 = t_tcp_spawn(prog, (const char *[]){NULL}, 0, 3, port, path);
	/* First "node 2" (right secret) is taken and held open... */
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int first = -1;
	uint64_t t0 = t_now_ns();
	while (t_now_ns() - t0 < 10000000000ull) {
		first = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(first, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(first);
		first = -1;
		usleep(10000);
	}
	cr_assert(first >= 0);
	struct tcp_hello h;
	t_hello_make(&h, 2, 3, T_SECRET);
	cr_assert_eq(send(first, &h, sizeof(h), MSG_NOSIGNAL),
		     (ssize_t)sizeof(h));
	/* ...the second is dropped. */
	cr_assert(intrude(port, &h, sizeof(h)), "duplicate not dropped");
	close(first);
	kill(p0, SIGKILL);
	t_wait_pid(p0, 5000000000ull);
	t_slurp(path, buf, sizeof(buf));
	cr_assert(strstr(buf, ": that node already connected"), "%s", buf);
	unlink(path);
}

Test(rendezvous, tcp_killed_node_stops_the_others)
{
	char path[3][64], buf[4096], want[32];
	pid_t pid[3];
	int port = t_tcp_free_port();
	char prog[256];
	snprintf(prog, sizeof(prog), "%s/hang", T_PROG_DIR);
	for (int k = 0; k < 3; k++) {
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_tcpk.%d.%d",
			 (int)getpid(), k);
		pid[k] = t_tcp_spawn(prog, (const char *[]){NULL}, k, 3, port,
				     path[k]);
	}
	/* Up: every node ran the fiber node 0 sent it. */
	uint64_t t0 = t_now_ns();
	for (int k = 0; k < 3; k++) {
		snprintf(want, sizeof(want), "node %d pid ", k);
		while (!t_file_has(path[k], want, buf, sizeof(buf)) &&
		       t_now_ns() - t0 < 20000000000ull)
			usleep(10000);
		cr_assert(strstr(buf, want), "node %d never started: %s", k,
			  buf);
	}
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill(pid[1], SIGKILL), 0);
	cr_assert_eq(t_wait_pid(pid[1], 5000000000ull), 128 + SIGKILL);
	for (int k = 0; k < 3; k += 2) {
		int st =
		    t_wait_pid(pid[k], 6000000000ull - (t_now_ns() - t_kill));
		uint64_t took = t_now_ns() - t_kill;
		t_slurp(path[k], buf, sizeof(buf));
		cr_assert_neq(st, -1,
			      "node %d still running %.1f s after the "
			      "kill: %s",
			      k, took / 1e9, buf);
		cr_assert_lt(took, 5000000000ull, "node %d took %.1f s", k,
			     took / 1e9);
		cr_assert_neq(st, 0, "node %d exited 0: %s", k, buf);
		cr_assert(strstr(buf, "lost the connection to node 1"),
			  "node %d: %s", k, buf);
		cr_log_info("node %d stopped %.3f s after the kill", k,
			    took / 1e9);
	}
	for (int k = 0; k < 3; k++)
		unlink(path[k]);
}
