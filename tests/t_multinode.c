/* SPDX-License-Identifier: MIT */
/*
 * t_multinode.c - jobs of several nodes on this host, started with
 * earthrun over the shared-memory transport: every remote operation with
 * checked results (tests/progs/multinode.c) for 1-4 nodes, both queue
 * modes and block sizes around the message chunk; a node killed with
 * SIGKILL stops the others with a message within 5 s; invalid messages
 * are rejected naming the peer and the field; launcher and environment
 * errors. Oversubscribed on a 2-core machine by design.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif
#ifndef T_EARTHRUN
#error "T_EARTHRUN must be defined"
#endif

TestSuite(multinode, .timeout = 120);

struct cmd {
	int status;     /* exit status, or 128 + signal */
	char out[8192]; /* stdout */
	char err[8192]; /* stderr */
};

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

/* Runs a shell command line (bounded by `timeout 30`). */
static void run(struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void run(struct cmd *c, const char *fmt, ...)
{
	char line[1024], full[1400], out[64], err[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "/tmp/t_mn_out.%d", (int)getpid());
	snprintf(err, sizeof(err), "/tmp/t_mn_err.%d", (int)getpid());
	snprintf(full, sizeof(full), "timeout 30 %s > %s 2> %s", line, out,
		 err);
	int st = system(full);
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(out, c->out, sizeof(c->out));
	slurp(err, c->err, sizeof(c->err));
	unlink(out);
	unlink(err);
}

static void check_job(int nodes, const char *env, long blk)
{
	struct cmd c;
	run(&c, "env %s %s -n %d %s/multinode %ld", env, T_EARTHRUN, nodes,
	    T_PROG_DIR, blk);
	cr_assert_eq(c.status, 0, "%d nodes, %s, block %ld: status %d\n%s", nodes,
		     env, blk, c.status, c.err);
	char want[128];
	snprintf(want, sizeof(want), "multinode: %d nodes, %ld-byte blocks: "
				     "all correct",
		 nodes, blk);
	cr_assert(strstr(c.out, want), "want '%s', got:\n%s\n%s", want, c.out,
		  c.err);
}

Test(multinode, two_nodes_hwq)
{
	check_job(2, "EARTH_QUEUE=hwq", 100000);
}

Test(multinode, three_nodes_sw)
{
	check_job(3, "EARTH_QUEUE=sw", 100000);
}

Test(multinode, four_nodes_block_sizes)
{
	/* 0 bytes, one byte, exactly one chunk, one byte more, many chunks */
	long sizes[] = {0, 1, 65536, 65537, 262144};
	for (size_t i = 0; i < T_NCASES(sizes); i++)
		check_job(4, "EARTH_QUEUE=hwq", sizes[i]);
}

Test(multinode, one_node_under_earthrun)
{
	check_job(1, "EARTH_QUEUE=hwq", 1000);
}

Test(multinode, small_rings_and_queues)
{
	/* 64 KiB rings (one chunk plus header does not fit twice) and
	 * 8-slot EU/SU queues: every overflow path. */
	struct cmd c;
	run(&c, "env EARTH_QUEUE_SLOTS=8 %s -n 3 --ring-kb 64 %s/multinode "
		"200000",
	    T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "all correct"), "%s\n%s", c.out, c.err);
}

Test(multinode, prefix_lines)
{
	struct cmd c;
	run(&c, "%s -n 2 --prefix %s/multinode 10", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "[0] multinode: 2 nodes"), "%s", c.out);
}

Test(multinode, killed_node_stops_the_job)
{
	/* Start a job that never ends, kill node 1, time the end. */
	char out[64], cmdline[512];
	snprintf(out, sizeof(out), "/tmp/t_mn_hang.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline), "%s -n 3 %s/hang > %s.o 2> %s.e &",
		 T_EARTHRUN, T_PROG_DIR, out, out);
	cr_assert_eq(system(cmdline), 0);
	char path[80], buf[4096];
	long pid1 = -1;
	uint64_t t0 = t_now_ns();
	snprintf(path, sizeof(path), "%s.o", out);
	while (pid1 < 0 && t_now_ns() - t0 < 10000000000ull) {
		slurp(path, buf, sizeof(buf));
		char *p = strstr(buf, "node 1 pid ");
		if (p && strchr(p, '\n'))
			pid1 = atol(p + strlen("node 1 pid "));
		else
			usleep(10000);
	}
	cr_assert_gt(pid1, 0, "node 1 never started: %s", buf);
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill((pid_t)pid1, SIGKILL), 0);
	/* Every process of the job must be gone within 5 s. */
	/* "[h]ang": the pattern must not match this shell's own line. */
	snprintf(cmdline, sizeof(cmdline), "pgrep -f '%s/[h]ang' > /dev/null",
		 T_PROG_DIR);
	while (system(cmdline) == 0 && t_now_ns() - t_kill < 6000000000ull)
		usleep(20000);
	uint64_t took = t_now_ns() - t_kill;
	cr_assert_lt(took, 5000000000ull, "job still running %.1f s after "
					  "the kill",
		     took / 1e9);
	snprintf(path, sizeof(path), "%s.e", out);
	slurp(path, buf, sizeof(buf));
	cr_assert(strstr(buf, "node 1 was killed by signal 9"), "%s", buf);
	cr_assert(strstr(buf, "earth: node 0: stopping: node 1 died (signal 9)"),
		  "%s", buf);
	cr_assert(strstr(buf, "earth: node 2: stopping: node 1 died (signal 9)"),
		  "%s", buf);
	unlink(path);
	snprintf(path, sizeof(path), "%s.o", out);
	unlink(path);
}

Test(multinode, write_outside_registered_memory_is_rejected)
{
	struct cmd c;
	run(&c, "%s -n 2 %s/badmsg", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message BLK_DATA from "
				"node 0 rejected: field b"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "outside this node's registered memory"), "%s",
		  c.err);
	cr_assert(strstr(c.err, "earthrun: node 1 exited with status 70"), "%s",
		  c.err);
}

Test(multinode, signal_to_a_non_slot_is_rejected)
{
	struct cmd c;
	run(&c, "%s -n 2 %s/badmsg slot", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "message SYNC from node 0 rejected: field a"),
		  "%s", c.err);
}

Test(multinode, nodes_without_transport)
{
	struct cmd c;
	run(&c, "env EARTH_NODE=0 EARTH_NODES=2 %s/multinode 10", T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_SHM_FD is not set: start multi-node "
				"jobs on one host with earthrun -n N"),
		  "%s", c.err);
	run(&c, "env EARTH_NODE=3 EARTH_NODES=2 %s/multinode 10", T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "malformed"), "%s", c.err);
}

Test(multinode, launcher_usage_errors)
{
	struct cmd c;
	run(&c, "%s -n 0 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2, "status %d", c.status);
	cr_assert(strstr(c.err, "-n 0: give 1..256 nodes"), "%s", c.err);
	run(&c, "%s -n 2 --ring-kb 100 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "power of two"), "%s", c.err);
	run(&c, "%s -n 2 /nonexistent/prog", T_EARTHRUN);
	cr_assert_neq(c.status, 0);
	cr_assert(strstr(c.err, "cannot run /nonexistent/prog"), "%s", c.err);
}

/* ---- TOKEN load balancing and collectives ---- */

static void check_fib(int nodes, const char *env)
{
	struct cmd c;
	run(&c, "env %s %s -n %d %s/fibnodes 22", env, T_EARTHRUN, nodes,
	    T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%d nodes: status %d\n%s\n%s", nodes,
		     c.status, c.out, c.err);
	cr_assert(strstr(c.out, "fib(22)=17711 correct, collectives correct"),
		  "%s\n%s", c.out, c.err);
	/* Every node ran part of the fib tree, not only its collectives. */
	const char *p = strstr(c.out, "fibers per node:");
	cr_assert(p, "%s", c.out);
	p += strlen("fibers per node:");
	for (int k = 0; k < nodes; k++) {
		char *end;
		long f = strtol(p, &end, 10);
		cr_assert(end != p, "%s", c.out);
		cr_assert_gt(f, 100, "node %d ran %ld fibers: the tokens did not "
				     "spread\n%s",
			     k, f, c.out);
		p = end;
	}
}

Test(multinode, fib_spreads_over_two_nodes)
{
	check_fib(2, "EARTH_QUEUE=hwq");
}

Test(multinode, fib_spreads_over_four_nodes)
{
	check_fib(4, "EARTH_QUEUE=sw");
}

Test(multinode, collectives_on_one_node)
{
	struct cmd c;
	run(&c, "%s/fibnodes 10", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "fib(10)=55 correct, collectives correct"),
		  "%s", c.out);
}

Test(multinode, nqueens_exact_under_balancing)
{
	int nodes[] = {1, 2, 3};
	for (size_t i = 0; i < T_NCASES(nodes); i++) {
		struct cmd c;
		run(&c, "%s -n %d %s/nqueens 10 4", T_EARTHRUN, nodes[i],
		    T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%d nodes: status %d\n%s", nodes[i],
			     c.status, c.err);
		cr_assert(strstr(c.out, "nqueens: n=10 solutions=724 correct"),
			  "%d nodes: %s\n%s", nodes[i], c.out, c.err);
	}
}

/* Regression: STEAL/STEAL_NONE answers used to count as work and restart
 * the asking, so idle nodes kept each other busy forever. An idle job must
 * sleep: its nodes use almost no CPU. */
Test(multinode, idle_job_sleeps)
{
	char out[64], cmdline[512], path[80], buf[4096];
	snprintf(out, sizeof(out), "/tmp/t_mn_idle.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline), "%s -n 3 %s/hang > %s.o 2>&1 &",
		 T_EARTHRUN, T_PROG_DIR, out);
	cr_assert_eq(system(cmdline), 0);
	snprintf(path, sizeof(path), "%s.o", out);
	long pids[3] = {-1, -1, -1};
	uint64_t t0 = t_now_ns();
	while (pids[2] < 0 && t_now_ns() - t0 < 10000000000ull) {
		slurp(path, buf, sizeof(buf));
		for (int k = 0; k < 3; k++) {
			char key[32];
			snprintf(key, sizeof(key), "node %d pid ", k);
			char *p = strstr(buf, key);
			if (p && strchr(p, '\n'))
				pids[k] = atol(p + strlen(key));
		}
		usleep(10000);
	}
	cr_assert_gt(pids[2], 0, "the job did not start: %s", buf);
	sleep(2);
	long ticks = 0;
	for (int k = 0; k < 3; k++) {
		char stat[64];
		snprintf(stat, sizeof(stat), "/proc/%ld/stat", pids[k]);
		slurp(stat, buf, sizeof(buf));
		/* fields 14 and 15 (utime, stime) follow the ")" of comm */
		char *p = strrchr(buf, ')');
		cr_assert(p, "no stat for node %d", k);
		unsigned long ut = 0, st = 0;
		cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
					   "%*u %*u %lu %lu",
				    &ut, &st),
			     2);
		ticks += (long)(ut + st);
	}
	for (int k = 0; k < 3; k++)
		kill((pid_t)pids[k], SIGKILL);
	snprintf(cmdline, sizeof(cmdline), "pgrep -f '%s/[h]ang' > /dev/null",
		 T_PROG_DIR);
	for (int i = 0; i < 100 && system(cmdline) == 0; i++)
		usleep(20000);
	unlink(path);
	/* 3 nodes x 2 threads for over 2 s: busy would be ~400 ticks. */
	cr_assert_lt(ticks, 60, "an idle 3-node job used %ld ticks of CPU in "
				"2 s",
		     ticks);
}
