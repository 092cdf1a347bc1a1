/* SPDX-License-Identifier: MIT */
/*
 * t_tc_dsm.c - Threaded-C programs over shared memory (SHARED,
 * docs/threaded-c.md "Shared memory (SHARED)") built with earthcc and run
 * with earthrun on 1, 2 and 4 nodes over shm, tcp and ucx (UCX_TLS=tcp,
 * as tests/t_dsm_node.c), and in both single-core node modes; each
 * checks itself:
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
 * them), and around loop nests (a matrix product, a transpose, a
 * triangular sum: tests/tc/corpus/dsm_insert_nest.tc; one slot per nest
 * for every pointer it touches); SHARED ranges handed to C functions
 * (SHARED_ARG_R, SHARED_ARG_W, tests/tc/corpus/dsm_arg.tc). Skipped, with a
 * message, when clang-14 or the plugin is missing. Under TSan
 * (tests/table.txt's tsan: make test's tsan step) the same programs are built
 * with EARTHCC_SANITIZE=thread, against the tsan runtime (make tc-tsan), and
 * run on 2 nodes over shm and tcp (and over shm with nodes of 2 EUs); a
 * ThreadSanitizer report fails the run (its exit status 66, its words).
 */
#include "tc/tc_run.h"

TestSuite(tc_dsm, .timeout = 400);

static char out[65536];

/* Where each program runs: transport, nodes, environment. ucx over its
 * tcp lane (UCX_TLS=tcp), as the other DSM job tests. */
static const struct {
	const char *tr;
	int nodes;
	const char *env;
} runs[] = {
#if defined(__SANITIZE_THREAD__)
    /* UCX's memory hooks crash TSan programs (tests/run.sh). */
    {"shm", 2, "UCX_MEM_MMAP_HOOK_MODE=none EARTH_EUS=1"},
    {"tcp", 2, "UCX_MEM_MMAP_HOOK_MODE=none EARTH_EUS=1"},
    /* Nodes of 2 EUs: fibers of one program on two threads (the
     * Threaded-C counters, tc_stats.h, raced when they were one global
     * record). */
    {"shm", 2, "UCX_MEM_MMAP_HOOK_MODE=none EARTH_EUS=2"},
#else
    {"shm", 1, ""},
    {"shm", 2, ""},
    {"shm", 4, ""},
    {"tcp", 1, ""},
    {"tcp", 2, ""},
    {"tcp", 4, ""},
    {"ucx", 1, "UCX_TLS=tcp"},
    {"ucx", 2, "UCX_TLS=tcp"},
    {"ucx", 4, "UCX_TLS=tcp"},
    /* The single-core node modes (one EU: make test's k = 2, 3 runs
     * too): the EU and SU on one core, the SU's work on a timer's signal
     * or between fibers. */
    {"shm", 2, "EARTH_EUS=1 EARTH_MODE=single-interrupt"},
    {"tcp", 4, "EARTH_EUS=1 EARTH_MODE=single-interrupt"},
    {"shm", 4, "EARTH_EUS=1 EARTH_MODE=single-poll"},
    {"ucx", 2, "UCX_TLS=tcp EARTH_EUS=1 EARTH_MODE=single-poll"},
#endif
};

/* src built once (under TSan against the tsan runtime), run as runs[]
 * says. */
static void everywhere(const char *src, const char *args, const char *want)
{
	char dir[64], earthrun[512];
	tc_require_earthrun(earthrun);
#if defined(__SANITIZE_THREAD__)
	char lib[600];
	snprintf(lib, sizeof lib, "%s/tsan/lib/libearth_tc.a", tc_build_dir());
	cr_assert(access(lib, R_OK) == 0, "%s is not built (make tc-tsan)",
		  lib);
	setenv("EARTHCC_SANITIZE", "thread", 1);
#endif
	tc_tmpdir(dir);
	tc_build(dir, src, "");
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		const char *tr = runs[r].tr;
		int nodes = runs[r].nodes;
		char w[256];
		snprintf(w, sizeof w, want, nodes);
		int rc = tc_sh(out, sizeof out,
			       "%s timeout 90 %s --transport %s -n %d "
			       "%s/prog %s",
			       runs[r].env, earthrun, tr, nodes, dir, args);
		cr_expect_eq(rc, 0, "%s on %d node(s) over %s (%s): %d\n%s",
			     src, nodes, tr, runs[r].env, rc, out);
		cr_expect(strstr(out, w),
			  "%s on %d node(s) over %s: no '%s' in\n%s", src,
			  nodes, tr, w, out);
		cr_expect(!strstr(out, "ThreadSanitizer"),
			  "%s on %d node(s) over %s: a TSan report\n%s", src,
			  nodes, tr, out);
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

Test(tc_dsm, shared_ranges_given_to_c_functions)
{
	everywhere("tests/tc/corpus/dsm_arg.tc", "",
		   "dsm_arg: %d node(s), sum 8386560, chunks 8386560 "
		   "(correct)");
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

Test(tc_dsm, inserted_acquires_around_nests)
{
	everywhere("tests/tc/corpus/dsm_insert_nest.tc", "",
		   "dsm_insert_nest: %d node(s), 48 x 48, trace ");
	cr_expect(strstr(out, "(correct)"), "%s", out);
	/* What was inserted: before each nest, one slot whose count is the
	 * pointers the nest touches (worker: fill A and B; C = A B; T; main:
	 * the check of C and T; the upper triangle of C), one acquire each. */
	char gen[128];
	snprintf(gen, sizeof gen, "/tmp/earth_tc_dsm_nest_%d.c", (int)getpid());
	int rc =
	    tc_sh(out, sizeof out,
		  TC_EARTHCC " --tc-only --emit-c=%s "
			     "tests/tc/corpus/dsm_insert_nest.tc && grep -o "
			     "'SYNC_SLOTS\\[[0-9]*\\], [0-9]*, 0, "
			     "tc_fiber_[a-z]*_tc_acquired' %s | sed "
			     "'s/.*, \\([0-9]*\\), 0, tc_fiber_\\([a-z]*\\)_.*/"
			     "\\2:\\1/' | tr '\\n' ' '; grep -o "
			     "'ACQUIRE_[RW]_N_SYNC(m[abct] + ' %s | wc -l",
		  gen, gen, gen);
	unlink(gen);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(!strcmp(out, "worker:2 worker:3 worker:2 main:2 main:1 10\n"),
		  "inserted slots and acquires:\n%s", out);
}
