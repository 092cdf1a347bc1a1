/* SPDX-License-Identifier: MIT */
/*
 * t_ops_remote.c - every remote operation with checked results
 * (tests/progs/multinode.c) in jobs of 1-4 nodes started with earthrun,
 * each over the shm, the tcp and the ucx transport, ucx twice (UCX_TLS=tcp
 * on loopback and UCX_TLS=posix,cma: a parameterized test, one run per
 * transport): both queue modes, block sizes around the message chunk,
 * small rings and queues (every overflow path); and values that travel to
 * the EU with their fiber (tests/progs/order.c) in each node mode.
 * Oversubscribed on a 2-core machine by design.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <string.h>

#include "job.h"

TestSuite(ops_remote, .timeout = 120);

/* The tests below run once over each transport, the parameter, with the
 * environment it needs (ucx: the lanes). Criterion copies parameters into
 * a fresh process where pointers into this one's data are not valid: they
 * hold their strings, not pointers. */
struct transport {
	char name[8], env[48];
};
static struct transport transports[] = {
    {"shm", ""},
    {"tcp", ""},
    {"ucx", "UCX_TLS=tcp UCX_NET_DEVICES=lo"},
    {"ucx", "UCX_TLS=posix,cma"}};
/* Runs the multinode program on `nodes` nodes over transport tr and
 * checks that every remote path gave the right values. */
static void check_job_on(const struct transport *tr, int nodes, const char *env,
			 long blk)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	const char *transport = tr->name;
	t_sh(&c, 30, "env %s %s %s --transport %s -n %d %s/multinode %ld", env,
	     tr->env, T_EARTHRUN, transport, nodes, T_PROG_DIR, blk);
	cr_assert_eq(c.status, 0,
		     "%s %s, %d nodes, %s, block %ld: status %d\n%s", transport,
		     tr->env, nodes, env, blk, c.status, c.err);
	char want[128];
	snprintf(want, sizeof(want),
		 "multinode: %d nodes, %ld-byte blocks: "
		 "all correct",
		 nodes, blk);
	cr_assert(strstr(c.out, want), "want '%s', got:\n%s\n%s", want, c.out,
		  c.err);
	cr_log_info("%s %s %d nodes, block %ld: %.2f s", transport, tr->env,
		    nodes, blk, (t_now_ns() - t0) / 1e9);
}

#define OVER_EACH_TRANSPORT(test)                                              \
	ParameterizedTestParameters(ops_remote, test)                          \
	{                                                                      \
		return cr_make_param_array(struct transport, transports,       \
					   T_NCASES(transports));              \
	}

OVER_EACH_TRANSPORT(two_nodes_hwq)
ParameterizedTest(struct transport *tr, ops_remote, two_nodes_hwq)
{
	check_job_on(tr, 2, "EARTH_QUEUE=hwq", 100000);
}

OVER_EACH_TRANSPORT(three_nodes_sw)
ParameterizedTest(struct transport *tr, ops_remote, three_nodes_sw)
{
	check_job_on(tr, 3, "EARTH_QUEUE=sw", 100000);
}

OVER_EACH_TRANSPORT(four_nodes_block_sizes)
ParameterizedTest(struct transport *tr, ops_remote, four_nodes_block_sizes)
{
	/* 0 bytes, one byte, exactly one chunk, one byte more, many chunks */
	long sizes[] = {0, 1, 65536, 65537, 262144};
	for (size_t i = 0; i < T_NCASES(sizes); i++)
		check_job_on(tr, 4, "EARTH_QUEUE=hwq", sizes[i]);
}

Test(ops_remote, one_node_under_earthrun)
{
	static const struct transport shm = {"shm", ""};
	check_job_on(&shm, 1, "EARTH_QUEUE=hwq", 1000);
}

/* 8-slot EU/SU queues: every overflow path; over shm also 64 KiB rings
 * (one chunk plus header does not fit twice). Each transport's earthrun
 * options and what its job must print. */
struct small_case {
	char transport[8], opts[32], want[64];
};

ParameterizedTestParameters(ops_remote, small_rings_and_queues)
{
	static struct small_case c[] = {
	    {"shm", "-n 3 --ring-kb 64", "all correct"},
	    {"tcp", "--transport tcp -n 3",
	     "multinode: 3 nodes, 200000-byte blocks: all correct"},
	    {"ucx", "--transport ucx -n 3",
	     "multinode: 3 nodes, 200000-byte blocks: all correct"},
	};
	return cr_make_param_array(struct small_case, c, T_NCASES(c));
}

ParameterizedTest(struct small_case *sc, ops_remote, small_rings_and_queues)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 30, "env EARTH_QUEUE_SLOTS=8 %s %s %s/multinode 200000",
	     T_EARTHRUN, sc->opts, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s: status %d\n%s", sc->transport, c.status,
		     c.err);
	cr_assert(strstr(c.out, sc->want), "%s: want '%s', got:\n%s\n%s",
		  sc->transport, sc->want, c.out, c.err);
	cr_log_info("%s 3 nodes, small queues: %.2f s", sc->transport,
		    (t_now_ns() - t0) / 1e9);
}

/* progs/order.c: a GET's or small DATA's value that goes to the EU with
 * its fiber is in place, at its width, for that fiber and for the fiber
 * of any later signal from the same source. */
Test(ops_remote, values_travel_with_their_fibers)
{
	const char *runs[][2] = {
	    {"shm", ""},
	    {"tcp", ""},
	    /* a single-core node has one EU (also
	     * when make test runs this at k = 2, 3) */
	    {"shm", "EARTH_EUS=1 EARTH_MODE=single-interrupt"},
	    {"tcp", "EARTH_EUS=1 EARTH_MODE=single-poll"},
	    {"ucx", "UCX_TLS=posix,cma"},
	    {"ucx", "UCX_TLS=tcp UCX_NET_DEVICES=lo "
		    "EARTH_EUS=1 EARTH_MODE=single-poll"}};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct t_cmd c;
		t_sh(&c, 60, "env %s %s --transport %s -n 3 %s/order 200",
		     runs[i][1], T_EARTHRUN, runs[i][0], T_PROG_DIR);
		cr_expect_eq(c.status, 0, "%s %s: status %d\n%s\n%s",
			     runs[i][0], runs[i][1], c.status, c.out, c.err);
		cr_expect(strstr(c.out, "order: ok"), "%s %s:\n%s", runs[i][0],
			  runs[i][1], c.out);
	}
}
