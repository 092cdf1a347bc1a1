/* SPDX-License-Identifier: MIT */
/*
 * t_modes.c - node modes (dual, single-interrupt, single-poll): the
 * option from EARTH_MODE and --earth-mode, bad values rejected; one-node
 * programs give the same results in every mode; jobs of several nodes
 * (every remote path, TOKEN balancing and collectives) over shm and tcp
 * in every mode; the signal storm (tests/progs/irqstorm.c): thousands of
 * arrivals at a node while it runs fibers and its runtime, with no
 * operation lost or duplicated, and interrupts that did run inside fibers.
 * The whole runtime suite also runs once per mode (tests/run.sh, MODES).
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "fib_tf.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"

TestSuite(modes, .timeout = 240);

static const char *const mode_names[] = {"dual", "single-interrupt",
					 "single-poll"};

/* ---- options ---- */

Test(modes, option_from_env_and_flag)
{
	struct earth_options o;
	for (int i = 0; i < 3; i++) {
		setenv("EARTH_MODE", mode_names[i], 1);
		earth_options_default(&o);
		cr_assert_eq((int)o.node_mode, i, "EARTH_MODE=%s",
			     mode_names[i]);
	}
	unsetenv("EARTH_MODE");
	earth_options_default(&o);
	cr_assert_eq(o.node_mode, EARTH_MODE_DUAL, "default is dual");
	char a0[] = "prog", a1[] = "--earth-mode=single-poll", a2[] = "x";
	char *argv[] = {a0, a1, a2, NULL};
	int argc = 3;
	cr_assert_eq(earth_options_parse(&o, &argc, argv), 0);
	cr_assert_eq(o.node_mode, EARTH_MODE_SINGLE_POLL);
	cr_assert_eq(argc, 2, "the flag is removed from argv");
	cr_assert_str_eq(argv[1], "x");
}

/* The queue mode sw used to select hwq (options.c): both must work. */
Test(modes, queue_option_sw_selects_sw)
{
	struct earth_options o;
	setenv("EARTH_QUEUE", "sw", 1);
	earth_options_default(&o);
	unsetenv("EARTH_QUEUE");
	cr_assert_eq(o.queue_mode, EARTH_QUEUE_SW);
	char a0[] = "prog", a1[] = "--earth-queue=hwq";
	char *argv[] = {a0, a1, NULL};
	int argc = 2;
	cr_assert_eq(earth_options_parse(&o, &argc, argv), 0);
	cr_assert_eq(o.queue_mode, EARTH_QUEUE_HWQ);
}

static int bad_mode_child(void *arg)
{
	(void)arg;
	struct earth_options o;
	earth_options_default(&o);
	char a0[] = "prog", a1[] = "--earth-mode=triple";
	char *argv[] = {a0, a1, NULL};
	int argc = 2;
	return earth_options_parse(&o, &argc, argv) == 0 ? 0 : 3;
}

Test(modes, bad_mode_rejected)
{
	t_expect_exit(bad_mode_child, NULL, 3, "unknown node mode 'triple'",
		      "single-interrupt", NULL);
	setenv("EARTH_MODE", "none", 1);
	struct earth_options o;
	earth_options_default(&o);
	char a0[] = "prog";
	char *argv[] = {a0, NULL};
	int argc = 1;
	int r = earth_options_parse(&o, &argc, argv);
	unsetenv("EARTH_MODE");
	cr_assert_neq(r, 0, "EARTH_MODE=none is an error");
}

/* ---- one node ---- */

struct fib_main_frame {
	int n, result;
	earth_slot done;
};
static int g_fib_result;
static void fib_main_done(void *f)
{
	struct fib_main_frame *m = f;
	g_fib_result = m->result;
	EARTH_END_FUNCTION(m);
}
static void fib_main_entry(void *f)
{
	struct fib_main_frame *m = f;
	m->n = 20;
	earth_slot_init(&m->done, 1, 0, fib_main_done, m);
	fib_tf_start(m->n, &m->result, &m->done);
}
EARTH_THREADED_FUNCTION(fib_main, fib_main_entry, struct fib_main_frame, 0);

Test(modes, one_node_same_result_every_mode)
{
	for (int i = 0; i < 3; i++) {
		struct earth_options o;
		earth_options_default(&o);
		o.node_mode = (enum earth_node_mode)i;
		g_fib_result = -1;
		cr_assert_eq(t_run(&o, &fib_main), 0, "%s", mode_names[i]);
		cr_assert_eq(g_fib_result, 6765, "%s: fib(20) = %d",
			     mode_names[i], g_fib_result);
		struct earth_stats st;
		earth_stats_get(&st);
		cr_assert_eq(st.fibers_run, st.fibers_ready + st.tokens_run + 1,
			     "%s: every fiber made ready and every token ran",
			     mode_names[i]);
		/* One node: every token ran from the EU's own deque. */
		cr_assert_gt(st.tokens_run, 0, "%s", mode_names[i]);
		cr_assert_eq(st.tokens_run, st.ops[EARTH_OP_TOKEN], "%s",
			     mode_names[i]);
	}
}

/* ---- jobs of several nodes ---- */

/* earthrun -n nodes over transport, EARTH_MODE=mode, prog args. */
static void run_job(struct t_cmd *j, const char *mode, const char *transport,
		    int nodes, const char *env, const char *prog,
		    const char *args)
{
	uint64_t t0 = t_now_ns();
	t_sh(j, 60, "env EARTH_MODE=%s %s %s --transport %s -n %d %s/%s %s",
	     mode, env, T_EARTHRUN, transport, nodes, T_PROG_DIR, prog, args);
	cr_log_info("%s %s %d nodes %s %s: %.2f s", mode, transport, nodes,
		    prog, args, (t_now_ns() - t0) / 1e9);
}

static void expect_job(const char *mode, const char *transport, int nodes,
		       const char *prog, const char *args, const char *want)
{
	struct t_cmd j;
	run_job(&j, mode, transport, nodes, "", prog, args);
	cr_assert_eq(j.status, 0, "%s %s %d nodes %s: status %d\n%s", mode,
		     transport, nodes, prog, j.status, j.err);
	cr_assert(strstr(j.out, want),
		  "%s %s %d nodes %s: want '%s', got\n%s%s", mode, transport,
		  nodes, prog, want, j.out, j.err);
}

Test(modes, multinode_shm_every_mode)
{
	for (int i = 0; i < 3; i++) {
		expect_job(mode_names[i], "shm", 2, "multinode", "100000",
			   "multinode: 2 nodes, 100000-byte blocks: all "
			   "correct");
		expect_job(mode_names[i], "shm", 3, "multinode", "70000",
			   "multinode: 3 nodes, 70000-byte blocks: all "
			   "correct");
	}
}

Test(modes, multinode_tcp_every_mode)
{
	for (int i = 0; i < 3; i++)
		expect_job(mode_names[i], "tcp", 2, "multinode", "100000",
			   "multinode: 2 nodes, 100000-byte blocks: all "
			   "correct");
}

/* Over ucx, both kinds of lanes; a single-interrupt node polls at the end
 * of each fiber instead (the transport raises no signal) and says so. */
Test(modes, multinode_ucx_every_mode)
{
	const char *lanes[] = {"UCX_TLS=tcp UCX_NET_DEVICES=lo",
			       "UCX_TLS=posix,cma"};
	for (size_t l = 0; l < T_NCASES(lanes); l++)
		for (int i = 0; i < 3; i++) {
			struct t_cmd j;
			run_job(&j, mode_names[i], "ucx", 2, lanes[l],
				"multinode", "100000");
			cr_assert_eq(j.status, 0, "%s %s: status %d\n%s",
				     mode_names[i], lanes[l], j.status, j.err);
			cr_assert(strstr(j.out, "multinode: 2 nodes, "
						"100000-byte blocks: all "
						"correct"),
				  "%s %s:\n%s%s", mode_names[i], lanes[l],
				  j.out, j.err);
			if (!strcmp(mode_names[i], "single-interrupt"))
				cr_assert(strstr(j.err, "the ucx transport "
							"cannot raise "
							"interrupts"),
					  "%s", j.err);
		}
}

/* The CPUs each node's units ran on, from the placement line of the
 * --stats tables of a 2-node job ("[k]   mode M: EU ... on CPU c"; earthrun
 * --prefix keeps the two nodes' tables apart); -1 where it is missing. */
static void job_cpus(const char *mode, int cpu[2], int su_cpu[2])
{
	struct t_cmd j;
	t_sh(&j, 60,
	     "env EARTH_MODE=%s EARTH_STATS=1 %s --prefix --transport shm -n 2 "
	     "%s/multinode 1000",
	     mode, T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(j.status, 0, "%s: status %d\n%s", mode, j.status, j.err);
	cpu[0] = cpu[1] = su_cpu[0] = su_cpu[1] = -1;
	for (unsigned id = 0; id < 2; id++) {
		const char *l = t_node_field(j.err, id, "mode ");
		if (!l)
			continue;
		const char *on = strstr(l, "on CPU ");
		const char *nl = strchr(l, '\n');
		cr_assert(on && (!nl || on < nl), "%s: bad placement line:\n%s",
			  mode, j.err);
		if (sscanf(l, "dual: EU on CPU %d, SU on CPU %d", &cpu[id],
			   &su_cpu[id]) != 2) {
			cr_assert_eq(sscanf(on, "on CPU %d", &cpu[id]), 1);
			su_cpu[id] = cpu[id];
		}
	}
	cr_assert(cpu[0] >= 0 && cpu[1] >= 0,
		  "%s: a placement line is missing:\n%s", mode, j.err);
}

/* Single-core nodes take a CPU each, dual nodes two: no two threads of a
 * job share a CPU while enough are allowed (benchmark drivers that had
 * pinned themselves once ran every node of a job on one CPU). */
Test(modes, nodes_spread_over_allowed_cpus)
{
	cpu_set_t set;
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	int n = CPU_COUNT(&set), cpu[2], su[2];
	for (int i = 1; i < 3; i++) {
		job_cpus(mode_names[i], cpu, su);
		cr_assert(cpu[0] >= 0 && cpu[1] >= 0 &&
			      CPU_ISSET(cpu[0], &set) &&
			      CPU_ISSET(cpu[1], &set),
			  "%s: CPUs %d and %d", mode_names[i], cpu[0], cpu[1]);
		if (n >= 2)
			cr_assert_neq(
			    cpu[0], cpu[1],
			    "%s: both nodes on CPU %d with %d allowed",
			    mode_names[i], cpu[0], n);
	}
	job_cpus("dual", cpu, su);
	if (n >= 4) {
		cpu_set_t used;
		CPU_ZERO(&used);
		int c[4] = {cpu[0], su[0], cpu[1], su[1]};
		for (int k = 0; k < 4; k++) {
			cr_assert(c[k] >= 0 && !CPU_ISSET(c[k], &used),
				  "dual: CPU %d used twice (%d,%d / %d,%d)",
				  c[k], cpu[0], su[0], cpu[1], su[1]);
			CPU_SET(c[k], &used);
		}
	} else if (n >= 2) {
		cr_assert_neq(cpu[0], su[0], "dual node 0: EU and SU share");
		cr_assert_neq(cpu[1], su[1], "dual node 1: EU and SU share");
	}
}

Test(modes, tokens_and_collectives_every_mode)
{
	for (int i = 0; i < 3; i++) {
		expect_job(mode_names[i], "shm", 2, "fibnodes", "18",
			   "fibnodes: fib(18)=2584 correct, collectives "
			   "correct");
		expect_job(mode_names[i], "tcp", 2, "nqueens", "8",
			   "nqueens: n=8 solutions=92");
	}
}

/* Tokens run from each EU's deque and are stolen from it by the SUs of
 * idle nodes: both token programs exact on 1-4 nodes in every mode. */
Test(modes, token_programs_one_to_four_nodes_every_mode)
{
	for (int i = 0; i < 3; i++)
		for (int nodes = 1; nodes <= 4; nodes++) {
			expect_job(mode_names[i], "shm", nodes, "fibnodes",
				   "17",
				   "fibnodes: fib(17)=1597 correct, "
				   "collectives correct");
			expect_job(mode_names[i], "shm", nodes, "nqueens",
				   "9 3", "nqueens: n=9 solutions=352 correct");
		}
}

/* ---- the signal storm ---- */

/* "interrupts N  (in a fiber K, ...)" of the node that printed it first
 * with K > 0; returns the largest K. */
static long max_in_fiber(const char *err)
{
	long best = 0;
	for (const char *p = err; (p = strstr(p, "(in a fiber ")); p++) {
		long k = strtol(p + 12, NULL, 10);
		if (k > best)
			best = k;
	}
	return best;
}

static void storm(const char *mode, const char *transport, int nodes,
		  const char *rounds, bool want_irq)
{
	struct t_cmd j;
	run_job(&j, mode, transport, nodes, "EARTH_STATS=1", "irqstorm",
		rounds);
	char want[128];
	snprintf(want, sizeof(want), "irqstorm: %d nodes, %s rounds each",
		 nodes, rounds);
	cr_assert_eq(j.status, 0, "%s %s: status %d\n%s%s", mode, transport,
		     j.status, j.out, j.err);
	cr_assert(strstr(j.out, want) && strstr(j.out, "all correct"),
		  "%s %s: got\n%s%s", mode, transport, j.out, j.err);
	if (want_irq)
		cr_assert_gt(max_in_fiber(j.err), 0,
			     "%s %s: no interrupt ran inside a fiber:\n%s",
			     mode, transport, j.err);
}

Test(modes, signal_storm_shm)
{
	storm("single-interrupt", "shm", 2, "2000", true);
	storm("single-interrupt", "shm", 3, "1000", true);
}

Test(modes, signal_storm_tcp)
{
	storm("single-interrupt", "tcp", 2, "2000", true);
}

Test(modes, storm_program_other_modes)
{
	storm("dual", "shm", 2, "1000", false);
	storm("single-poll", "shm", 2, "1000", false);
	storm("single-poll", "tcp", 2, "500", false);
}
