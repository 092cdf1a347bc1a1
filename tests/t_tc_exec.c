/* SPDX-License-Identifier: MIT */
/*
 * t_tc_exec.c - Threaded-C programs built with earthcc run and compute the
 * right results: the examples (hello, fib, N-Queens, the remote-get
 * pipeline, the reduction tree) and the corpus (odd C, nested scopes and
 * shadowing, switch/goto in fibers, every operation, THREADED prototypes
 * in a header), with minimal sets, with --save-all and with clang as the C
 * compiler; earthcc also builds plain C against earth.h; the Table 3
 * counters are printed with EARTH_TC_STATS=1 and minimal sets move fewer
 * variables than --save-all; a missing clang-14 gives a message that says
 * how to install it; every example also runs on 2-3 nodes with earthrun
 * (shared memory; the pipeline also over tcp, and over ucx launched by
 * srun --mpi=pmix on a one-host Slurm cluster, tests/slurm.sh).
 * Skipped, with a message, when clang-14 or the plugin is missing.
 */
#include "tc/tc_run.h"

TestSuite(tc_exec, .timeout = 240);

static char out[65536];

static void run_ok(const char *src, const char *flags, const char *args,
		   const char *want)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, src, flags);
	int rc = tc_exec(out, sizeof out, dir, "", args);
	cr_expect_eq(rc, 0, "%s %s exited with %d:\n%s", src, args, rc, out);
	cr_expect(strstr(out, want), "%s %s: no '%s' in:\n%s", src, args, want,
		  out);
	tc_cleanup(dir);
}

Test(tc_exec, hello)
{
	run_ok("threaded-c/examples/hello.tc", "", "",
	       "hello from node 0 of 1");
	cr_expect(strstr(out, "1 node(s) answered"), "%s", out);
}
Test(tc_exec, fib)
{
	run_ok("threaded-c/examples/fib.tc", "", "18", "fib(18) = 2584");
}
Test(tc_exec, fib_save_all)
{
	run_ok("threaded-c/examples/fib.tc", "--save-all", "15",
	       "fib(15) = 610");
}
Test(tc_exec, nqueens)
{
	run_ok("threaded-c/examples/nqueens.tc", "", "8 3",
	       "queens(8) = 92 (correct)");
}
Test(tc_exec, nqueens_10_save_all)
{
	run_ok("threaded-c/examples/nqueens.tc", "--save-all", "10 2",
	       "queens(10) = 724 (correct)");
}
Test(tc_exec, pipeline)
{
	run_ok("threaded-c/examples/pipeline.tc", "", "400",
	       "400 remote gets from node 0, sum 239800 (correct)");
}
Test(tc_exec, reduce)
{
	run_ok("threaded-c/examples/reduce.tc", "", "20000 16", "(correct)");
}
Test(tc_exec, corpus_odd)
{
	run_ok("tests/tc/corpus/odd.tc", "", "", "ok");
}
Test(tc_exec, corpus_scopes)
{
	run_ok("tests/tc/corpus/scopes.tc", "", "", "scopes: 450 2216 77, ok");
}
Test(tc_exec, corpus_scopes_save_all)
{
	run_ok("tests/tc/corpus/scopes.tc", "--save-all", "", "ok");
}
/* THREADED prototypes in a header next to the .tc files (#include "..."),
 * a program of two .tc files. */
Test(tc_exec, corpus_proto_header_two_files)
{
	run_ok("tests/tc/corpus/proto.tc", "tests/tc/corpus/proto_square.tc",
	       "", "proto: 650 (correct)");
}
Test(tc_exec, corpus_ops)
{
	run_ok("tests/tc/corpus/ops.tc", "", "",
	       "ops: 0.5 1.25 x -7 99 abcdefg 1");
}
/* GLOBAL_AT, GPTR_TO / TO_GPTR, a registered heap buffer as a BLKMOV
 * destination, const and volatile frame fields (on 2 nodes below). */
Test(tc_exec, corpus_global_at)
{
	run_ok("tests/tc/corpus/global_at.tc", "", "",
	       "global_at: 1000 2000 3000 3003, ok");
}
Test(tc_exec, corpus_odd_save_all)
{
	run_ok("tests/tc/corpus/odd.tc", "--save-all", "", "ok");
}
Test(tc_exec, clang_as_c_compiler)
{
	run_ok("threaded-c/examples/nqueens.tc", "", "6 2",
	       "queens(6) = 4 (correct)");
	char dir[64];
	tc_tmpdir(dir);
	int rc = tc_sh(out, sizeof out,
		       "EARTHCC_CC=clang-14 " TC_EARTHCC " -O2 -Wall -Wextra "
		       "-Werror tests/tc/corpus/odd.tc -o %s/prog && %s/prog",
		       dir, dir);
	cr_expect_eq(rc, 0, "odd.tc with clang: %d\n%s", rc, out);
	tc_cleanup(dir);
}

/* The generated code itself under ASan and UBSan (earthcc passes the flags
 * to the C compiler and the linker): frames, restores, saves, renames. */
Test(tc_exec, generated_code_under_sanitizers)
{
	const char *progs[][3] = {
	    {"threaded-c/examples/fib.tc", "14", "fib(14) = 377"},
	    {"threaded-c/examples/reduce.tc", "5000 16", "(correct)"},
	    {"tests/tc/corpus/odd.tc", "", "ok"},
	    {"tests/tc/corpus/scopes.tc", "", "ok"},
	};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		run_ok(progs[i][0],
		       "-O1 -fsanitize=address,undefined "
		       "-fno-sanitize-recover=all --poison",
		       progs[i][1], progs[i][2]);
}

Test(tc_exec, plain_c_program)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	int rc = tc_sh(
	    out, sizeof out,
	    TC_EARTHCC
	    " -O2 -Ithreaded-c/examples threaded-c/examples/demo.c "
	    "threaded-c/examples/fib_tf.c -o %s/prog && timeout 60 %s/prog 12",
	    dir, dir);
	cr_expect_eq(rc, 0, "demo via earthcc: %d\n%s", rc, out);
	cr_expect(strstr(out, "fib(12) = 144 (correct)"), "%s", out);
	tc_cleanup(dir);
}

/* Parses "save_restore_avg X" from the EARTH_TC_STATS=1 line. */
static double avg_of(const char *src, const char *flags, const char *args)
{
	char dir[64];
	tc_tmpdir(dir);
	tc_build(dir, src, flags);
	int rc = tc_exec(out, sizeof out, dir, "EARTH_TC_STATS=1", args);
	cr_assert_eq(rc, 0, "%s: %d\n%s", src, rc, out);
	const char *p = strstr(out, "save_restore_avg ");
	cr_assert_not_null(p, "no counters printed:\n%s", out);
	cr_assert_not_null(strstr(out, "switches "), "%s", out);
	tc_cleanup(dir);
	return atof(p + strlen("save_restore_avg "));
}

Test(tc_exec, counters_min_below_save_all)
{
	tc_require();
	const char *progs[][2] = {{"threaded-c/examples/pipeline.tc", "300"},
				  {"threaded-c/examples/reduce.tc", "5000 16"},
				  {"threaded-c/examples/fib.tc", "12"}};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		double min = avg_of(progs[i][0], "", progs[i][1]);
		double all = avg_of(progs[i][0], "--save-all", progs[i][1]);
		cr_expect(min > 0 && min < all, "%s: min %.3f, all %.3f",
			  progs[i][0], min, all);
	}
}

Test(tc_exec, missing_clang_says_how_to_install)
{
	int rc = tc_sh(out, sizeof out,
		       "EARTHCC_CLANG=clang-nonexistent-14 " TC_EARTHCC
		       " threaded-c/examples/fib.tc -o /dev/null");
	cr_expect_eq(rc, 2, "rc %d\n%s", rc, out);
	cr_expect(strstr(out, "apt-get install clang-14"), "%s", out);
}

/* Writes dir/clang-14, a stand-in clang whose shell `case $1 in` has the
 * arms cases, then runs earthcc (with -v when verbose) on fib.tc with it:
 * earthcc's status, its output in out. */
static int with_stand_in_clang(const char *dir, const char *cases, int verbose)
{
	return tc_sh(out, sizeof out,
		     "printf '#!/bin/sh\\ncase $1 in %s esac\\n' > "
		     "%s/clang-14 && chmod +x %s/clang-14 && "
		     "EARTHCC_CLANG=%s/clang-14 " TC_EARTHCC
		     " %s threaded-c/examples/fib.tc -o %s/prog",
		     cases, dir, dir, dir, verbose ? "-v" : "", dir);
}

/* The plugin is built for clang 14: a clang of another major version
 * (here a stand-in that says 16.0.6) is refused before it could crash. */
Test(tc_exec, other_clang_major_is_refused)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	int rc = with_stand_in_clang(
	    dir, "--version) echo clang version 16.0.6;; *) echo 16.0.6;;", 0);
	cr_expect_eq(rc, 2, "rc %d\n%s", rc, out);
	cr_expect(strstr(out, "clang 16.0.6") && strstr(out, "clang-14"), "%s",
		  out);
	tc_cleanup(dir);
}

/* A clang that crashes (here a stand-in that says 14.0.6, prints a
 * crash report naming fib.tc:8:3 and dies of SIGSEGV) is an error at
 * that line with what to do, not clang's stack dump and its plea to
 * report it to LLVM; earthcc -v shows the dump. */
Test(tc_exec, crashing_clang_is_named_at_its_line)
{
	static const char crash[] =
	    "--version) echo clang version 14.0.6;; -dumpversion) echo "
	    "14.0.6;; *) echo PLEASE submit a bug report >&2; echo Stack "
	    "dump: >&2; echo 1. threaded-c/examples/fib.tc:8:3: current "
	    "parser token x >&2; kill -SEGV $$;;";
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	int rc = with_stand_in_clang(dir, crash, 0);
	cr_expect_eq(rc, 1, "rc %d\n%s", rc, out);
	cr_expect(strstr(out, "threaded-c/examples/fib.tc:8:3: error: ") &&
		      strstr(out, "crashed translating this Threaded-C") &&
		      strstr(out, "fix: report it"),
		  "%s", out);
	cr_expect(!strstr(out, "PLEASE") && !strstr(out, "Stack dump") &&
		      !strstr(out, "Segmentation"),
		  "%s", out);
	rc = with_stand_in_clang(dir, crash, 1);
	cr_expect(rc == 1 && strstr(out, "Stack dump"), "rc %d\n%s", rc, out);
	tc_cleanup(dir);
}

/* A compiler that is not clang (gcc, whose -dumpversion says 12) is
 * named as what it is, not as "clang 12". */
Test(tc_exec, gcc_as_clang_is_not_clang)
{
	int rc = tc_sh(out, sizeof out,
		       "EARTHCC_CLANG=gcc " TC_EARTHCC
		       " threaded-c/examples/fib.tc -o /dev/null");
	cr_expect_eq(rc, 2, "rc %d\n%s", rc, out);
	cr_expect(strstr(out, "gcc is not clang") &&
		      strstr(out, "it says: gcc") && !strstr(out, "clang 12"),
		  "%s", out);
}

/* Every example runs on several nodes with earthrun (the networking
 * runtime; 2-3 nodes oversubscribe this machine by design) and checks its
 * result: every node says hello; fib and N-Queens spread TOKENs over the
 * nodes; the pipeline GETs from the last node; the reduction's leaves
 * BLKMOV node 0's array. */
static void on_nodes_src(const char *src, const char *transport, int nodes,
			 const char *args, const char *want)
{
	char dir[64], earthrun[512];
	tc_require_earthrun(earthrun);
	tc_tmpdir(dir);
	tc_build(dir, src, "");
	int rc = tc_sh(out, sizeof out,
		       "timeout 90 %s --transport %s -n %d %s/prog %s",
		       earthrun, transport, nodes, dir, args);
	cr_expect_eq(rc, 0, "%s on %d nodes (%s): %d\n%s", src, nodes,
		     transport, rc, out);
	cr_expect(strstr(out, want), "%s on %d nodes: no '%s' in\n%s", src,
		  nodes, want, out);
	tc_cleanup(dir);
}
static void on_nodes(const char *example, const char *transport, int nodes,
		     const char *args, const char *want)
{
	char src[128];
	snprintf(src, sizeof src, "threaded-c/examples/%s.tc", example);
	on_nodes_src(src, transport, nodes, args, want);
}

/* Node 0 reads node 1's static data (GLOBAL_AT), node 1 writes node 0's
 * earth_galloc block (GPTR_TO) and BLKMOVs into node 0's registered heap
 * buffer. */
Test(tc_exec, global_at_on_2_nodes)
{
	on_nodes_src("tests/tc/corpus/global_at.tc", "shm", 2, "",
		     "global_at: 1001 2001 3010 3013, ok");
}

Test(tc_exec, hello_on_3_nodes)
{
	on_nodes("hello", "shm", 3, "", "3 node(s) answered");
	cr_expect(strstr(out, "hello from node 2 of 3"), "%s", out);
}
Test(tc_exec, fib_on_2_nodes)
{
	on_nodes("fib", "shm", 2, "15", "fib(15) = 610");
}
Test(tc_exec, nqueens_on_2_nodes)
{
	on_nodes("nqueens", "shm", 2, "8 3", "queens(8) = 92 (correct)");
}
Test(tc_exec, pipeline_on_2_nodes)
{
	on_nodes("pipeline", "shm", 2, "200",
		 "200 remote gets from node 1, sum 59900 (correct)");
}
Test(tc_exec, reduce_on_2_nodes)
{
	on_nodes("reduce", "shm", 2, "20000 16", "(correct)");
}
Test(tc_exec, pipeline_on_2_nodes_tcp)
{
	on_nodes("pipeline", "tcp", 2, "150",
		 "150 remote gets from node 1, sum 33675 (correct)");
}

/* Launched by Slurm through PMIx, as on a cluster: srun --mpi=pmix -n 2
 * on a one-host cluster tests/slurm.sh starts for it (Debian's slurmd,
 * slurmctld, slurm-client, munge); nothing set by hand, the transport is
 * ucx. Skipped, saying why, where no such cluster can start. */
Test(tc_exec, pipeline_under_srun)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, "threaded-c/examples/pipeline.tc", "");
	int rc = tc_sh(out, sizeof out,
		       "timeout 120 tests/slurm.sh srun --mpi=pmix -n 2 env "
		       "EARTH_STATS=1 %s/prog 150",
		       dir);
	tc_cleanup(dir);
	if (rc == 77)
		cr_skip_test("%s", out);
	cr_expect_eq(rc, 0, "srun: %d\n%s", rc, out);
	cr_expect(strstr(out, "150 remote gets from node 1, sum 33675 "
			      "(correct)"),
		  "%s", out);
	cr_expect(strstr(out, "transport ucx: "), "%s", out);
}
