/* SPDX-License-Identifier: MIT */
/*
 * t_uts.c - Unbalanced Tree Search with TOKEN (benchmarks/compare/
 * earth_uts.c): the small geometric and binomial trees (s1, s3, the shapes
 * of the published T1 and T3) counted exactly on 1-4 nodes in every node
 * mode and over tcp, against the sequential count the program makes on
 * node 0; a bad tree name is refused. T1 and T3 themselves are checked
 * against their published counts by the benchmark (compare.sh).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "job.h"

TestSuite(uts, .timeout = 240);

static const char *const modes[] = {"dual", "single-interrupt", "single-poll"};

static void expect_tree(const char *mode, const char *tr, int nodes,
			const char *tree)
{
	struct t_cmd c;
	/* a single-core node has one EU (make test's k = 2, 3 too) */
	t_sh(&c, 60, "env %s EARTH_MODE=%s %s --transport %s -n %d %s/uts %s",
	     strcmp(mode, "dual") ? "EARTH_EUS=1" : "", mode, T_EARTHRUN, tr,
	     nodes, T_PROG_DIR, tree);
	cr_assert_eq(c.status, 0, "%s %s %d nodes %s: status %d\n%s\n%s", mode,
		     tr, nodes, tree, c.status, c.out, c.err);
	char want[64];
	snprintf(want, sizeof(want), "uts: %s nodes=", tree);
	const char *p = strstr(c.out, want);
	cr_assert(p && strstr(p, " correct (sequential "),
		  "%s %s %d nodes %s: %s\n%s", mode, tr, nodes, tree, c.out,
		  c.err);
	/* The count printed is the one the sequential twin gave. */
	long got = 0, seq = -1;
	cr_assert_eq(sscanf(p + strlen(want), "%ld correct (sequential %ld)",
			    &got, &seq),
		     2, "%s", c.out);
	cr_assert_eq(got, seq, "%s", c.out);
	cr_assert_gt(got, 1000, "%s", c.out);
}

Test(uts, small_trees_exact_one_to_four_nodes_every_mode)
{
	for (int m = 0; m < 3; m++)
		for (int nodes = 1; nodes <= 4; nodes++) {
			expect_tree(modes[m], "shm", nodes, "s1");
			expect_tree(modes[m], "shm", nodes, "s3");
		}
}

Test(uts, small_trees_exact_over_tcp)
{
	expect_tree("dual", "tcp", 3, "s3");
	expect_tree("single-poll", "tcp", 2, "s1");
}

Test(uts, bad_tree_refused)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s/uts t9", T_PROG_DIR);
	cr_assert_eq(c.status, 2, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.err, "TREE one of t1 t3 s1 s3"), "%s", c.err);
}
