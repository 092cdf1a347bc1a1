/* SPDX-License-Identifier: MIT */
/*
 * t_stuck.c - a job that can never move again stops with a report and
 * EARTH_EXIT_STUCK (su/quiet.c, node/stuck.c): a slot with count 3 given
 * two signals, on 1 node and on 2 (shm, tcp); a fiber that ends enabling
 * nothing (named); and correct jobs that stay idle for long are left alone:
 * main waiting 2 s for a thread of the program (earth_sync_from_thread),
 * node 1 computing for 2 s (tests/progs/stuck.c).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "job.h"

TestSuite(stuck, .timeout = 120);

static void run(struct t_cmd *c, const char *mode, int nodes,
		const char *transport, const char *what)
{
	uint64_t t0 = t_now_ns();
	t_sh(c, 60, "env EARTH_MODE=%s %s -n %d --transport %s %s/stuck %s",
	     mode, T_EARTHRUN, nodes, transport, T_PROG_DIR, what);
	double s = (double)(t_now_ns() - t0) / 1e9;
	cr_log_info("%s %d %s %s: status %d after %.1f s", mode, nodes,
		    transport, what, c->status, s);
}

static void expect_count_stuck(const char *mode, int nodes,
			       const char *transport)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	run(&c, mode, nodes, transport, "count");
	double s = (double)(t_now_ns() - t0) / 1e9;
	cr_assert_eq(c.status, EARTH_EXIT_STUCK, "status %d (124: hung)\n%s",
		     c.status, c.err);
	cr_assert_lt(s, 20.0, "%.1f s", s);
	cr_assert(strstr(c.err, "earth: node 0: stuck: every node is idle"),
		  "%s", c.err);
	char want[160];
	snprintf(want, sizeof(want), "earth: node %d: stuck: slot 0x",
		 nodes - 1);
	cr_assert(strstr(c.err, want), "%s", c.err);
	cr_assert(strstr(c.err, "in a frame of stuck_waiter: count 1, reset "
				"0: fiber waiter_fiber waits for 1 more "
				"signal"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "in a frame of stuck_main: count 1, reset 0: "
				"fiber main_done"),
		  "%s", c.err);
}

Test(stuck, count_3_two_signals_one_node)
{
	expect_count_stuck("dual", 1, "shm");
}

Test(stuck, count_3_two_signals_two_nodes_shm)
{
	expect_count_stuck("dual", 2, "shm");
}

Test(stuck, count_3_two_signals_two_nodes_tcp)
{
	expect_count_stuck("dual", 2, "tcp");
}

Test(stuck, count_3_two_signals_two_nodes_ucx)
{
	const char *tls[] = {"tcp", "posix,cma"};
	for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++) {
		setenv("UCX_TLS", tls[i], 1);
		expect_count_stuck("dual", 2, "ucx");
	}
}

Test(stuck, single_core_modes)
{
	expect_count_stuck("single-poll", 2, "shm");
	expect_count_stuck("single-interrupt", 2, "tcp");
	expect_count_stuck("single-interrupt", 1, "shm");
}

Test(stuck, end_thread_enabling_nothing)
{
	for (int nodes = 1; nodes <= 2; nodes++) {
		struct t_cmd c;
		run(&c, "dual", nodes, "shm", "endthread");
		cr_assert_eq(c.status, EARTH_EXIT_STUCK, "%d nodes: %d\n%s",
			     nodes, c.status, c.err);
		cr_assert(strstr(c.err, "earth: node 0: stuck: no slot waits "
					"here"),
			  "%s", c.err);
		/* No source table: the fiber by its function. */
		cr_assert(strstr(c.err, "the last fiber that ran here, the "
					"entry fiber of stuck_main, ended "
					"without enabling another here"),
			  "%s", c.err);
		if (nodes == 2)
			cr_assert(strstr(c.err, "earth: node 1: stuck: no slot "
						"waits here (no fiber is "
						"ready, and none armed; no "
						"fiber ran here)\n"),
				  "%s", c.err);
	}
}

Test(stuck, thread_signalling_after_2s_is_not_stuck)
{
	struct t_cmd c;
	run(&c, "dual", 1, "shm", "thread");
	cr_assert_eq(c.status, 0, "%d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "main done"), "%s", c.out);
	cr_assert(!strstr(c.err, "stuck"), "%s", c.err);
	run(&c, "single-poll", 1, "shm", "thread");
	cr_assert_eq(c.status, 0, "%d\n%s", c.status, c.err);
}

Test(stuck, node_computing_2s_is_not_stuck)
{
	const char *tr[] = {"shm", "tcp"};
	for (int i = 0; i < 2; i++) {
		struct t_cmd c;
		run(&c, "dual", 2, tr[i], "compute");
		cr_assert_eq(c.status, 0, "%s: %d\n%s", tr[i], c.status, c.err);
		cr_assert(strstr(c.out, "main done"), "%s", c.out);
		cr_assert(!strstr(c.err, "stuck"), "%s", c.err);
	}
}

/* The other nodes write their reports after node 0 ended the stuck job
 * (under TSan on a loaded machine, more than a second): earthrun waits
 * for them as after a job that ended well, not 1 s as after a failed node
 * 0 (they were killed, and the job failed with status 1). */
Test(stuck, other_node_ending_2s_late_is_waited_for)
{
	struct t_cmd c;
	run(&c, "dual", 2, "shm", "slowend");
	cr_assert_eq(c.status, EARTH_EXIT_STUCK, "status %d\n%s", c.status,
		     c.err);
	cr_assert(!strstr(c.err, "did not end"), "%s", c.err);
	cr_assert(strstr(c.err, "earth: node 1: stuck: slot 0x"), "%s", c.err);
}

/* A thread of the program keeps the node from being declared stuck while
 * it lives; when it ends without signalling, nothing wakes the sleeping
 * node: it asks again every 20 ms (the job idled forever). */
Test(stuck, thread_ending_without_signal_is_stuck)
{
	const char *mode[] = {"dual", "single-poll", "dual"};
	int nodes[] = {1, 1, 2};
	for (int i = 0; i < 3; i++) {
		struct t_cmd c;
		uint64_t t0 = t_now_ns();
		run(&c, mode[i], nodes[i], "shm", "threadquits");
		double s = (double)(t_now_ns() - t0) / 1e9;
		cr_assert_eq(c.status, EARTH_EXIT_STUCK,
			     "%s %d: status %d (124: hung)\n%s", mode[i],
			     nodes[i], c.status, c.err);
		cr_assert_lt(s, 20.0, "%.1f s", s);
		cr_assert(strstr(c.err, "in a frame of stuck_main: count 1, "
					"reset 0: fiber main_done"),
			  "%s", c.err);
	}
}
