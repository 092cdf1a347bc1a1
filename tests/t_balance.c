/* SPDX-License-Identifier: MIT */
/*
 * t_balance.c - TOKEN load balancing and the collectives: fib's fibers
 * spread over 2 and 4 nodes (shm), 2 nodes of 2 EUs and 3 nodes (tcp) with
 * the collectives correct, nqueens exact under balancing on 1-3 nodes, an
 * idle job sleeps (idle nodes do not keep each other busy with STEALs),
 * and a node that runs dry for one round trip after each remote operation
 * sends no STEAL each time (tests/progs/getloop.c); tokens whose arguments
 * no message carries stay on their node, and such an INVOKE on another
 * node is refused naming it (tests/progs/bigargs.c).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

TestSuite(balance, .timeout = 120);

static void check_fib(int nodes, const char *env)
{
	struct t_cmd c;
	t_sh(&c, 30, "env %s %s -n %d %s/fibnodes 22", env, T_EARTHRUN, nodes,
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
		cr_assert_gt(f, 100,
			     "node %d ran %ld fibers: the tokens did not "
			     "spread\n%s",
			     k, f, c.out);
		p = end;
	}
}

Test(balance, fib_spreads_over_two_nodes)
{
	check_fib(2, "EARTH_QUEUE=hwq");
}

Test(balance, fib_spreads_over_four_nodes)
{
	check_fib(4, "EARTH_QUEUE=sw");
}

/* Nodes of two EUs: a fiber on either EU reads the node's statistics
 * (earth_stats_get, fibnodes' collectives) while its sibling runs: under
 * TSan that read races with nothing, and the counts are every EU's. */
Test(balance, fib_spreads_over_two_nodes_of_two_eus)
{
	check_fib(2, "EARTH_EUS=2");
}

Test(balance, collectives_on_one_node)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s/fibnodes 10", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "fib(10)=55 correct, collectives correct"),
		  "%s", c.out);
}

Test(balance, nqueens_exact_under_balancing)
{
	int nodes[] = {1, 2, 3};
	for (size_t i = 0; i < T_NCASES(nodes); i++) {
		struct t_cmd c;
		t_sh(&c, 30, "%s -n %d %s/nqueens 10 4", T_EARTHRUN, nodes[i],
		     T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%d nodes: status %d\n%s", nodes[i],
			     c.status, c.err);
		cr_assert(strstr(c.out, "nqueens: n=10 solutions=724 correct"),
			  "%d nodes: %s\n%s", nodes[i], c.out, c.err);
	}
}

Test(balance, tcp_fib_and_collectives)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s --transport tcp -n 3 %s/fibnodes 22", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s\n%s", c.status, c.out, c.err);
	cr_assert(strstr(c.out, "fib(22)=17711 correct, collectives correct"),
		  "%s\n%s", c.out, c.err);
	t_sh(&c, 30, "%s --transport tcp -n 2 %s/nqueens 10 4", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "nqueens: n=10 solutions=724 correct"),
		  "%s\n%s", c.out, c.err);
}

Test(balance, ucx_fib_and_collectives)
{
	const char *tls[] = {"tcp", "posix,cma"};
	for (size_t i = 0; i < T_NCASES(tls); i++) {
		struct t_cmd c;
		t_sh(&c, 30,
		     "env UCX_TLS=%s %s --transport ucx -n 3 %s/fibnodes 22",
		     tls[i], T_EARTHRUN, T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%s: status %d\n%s\n%s", tls[i],
			     c.status, c.out, c.err);
		cr_assert(strstr(c.out, "fib(22)=17711 correct, collectives "
					"correct"),
			  "%s: %s\n%s", tls[i], c.out, c.err);
	}
}

/* Regression: STEAL/STEAL_NONE answers used to count as work and restart
 * the asking, so idle nodes kept each other busy forever. An idle job must
 * sleep: its nodes use almost no CPU. */
/* CPU ticks (user + system) a process has used so far; -1 if gone. */
static long cpu_ticks(long pid)
{
	char stat[64], buf[4096];
	snprintf(stat, sizeof(stat), "/proc/%ld/stat", pid);
	t_slurp(stat, buf, sizeof(buf));
	/* fields 14 and 15 (utime, stime) follow the ")" of comm */
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

Test(balance, idle_job_sleeps)
{
	char out[64], cmdline[512], path[80], buf[4096];
	/* The test's pid as an argument tags this job for pgrep. */
	snprintf(out, sizeof(out), "/tmp/t_mn_idle.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline),
		 "%s -n 3 %s/hang idle%d > %s.o 2>&1 &", T_EARTHRUN, T_PROG_DIR,
		 (int)getpid(), out);
	cr_assert_eq(system(cmdline), 0);
	snprintf(path, sizeof(path), "%s.o", out);
	long pids[3] = {-1, -1, -1};
	uint64_t t0 = t_now_ns();
	while (pids[2] < 0 && t_now_ns() - t0 < 10000000000ull) {
		t_slurp(path, buf, sizeof(buf));
		for (int k = 0; k < 3; k++) {
			char key[32];
			snprintf(key, sizeof(key), "node %d pid ", k);
			char *p = strstr(buf, key);
			if (p && strchr(p, '\n'))
				pids[k] = atol(p + strlen(key));
		}
		usleep(10000);
	}
	/* Let start-up work (sanitizer set-up, first spins) pass, then
	 * count what 2 s of idling cost. */
	sleep(1);
	long before = 0, after = 0;
	for (int k = 0; k < 3; k++)
		before += pids[k] > 0 ? cpu_ticks(pids[k]) : 0;
	sleep(2);
	for (int k = 0; k < 3; k++)
		after += pids[k] > 0 ? cpu_ticks(pids[k]) : 0;
	/* Stop the job before any assertion can end the test. */
	snprintf(cmdline, sizeof(cmdline), "pkill -f '[h]ang idle%d'",
		 (int)getpid());
	int rc = system(cmdline);
	(void)rc;
	unlink(path);
	cr_assert_gt(pids[2], 0, "the job did not start: %s", buf);
	/* 3 nodes x 2 threads busy for 2 s would be ~400 ticks. */
	cr_assert_lt(after - before, 40,
		     "an idle 3-node job used %ld ticks "
		     "of CPU in 2 s",
		     after - before);
}

/* A node that runs dry for one round trip after every remote operation
 * does not ask its peers for work each time: node 1 of getloop does 2000
 * GETs in a row (each STEAL used to cost node 0 a message and an answer,
 * one per GET). It still asks when it stays idle (the balancing tests). */
static long steal_requests_of(const char *err, unsigned node)
{
	const char *p = t_node_field(err, node, "steal requests");
	return p ? atol(p) : -1;
}

Test(balance, short_idle_sends_no_steal)
{
	const char *tr[] = {"shm", "tcp"};
	for (int i = 0; i < 2; i++) {
		struct t_cmd c;
		t_sh(&c, 60,
		     "env EARTH_STATS=1 %s --prefix --transport %s -n 2 "
		     "%s/getloop 2000",
		     T_EARTHRUN, tr[i], T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%s: status %d\n%s", tr[i], c.status,
			     c.err);
		cr_assert(strstr(c.out, "getloop: 2000 gets: all correct"),
			  "%s: %s", tr[i], c.out);
		long s1 = steal_requests_of(c.err, 1);
		cr_assert_geq(s1, 0, "%s: no steal count:\n%s", tr[i], c.err);
		cr_log_info("%s: node 1 sent %ld STEALs for 2000 GETs", tr[i],
			    s1);
		cr_assert_leq(s1, 200,
			      "%s: node 1 sent %ld STEALs during 2000 GETs",
			      tr[i], s1);
	}
}

/* Runs bigargs ARGS on 2 nodes with rings of ring KiB. */
static void bigargs(struct t_cmd *c, int ring, const char *args)
{
	t_sh(c, 60, "%s -n 2 --ring-kb %d %s/bigargs %s", T_EARTHRUN, ring,
	     T_PROG_DIR, args);
}

/* Tokens whose arguments no message carries (over 16 KiB with rings of
 * 64 KiB, over 64 KiB with any) run where they were made: an idle node
 * asks, and gets none of them (they went out, and the receiver stopped
 * the job as a hostile peer's); smaller ones still go. */
Test(balance, tokens_too_large_to_travel_stay)
{
	static const struct {
		int ring;
		const char *args;
		bool all_here;
	} runs[] = {
	    {64, "token 8", false},	 {64, "token 20000", true},
	    {64, "token 70000", true},	 {1024, "token 20000", false},
	    {1024, "token 70000", true},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
		struct t_cmd c;
		bigargs(&c, runs[i].ring, runs[i].args);
		cr_assert_eq(c.status, 0, "--ring-kb %d %s: status %d\n%s%s",
			     runs[i].ring, runs[i].args, c.status, c.out,
			     c.err);
		const char *p = strstr(c.out, "bigargs: token ok, node 0 ran ");
		cr_assert(p, "%s%s", c.out, c.err);
		long here = atol(p + strlen("bigargs: token ok, node 0 ran "));
		if (runs[i].all_here)
			cr_assert_eq(here, 200, "--ring-kb %d %s: %s",
				     runs[i].ring, runs[i].args, c.out);
		else
			cr_assert_lt(here, 200,
				     "--ring-kb %d %s: node 1 ran none: %s",
				     runs[i].ring, runs[i].args, c.out);
	}
}

/* An INVOKE on another node whose arguments no message carries is the
 * program's mistake, named at the INVOKE (the receiver stopped the job as
 * a hostile peer's, or the sender waited for ring room for ever). */
Test(balance, invoke_arguments_past_a_message_refused)
{
	struct t_cmd c;
	bigargs(&c, 1024, "invoke 20000");
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	cr_assert(strstr(c.out, "bigargs: invoke ok"), "%s", c.out);
	bigargs(&c, 64, "invoke 20000");
	cr_assert_neq(c.status, 0, "%s", c.out);
	cr_assert(strstr(c.err, "INVOKE: fn20000 takes 20008 bytes of "
				"arguments, more than a message between nodes "
				"carries (16384 bytes;"),
		  "%s", c.err);
	bigargs(&c, 1024, "invoke 70000");
	cr_assert_neq(c.status, 0, "%s", c.out);
	cr_assert(strstr(c.err, "carries (65536 bytes;"), "%s", c.err);
	cr_assert(strstr(c.err, "BLKMOV_SYNC"), "%s", c.err);
}
