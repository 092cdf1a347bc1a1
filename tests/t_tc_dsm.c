/* SPDX-License-Identifier: MIT */
/*
 * t_tc_dsm.c - Threaded-C programs over shared memory (SHARED,
 * docs/threaded-c.md "Shared memory (SHARED)") built with earthcc and run
 * with earthrun on 1, 2 and 4 nodes over shm and tcp; each checks itself:
 * the Jacobi sweep of threaded-c/examples/jacobi_shared.tc against a
 * sequential run; the page DSM's litmus cases (message passing through a
 * lock, a barrier and a flag, disjoint writes to one page merging) with
 * GET / DATA / INVOKE / TOKEN in the same program
 * (tests/tc/corpus/dsm_litmus.tc); the _RSYNC forms (lock, barrier,
 * flag wait, acquire, release for a slot of the caller's,
 * tests/tc/corpus/dsm_rsync.tc); shared memory allocated and freed by
 * fibers, its SHARED pointer passed to another node
 * (tests/tc/corpus/dsm_alloc.tc); loops whose acquires and releases the
 * plugin inserted (tests/tc/corpus/dsm_insert.tc; the generated C holds
 * them). Skipped, with a message, when clang-14 or the plugin is missing.
 */
#include "tc/tc_run.h"

TestSuite(tc_dsm, .timeout = 400);

static char out[65536];

/* src built once, run on 1, 2 and 4 nodes over shm and tcp. */
static void everywhere(const char *src, const char *args, const char *want)
{
	char dir[64], earthrun[512];
	tc_require_earthrun(earthrun);
	tc_tmpdir(dir);
	tc_build(dir, src, "");
	static const char *const trs[] = {"shm", "tcp"};
	for (int t = 0; t < 2; t++)
		for (int nodes = 1; nodes <= 4; nodes *= 2) {
			char w[256];
			snprintf(w, sizeof w, want, nodes);
			int rc = tc_sh(out, sizeof out,
				       "timeout 90 %s --transport %s -n %d "
				       "%s/prog %s",
				       earthrun, trs[t], nodes, dir, args);
			cr_expect_eq(rc, 0, "%s on %d node(s) over %s: %d\n%s",
				     src, nodes, trs[t], rc, out);
			cr_expect(strstr(out, w),
				  "%s on %d node(s) over %s: no '%s' in\n%s",
				  src, nodes, trs[t], w, out);
		}
	tc_cleanup(dir);
}

Test(tc_dsm, jacobi_example)
{
	everywhere("threaded-c/examples/jacobi_shared.tc", "10",
		   "jacobi_shared: 10 sweeps of 6000 points on %d node(s): "
		   "correct");
}

Test(tc_dsm, litmus_lock_barrier_flag_with_get_data_invoke_token)
{
	everywhere("tests/tc/corpus/dsm_litmus.tc", "",
		   "on %d node(s): 0 wrong, stamp 4242 (correct)");
}

Test(tc_dsm, rsync_forms)
{
	everywhere("tests/tc/corpus/dsm_rsync.tc", "",
		   "dsm_rsync: %d node(s), cell ");
	cr_expect(strstr(out, "(correct)"), "%s", out);
}

Test(tc_dsm, allocated_and_freed_by_fibers)
{
	everywhere("tests/tc/corpus/dsm_alloc.tc", "",
		   "dsm_alloc: %d node(s), 0 wrong (correct)");
}

Test(tc_dsm, inserted_acquires)
{
	everywhere("tests/tc/corpus/dsm_insert.tc", "",
		   "dsm_insert: %d node(s), sum ");
	cr_expect(strstr(out, "(correct)"), "%s", out);
	/* What was inserted: an acquire before each of the three loops, a
	 * release after, each with a fiber of its own. */
	char gen[128];
	snprintf(gen, sizeof gen, "/tmp/earth_tc_dsm_insert_%d.c",
		 (int)getpid());
	int rc = tc_sh(out, sizeof out,
		       TC_EARTHCC " --tc-only --emit-c=%s "
				  "tests/tc/corpus/dsm_insert.tc && grep -c "
				  "'ACQUIRE_[RW]_N_SYNC(v + (.*); "
				  "do {.*tc_acquired_[0-9]*:' %s; grep -c "
				  "'RELEASE_N_SYNC(v + ' %s",
		       gen, gen, gen);
	unlink(gen);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(!strcmp(out, "3\n3\n"), "inserted acquires, releases:\n%s",
		  out);
}
