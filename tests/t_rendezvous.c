/* SPDX-License-Identifier: MIT */
/*
 * t_rendezvous.c - how the nodes of a tcp job meet: nodes started directly,
 * as srun/mpirun start them (no earthrun), at node 0's rendezvous; the
 * environment errors of the tcp transport (a port out of range, no listener
 * in EARTH_RENDEZVOUS_FD); connections with bad hellos (wrong secret,
 * node number or count, global memory size, garbage) and a second
 * connection for the same node rejected and reported while the job goes
 * on; a squatter on the rendezvous port refused by node 1, which never
 * sends it the secret; idle connections to node 0 not holding up the job;
 * running out of descriptors named; a directly started node killed with
 * SIGKILL stopping the others within 5 s (status 71); nodes that never
 * come named by those waiting for them, with what to check; a node with
 * another secret named by earthrun, the job ended within seconds.
 */
#define _GNU_SOURCE 1	 /* memmem */
#define EARTH_INTERNAL 1 /* net/tcp.h: the hello, written by hand */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "job.h"
#include "net/tcp.h"

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
	cr_assert(strstr(c.err, "EARTH_TRANSPORT must be shm, tcp or ucx"),
		  "%s", c.err);
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
	cr_assert(strstr(c.err, "give shm, tcp or ucx"), "%s", c.err);
}

/* The secret in hex as bytes into key; its length. */
static size_t t_key(const char *hex, uint8_t *key)
{
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		key[i] = (uint8_t)v;
	}
	return n;
}

/* A connecting node's side of the exchange after its hello (open) went on
 * fd: reads the listener's ACCEPT (up to 10 s), answers with a PROOF keyed
 * with secret_hex. False if no ACCEPT came. */
static bool t_prove(int fd, const struct tcp_hello *open,
		    const char *secret_hex)
{
	struct tcp_hello acc, p;
	size_t got = 0;
	while (got < sizeof(acc)) {
		struct pollfd q = {fd, POLLIN, 0};
		if (poll(&q, 1, 10000) <= 0)
			return false;
		ssize_t k = recv(fd, (char *)&acc + got, sizeof(acc) - got, 0);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	uint8_t key[TCP_SECRET_MAX];
	size_t kl = t_key(secret_hex, key);
	memset(&p, 0, sizeof(p));
	p.magic = TCP_HELLO_MAGIC;
	p.version = TCP_HELLO_VERSION;
	p.kind = TCP_HELLO_PROOF;
	tcp_mac(p.mac, key, kl, TCP_LABEL_JOINER, open, &acc, NULL, 0);
	return send(fd, &p, sizeof(p), MSG_NOSIGNAL) == (ssize_t)sizeof(p);
}

static int t_connect(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	uint64_t t0 = t_now_ns();
	while (t_now_ns() - t0 < 10000000000ull) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		usleep(10000);
	}
	return -1;
}

/* Connects to the rendezvous, sends len bytes (a hello), proves it knows
 * secret_hex if node 0 answers, waits until node 0 drops the connection
 * (recv returns 0 or an error): true if it did in 10 s. */
static bool intrude(int port, const void *hello, size_t len,
		    const char *secret_hex)
{
	int fd = t_connect(port);
	if (fd < 0)
		return false;
	if (len && send(fd, hello, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return false;
	}
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (len == sizeof(struct tcp_hello) && secret_hex)
		t_prove(fd, hello, secret_hex);
	char b[256];
	ssize_t r = recv(fd, b, sizeof(b), 0);
	close(fd);
	return r == 0 || (r < 0 && errno == ECONNRESET);
}

/* A JOIN hello of the tcp transport (net/tcp.h), written by hand as an
 * intruder would. */
static void t_hello_make(struct tcp_hello *h, uint32_t node, uint32_t nodes)
{
	memset(h, 0, sizeof(*h));
	h->magic = TCP_HELLO_MAGIC;
	h->version = TCP_HELLO_VERSION;
	h->kind = TCP_HELLO_JOIN;
	h->gmem_seg = 64ull << 20; /* the default EARTH_GMEM_MB */
	h->node = node;
	h->nodes = nodes;
	for (size_t i = 0; i < sizeof(h->nonce); i++)
		h->nonce[i] = (uint8_t)(t_now_ns() >> (i % 8));
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
	t_hello_make(&h, 1, 2);
	cr_assert(intrude(port, &h, sizeof(h),
			  "ffeeddccbbaa99887766554433221100fedcba9876543210"),
		  "wrong secret not dropped");
	t_hello_make(&h, 7, 2);
	cr_assert(intrude(port, &h, sizeof(h), T_SECRET),
		  "node 7 of 2 not dropped");
	t_hello_make(&h, 1, 3);
	cr_assert(intrude(port, &h, sizeof(h), T_SECRET),
		  "3 nodes not dropped");
	t_hello_make(&h, 1, 2);
	h.gmem_seg = 32ull << 20;
	cr_assert(intrude(port, &h, sizeof(h), T_SECRET),
		  "other EARTH_GMEM_MB not dropped");
	memset(&h, 'x', sizeof(h));
	cr_assert(intrude(port, &h, sizeof(h), T_SECRET),
		  "garbage not dropped");
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
	int first = t_connect(port);
	cr_assert(first >= 0);
	struct tcp_hello h;
	t_hello_make(&h, 2, 3);
	cr_assert_eq(send(first, &h, sizeof(h), MSG_NOSIGNAL),
		     (ssize_t)sizeof(h));
	cr_assert(t_prove(first, &h, T_SECRET));
	usleep(200000); /* node 0 took it */
	/* ...the second is dropped. */
	t_hello_make(&h, 2, 3);
	cr_assert(intrude(port, &h, sizeof(h), T_SECRET),
		  "duplicate not dropped");
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
		cr_assert_eq(st, EARTH_EXIT_PEER_DIED, "node %d: status %d: %s",
			     k, st, buf);
		cr_assert(strstr(buf, "lost the connection to node 1"),
			  "node %d: %s", k, buf);
		cr_log_info("node %d stopped %.3f s after the kill", k,
			    took / 1e9);
	}
	for (int k = 0; k < 3; k++)
		unlink(path[k]);
}

/* Something already listening on EARTH_RENDEZVOUS (not node 0)
 * that answers node 1's JOIN with a WELCOME it made from net/tcp.h without
 * the secret. Node 1 refuses it, naming the failed proof, and never sends
 * the secret: not in its bytes, not as hex. */
Test(rendezvous, tcp_squatter_is_refused_and_never_sees_the_secret)
{
	char path[64], buf[8192], prog[256];
	int port = t_tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/multinode", T_PROG_DIR);
	snprintf(path, sizeof(path), "/tmp/t_mn_tcps.%d", (int)getpid());
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert(!bind(lfd, (struct sockaddr *)&a, sizeof(a)) &&
		  !listen(lfd, 8));
	pid_t p1 =
	    t_tcp_spawn(prog, (const char *[]){"1000", NULL}, 1, 2, port, path);
	struct pollfd q = {lfd, POLLIN, 0};
	cr_assert_eq(poll(&q, 1, 20000), 1, "node 1 never connected");
	int c = accept(lfd, NULL, NULL);
	cr_assert(c >= 0);
	/* Whatever node 1 sends, kept; a WELCOME (and table) once its hello
	 * is in. */
	static char seen[1 << 16];
	size_t n = 0;
	bool answered = false;
	uint64_t t0 = t_now_ns();
	while (t_now_ns() - t0 < 15000000000ull && n < sizeof(seen)) {
		q = (struct pollfd){c, POLLIN, 0};
		if (poll(&q, 1, 200) <= 0)
			continue;
		ssize_t k = recv(c, seen + n, sizeof(seen) - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (!answered && n >= sizeof(struct tcp_hello)) {
			struct tcp_hello w;
			struct tcp_addr tab[2];
			memset(&w, 0, sizeof(w));
			memset(tab, 0, sizeof(tab));
			w.magic = TCP_HELLO_MAGIC;
			w.version = TCP_HELLO_VERSION;
			w.kind = TCP_HELLO_WELCOME;
			w.node = 0;
			w.nodes = 2;
			w.gmem_seg = 64ull << 20;
			memset(w.mac, 0x5a, sizeof(w.mac));
			send(c, &w, sizeof(w), MSG_NOSIGNAL);
			send(c, tab, sizeof(tab), MSG_NOSIGNAL);
			answered = true;
		}
	}
	int s1 = t_wait_pid(p1, 20000000000ull);
	close(c);
	close(lfd);
	t_slurp(path, buf, sizeof(buf));
	cr_assert(answered, "node 1 sent no hello: %s", buf);
	cr_assert(s1 != 0 && s1 != -1, "node 1: status %d\n%s", s1, buf);
	cr_assert(strstr(buf, "node 0 at 127.0.0.1:"), "%s", buf);
	cr_assert(strstr(buf, "failed the proof of the job secret"), "%s", buf);
	uint8_t key[TCP_SECRET_MAX];
	size_t kl = t_key(T_SECRET, key);
	cr_assert(!memmem(seen, n, key, kl), "node 1 sent the secret");
	cr_assert(!memmem(seen, n, key, 8), "node 1 sent part of the secret");
	cr_assert(!memmem(seen, n, T_SECRET, 16), "node 1 sent it as hex");
	unlink(path);
}

/* Idle connections to node 0's rendezvous (each would have
 * held it up 5 s) do not delay the job. */
Test(rendezvous, tcp_idle_connections_do_not_hold_up_the_job)
{
	char path[2][64], buf[8192], prog[256];
	int port = t_tcp_free_port(), idle[20];
	snprintf(prog, sizeof(prog), "%s/multinode", T_PROG_DIR);
	for (int k = 0; k < 2; k++)
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_tcpi.%d.%d",
			 (int)getpid(), k);
	pid_t p0 = t_tcp_spawn(prog, (const char *[]){"1000", NULL}, 0, 2, port,
			       path[0]);
	for (int i = 0; i < 20; i++) {
		idle[i] = t_connect(port);
		cr_assert(idle[i] >= 0);
	}
	uint64_t t0 = t_now_ns();
	pid_t p1 = t_tcp_spawn(prog, (const char *[]){"1000", NULL}, 1, 2, port,
			       path[1]);
	int s1 = t_wait_pid(p1, 30000000000ull);
	int s0 = t_wait_pid(p0, 30000000000ull);
	uint64_t took = t_now_ns() - t0;
	for (int i = 0; i < 20; i++)
		close(idle[i]);
	t_slurp(path[0], buf, sizeof(buf));
	cr_assert_eq(s0, 0, "node 0: status %d\n%s", s0, buf);
	cr_assert(strstr(buf, "all correct"), "%s", buf);
	t_slurp(path[1], buf, sizeof(buf));
	cr_assert_eq(s1, 0, "node 1: status %d\n%s", s1, buf);
	cr_assert_lt(took, 4000000000ull, "the job took %.1f s", took / 1e9);
	cr_log_info("2 nodes and 20 idle connections: %.3f s", took / 1e9);
	for (int k = 0; k < 2; k++)
		unlink(path[k]);
}

/* A port out of range is refused naming the variable (it
 * wrapped before); a descriptor that is not a listener likewise. */
Test(rendezvous, tcp_rendezvous_port_and_fd_checked)
{
	struct t_cmd c;
	const char *ports[] = {"99999", "0", "65536", "http"};
	for (int i = 0; i < 4; i++) {
		t_sh(&c, 30,
		     "env EARTH_NODE=1 EARTH_NODES=2 EARTH_JOB_SECRET=%s "
		     "EARTH_CONNECT_TIMEOUT=0.5 "
		     "EARTH_RENDEZVOUS=127.0.0.1:%s %s/multinode 10",
		     T_SECRET, ports[i], T_PROG_DIR);
		cr_assert_eq(c.status, EARTH_EXIT_USAGE, "%s: status %d\n%s",
			     ports[i], c.status, c.err);
		cr_assert(strstr(c.err, "EARTH_RENDEZVOUS"), "%s", c.err);
		cr_assert(strstr(c.err, "1 to 65535"), "%s", c.err);
	}
	t_sh(&c, 30,
	     "env EARTH_NODE=0 EARTH_NODES=2 EARTH_JOB_SECRET=%s "
	     "EARTH_CONNECT_TIMEOUT=0.5 EARTH_RENDEZVOUS=127.0.0.1:1 "
	     "EARTH_RENDEZVOUS_FD=0 %s/multinode 10 </dev/null",
	     T_SECRET, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_RENDEZVOUS_FD=0 is not a listening "
				"socket"),
		  "%s", c.err);
}

/* Out of descriptors is named, not blamed on the secret, and
 * the job stops well before EARTH_CONNECT_TIMEOUT (60 s): node 0 of 24
 * needs 23 sockets, its listener and stdio, more than 24. */
Test(rendezvous, tcp_out_of_descriptors_is_named)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 90,
	     "sh -c 'ulimit -n 24; exec %s -n 24 --transport tcp "
	     "%s/multinode 10'",
	     T_EARTHRUN, T_PROG_DIR);
	uint64_t took = t_now_ns() - t0;
	cr_assert(c.status != 0 && c.status != 124, "status %d\n%s", c.status,
		  c.err);
	cr_assert(strstr(c.err, "out of file descriptors"), "%s", c.err);
	cr_assert(strstr(c.err, "raise ulimit -n"), "%s", c.err);
	cr_assert_lt(took, 30000000000ull, "took %.1f s", took / 1e9);
	cr_log_info("24 nodes, ulimit -n 24: stopped in %.1f s", took / 1e9);
}

/* Nodes that never come: node 0 names them and what to check; node 1,
 * left waiting for its welcome, says node 0 still waits for others. */
Test(rendezvous, tcp_waiting_nodes_name_the_missing)
{
	struct t_cmd c;
	int port = t_tcp_free_port();
	t_sh(&c, 30,
	     "env EARTH_NODES=4 EARTH_JOB_SECRET=%s "
	     "EARTH_RENDEZVOUS=127.0.0.1:%d sh -c 'EARTH_NODE=0 "
	     "EARTH_CONNECT_TIMEOUT=3 %s/multinode 10 & sleep 0.5; "
	     "EARTH_NODE=1 EARTH_CONNECT_TIMEOUT=1 %s/multinode 10; wait'",
	     T_SECRET, port, T_PROG_DIR, T_PROG_DIR);
	char want[256];
	snprintf(want, sizeof(want),
		 "earth: node 0 of 4: tcp rendezvous: nodes 2 and 3 did not "
		 "join within EARTH_CONNECT_TIMEOUT: check that each was "
		 "started (see its errors), reaches 127.0.0.1:%d "
		 "(EARTH_RENDEZVOUS's host and port; a firewall?) and has "
		 "this job's EARTH_JOB_SECRET\n",
		 port);
	cr_assert(strstr(c.err, want), "want '%s' in:\n%s", want, c.err);
	cr_assert(strstr(c.err, "earth: node 1 of 4: tcp rendezvous: node 0 "
				"sent no welcome within EARTH_CONNECT_TIMEOUT: "
				"it still waits for other nodes (its message "
				"names them and what to check)"),
		  "%s", c.err);
}

/* One node of an earthrun job started with another secret: it says node
 * 0 failed its proof, node 0 says the secret may differ, and the job ends
 * within seconds, not EARTH_CONNECT_TIMEOUT's 60, earthrun naming node 2
 * with its message. */
Test(rendezvous, tcp_wrong_secret_ends_the_job_naming_it)
{
	struct t_cmd c;
	double s = t_sh_timed(
	    &c, 60,
	    "%s --transport tcp -n 3 -- sh -c '[ $EARTH_NODE = 2 ] && "
	    "export EARTH_JOB_SECRET=ffeeddccbbaa99887766554433221100; "
	    "exec %s/multinode 10'",
	    T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d after %.1f s\n%s",
		     c.status, s, c.err);
	cr_assert(strstr(c.err, "earth: node 0: tcp: rejected a connection "
				"from 127.0.0.1:"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "closed before its proof: it refused ours, so "
				"the job secret (EARTH_JOB_SECRET) may differ "
				"between it and this node"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "earthrun: the job failed: node 2 exited with "
				"status 70: tcp rendezvous: node 0 at "
				"127.0.0.1:"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "failed the proof of the job secret"), "%s",
		  c.err);
	cr_assert_lt(s, 10.0, "the job took %.1f s to end", s);
}
