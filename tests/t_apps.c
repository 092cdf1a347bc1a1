/* SPDX-License-Identifier: MIT */
/*
 * t_apps.c - the benchmark programs of benchmarks/apps/ (built by
 * `make apps` into T_APPS_DIR) compute the right answers at small sizes,
 * on one node and on two or three nodes under earthrun: each prints "ok"
 * and the known answer (OEIS, closed forms, the research notes' counts),
 * or the same answer as its sequential C twin. Bad arguments are refused
 * with a message; a program whose fibers lose a variable (earthcc
 * --poison --drop) reports MISMATCH, so the checks can fail.
 * Skipped, with a message, when the programs are not built (no clang-14).
 */
#include "tc/tc_run.h"

#ifndef T_APPS_DIR
#define T_APPS_DIR "build/rel/apps"
#endif
#ifndef T_APPS_BUILD
#define T_APPS_BUILD "build"
#endif
#ifndef T_APPS_EARTHRUN
#define T_APPS_EARTHRUN "build/rel/bin/earthrun"
#endif

TestSuite(apps, .timeout = 120);

static char out[65536];

static void require_apps(void)
{
	if (access(T_APPS_DIR "/fib", X_OK) != 0 ||
	    access(T_APPS_EARTHRUN, X_OK) != 0)
		cr_skip_test("benchmark programs skipped: " T_APPS_DIR
			     " or " T_APPS_EARTHRUN " is not built (make apps; "
			     "needs clang-14 and the earth_tc plugin)");
}

/* Runs prog args on `nodes` nodes (0: directly, no earthrun). */
static int run_prog(const char *prog, const char *args, int nodes)
{
	if (nodes == 0)
		return tc_sh(out, sizeof out, "timeout 60 " T_APPS_DIR "/%s %s",
			     prog, args);
	return tc_sh(out, sizeof out,
		     "timeout 60 " T_APPS_EARTHRUN " -n %d " T_APPS_DIR
		     "/%s %s",
		     nodes, prog, args);
}

/* The "answer: ..." line of out into a (empty if none). */
static void answer_of(char *a, size_t n)
{
	const char *p = strstr(out, "answer: ");
	a[0] = 0;
	if (!p)
		return;
	size_t len = strcspn(p, "\n");
	if (len >= n)
		len = n - 1;
	memcpy(a, p, len);
	a[len] = 0;
}

/* prog args answers `want` and ok, on 1 node and on `nodes` nodes. */
static void expect_answer(const char *prog, const char *args, int nodes,
			  const char *want)
{
	require_apps();
	int counts[2] = {1, nodes};
	for (int i = 0; i < 2; i++) {
		int rc = run_prog(prog, args, counts[i]);
		cr_expect_eq(rc, 0, "%s %s on %d node(s): exit %d\n%s", prog,
			     args, counts[i], rc, out);
		cr_expect(strstr(out, want),
			  "%s %s on %d node(s): no '%s' in\n%s", prog, args,
			  counts[i], want, out);
		cr_expect(strstr(out, "\nok ("),
			  "%s %s on %d node(s): no ok\n%s", prog, args,
			  counts[i], out);
	}
}

/* prog args answers what its twin prog_seq seq_args answers, and ok, on
 * 1 node and on `nodes` nodes. */
static void expect_twin(const char *prog, const char *args,
			const char *seq_args, int nodes)
{
	char seq[64], want[1024], got[1024];
	require_apps();
	snprintf(seq, sizeof seq, "%s_seq", prog);
	int rc = run_prog(seq, seq_args, 0);
	cr_assert_eq(rc, 0, "%s %s: exit %d\n%s", seq, seq_args, rc, out);
	answer_of(want, sizeof want);
	cr_assert(want[0], "%s printed no answer:\n%s", seq, out);
	int counts[2] = {1, nodes};
	for (int i = 0; i < 2; i++) {
		rc = run_prog(prog, args, counts[i]);
		cr_expect_eq(rc, 0, "%s %s on %d node(s): exit %d\n%s", prog,
			     args, counts[i], rc, out);
		answer_of(got, sizeof got);
		cr_expect_str_eq(got, want, "%s %s on %d node(s) vs %s", prog,
				 args, counts[i], seq);
		cr_expect(strstr(out, "\nok ("), "%s on %d node(s): no ok\n%s",
			  prog, counts[i], out);
	}
}

Test(apps, fib)
{
	expect_answer("fib", "18 5", 3, "answer: fib(18) = 2584");
	expect_answer("fib", "12 0", 2, "answer: fib(12) = 144");
}
Test(apps, nqueens)
{
	expect_answer("nqueens", "9 2", 3, "answer: queens(9) = 352");
}
/* The two token programs exact on 1-4 nodes in every node mode: their
 * TOKENs run from each EU's deque and move when idle nodes steal them. */
Test(apps, token_programs_every_mode_one_to_four_nodes)
{
	static const char *const modes[] = {"dual", "single-interrupt",
					    "single-poll"};
	require_apps();
	for (int m = 0; m < 3; m++)
		for (int nodes = 1; nodes <= 4; nodes++) {
			int rc =
			    tc_sh(out, sizeof out,
				  "EARTH_MODE=%s timeout 60 " T_APPS_EARTHRUN
				  " -n %d " T_APPS_DIR "/fib 18 5 && "
				  "EARTH_MODE=%s timeout 60 " T_APPS_EARTHRUN
				  " -n %d " T_APPS_DIR "/nqueens 9 3",
				  modes[m], nodes, modes[m], nodes);
			cr_expect_eq(rc, 0, "%s, %d nodes: exit %d\n%s",
				     modes[m], nodes, rc, out);
			cr_expect(strstr(out, "answer: fib(18) = 2584") &&
				      strstr(out, "answer: queens(9) = 352"),
				  "%s, %d nodes:\n%s", modes[m], nodes, out);
		}
}

/* UTS: the binomial and geometric small trees as the sequential twin
 * counts them, on 1 and 3 nodes. */
Test(apps, uts)
{
	expect_twin("uts", "s3", "s3", 3);
	expect_twin("uts", "s1", "s1", 2);
}

Test(apps, paraffins)
{
	expect_answer("paraffins", "14", 2,
		      "answer: paraffins(14): 1858 molecules of size 14, 3324 "
		      "of sizes 1..14");
	expect_twin("paraffins", "15", "15", 3);
}
Test(apps, pfold)
{
	expect_answer("pfold", "2 2 3 3", 3,
		      "answer: pfold(2,2,3) = 1168 directed paths");
	expect_twin("pfold", "1 3 5 4", "1 3 5", 2);
}
Test(apps, tomcatv)
{
	expect_twin("tomcatv", "33 12", "33 12", 3);
}
Test(apps, ray)
{
	expect_twin("ray", "40 24 1", "40 24", 2);
}
Test(apps, jacobi)
{
	expect_answer("jacobi", "254", 2,
		      "answer: jacobi(254): 360 sweeps, interior sum "
		      "9962.2054793528");
	expect_twin("jacobi", "30", "30", 3);
}
Test(apps, matmul)
{
	expect_answer("matmul", "96", 3, "answer: matmul(96): sum ");
	expect_twin("matmul", "50", "50", 2);
}
Test(apps, quad)
{
	/* the known call counts (k = 11, 12) take seconds: run_apps.sh
	 * checks k = 11; here the exact area and the twin's call count */
	expect_answer("quad", "5 6", 3, "area 1391570583552.8, 1324931 calls");
	expect_twin("quad", "5 6", "5", 2);
}
Test(apps, exptree)
{
	expect_answer("exptree", "24 4", 3, "root scale 0.5, ");
	expect_twin("exptree", "20 3", "20 3", 2);
}

Test(apps, bad_arguments_are_refused)
{
	require_apps();
	int rc = run_prog("nqueens", "40", 0);
	cr_expect_eq(rc, 2, "nqueens 40: exit %d\n%s", rc, out);
	cr_expect(strstr(out, "(n) '40': give an integer in 1..16"), "%s", out);
	rc = run_prog("pfold_seq", "8 8 8", 0);
	cr_expect_eq(rc, 2, "pfold_seq 8 8 8: exit %d\n%s", rc, out);
	cr_expect(strstr(out, "more than 64 vertices"), "%s", out);
	rc = run_prog("ray", "10 10 1 a b", 0);
	cr_expect_eq(rc, 2, "ray with 5 arguments: exit %d\n%s", rc, out);
	cr_expect(strstr(out, "too many arguments"), "%s", out);
}

/* pfold.tc with the join's `kids` left out of the restore set and
 * poisoned: no child count is summed and the program must say so. */
Test(apps, wrong_answer_is_reported)
{
	char dir[64];
	require_apps();
	setenv("EARTH_BUILD", T_APPS_BUILD, 0); /* earthcc's plugin, libearth */
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, "-Ibenchmarks/apps benchmarks/apps/pfold.tc",
		 "--poison --drop=kids");
	int rc = tc_exec(out, sizeof out, dir, "", "2 2 2 3");
	cr_expect_eq(rc, 1, "pfold with kids dropped: exit %d\n%s", rc, out);
	cr_expect(strstr(out, "MISMATCH: known count"), "%s", out);
	tc_cleanup(dir);
}
