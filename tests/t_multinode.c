/* SPDX-License-Identifier: MIT */
/*
 * t_multinode.c - jobs of several nodes on this host, started with
 * earthrun over the shared-memory transport: every remote operation with
 * checked results (tests/progs/multinode.c) for 1-4 nodes, both queue
 * modes and block sizes around the message chunk; a node killed with
 * SIGKILL stops the others with a message within 5 s; invalid messages
 * are rejected naming the peer and the field; launcher and environment
 * errors. The same over the tcp transport (earthrun --transport tcp, and
 * nodes started directly as srun/mpirun start them): 2-4 nodes, chunked
 * blocks, a killed node, writes outside registered memory, connections
 * with bad hellos rejected and reported; block moves up to 64 MiB pulled,
 * pushed and between two other nodes, checked byte for byte, sent from
 * where they lie and received mostly straight into their destination, back
 * to back with small messages, refused outside registered memory, their
 * sender killed midway (tests/progs/blkmove.c). Oversubscribed on a 2-core
 * machine by design.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "json.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif
#ifndef T_EARTHRUN
#error "T_EARTHRUN must be defined"
#endif

TestSuite(multinode, .timeout = 120);




/* Runs the multinode program on `nodes` nodes over `transport` and checks
 * that every remote path gave the right values. */
static void check_job_on(const char *transport, int nodes, const char *env,
			 long blk)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 30, "env %s %s --transport %s -n %d %s/multinode %ld", env,
	    T_EARTHRUN, transport, nodes, T_PROG_DIR, blk);
	cr_assert_eq(c.status, 0, "%s, %d nodes, %s, block %ld: status %d\n%s",
		     transport, nodes, env, blk, c.status, c.err);
	char want[128];
	snprintf(want, sizeof(want), "multinode: %d nodes, %ld-byte blocks: "
				     "all correct",
		 nodes, blk);
	cr_assert(strstr(c.out, want), "want '%s', got:\n%s\n%s", want, c.out,
		  c.err);
	cr_log_info("%s %d nodes, block %ld: %.2f s", transport, nodes, blk,
		    (t_now_ns() - t0) / 1e9);
}

static void check_job(int nodes, const char *env, long blk)
{
	check_job_on("shm", nodes, env, blk);
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
	struct t_cmd c;
	t_sh(&c, 30, "env EARTH_QUEUE_SLOTS=8 %s -n 3 --ring-kb 64 %s/multinode "
		"200000",
	    T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "all correct"), "%s\n%s", c.out, c.err);
}

Test(multinode, prefix_lines)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 --prefix %s/multinode 10", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "[0] multinode: 2 nodes"), "%s", c.out);
}

Test(multinode, killed_node_stops_the_job)
{
	/* Start a job that never ends, kill node 1, time the end. */
	char out[64], cmdline[512];
	snprintf(out, sizeof(out), "/tmp/t_mn_hang.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline), "%s -n 3 %s/hang kill%d > %s.o 2> %s.e &",
		 T_EARTHRUN, T_PROG_DIR, (int)getpid(), out, out);
	cr_assert_eq(system(cmdline), 0);
	char path[80], buf[4096];
	long pid1 = -1;
	uint64_t t0 = t_now_ns();
	snprintf(path, sizeof(path), "%s.o", out);
	while (pid1 < 0 && t_now_ns() - t0 < 10000000000ull) {
		t_slurp(path, buf, sizeof(buf));
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
	/* "[h]ang": the pattern must not match this shell's own line; the
	 * test's pid tells this job from any other. */
	snprintf(cmdline, sizeof(cmdline), "pgrep -f '[h]ang kill%d' > /dev/null",
		 (int)getpid());
	while (system(cmdline) == 0 && t_now_ns() - t_kill < 6000000000ull)
		usleep(20000);
	uint64_t took = t_now_ns() - t_kill;
	cr_assert_lt(took, 5000000000ull, "job still running %.1f s after "
					  "the kill",
		     took / 1e9);
	snprintf(path, sizeof(path), "%s.e", out);
	t_slurp(path, buf, sizeof(buf));
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
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 %s/badmsg", T_EARTHRUN, T_PROG_DIR);
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
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 %s/badmsg slot", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "message SYNC from node 0 rejected: field a"),
		  "%s", c.err);
}

/* A block of data, or a move landing on node 1, whose slot field names
 * an address that is not a registered slot there: rejected naming field
 * a, never dereferenced. */
static void bad_slot_of_data(const char *transport, const char *how,
			     const char *type)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s --transport %s -n 2 %s/badmsg %s", T_EARTHRUN,
	    transport, T_PROG_DIR, how);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "%s %s: status %d\n%s",
		     transport, how, c.status, c.err);
	char want[128];
	snprintf(want, sizeof(want), "message %s from node 0 rejected: field a",
		 type);
	cr_assert(strstr(c.err, want), "%s %s: want '%s' in:\n%s", transport,
		  how, want, c.err);
	cr_assert(strstr(c.err, "not an aligned slot in this node's registered "
				"memory"),
		  "%s", c.err);
}

Test(multinode, data_with_a_non_slot_is_rejected)
{
	bad_slot_of_data("shm", "dataslot", "BLK_DATA");
	bad_slot_of_data("tcp", "dataslot", "BLK_DATA");
	bad_slot_of_data("shm", "moveslot", "BLK_REQ");
	bad_slot_of_data("tcp", "moveslot", "BLK_REQ");
}

/* progs/order.c: a GET's or small DATA's value that goes to the EU with
 * its fiber is in place, at its width, for that fiber and for the fiber
 * of any later signal from the same source. */
Test(multinode, values_travel_with_their_fibers)
{
	const char *runs[][2] = {{"shm", ""},
				 {"tcp", ""},
				 {"shm", "EARTH_MODE=single-interrupt"},
				 {"tcp", "EARTH_MODE=single-poll"}};
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

Test(multinode, nodes_without_transport)
{
	struct t_cmd c;
	t_sh(&c, 30, "env EARTH_NODE=0 EARTH_NODES=2 %s/multinode 10", T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_SHM_FD is not set: start multi-node "
				"jobs on one host with earthrun -n N"),
		  "%s", c.err);
	t_sh(&c, 30, "env EARTH_NODE=3 EARTH_NODES=2 %s/multinode 10", T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "malformed"), "%s", c.err);
}

Test(multinode, launcher_usage_errors)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 0 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2, "status %d", c.status);
	cr_assert(strstr(c.err, "-n 0: give 1..256 nodes"), "%s", c.err);
	t_sh(&c, 30, "%s -n 2 --ring-kb 100 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "power of two"), "%s", c.err);
	t_sh(&c, 30, "%s -n 2 /nonexistent/prog", T_EARTHRUN);
	cr_assert_neq(c.status, 0);
	cr_assert(strstr(c.err, "cannot run /nonexistent/prog"), "%s", c.err);
}

/* ---- TOKEN load balancing and collectives ---- */

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
	struct t_cmd c;
	t_sh(&c, 30, "%s/fibnodes 10", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "fib(10)=55 correct, collectives correct"),
		  "%s", c.out);
}

Test(multinode, nqueens_exact_under_balancing)
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
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
				"%lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

Test(multinode, idle_job_sleeps)
{
	char out[64], cmdline[512], path[80], buf[4096];
	/* The test's pid as an argument tags this job for pgrep. */
	snprintf(out, sizeof(out), "/tmp/t_mn_idle.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline), "%s -n 3 %s/hang idle%d > %s.o 2>&1 &",
		 T_EARTHRUN, T_PROG_DIR, (int)getpid(), out);
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
	cr_assert_lt(after - before, 40, "an idle 3-node job used %ld ticks "
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

Test(multinode, short_idle_sends_no_steal)
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

/* ---- the tcp transport (earthrun --transport tcp, or nodes started
 * directly as srun/mpirun would, meeting at node 0's rendezvous) ---- */

#define T_SECRET "00112233445566778899aabbccddeeff0123456789abcdef"

static void check_job_tcp(int nodes, const char *env, long blk)
{
	check_job_on("tcp", nodes, env, blk);
}

Test(multinode, tcp_two_nodes_hwq)
{
	check_job_tcp(2, "EARTH_QUEUE=hwq", 100000);
}

Test(multinode, tcp_three_nodes_sw)
{
	check_job_tcp(3, "EARTH_QUEUE=sw", 100000);
}

Test(multinode, tcp_four_nodes_block_sizes)
{
	/* 0 bytes, one byte, exactly one chunk, one byte more, many chunks */
	long sizes[] = {0, 1, 65536, 65537, 262144};
	for (size_t i = 0; i < T_NCASES(sizes); i++)
		check_job_tcp(4, "EARTH_QUEUE=hwq", sizes[i]);
}

Test(multinode, tcp_small_queues)
{
	check_job_tcp(3, "EARTH_QUEUE_SLOTS=8", 200000);
}

Test(multinode, tcp_fib_and_collectives)
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
	cr_assert(strstr(c.out, "nqueens: n=10 solutions=724 correct"), "%s\n%s",
		  c.out, c.err);
}

Test(multinode, tcp_environment_errors)
{
	struct t_cmd c;
	t_sh(&c, 30, "env EARTH_NODE=1 EARTH_NODES=2 EARTH_TRANSPORT=tcp "
		"EARTH_RENDEZVOUS=127.0.0.1:1 %s/multinode 10",
	    T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_JOB_SECRET is not set"), "%s", c.err);
	t_sh(&c, 30, "env EARTH_NODE=1 EARTH_NODES=2 EARTH_JOB_SECRET=abcd "
		"EARTH_RENDEZVOUS=127.0.0.1:1 %s/multinode 10",
	    T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "32 to 128 hex digits"), "%s", c.err);
	t_sh(&c, 30, "env EARTH_NODE=1 EARTH_NODES=2 EARTH_TRANSPORT=tcp "
		"EARTH_JOB_SECRET=%s %s/multinode 10",
	    T_SECRET, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "EARTH_RENDEZVOUS is not set"), "%s", c.err);
	t_sh(&c, 30, "env EARTH_NODE=0 EARTH_NODES=2 EARTH_TRANSPORT=udp "
		"%s/multinode 10",
	    T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "EARTH_TRANSPORT must be shm or tcp"), "%s",
		  c.err);
	/* Nobody at the rendezvous: a bounded wait, then a clear error. */
	t_sh(&c, 30, "env EARTH_NODE=1 EARTH_NODES=2 EARTH_JOB_SECRET=%s "
		"EARTH_CONNECT_TIMEOUT=0.5 EARTH_RENDEZVOUS=127.0.0.1:1 "
		"%s/multinode 10",
	    T_SECRET, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "cannot connect to 127.0.0.1:1"), "%s", c.err);
	t_sh(&c, 30, "%s --transport udp -n 2 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "give shm or tcp"), "%s", c.err);
}

Test(multinode, tcp_write_outside_registered_memory_is_rejected)
{
	/* The tcp receiver writes block payloads straight to their
	 * destination: it must check it before the first byte lands. */
	struct t_cmd c;
	t_sh(&c, 30, "%s --transport tcp -n 2 %s/badmsg", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message from node 0 "
				"rejected: field b (BLK_DATA destination "
				"outside this node's registered memory)"),
		  "%s", c.err);
	t_sh(&c, 30, "%s --transport tcp -n 2 %s/badmsg slot", T_EARTHRUN,
	    T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "message SYNC from node 0 rejected: field a"),
		  "%s", c.err);
}

static int tcp_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
		  !getsockname(fd, (struct sockaddr *)&a, &al));
	close(fd);
	return ntohs(a.sin_port);
}

/* Starts node k of n of prog with the arguments args (NULL-terminated)
 * directly (no earthrun), output to path. */
static pid_t tcp_spawn(const char *prog, const char *const *args, int k, int n,
		       int port, const char *path)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid)
		return pid;
	personality(ADDR_NO_RANDOMIZE);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	dup2(fd, 2);
	char b[64];
	snprintf(b, sizeof(b), "%d", k);
	setenv("EARTH_NODE", b, 1);
	snprintf(b, sizeof(b), "%d", n);
	setenv("EARTH_NODES", b, 1);
	snprintf(b, sizeof(b), "127.0.0.1:%d", port);
	setenv("EARTH_RENDEZVOUS", b, 1);
	setenv("EARTH_JOB_SECRET", T_SECRET, 1);
	setenv("EARTH_CONNECT_TIMEOUT", "20", 1);
	unsetenv("EARTH_SHM_FD");
	unsetenv("EARTH_TRANSPORT");
	char *argv[8] = {(char *)prog};
	for (int i = 0; i < 6 && args[i]; i++)
		argv[i + 1] = (char *)args[i];
	execv(prog, argv);
	_exit(127);
}

static bool file_has(const char *path, const char *s, char *buf, size_t len)
{
	t_slurp(path, buf, len);
	return strstr(buf, s) != NULL;
}

Test(multinode, tcp_killed_node_stops_the_others)
{
	char path[3][64], buf[4096], want[32];
	pid_t pid[3];
	int port = tcp_free_port();
	char prog[256];
	snprintf(prog, sizeof(prog), "%s/hang", T_PROG_DIR);
	for (int k = 0; k < 3; k++) {
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_tcpk.%d.%d",
			 (int)getpid(), k);
		pid[k] = tcp_spawn(prog, (const char *[]){NULL}, k, 3, port,
				   path[k]);
	}
	/* Up: every node ran the fiber node 0 sent it. */
	uint64_t t0 = t_now_ns();
	for (int k = 0; k < 3; k++) {
		snprintf(want, sizeof(want), "node %d pid ", k);
		while (!file_has(path[k], want, buf, sizeof(buf)) &&
		       t_now_ns() - t0 < 20000000000ull)
			usleep(10000);
		cr_assert(strstr(buf, want), "node %d never started: %s", k, buf);
	}
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill(pid[1], SIGKILL), 0);
	cr_assert_eq(t_wait_pid(pid[1], 5000000000ull), 128 + SIGKILL);
	for (int k = 0; k < 3; k += 2) {
		int st = t_wait_pid(pid[k], 6000000000ull - (t_now_ns() - t_kill));
		uint64_t took = t_now_ns() - t_kill;
		t_slurp(path[k], buf, sizeof(buf));
		cr_assert_neq(st, -1, "node %d still running %.1f s after the "
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

/* The hello of the tcp transport (docs/architecture.md, "Between nodes:
 * tcp"), written by hand as an intruder would. */
struct t_hello {
	uint32_t magic;
	uint16_t version, kind;
	uint32_t node, nodes;
	uint32_t secret_len;
	uint8_t secret[64];
	uint16_t port, pad;
	uint64_t gmem_seg; /* global memory per node: EARTH_GMEM_MB */
};

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

static void t_hello_make(struct t_hello *h, uint32_t node, uint32_t nodes,
			 const char *secret_hex)
{
	memset(h, 0, sizeof(*h));
	h->magic = 0x48545245u;
	h->version = 2;
	h->kind = 1; /* JOIN */
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

Test(multinode, tcp_bad_hellos_are_rejected)
{
	char path[2][64], buf[8192], prog[256];
	int port = tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/multinode", T_PROG_DIR);
	for (int k = 0; k < 2; k++)
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_tcpb.%d.%d",
			 (int)getpid(), k);
	pid_t p0 = tcp_spawn(prog, (const char *[]){"1000", NULL}, 0, 2, port,
			     path[0]);
	struct t_hello h;
	/* A wrong secret (right length), a right secret with a node number
	 * out of range, a wrong node count, a stranger's bytes, nothing. */
	t_hello_make(&h, 1, 2, "ffeeddccbbaa99887766554433221100fedcba9876543210");
	cr_assert(intrude(port, &h, sizeof(h)), "wrong secret not dropped");
	t_hello_make(&h, 7, 2, T_SECRET);
	cr_assert(intrude(port, &h, sizeof(h)), "node 7 of 2 not dropped");
	t_hello_make(&h, 1, 3, T_SECRET);
	cr_assert(intrude(port, &h, sizeof(h)), "3 nodes not dropped");
	t_hello_make(&h, 1, 2, T_SECRET);
	h.gmem_seg = 32ull << 20;
	cr_assert(intrude(port, &h, sizeof(h)), "other EARTH_GMEM_MB not dropped");
	memset(&h, 'x', sizeof(h));
	cr_assert(intrude(port, &h, sizeof(h)), "garbage not dropped");
	/* The job still runs once the real node 1 comes. */
	pid_t p1 = tcp_spawn(prog, (const char *[]){"1000", NULL}, 1, 2, port,
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

Test(multinode, tcp_duplicate_node_is_rejected)
{
	char path[64], buf[8192], prog[256];
	int port = tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/hang", T_PROG_DIR);
	snprintf(path, sizeof(path), "/tmp/t_mn_tcpd.%d", (int)getpid());
	pid_t p0 = tcp_spawn(prog, (const char *[]){NULL}, 0, 3, port, path);
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
	struct t_hello h;
	t_hello_make(&h, 2, 3, T_SECRET);
	cr_assert_eq(send(first, &h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
	/* ...the second is dropped. */
	cr_assert(intrude(port, &h, sizeof(h)), "duplicate not dropped");
	close(first);
	kill(p0, SIGKILL);
	t_wait_pid(p0, 5000000000ull);
	t_slurp(path, buf, sizeof(buf));
	cr_assert(strstr(buf, ": that node already connected"), "%s", buf);
	unlink(path);
}

/* ---- large block moves over tcp: BLK_DATA payloads received straight
 * into their destination (tests/progs/blkmove.c) ---- */

/* Block payload bytes each node received directly and copied, sent from
 * where they lie and copied; payload bytes its SU queued while the
 * transport had no room, by reference and copied. */
struct blk_recv {
	double direct[3], copied[3];
	double sent_ref[3], sent_copied[3];
	double queued_ref[3], queued_copied[3];
};

/* Runs `blkmove ARGS` on `nodes` nodes over `transport`, checks that every
 * byte arrived where it should, and reads each node's statistics into *r. */
static void blkmove_job_over(const char *transport, int nodes,
			     const char *args, struct blk_recv *r)
{
	char stats[64], err[256];
	snprintf(stats, sizeof(stats), "/tmp/t_mn_blk.%d.json", (int)getpid());
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 60, "%s --transport %s -n %d --stats=json %s %s/blkmove %s",
	     T_EARTHRUN, transport, nodes, stats, T_PROG_DIR, args);
	struct json *root = json_parse_file(stats, err, sizeof(err));
	unlink(stats);
	cr_assert_eq(c.status, 0, "blkmove %s, %d nodes: status %d\n%s%s",
		     args, nodes, c.status, c.out, c.err);
	cr_assert(strstr(c.out, "all correct"), "blkmove %s: %s\n%s", args,
		  c.out, c.err);
	cr_assert(root, "%s: %s", stats, err);
	const struct json *arr = json_get(root, "nodes");
	cr_assert(arr && arr->n == (size_t)nodes);
	for (size_t i = 0; i < arr->n; i++) {
		int k = (int)json_get(&arr->v[i], "node")->num;
		const struct json *b = json_get(&arr->v[i], "blk_recv");
		const struct json *o = json_get(&arr->v[i], "blk_sent");
		const struct json *q = json_get(&arr->v[i], "queued");
		cr_assert(b && o && q && k >= 0 && k < nodes,
			  "no blk_recv, blk_sent or queued for node %d", k);
		r->direct[k] = json_get(b, "direct")->num;
		r->copied[k] = json_get(b, "copied")->num;
		r->sent_ref[k] = json_get(o, "referenced")->num;
		r->sent_copied[k] = json_get(o, "copied")->num;
		r->queued_ref[k] = json_get(q, "referenced")->num;
		r->queued_copied[k] = json_get(q, "copied")->num;
		cr_log_info("blkmove %s: node %d received %.0f bytes directly, "
			    "%.0f copied; sent %.0f from where they lie, %.0f "
			    "copied",
			    args, k, r->direct[k], r->copied[k], r->sent_ref[k],
			    r->sent_copied[k]);
	}
	json_free(root);
	cr_log_info("blkmove %s: %.2f s", args, (t_now_ns() - t0) / 1e9);
}

static void blkmove_job(int nodes, const char *args, struct blk_recv *r)
{
	blkmove_job_over("tcp", nodes, args, r);
}

/* Over shm a pair's ring holds 1 MiB: the chunks of a larger move that
 * find it full wait in the SU's queue as references to where they lie
 * (queue copies of 64 KiB chunks made such moves 10-30 times slower). */
Test(multinode, shm_block_chunks_wait_as_references)
{
	const char *args[] = {"pull 67108864 1", "push 8388608 2"};
	int sender[] = {1, 0};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job_over("shm", 2, args[i], &r);
		int k = sender[i];
		cr_expect_gt(r.queued_ref[k], 1 << 20,
			     "blkmove %s: node %d queued %.0f bytes by "
			     "reference: the ring never filled?",
			     args[i], k, r.queued_ref[k]);
		cr_expect_leq(r.queued_copied[k], 4096,
			      "blkmove %s: node %d copied %.0f bytes of "
			      "payloads into its queue",
			      args[i], k, r.queued_copied[k]);
	}
}

/* Node k received `bytes` of block payloads, and at most `more` besides
 * (replies of the set-up), each counted once. */
static void expect_received(const struct blk_recv *r, int k, double bytes,
			    double more, const char *args)
{
	double got = r->direct[k] + r->copied[k];
	cr_assert(got >= bytes && got <= bytes + more,
		  "blkmove %s: node %d counted %.0f bytes, want %.0f", args, k,
		  got, bytes);
}

/* Node k sent the `reps` moves of `bytes` from where they lie, all but
 * their last chunks under 4 KiB (and the replies of the set-up). */
static void expect_sent_in_place(const struct blk_recv *r, int k, long bytes,
				 long reps, const char *args)
{
	cr_assert(r->sent_ref[k] + r->sent_copied[k] >= (double)(bytes * reps),
		  "blkmove %s: node %d sent %.0f + %.0f bytes", args, k,
		  r->sent_ref[k], r->sent_copied[k]);
	cr_assert_leq(r->sent_copied[k], reps * 4096.0 + 64,
		      "blkmove %s: node %d copied %.0f bytes of payloads into "
		      "its send buffers",
		      args, k, r->sent_copied[k]);
}

Test(multinode, tcp_large_blocks_pulled_and_pushed)
{
	/* whole chunks, odd sizes, 64 MiB; odd offsets on both sides */
	long sizes[] = {1l << 20, (3l << 20) + 5, 8l << 20, 64l << 20};
	long reps[] = {3, 2, 2, 1};
	for (size_t i = 0; i < T_NCASES(sizes); i++) {
		for (int push = 0; push < 2; push++) {
			char args[64];
			struct blk_recv r;
			snprintf(args, sizeof(args), "%s %ld %ld",
				 push ? "push" : "pull", sizes[i], reps[i]);
			blkmove_job(2, args, &r);
			/* pull: node 0 also got node 1's two addresses */
			expect_received(&r, push ? 1 : 0,
					(double)(sizes[i] * reps[i]),
					push ? 0 : 16, args);
			expect_sent_in_place(&r, push ? 0 : 1, sizes[i],
					     reps[i], args);
		}
	}
}

Test(multinode, tcp_large_blocks_between_two_other_nodes)
{
	const char *args[] = {"third 8388608 2", "third 3145733 1"};
	double bytes[] = {2 * 8388608.0, 3145733.0};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job(3, args[i], &r);
		expect_received(&r, 2, bytes[i], 0, args[i]);
	}
}

Test(multinode, tcp_large_block_lands_in_place)
{
	/* Most of a 64 MiB move skips the receive buffers. What still goes
	 * through them: what one io_uring_enter read before the receiver
	 * saw the move's first header. */
	struct blk_recv r;
	blkmove_job(2, "pull 67108864 2", &r);
	double total = 2 * 67108864.0;
	expect_received(&r, 0, total, 16, "pull 67108864 2");
	cr_assert_gt(r.direct[0], total / 2,
		     "only %.0f of %.0f bytes received straight into place "
		     "(%.0f copied)",
		     r.direct[0], total, r.copied[0]);
}

Test(multinode, tcp_block_moves_between_small_messages)
{
	/* Pulls and pushes all in flight, a GET, an INVOKE and a SYNC
	 * beside each: the stream goes on right after each placed payload.
	 * 20011 bytes: payloads on both sides of the direct threshold. */
	const char *args[] = {"mix 1000003 40", "mix 20011 200",
			      "mix 300007 100"};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job(2, args[i], &r);
	}
}

Test(multinode, tcp_large_block_outside_registered_memory_is_rejected)
{
	/* A good 8 MiB move, then one to memory node 1 never registered
	 * (nor mapped: a byte landing there would crash it instead). */
	struct t_cmd c;
	t_sh(&c, 60, "%s --transport tcp -n 2 %s/blkmove bad 8388608",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s%s", c.status,
		     c.out, c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message from node 0 "
				"rejected: field b (BLK_DATA destination "
				"outside this node's registered memory)"),
		  "%s", c.err);
}

Test(multinode, tcp_sender_killed_mid_block)
{
	char path[2][64], buf[4096], prog[256];
	pid_t pid[2];
	int port = tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/blkmove", T_PROG_DIR);
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_blkk.%d.%d",
			 (int)getpid(), k);
		pid[k] = tcp_spawn(prog, (const char *[]){"kill", "67108864",
							  NULL},
				   k, 2, port, path[k]);
	}
	/* Node 1 pushes 64 MiB blocks to node 0, one after another. */
	uint64_t t0 = t_now_ns();
	while (!file_has(path[1], "blkmove: node 1 pid", buf, sizeof(buf)) &&
	       t_now_ns() - t0 < 20000000000ull)
		usleep(10000);
	cr_assert(strstr(buf, "blkmove: node 1 pid"), "node 1: %s", buf);
	usleep(300000);
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill(pid[1], SIGKILL), 0);
	cr_assert_eq(t_wait_pid(pid[1], 5000000000ull), 128 + SIGKILL);
	int st = t_wait_pid(pid[0], 6000000000ull);
	uint64_t took = t_now_ns() - t_kill;
	t_slurp(path[0], buf, sizeof(buf));
	for (int k = 0; k < 2; k++)
		unlink(path[k]);
	cr_assert_neq(st, -1, "node 0 still running %.1f s after the kill: %s",
		      took / 1e9, buf);
	cr_assert_lt(took, 5000000000ull, "node 0 took %.1f s", took / 1e9);
	cr_assert_eq(st, EARTH_EXIT_USAGE, "node 0: status %d: %s", st, buf);
	cr_assert(strstr(buf, "earth: node 0: error: tcp transport: lost the "
			      "connection to node 1"),
		  "%s", buf);
}
