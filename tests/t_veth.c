/* SPDX-License-Identifier: MIT */
/*
 * t_veth.c - a two-host job without two hosts: two network namespaces
 * joined by a veth pair (addresses from the benchmarking range
 * 198.18.0.0/15, used only between these namespaces), node 0 in one and
 * node 1 in the other, over the tcp transport and over ucx (UCX_TLS=tcp,
 * UCX_NET_DEVICES the namespace's veth end: else UCX picks shared memory,
 * which namespaces do not separate), meeting at node 0's
 * rendezvous address as nodes started by srun or mpirun do. Every remote
 * path is checked (tests/progs/multinode.c, tests/progs/gmem.c). Needs
 * root and iproute2; where the machine does not allow namespaces the test
 * is skipped with a message saying why.
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

#include "helpers.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif

#define T_SECRET "00112233445566778899aabbccddeeff0123456789abcdef"
#define ADDR0 "198.18.231.1"
#define ADDR1 "198.18.231.2"

static char ns[2][32], dev[2][32];
static const char *transport = "tcp"; /* EARTH_TRANSPORT of the jobs */
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
	setenv("EARTH_CONNECT_TIMEOUT", "20", 1);
	unsetenv("EARTH_SHM_FD");
	execlp("ip", "ip", "netns", "exec", ns[k], prog, arg, (char *)NULL);
	_exit(127);
}

static void job(const char *prog_name, const char *arg, const char *want)
{
	char prog[256], path[2][64], buf[2][8192];
	snprintf(prog, sizeof(prog), "%s/%s", T_PROG_DIR, prog_name);
	pid_t pid[2];
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "/tmp/t_veth.%d.%d",
			 (int)getpid(), k);
		pid[k] = spawn(k, prog, arg, path[k]);
	}
	int st[2];
	for (int k = 0; k < 2; k++)
		st[k] = t_wait_pid(pid[k], 60000000000ull);
	for (int k = 0; k < 2; k++) {
		t_slurp(path[k], buf[k], sizeof(buf[k]));
		unlink(path[k]);
	}
	for (int k = 0; k < 2; k++)
		cr_assert_eq(st[k], 0,
			     "%s: node %d (namespace %s): status %d\n%s",
			     prog_name, k, ns[k], st[k], buf[k]);
	cr_assert(strstr(buf[0], want), "%s: want '%s', got:\n%s", prog_name,
		  want, buf[0]);
}

TestSuite(veth, .timeout = 150, .fini = teardown);

Test(veth, two_namespaces_over_tcp)
{
	char why[160];
	if (!setup(why, sizeof(why))) {
		cr_log_warn("veth test skipped: %s", why);
		cr_skip_test("skipped: %s", why);
	}
	job("multinode", "100000",
	    "multinode: 2 nodes, 100000-byte blocks: all correct");
	job("gmem", "100000", "gmem: 2 nodes, 100000-byte blocks: all correct");
}

Test(veth, two_namespaces_over_ucx)
{
	char why[160];
	if (!setup(why, sizeof(why))) {
		cr_log_warn("veth test skipped: %s", why);
		cr_skip_test("skipped: %s", why);
	}
	transport = "ucx";
	job("multinode", "100000",
	    "multinode: 2 nodes, 100000-byte blocks: all correct");
	job("gmem", "100000", "gmem: 2 nodes, 100000-byte blocks: all correct");
}
