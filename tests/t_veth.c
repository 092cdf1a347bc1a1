/* SPDX-License-Identifier: MIT */
/*
 * t_veth.c - a two-host job without two hosts: two network namespaces
 * joined by a veth pair (addresses from the benchmarking range
 * 198.18.0.0/15, used only between these namespaces), node 0 in one and
 * node 1 in the other, over the tcp transport and over ucx (UCX_TLS=tcp,
 * UCX_NET_DEVICES the namespace's veth end: else UCX picks shared memory,
 * which namespaces do not separate), meeting at node 0's
 * rendezvous address as nodes started by srun or mpirun do. Every remote
 * path is checked (tests/progs/multinode.c, tests/progs/gmem.c).
 *
 * A sick network, on both transports: node 0's host silently dropping
 * node 1's SYNs (a permanent neighbour entry to a MAC nobody has) or not
 * answering ARP ends node 1 within EARTH_CONNECT_TIMEOUT plus a second,
 * naming the address; the link taken down mid-run (no FIN, no RST), with
 * the job idle or sending, ends both nodes within EARTH_PEER_STALL_S plus
 * a second, naming the peer; a 2-second blip is survived with the right
 * answer; the same with node 1 in a single-core mode. The times measured
 * are logged (cr_log_info) for docs/user-guide.md.
 *
 * Needs root and iproute2; where the machine does not allow namespaces
 * the tests are skipped with a message saying why.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdarg.h>

#include "helpers.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif

#define T_SECRET "00112233445566778899aabbccddeeff0123456789abcdef"
#define ADDR0 "198.18.231.1"
#define ADDR1 "198.18.231.2"

static char ns[2][32], dev[2][32];
static const char *transport = "tcp"; /* EARTH_TRANSPORT of the jobs */
/* The nodes' EARTH_MODE (NULL: the default), EARTH_CONNECT_TIMEOUT and
 * EARTH_PEER_STALL_S (NULL: the default) */
static const char *mode[2];
static const char *conn_tmo = "20", *stall;
static bool made[2], linked;

/* Runs a shell command quietly; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512], full[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "%s > /dev/null 2>&1", cmd);
	int st = system(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void teardown(void)
{
	for (int k = 0; k < 2; k++)
		if (made[k])
			sh("ip netns del %s", ns[k]);
	made[0] = made[1] = linked = false;
}

/* Two namespaces joined by a veth pair; false (and why) if not allowed. */
static bool setup(char *why, size_t len)
{
	for (int k = 0; k < 2; k++) {
		snprintf(ns[k], sizeof(ns[k]), "earth_t%d_%d", k,
			 (int)getpid());
		snprintf(dev[k], 16, "ev%c_%u", (char)('0' + k),
			 (unsigned)getpid() % 100000);
	}
	if (sh("ip -V")) {
		snprintf(why, len, "the ip command (iproute2) is missing");
		return false;
	}
	for (int k = 0; k < 2; k++) {
		if (sh("ip netns add %s", ns[k])) {
			snprintf(why, len,
				 "this machine does not allow network "
				 "namespaces (ip netns add failed: not "
				 "root, or a sandbox)");
			teardown();
			return false;
		}
		made[k] = true;
	}
	if (sh("ip link add %s type veth peer name %s", dev[0], dev[1]) ||
	    sh("ip link set %s netns %s", dev[0], ns[0]) ||
	    sh("ip link set %s netns %s", dev[1], ns[1])) {
		snprintf(why, len, "this machine does not allow veth pairs");
		sh("ip link del %s", dev[0]);
		teardown();
		return false;
	}
	linked = true;
	const char *addr[2] = {ADDR0, ADDR1};
	for (int k = 0; k < 2; k++)
		cr_assert_eq(
		    sh("ip -n %s addr add %s/30 dev %s && ip -n %s link "
		       "set %s up && ip -n %s link set lo up",
		       ns[k], addr[k], dev[k], ns[k], dev[k], ns[k]),
		    0, "configuring namespace %s", ns[k]);
	return true;
}

/* Node k of 2 of prog, in namespace k, output to path. */
static pid_t spawn(int k, const char *prog, const char *arg, const char *path)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid)
		return pid;
	personality(ADDR_NO_RANDOMIZE); /* symmetric static data */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	dup2(fd, 2);
	char b[16];
	snprintf(b, sizeof(b), "%d", k);
	setenv("EARTH_NODE", b, 1);
	setenv("EARTH_NODES", "2", 1);
	setenv("EARTH_TRANSPORT", transport, 1);
	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", dev[k], 1);
	setenv("EARTH_RENDEZVOUS", ADDR0 ":47123", 1);
	setenv("EARTH_JOB_SECRET", T_SECRET, 1);
	setenv("EARTH_CONNECT_TIMEOUT", conn_tmo, 1);
	if (stall)
		setenv("EARTH_PEER_STALL_S", stall, 1);
	else
		unsetenv("EARTH_PEER_STALL_S");
	if (mode[k])
		setenv("EARTH_MODE", mode[k], 1);
	else
		unsetenv("EARTH_MODE");
	unsetenv("EARTH_SHM_FD");
	execlp("ip", "ip", "netns", "exec", ns[k], prog, arg, (char *)NULL);
	_exit(127);
}

/* A job of 2 nodes of prog_name arg, started: pids, output paths. */
struct run {
	const char *prog;
	pid_t pid[2];
	char path[2][64], out[2][8192];
	int st[2];
	uint64_t t0, end[2]; /* the start, each node's end (ns) */
};

static void run_start(struct run *r, const char *prog_name, const char *arg)
{
	char prog[256];
	snprintf(prog, sizeof(prog), "%s/%s", T_PROG_DIR, prog_name);
	r->prog = prog_name;
	r->t0 = t_now_ns();
	for (int k = 0; k < 2; k++) {
		snprintf(r->path[k], sizeof(r->path[k]), "/tmp/t_veth.%d.%d",
			 (int)getpid(), k);
		r->pid[k] = spawn(k, prog, arg, r->path[k]);
		r->st[k] = -2;
	}
}

/* Waits up to limit_s for both nodes (killed after it: status -1), noting
 * when each ended; reads their output. */
static void run_wait(struct run *r, double limit_s)
{
	uint64_t stop = t_now_ns() + (uint64_t)(limit_s * 1e9);
	int left = 2;
	while (left && t_now_ns() < stop) {
		for (int k = 0; k < 2; k++) {
			int st;
			if (r->st[k] != -2 ||
			    waitpid(r->pid[k], &st, WNOHANG) != r->pid[k])
				continue;
			r->end[k] = t_now_ns();
			r->st[k] = WIFEXITED(st) ? WEXITSTATUS(st)
						 : 128 + WTERMSIG(st);
			left--;
		}
		usleep(2000);
	}
	for (int k = 0; k < 2; k++)
		if (r->st[k] == -2) {
			t_wait_pid(r->pid[k], 0);
			r->st[k] = -1;
			r->end[k] = t_now_ns();
		}
	for (int k = 0; k < 2; k++) {
		t_slurp(r->path[k], r->out[k], sizeof(r->out[k]));
		unlink(r->path[k]);
	}
}

static void job(const char *prog_name, const char *arg, const char *want)
{
	struct run r;
	run_start(&r, prog_name, arg);
	run_wait(&r, 60);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(r.st[k], 0,
			     "%s: node %d (namespace %s): status %d\n%s",
			     prog_name, k, ns[k], r.st[k], r.out[k]);
	cr_assert(strstr(r.out[0], want), "%s: want '%s', got:\n%s", prog_name,
		  want, r.out[0]);
}

/* The first line of out that says "error", else its first line (for the
 * log); *len its length. */
static const char *error_line(const char *out, int *len)
{
	const char *e = strstr(out, "error");
	while (e && e > out && e[-1] != '\n')
		e--;
	e = e ? e : out;
	*len = (int)strcspn(e, "\n");
	return e;
}

#define SKIP_WITHOUT_NAMESPACES()                                              \
	do {                                                                   \
		char why[160];                                                 \
		if (!setup(why, sizeof(why))) {                                \
			cr_log_warn("veth test skipped: %s", why);             \
			cr_skip_test("skipped: %s", why);                      \
		}                                                              \
	} while (0)

TestSuite(veth, .timeout = 150, .fini = teardown);

Test(veth, two_namespaces_over_tcp)
{
	SKIP_WITHOUT_NAMESPACES();
	job("multinode", "100000",
	    "multinode: 2 nodes, 100000-byte blocks: all correct");
	job("gmem", "100000", "gmem: 2 nodes, 100000-byte blocks: all correct");
}

Test(veth, two_namespaces_over_ucx)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	job("multinode", "100000",
	    "multinode: 2 nodes, 100000-byte blocks: all correct");
	job("gmem", "100000", "gmem: 2 nodes, 100000-byte blocks: all correct");
}

/* ---- connect deadlines ---- */

/* Node 1 cannot reach node 0's host (how: what the caller did to the
 * link): it ends within EARTH_CONNECT_TIMEOUT (4 s: not a multiple of the
 * 3 s a connect takes to find no ARP answer) plus a second, naming the
 * address. */
static void silent_host(const char *how)
{
	conn_tmo = "4";
	struct run r;
	run_start(&r, "multinode", "1000");
	run_wait(&r, 10);
	double took = (double)(r.end[1] - r.t0) / 1e9;
	int el;
	const char *e = error_line(r.out[1], &el);
	cr_log_info("veth: %s, %s: node 1 ended after %.2f s "
		    "(EARTH_CONNECT_TIMEOUT=4): %.*s",
		    transport, how, took, el, e);
	cr_assert_neq(r.st[1], 0, "node 1 ran although it cannot connect:\n%s",
		      r.out[1]);
	cr_assert(r.st[1] != -1 && took < 5.0,
		  "%s, %s: node 1 took %.2f s (status %d), not 4 s + 1:\n%s",
		  transport, how, took, r.st[1], r.out[1]);
	cr_assert(strstr(r.out[1], ADDR0 ":47123"),
		  "%s, %s: node 1's message does not name " ADDR0 ":47123:\n%s",
		  transport, how, r.out[1]);
}

/* The SYNs reach a MAC nobody has: dropped, never answered. */
static void drop_syns(void)
{
	cr_assert_eq(sh("ip -n %s neigh replace %s lladdr 02:00:5e:00:53:01 "
			"dev %s nud permanent",
			ns[1], ADDR0, dev[1]),
		     0, "a permanent neighbour entry in %s", ns[1]);
}

/* Node 0's side answers no ARP: the neighbour is unreachable. */
static void no_arp(void)
{
	cr_assert_eq(sh("ip -n %s link set %s arp off", ns[0], dev[0]), 0,
		     "arp off in %s", ns[0]);
}

Test(veth, syns_dropped_tcp_ends_within_connect_timeout)
{
	SKIP_WITHOUT_NAMESPACES();
	drop_syns();
	silent_host("SYNs dropped");
}

Test(veth, no_arp_answer_tcp_ends_within_connect_timeout)
{
	SKIP_WITHOUT_NAMESPACES();
	no_arp();
	silent_host("no ARP answer");
}

Test(veth, syns_dropped_ucx_ends_within_connect_timeout)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	drop_syns();
	silent_host("SYNs dropped");
}

/* The rendezvous gets through, UCX's own connections do not: every other
 * TCP packet of either namespace goes to an HTB class of 8 bit/s (60 s a
 * SYN; tc has no drop action here, and a blackhole route UCX would see
 * as unreachable at once). Both nodes end within EARTH_CONNECT_TIMEOUT
 * (4 s) plus a second, failing, one naming the deadline. */
Test(veth, ucx_connects_dropped_end_within_connect_timeout)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	conn_tmo = "4";
	for (int k = 0; k < 2; k++)
		if (sh("ip netns exec %s sh -c 'tc qdisc add dev %s root "
		       "handle 1: htb default 10 && tc class add dev %s "
		       "parent 1: classid 1:10 htb rate 1gbit && tc class add "
		       "dev %s parent 1: classid 1:20 htb rate 8bit ceil 8bit "
		       "burst 1 cburst 1 && tc filter add dev %s parent 1: "
		       "protocol ip prio 1 u32 match ip %s 47123 0xffff "
		       "flowid 1:10 && tc filter add dev %s parent 1: "
		       "protocol ip prio 2 u32 match ip protocol 6 0xff "
		       "flowid 1:20'",
		       ns[k], dev[k], dev[k], dev[k], dev[k],
		       k ? "dport" : "sport", dev[k])) {
			cr_log_warn("veth test skipped: tc cannot shape "
				    "(htb, u32)");
			cr_skip_test("skipped: tc cannot shape (htb, u32)");
		}
	struct run r;
	run_start(&r, "multinode", "1000");
	run_wait(&r, 12);
	for (int k = 0; k < 2; k++) {
		double took = (double)(r.end[k] - r.t0) / 1e9;
		int el;
		const char *e = error_line(r.out[k], &el);
		cr_log_info(
		    "veth: ucx, UCX's connections dropped: node %d "
		    "ended after %.2f s (EARTH_CONNECT_TIMEOUT=4): %.*s",
		    k, took, el, e);
		cr_assert(r.st[k] > 0 && took < 5.0,
			  "node %d ended after %.2f s with status %d:\nnode "
			  "0:\n%s\nnode 1:\n%s",
			  k, took, r.st[k], r.out[0], r.out[1]);
	}
	cr_assert(strstr(r.out[0], "EARTH_CONNECT_TIMEOUT") ||
		      strstr(r.out[1], "EARTH_CONNECT_TIMEOUT"),
		  "no node named the deadline:\nnode 0:\n%s\nnode 1:\n%s",
		  r.out[0], r.out[1]);
}

/* ---- link loss ---- */

/* Both nodes up and connected: hang's nodes say so; other programs are
 * given a second and a half. */
static void wait_up(struct run *r)
{
	if (strcmp(r->prog, "hang")) {
		usleep(1500000);
		return;
	}
	char buf[8192];
	for (int k = 0; k < 2; k++) {
		uint64_t t0 = t_now_ns();
		while (!t_file_has(r->path[k], " pid ", buf, sizeof(buf)) &&
		       t_now_ns() - t0 < 20000000000ull)
			usleep(10000);
	}
}

/*
 * The link goes down under a running job of prog arg (no FIN, no RST:
 * the device of node 1's namespace is set down) with EARTH_PEER_STALL_S
 * at stall_s: both nodes end within it plus a second, failing, and at
 * least one names the other.
 */
static void link_lost(const char *prog, const char *arg, double stall_s)
{
	char st_s[16];
	snprintf(st_s, sizeof(st_s), "%g", stall_s);
	stall = stall_s == 5 ? NULL : st_s; /* 5: the default, unset */
	struct run r;
	run_start(&r, prog, arg);
	wait_up(&r);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(waitpid(r.pid[k], NULL, WNOHANG), 0,
			     "node %d of %s ended before the link went down", k,
			     prog);
	uint64_t down = t_now_ns();
	cr_assert_eq(sh("ip -n %s link set %s down", ns[1], dev[1]), 0);
	run_wait(&r, stall_s + 10);
	double took[2];
	for (int k = 0; k < 2; k++)
		took[k] = (double)(r.end[k] - down) / 1e9;
	int el;
	const char *e = error_line(r.out[0], &el);
	cr_log_info("veth: %s, %s%s%s, EARTH_PEER_STALL_S=%g: link down, "
		    "node 0 ended after %.2f s, node 1 after %.2f s: %.*s",
		    transport, prog, mode[1] ? ", node 1 " : "",
		    mode[1] ? mode[1] : "", stall_s, took[0], took[1], el, e);
	for (int k = 0; k < 2; k++) {
		cr_assert(r.st[k] > 0 && took[k] < stall_s + 1.0,
			  "%s, %s: node %d ended after %.2f s with status %d, "
			  "not within %g s + 1:\n%s",
			  transport, prog, k, took[k], r.st[k], stall_s,
			  r.out[k]);
	}
	bool named = strstr(r.out[0], "node 1") || strstr(r.out[1], "node 0");
	cr_assert(named && (strstr(r.out[0], "EARTH_PEER_STALL_S") ||
			    strstr(r.out[1], "EARTH_PEER_STALL_S")),
		  "%s, %s: no node named its lost peer:\nnode 0:\n%s\nnode "
		  "1:\n%s",
		  transport, prog, r.out[0], r.out[1]);
}

/* The link down for 2 s while getloop runs n GETs, EARTH_PEER_STALL_S
 * the default (5): it ends right, and it was still running when the link
 * came back. */
static void blip(const char *n)
{
	char want[64];
	snprintf(want, sizeof(want), "getloop: %s gets: all correct", n);
	stall = NULL;
	struct run r;
	run_start(&r, "getloop", n);
	usleep(1000000);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(waitpid(r.pid[k], NULL, WNOHANG), 0,
			     "node %d of getloop ended before the blip", k);
	uint64_t down = t_now_ns();
	cr_assert_eq(sh("ip -n %s link set %s down", ns[1], dev[1]), 0);
	usleep(2000000);
	cr_assert_eq(sh("ip -n %s link set %s up", ns[1], dev[1]), 0);
	uint64_t up = t_now_ns();
	run_wait(&r, 60);
	cr_log_info("veth: %s%s%s: 2-s blip, the job ended %.2f s after it "
		    "began",
		    transport, mode[1] ? ", node 1 " : "",
		    mode[1] ? mode[1] : "", (double)(r.end[0] - down) / 1e9);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(r.st[k], 0,
			     "%s: node %d failed (status %d) after a 2-s "
			     "blip:\nnode 0:\n%s\nnode 1:\n%s",
			     transport, k, r.st[k], r.out[0], r.out[1]);
	cr_assert(strstr(r.out[0], want),
		  "%s: getloop's answer after a blip:\n%s", transport,
		  r.out[0]);
	cr_assert(r.end[0] > up, "%s: getloop ended before the link came back",
		  transport);
}

Test(veth, link_down_idle_tcp_named_within_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	link_lost("hang", "idle", 2);
}

Test(veth, link_down_sending_tcp_named_within_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	link_lost("getloop", "100000000", 2);
}

Test(veth, link_down_idle_tcp_default_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	link_lost("hang", "idle", 5);
}

Test(veth, link_down_idle_ucx_default_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	link_lost("hang", "idle", 5);
}

Test(veth, link_down_idle_ucx_named_within_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	link_lost("hang", "idle", 2);
}

Test(veth, link_down_sending_ucx_named_within_stall)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	link_lost("getloop", "100000000", 2);
}

Test(veth, blip_survived_tcp)
{
	SKIP_WITHOUT_NAMESPACES();
	blip("100000");
}

Test(veth, blip_survived_ucx)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	blip("80000");
}

/* ---- a dead process, for comparison ---- */

/* Node 1 killed (SIGKILL) under an idle job: node 0 names it within 5 s
 * (its kernel closes node 1's sockets: milliseconds over tcp; over ucx
 * UCX's error callback or the missing heartbeats). */
static void killed_node(void)
{
	struct run r;
	run_start(&r, "hang", "idle");
	wait_up(&r);
	uint64_t t0 = t_now_ns();
	kill(r.pid[1], SIGKILL);
	run_wait(&r, 10);
	double took = (double)(r.end[0] - t0) / 1e9;
	int el;
	const char *e = error_line(r.out[0], &el);
	cr_log_info("veth: %s: node 1 killed, node 0 ended after %.3f s: %.*s",
		    transport, took, el, e);
	cr_assert(r.st[0] > 0 && took < 5.0 && strstr(r.out[0], "node 1"),
		  "%s: node 0 ended after %.2f s (status %d) naming:\n%s",
		  transport, took, r.st[0], r.out[0]);
}

Test(veth, killed_node_named_tcp)
{
	SKIP_WITHOUT_NAMESPACES();
	killed_node();
}

Test(veth, killed_node_named_ucx)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	killed_node();
}

/* ---- node 0 dual, node 1 in a single-core mode ---- */

Test(veth, single_core_node_tcp_link_down_and_blip)
{
	SKIP_WITHOUT_NAMESPACES();
	mode[1] = "single-poll";
	link_lost("getloop", "100000000", 2);
	teardown();
	SKIP_WITHOUT_NAMESPACES();
	mode[1] = "single-interrupt";
	blip("100000");
}

Test(veth, single_core_node_ucx_link_down_and_blip)
{
	SKIP_WITHOUT_NAMESPACES();
	transport = "ucx";
	mode[1] = "single-interrupt";
	link_lost("hang", "idle", 2);
	teardown();
	SKIP_WITHOUT_NAMESPACES();
	mode[1] = "single-poll";
	blip("10000");
}
