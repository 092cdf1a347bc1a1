/* SPDX-License-Identifier: MIT */
/*
 * t_tc_golden.c - the generated C and the computed sets of every example
 * and corpus file match the golden files in tests/tc/golden/ (NAME.gen.c,
 * NAME.sets: relative paths only, sets in declaration order, no CFG block
 * ids or pointer-ordered output, so they are stable across runs and Clang
 * patch versions; generating twice gives the same bytes), the generated C
 * compiles warning-free with gcc and clang (-Wall -Wextra -Werror), the
 * JSON report is written, and minimal sets move fewer variables than the
 * --save-all baseline. TC_UPDATE_GOLDEN=1 rewrites the golden files.
 */
#include "tc/tc_run.h"

TestSuite(tc_golden, .timeout = 90);

static char out[65536];

static void golden(const char *src, const char *name, const char *flags)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	int rc =
	    tc_sh(out, sizeof out,
		  TC_EARTHCC " --tc-only %s --emit-c=%s/g.c --stats=%s/g.sets "
			     "--stats-json=%s/g.json %s",
		  flags, dir, dir, dir, src);
	cr_assert_eq(rc, 0, "earthcc %s: %d\n%s", src, rc, out);
	if (getenv("TC_UPDATE_GOLDEN"))
		tc_sh(out, sizeof out,
		      "cp %s/g.c tests/tc/golden/%s.gen.c && "
		      "cp %s/g.sets tests/tc/golden/%s.sets",
		      dir, name, dir, name);
	rc = tc_sh(out, sizeof out,
		   TC_EARTHCC " --tc-only %s --emit-c=%s/again.c %s && "
			      "cmp %s/g.c %s/again.c",
		   flags, dir, src, dir, dir);
	cr_expect_eq(rc, 0, "two runs gave different C:\n%s", out);
	rc = tc_sh(out, sizeof out, "diff -u tests/tc/golden/%s.gen.c %s/g.c",
		   name, dir);
	cr_expect_eq(rc, 0, "generated C differs from golden:\n%s", out);
	rc = tc_sh(out, sizeof out, "diff -u tests/tc/golden/%s.sets %s/g.sets",
		   name, dir);
	cr_expect_eq(rc, 0, "sets differ from golden:\n%s", out);
	rc = tc_sh(out, sizeof out,
		   "grep -q '\"functions\": \\[{\"name\"' %s/g.json", dir);
	cr_expect_eq(rc, 0, "JSON report missing or malformed");
	const char *ccs[] = {"gcc", "clang-14"};
	for (int i = 0; i < 2; i++) {
		rc = tc_sh(out, sizeof out,
			   "%s -std=gnu17 -O2 -Wall -Wextra -Werror "
			   "-Ithreaded-c/include -Iruntime/include -c %s/g.c "
			   "-o %s/g.o",
			   ccs[i], dir, dir);
		cr_expect_eq(rc, 0, "%s warns on the generated C:\n%s", ccs[i],
			     out);
	}
	tc_cleanup(dir);
}

Test(tc_golden, fib)
{
	golden("threaded-c/examples/fib.tc", "fib", "");
}
Test(tc_golden, hello)
{
	golden("threaded-c/examples/hello.tc", "hello", "");
}
Test(tc_golden, reduce)
{
	golden("threaded-c/examples/reduce.tc", "reduce", "");
}
Test(tc_golden, corpus_ops)
{
	golden("tests/tc/corpus/ops.tc", "ops", "");
}
Test(tc_golden, pipeline)
{
	golden("threaded-c/examples/pipeline.tc", "pipeline", "");
}
Test(tc_golden, pipeline_save_all)
{
	golden("threaded-c/examples/pipeline.tc", "pipeline.save-all",
	       "--save-all");
}
Test(tc_golden, nqueens)
{
	golden("threaded-c/examples/nqueens.tc", "nqueens", "");
}
Test(tc_golden, corpus_odd)
{
	golden("tests/tc/corpus/odd.tc", "odd", "");
}
Test(tc_golden, corpus_scopes)
{
	golden("tests/tc/corpus/scopes.tc", "scopes", "");
}
Test(tc_golden, corpus_proto_header)
{
	golden("tests/tc/corpus/proto.tc", "proto", "");
}
Test(tc_golden, poison_mode)
{
	golden("tests/tc/corpus/odd.tc", "odd.poison", "--poison");
}

/* restored + saved < naive (every in-scope local at every boundary). */
Test(tc_golden, minimal_below_naive)
{
	static const char *const progs[] = {
	    "fib", "pipeline", "nqueens", "odd", "reduce", "scopes",
	};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		char path[128], line[512];
		snprintf(path, sizeof path, "tests/tc/golden/%s.sets",
			 progs[i]);
		FILE *f = fopen(path, "r");
		cr_assert_not_null(f, "%s", path);
		long r = -1, s = -1, n = -1;
		while (fgets(line, sizeof line, f)) {
			const char *p = strstr(line, "earth_tc: ");
			if (p)
				sscanf(strstr(p, "restored="),
				       "restored=%ld saved=%ld naive=%ld", &r,
				       &s, &n);
		}
		fclose(f);
		cr_expect(r >= 0 && r + s < n,
			  "%s: restored %ld + saved %ld vs naive %ld", progs[i],
			  r, s, n);
	}
}
Test(tc_golden, inserted_ranges)
{
	golden("tests/tc/corpus/dsm_insert_ranges.tc", "dsm_insert_ranges", "");
}
