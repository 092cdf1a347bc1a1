/* SPDX-License-Identifier: MIT */
/*
 * t_ucx.c - the ucx transport beyond the runs every multi-node test makes
 * over it: jobs started by Open MPI's mpirun through PMIx (2 and 3 nodes,
 * nothing set by hand, every node laid out alike), a node killed mid-run
 * (the others stop within 5 s naming it, over both kinds of lanes), nodes
 * whose secrets differ refused, a node that sends before its proof, a
 * malformed proof or a second one refused (tests/progs/ucxrogue.c), a node
 * that never proves itself named with what to check, a node whose
 * UCX_NET_DEVICES is bad ending the job within seconds, an idle ucx job
 * asleep, --stats naming the lanes.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

TestSuite(ucx, .timeout = 120);

/* mpirun as root needs Open MPI's consent; LeakSanitizer is told what
 * libpmix keeps. */
#define MPIRUN                                                                 \
	"env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "       \
	"LSAN_OPTIONS=suppressions=tests/pmix.supp:print_suppressions=0 "      \
	"mpirun -x LSAN_OPTIONS --oversubscribe "

static bool have_mpirun(void)
{
	return system("command -v mpirun >/dev/null 2>&1") == 0;
}

Test(ucx, mpirun_two_and_three_nodes)
{
	if (!have_mpirun())
		cr_skip_test("mpirun not installed (make deps: openmpi-bin)");
	int nodes[] = {2, 3};
	for (size_t i = 0; i < T_NCASES(nodes); i++) {
		struct t_cmd c;
		t_sh(&c, 60, MPIRUN "-n %d %s/multinode 100000", nodes[i],
		     T_PROG_DIR);
		char want[96];
		snprintf(want, sizeof(want),
			 "multinode: %d nodes, 100000-byte blocks: all correct",
			 nodes[i]);
		cr_assert_eq(c.status, 0, "%d nodes: status %d\n%s%s", nodes[i],
			     c.status, c.out, c.err);
		cr_assert(strstr(c.out, want), "%s\n%s", c.out, c.err);
	}
}

/* Every node prints where its static variable lies: the same address on
 * all (the runtime turned randomisation off itself), different ones with
 * EARTH_ASLR=1 (so the test can tell). */
static int distinct_addresses(const char *out, int nodes)
{
	char seen[8][32];
	int n = 0, lines = 0;
	for (const char *p = strstr(out, " static "); p;
	     p = strstr(p + 1, " static ")) {
		char a[32] = "";
		sscanf(p + 8, "%31s", a);
		lines++;
		bool dup = false;
		for (int k = 0; k < n; k++)
			dup |= !strcmp(seen[k], a);
		if (!dup && n < 8)
			snprintf(seen[n++], sizeof(seen[0]), "%s", a);
	}
	cr_assert_eq(lines, nodes, "%s", out);
	return n;
}

Test(ucx, mpirun_nodes_share_one_layout)
{
	if (!have_mpirun())
		cr_skip_test("mpirun not installed (make deps: openmpi-bin)");
	struct t_cmd c;
	t_sh(&c, 60, MPIRUN "-n 3 %s/layout", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s%s", c.status, c.out, c.err);
	cr_assert_eq(distinct_addresses(c.out, 3), 1, "%s", c.out);
	t_sh(&c, 60, "env EARTH_ASLR=1 " MPIRUN "-x EARTH_ASLR -n 3 %s/layout",
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s%s", c.status, c.out, c.err);
	cr_assert_gt(distinct_addresses(c.out, 3), 1, "%s", c.out);
}

Test(ucx, differing_secrets_are_refused)
{
	if (!have_mpirun())
		cr_skip_test("mpirun not installed (make deps: openmpi-bin)");
	struct t_cmd c;
	const char *a = "00112233445566778899aabbccddeeff";
	const char *b = "ffeeddccbbaa99887766554433221100";
	t_sh(&c, 60,
	     MPIRUN "-n 1 -x EARTH_JOB_SECRET=%s %s/multinode : -n 1 -x "
		    "EARTH_JOB_SECRET=%s %s/multinode",
	     a, T_PROG_DIR, b, T_PROG_DIR);
	cr_assert_neq(c.status, 0, "%s", c.out);
	cr_assert(!strstr(c.out, "all correct"), "%s", c.out);
	cr_assert(strstr(c.err, "failed the proof of the job secret"), "%s",
		  c.err);
}

/* One node of an earthrun job whose UCX_NET_DEVICES names no device here:
 * it says so, and the job ends within seconds (not EARTH_CONNECT_TIMEOUT's
 * 60), earthrun naming that node and its message. */
Test(ucx, bad_net_devices_end_the_job_naming_the_node)
{
	struct t_cmd c;
	double s = t_sh_timed(
	    &c, 60,
	    "env UCX_TLS=tcp UCX_NET_DEVICES=lo %s --transport ucx -n 3 -- "
	    "sh -c '[ $EARTH_NODE = 2 ] && export UCX_NET_DEVICES=nosuch0; "
	    "exec %s/multinode 10'",
	    T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d after %.1f s\n%s",
		     c.status, s, c.err);
	cr_assert(strstr(c.err, "earthrun: the job failed: node 2 exited with "
				"status 70: ucx transport: ucp_init: "),
		  "%s", c.err);
	cr_assert(strstr(c.err, "UCX_NET_DEVICES"), "%s", c.err);
	cr_assert_lt(s, 10.0, "the job took %.1f s to end", s);
}

/* A node 1 that breaks the proof rules with raw active messages
 * (tests/progs/ucxrogue.c `how`): node 0 drops each one naming node 1,
 * runs nothing, delivers nothing, and ends with status 70; its errors hold
 * every line of want (NULL-terminated). */
static void rogue(struct t_cmd *c, const char *how, const char *const *want)
{
	t_sh(c, 60,
	     "env UCX_TLS=tcp UCX_NET_DEVICES=lo EARTH_CONNECT_TIMEOUT=2 %s "
	     "--transport ucx -n 2 %s/ucxrogue %s",
	     T_EARTHRUN, T_PROG_DIR, how);
	cr_assert_eq(c->status, 70, "%s: status %d\n%s%s", how, c->status,
		     c->out, c->err);
	cr_assert(!strstr(c->out, "node 0 ran main"), "%s: %s", how, c->out);
	cr_assert(!strstr(c->err, "ERROR: AddressSanitizer") &&
		      !strstr(c->err, "WARNING: ThreadSanitizer"),
		  "%s: %s", how, c->err);
	for (; *want; want++)
		cr_assert(strstr(c->err, *want), "%s: no '%s' in\n%s", how,
			  *want, c->err);
}

Test(ucx, messages_before_the_proof_are_dropped)
{
	static const char *const want[] = {
	    "earth: node 0: ucx: dropped a message from node 1 before its "
	    "proof",
	    "earth: node 0: ucx: dropped a BYE from node 1 before its proof",
	    "node 1 did not prove itself in time (EARTH_CONNECT_TIMEOUT; see "
	    "its errors): check that it has this job's EARTH_JOB_SECRET and "
	    "that UCX reaches it over the lanes UCX_TLS and UCX_NET_DEVICES "
	    "choose",
	    NULL};
	struct t_cmd c;
	rogue(&c, "early", want);
	/* A node that looked at the message would stop at its type. */
	cr_assert(!strstr(c.err, "rejected"), "%s", c.err);
}

Test(ucx, malformed_proofs_are_dropped)
{
	static const char *const want[] = {
	    "dropped a proof from node 1: malformed (8 header bytes and 0 "
	    "data bytes, not 48 and 0)",
	    "dropped a proof from node 1: malformed (48 header bytes and 8 "
	    "data bytes",
	    "dropped a BYE from node 1: malformed",
	    "dropped a proof claiming to come from node 5: not from this "
	    "job's endpoint",
	    "node 1 did not prove itself in time",
	    NULL};
	struct t_cmd c;
	rogue(&c, "malformed", want);
}

/* A second proof is dropped unread (its mac is zeroed: read, it would
 * fail); what comes after the first one is still checked. */
Test(ucx, a_second_proof_is_dropped)
{
	static const char *const want[] = {
	    "dropped a second proof from node 1",
	    "message from node 1 rejected: field type", NULL};
	struct t_cmd c;
	rogue(&c, "twice", want);
	cr_assert(!strstr(c.err, "failed the proof"), "%s", c.err);
}

/* earthrun gives the nodes of a ucx job 3 s to notice a dead peer before
 * it stops them: a node that names the dead one noticed it itself. */
Test(ucx, killed_node_named_within_5s)
{
	const char *tls[] = {"tcp", "posix,cma"};
	for (size_t i = 0; i < T_NCASES(tls); i++) {
		char out[64], cmd[512], path[80], err[16384];
		snprintf(out, sizeof(out), "/tmp/t_ucx_kill.%d", (int)getpid());
		snprintf(cmd, sizeof(cmd),
			 "env UCX_TLS=%s UCX_NET_DEVICES=all %s --transport "
			 "ucx -n 3 %s/hang idle > %s.o 2> %s.e &",
			 tls[i], T_EARTHRUN, T_PROG_DIR, out, out);
		cr_assert_eq(system(cmd), 0);
		snprintf(path, sizeof(path), "%s.o", out);
		long pid[3];
		bool up = t_node_pids(path, "", pid, 3, 10000000000ull);
		bool ends;
		double s = t_kill_node(up, pid, 3, 1, 5000000000ull, &ends, out,
				       err, sizeof(err));
		cr_assert(up, "%s: the job did not start:\n%s", tls[i], err);
		cr_assert(ends,
			  "%s: nodes 0 and 2 still ran 5 s after node 1 was "
			  "killed:\n%s",
			  tls[i], err);
		cr_assert(strstr(err, "earth: node 0: error: ucx: lost node 1"),
			  "%s: %s", tls[i], err);
		cr_assert(strstr(err, "earth: node 2: error: ucx: lost node 1"),
			  "%s: %s", tls[i], err);
		cr_assert(strstr(err, "earthrun: the job failed: node 1 was "
				      "killed by signal 9"),
			  "%s: %s", tls[i], err);
		cr_log_info("%s: the others ended %.2f s after the kill",
			    tls[i], s);
	}
}

static long cpu_ticks(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	t_slurp(path, buf, sizeof(buf));
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu",
			 &ut, &st) != 2)
		return 0;
	return (long)(ut + st);
}

/* An idle ucx job sleeps on the workers' event fds: over both lanes. */
Test(ucx, idle_job_sleeps)
{
	const char *tls[] = {"tcp", "posix,cma"};
	for (size_t i = 0; i < T_NCASES(tls); i++) {
		char out[64], cmd[512], path[80], buf[4096];
		snprintf(out, sizeof(out), "/tmp/t_ucx_idle.%d", (int)getpid());
		snprintf(cmd, sizeof(cmd),
			 "env UCX_TLS=%s UCX_NET_DEVICES=all %s --transport "
			 "ucx -n 3 %s/hang idle > %s.o 2>&1 &",
			 tls[i], T_EARTHRUN, T_PROG_DIR, out);
		cr_assert_eq(system(cmd), 0);
		snprintf(path, sizeof(path), "%s.o", out);
		long pid[3];
		bool up = t_node_pids(path, "", pid, 3, 10000000000ull);
		sleep(1);
		long before = 0, after = 0;
		for (int k = 0; up && k < 3; k++)
			before += cpu_ticks(pid[k]);
		sleep(2);
		for (int k = 0; up && k < 3; k++)
			after += cpu_ticks(pid[k]);
		bool alive = up;
		for (int k = 0; up && k < 3; k++)
			alive &= !t_pid_gone_within(pid[k], 0);
		for (int k = 0; up && k < 3; k++)
			kill((pid_t)pid[k], SIGKILL);
		t_slurp(path, buf, sizeof(buf));
		sleep(1);
		unlink(path);
		cr_assert(up, "%s: the job did not start: %s", tls[i], buf);
		cr_assert(alive, "%s: the idle job ended by itself: %s", tls[i],
			  buf);
		/* 3 nodes x 2 threads busy for 2 s would be ~1200 ticks. */
		cr_assert_lt(after - before, 40,
			     "%s: an idle 3-node job used %ld ticks of CPU in "
			     "2 s",
			     tls[i], after - before);
	}
}

Test(ucx, stats_name_the_lanes)
{
	struct t_cmd c;
	t_sh(&c, 30,
	     "env UCX_TLS=posix,cma %s --stats --transport ucx -n 2 "
	     "%s/multinode 1000",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.err, "transport ucx: "), "%s", c.err);
	cr_assert(strstr(c.err, "posix/memory"), "%s", c.err);
	cr_assert(strstr(c.err, "transport ucx: shared-memory lanes: "), "%s",
		  c.err);
	/* Peers read its global memory through posix shared memory, with
	 * loads: no system call, no work by its SU. */
	cr_assert(strstr(c.err, "global memory allocated by UCX"), "%s", c.err);
	/* Where UCX cannot place it at its address (it may only take it
	 * from the heap), gmem's own mapping is registered instead. */
	t_sh(&c, 30,
	     "env UCX_TLS=posix,cma UCX_ALLOC_PRIO=heap %s --stats "
	     "--transport ucx -n 2 %s/multinode 1000",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.err, "global memory registered"), "%s", c.err);
	t_sh(&c, 30,
	     "env UCX_TLS=tcp UCX_NET_DEVICES=lo %s --stats --transport ucx "
	     "-n 2 %s/multinode 1000",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.err, "tcp/lo"), "%s", c.err);
	/* Said in plain words, with how to get shared memory instead. */
	cr_assert(strstr(c.err, "transport ucx: TCP loopback lanes, not shared "
				"memory (every node on this host: "
				"UCX_TLS=posix,cma gives shared memory"),
		  "%s", c.err);
	/* With UCX_TLS unset, whichever lanes UCX picks are named so. */
	t_sh(&c, 30,
	     "env -u UCX_TLS %s --stats --transport ucx -n 2 %s/multinode "
	     "1000",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.err, "transport ucx: TCP loopback lanes, not shared "
				"memory") ||
		      strstr(c.err, "transport ucx: shared-memory lanes: "),
		  "%s", c.err);
}
