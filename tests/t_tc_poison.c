/* SPDX-License-Identifier: MIT */
/*
 * t_tc_poison.c - the computed sets are enough: built with --poison, every
 * local that is not in a fiber's restore set is filled with 0xA5 bytes at
 * the fiber's start, and every example still computes the right result.
 * The negative cases prove that the check bites: a restore set one
 * variable too small (--drop=VAR) or a save set one variable too small
 * (--drop-save=VAR) gives a wrong result.
 */
#include "tc/tc_run.h"

TestSuite(tc_poison, .timeout = 240);

static char out[65536];

static int poisoned(const char *src, const char *flags, const char *args)
{
	char dir[64], f[256];
	tc_require();
	tc_tmpdir(dir);
	snprintf(f, sizeof f, "--poison %s", flags);
	tc_build(dir, src, f);
	int rc = tc_exec(out, sizeof out, dir, "", args);
	tc_cleanup(dir);
	return rc;
}

static void same_results(const char *src, const char *args, const char *want)
{
	int rc = poisoned(src, "", args);
	cr_expect_eq(rc, 0, "%s: %d\n%s", src, rc, out);
	cr_expect(strstr(out, want), "%s: no '%s' in\n%s", src, want, out);
}

Test(tc_poison, fib)
{
	same_results("threaded-c/examples/fib.tc", "16", "fib(16) = 987");
}
Test(tc_poison, nqueens)
{
	same_results("threaded-c/examples/nqueens.tc", "9 3",
		     "queens(9) = 352 (correct)");
}
Test(tc_poison, pipeline)
{
	same_results("threaded-c/examples/pipeline.tc", "300", "(correct)");
}
Test(tc_poison, reduce)
{
	same_results("threaded-c/examples/reduce.tc", "10000 8", "(correct)");
}
Test(tc_poison, hello)
{
	same_results("threaded-c/examples/hello.tc", "", "1 node(s) answered");
}
Test(tc_poison, corpus_odd)
{
	same_results("tests/tc/corpus/odd.tc", "", "ok");
}

Test(tc_poison, corpus_scopes)
{
	same_results("tests/tc/corpus/scopes.tc", "", "ok");
}

/* Each variable of the pipeline's restore set {n sum want i} is needed:
 * leaving out any of n, sum, want gives a wrong sum. */
Test(tc_poison, restore_set_one_too_small_is_caught)
{
	const char *vars[] = {"sum", "want", "n"};
	for (size_t i = 0; i < 3; i++) {
		char f[64];
		/* The poison value may now reach code gcc can see through
		 * (array bounds): do not make its warnings errors. */
		snprintf(f, sizeof f, "--drop=%s -Wno-error", vars[i]);
		int rc = poisoned("threaded-c/examples/pipeline.tc", f, "200");
		cr_expect(
		    rc != 0 && !strstr(out, "(correct)"),
		    "dropping %s from the restore sets went unnoticed:\n%s",
		    vars[i], out);
	}
}

Test(tc_poison, save_set_one_too_small_is_caught)
{
	int rc = poisoned("threaded-c/examples/pipeline.tc", "--drop-save=sum",
			  "200");
	cr_expect(rc != 0 && strstr(out, "WRONG"),
		  "dropping sum from the save sets went unnoticed:\n%s", out);
}
