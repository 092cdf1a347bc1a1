/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_fiber.c - shared memory from fibers (earth_dsm_fiber.h), end to
 * end through earthrun with tests/progs/dsm_fiber.c: a 1-D Jacobi swept
 * by fibers that acquire and release ranges, count under a lock and meet
 * main (a program thread) at a barrier, equal bit for bit to the same
 * sweeps run sequentially, over shm, tcp and ucx on 1-4 nodes with 1-16
 * fibers per node, pages homed where they are written or all on node 0,
 * in every node mode; the counts --stats-json gives (acquisitions and
 * releases exact, waits joined to a fetch out under the emulated
 * network's delay, invalidations put off for held pages); split-phase
 * allocation and free from fibers; each misuse ending the job naming the
 * fiber; a lock never unlocked named in the stuck report.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "job.h"
#include "json.h"

TestSuite(dsm_fiber, .timeout = 600);

static struct t_cmd cmd;

static void ok_run(const char *env, int n, const char *t, const char *args,
		   const char *want)
{
	t_sh(&cmd, 120, "env %s %s -n %d --transport %s %s/dsm_fiber %s", env,
	     T_EARTHRUN, n, t, T_PROG_DIR, args);
	cr_assert_eq(cmd.status, 0,
		     "dsm_fiber %s on %d nodes over %s (%s): status %d\n%s%s",
		     args, n, t, env, cmd.status, cmd.out, cmd.err);
	cr_assert(strstr(cmd.out, want), "dsm_fiber %s: no \"%s\" in\n%s%s",
		  args, want, cmd.out, cmd.err);
}

Test(dsm_fiber, jacobi_every_transport_1_to_4_nodes)
{
	const char *transports[] = {"shm", "tcp", "ucx"};
	for (int ti = 0; ti < 3; ti++)
		for (int n = 1; n <= 4; n++) {
			char args[128], want[64];
			int f = 1 << (n - 1); /* 1, 2, 4, 8 fibers per node */
			snprintf(args, sizeof(args),
				 "-n 12000 -f %d -i 5 -p %s", f,
				 n % 2 ? "block" : "node0");
			snprintf(want, sizeof(want), "dsm_fiber ok counter=%d ",
				 n * f * 5);
			ok_run("UCX_TLS=tcp", n, transports[ti], args, want);
		}
	ok_run("", 4, "shm", "-n 20000 -f 16 -i 3",
	       "dsm_fiber ok counter=192 ");
	/* Nodes of several EUs (also under TSan: every EU sets up its side
	 * at its first fiber, at once). */
	ok_run("EARTH_EUS=3", 2, "shm", "-n 12000 -f 4 -i 3",
	       "dsm_fiber ok counter=24 ");
	ok_run("EARTH_EUS=2", 2, "tcp", "-n 12000 -f 4 -i 3",
	       "dsm_fiber ok counter=24 ");
}

Test(dsm_fiber, jacobi_single_core_modes_and_delay)
{
	/* one EU: a single-core node's (make test's k = 2, 3 too) */
	ok_run("EARTH_EUS=1 EARTH_MODE=single-poll", 3, "shm",
	       "-n 9000 -f 3 -i 4 -p node0", "dsm_fiber ok counter=36 ");
	ok_run("EARTH_EUS=1 EARTH_MODE=single-interrupt", 2, "tcp",
	       "-n 9000 -f 3 -i 4 -p node0", "dsm_fiber ok counter=24 ");
	ok_run("EARTH_NET_LATENCY_NS=100000", 3, "shm", "-n 9000 -f 4 -i 3",
	       "dsm_fiber ok counter=36 ");
}

/* Main touches no shared memory (-c 1): no page fault anywhere, the
 * fibers fill and check; the run ThreadSanitizer judges best (the table
 * runs this file under TSan too). */
Test(dsm_fiber, jacobi_checked_by_the_fibers)
{
	ok_run("", 1, "shm", "-n 8000 -f 3 -i 3 -c 1",
	       "dsm_fiber ok checked by the fibers");
	ok_run("", 3, "shm", "-n 9000 -f 3 -i 3 -c 1 -p node0",
	       "dsm_fiber ok checked by the fibers");
	ok_run("", 2, "tcp", "-n 8000 -f 4 -i 4 -c 1",
	       "dsm_fiber ok checked by the fibers");
}

static double num(const struct json *node, const char *key)
{
	const struct json *d = json_get(node, "dsm");
	cr_assert(d, "no dsm record");
	const struct json *v = json_get(d, key);
	cr_assert(v && v->type == JSON_NUM, "no dsm.%s", key);
	return v->num;
}

/* Each worker acquires 3 ranges and releases 3 per sweep (its source and
 * destination, then the counter), each node's relay 1: exact. With every page
 * on node 0 and a 200 us one-way delay, 8 fibers of a node asking for the same
 * remote pages at once join the fetch the first one sent; lock grants during
 * the sweeps find pages held, whose invalidation waits; node 0's reads
 * of its own pages are hits the EU finds without a request. */
Test(dsm_fiber, statistics_count_acquisitions_hits_and_coalesced_waits)
{
	char dir[256], path[512], err[256];
	t_scratch_dir(dir, sizeof(dir), "dsm_fiber");
	snprintf(path, sizeof(path), "%s/s.json", dir);
	t_sh(&cmd, 120,
	     "env EARTH_NET_LATENCY_NS=200000 %s -n 3 --transport tcp "
	     "--stats-json=%s %s/dsm_fiber -n 20000 -f 8 -i 3 -p node0",
	     T_EARTHRUN, path, T_PROG_DIR);
	cr_assert_eq(cmd.status, 0, "%s%s", cmd.out, cmd.err);
	struct json *js = json_parse_file(path, err, sizeof(err));
	cr_assert(js, "%s", err);
	const struct json *nodes = json_get(js, "nodes");
	cr_assert(nodes && nodes->n == 3);
	double coalesced = 0, deferred = 0, hits_eu = 0;
	for (size_t k = 0; k < 3; k++) {
		const struct json *n = &nodes->v[k];
		cr_assert_eq(num(n, "fiber_acquires"), 8 * 3 * 3 + 1,
			     "node %zu", k);
		cr_assert_eq(num(n, "fiber_releases"), 8 * 3 * 3 + 1,
			     "node %zu", k);
		cr_assert_leq(num(n, "fiber_hits"), num(n, "fiber_acquires"));
		cr_assert_leq(num(n, "fiber_hits_eu"), num(n, "fiber_hits"));
		hits_eu += num(n, "fiber_hits_eu");
		if (k)
			coalesced += num(n, "fiber_coalesced");
		deferred += num(n, "fiber_deferred");
	}
	cr_assert_gt(coalesced, 0, "no wait joined a fetch out");
	cr_assert_gt(deferred, 0, "no invalidation waited for a hold");
	cr_assert_gt(hits_eu, 0, "no acquisition was a hit on the EU");
	json_free(js);
	t_remove_dir(dir);
}

static void misuse(const char *mistake, const char *a, const char *b)
{
	t_sh(&cmd, 60, "%s -n 2 %s/dsm_fiber -n 4000 -f 2 -i 2 -x %s",
	     T_EARTHRUN, T_PROG_DIR, mistake);
	cr_assert_eq(cmd.status, 70, "%s: status %d\n%s", mistake, cmd.status,
		     cmd.err);
	cr_assert(strstr(cmd.err, a), "%s: no \"%s\" in\n%s", mistake, a,
		  cmd.err);
	cr_assert(strstr(cmd.err, b), "%s: no \"%s\" in\n%s", mistake, b,
		  cmd.err);
}

Test(dsm_fiber, misuse_ends_the_job_naming_the_fiber)
{
	misuse("outside", "is not inside shared memory", "(in fiber w_entry)");
	misuse("unalloc",
	       "which no allocation holds (never given by earth_dsm_alloc, "
	       "or freed)",
	       "(in fiber w_entry)");
	misuse("release2",
	       "is not held by any acquisition of this node's fibers "
	       "(released twice, or never acquired)",
	       "(in fiber w_compute)");
	misuse("unlock2",
	       "is not held by this node's fibers (unlocked twice, or never "
	       "locked by a fiber)",
	       "(in fiber w_unlocked)");
}

/* Split-phase allocation and free from fibers (-a 1): each node's fiber
 * allocates a block homed on its node, fills it, publishes its address;
 * main (a program thread) reads every block through the address; the
 * fibers free them. An allocation of 0 bytes ends the job naming it. */
Test(dsm_fiber, fibers_allocate_and_free_split_phase)
{
	const char *transports[] = {"shm", "tcp"};
	for (int ti = 0; ti < 2; ti++)
		for (int n = 1; n <= 4; n += n < 2 ? 1 : 2) {
			char want[96];
			snprintf(want, sizeof(want),
				 "dsm_fiber: %d blocks allocated, filled and "
				 "freed by fibers",
				 n);
			ok_run("", n, transports[ti], "-n 4000 -f 1 -i 2 -a 1",
			       want);
		}
	ok_run("EARTH_EUS=2", 2, "shm", "-n 4000 -f 2 -i 2 -a 1",
	       "dsm_fiber: 2 blocks allocated, filled and freed by fibers");
	t_sh(&cmd, 60, "%s -n 2 %s/dsm_fiber -n 4000 -f 1 -i 2 -a 1 -x alloc0",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(cmd.status, 70, "alloc0: status %d\n%s", cmd.status,
		     cmd.err);
	cr_assert(strstr(cmd.err, "earth_dsm_alloc_sync") &&
		      strstr(cmd.err, "0 bytes: from 1 byte to the shared "
				      "region's"),
		  "alloc0: %s", cmd.err);
}

/* A lock the fibers never unlock: the job is stuck, and the report names
 * the lock, who holds it and the fibers waiting. */
Test(dsm_fiber, a_lock_never_unlocked_is_named)
{
	t_sh(&cmd, 60, "%s -n 2 %s/dsm_fiber -n 4000 -f 2 -i 2 -x nounlock",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(cmd.status, 75, "status %d\n%s", cmd.status, cmd.err);
	/* Which node's fibers took the lock, and how many fibers reached it
	 * before the job stopped, is timing (nodes of several EUs, make
	 * test's eus pass, run more of them at once). */
	const char *want[] = {
	    "stuck: lock 0x1 is held by the fibers of node ",
	    "for it: unlock it on every path (earth_dsm_unlock_sync)",
	    "stuck: a fiber (w_released) waits for lock 0x1 (made by node 0)"};
	for (int i = 0; i < 3; i++)
		cr_assert(strstr(cmd.err, want[i]), "no \"%s\" in\n%s", want[i],
			  cmd.err);
}

/* The timeline names the fibers' requests as the SU performs them. */
Test(dsm_fiber, trace_names_the_fibers_requests)
{
	static char js[1 << 22];
	char dir[256], path[512];
	t_scratch_dir(dir, sizeof(dir), "dsm_fiber_trace");
	snprintf(path, sizeof(path), "%s/t.json", dir);
	t_sh(&cmd, 120, "%s -n 2 --trace=%s %s/dsm_fiber -n 4000 -f 2 -i 2",
	     T_EARTHRUN, path, T_PROG_DIR);
	cr_assert_eq(cmd.status, 0, "%s", cmd.err);
	t_slurp(path, js, sizeof(js));
	t_remove_dir(dir);
	const char *want[] = {"\"DSM ACQUIRE\"",      "\"DSM RELEASE\"",
			      "\"DSM LOCK_SYNC\"",    "\"DSM UNLOCK_SYNC\"",
			      "\"DSM BARRIER_SYNC\"", "\"DSM FLAG_WAIT_SYNC\""};
	for (int i = 0; i < 6; i++)
		cr_assert(strstr(js, want[i]), "no %s in the trace", want[i]);
}

/* A fiber that touches a page it did not acquire (and that is not there)
 * ends the job saying so, never a hang or a stale value. */
Test(dsm_fiber, a_page_touched_without_acquiring_is_named)
{
	t_sh(&cmd, 60,
	     "%s -n 2 %s/dsm_fiber -n 4000 -f 2 -i 2 -p node0 -x "
	     "noacquire",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_neq(cmd.status, 0, "%s", cmd.err);
	cr_assert(strstr(cmd.err, "node 1: shared memory: a fiber touched "),
		  "%s", cmd.err);
	cr_assert(strstr(cmd.err, ", a page it did not acquire: acquire the "
				  "range first"),
		  "%s", cmd.err);
}
