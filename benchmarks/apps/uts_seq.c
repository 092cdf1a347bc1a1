/* SPDX-License-Identifier: MIT */
/*
 * uts_seq.c - the sequential twin of uts.tc: the tree counted by plain
 * recursion (uts_count_seq), checked against the published count (t1, t3;
 * s1 and s3 have none: their count is the answer).
 *   uts_seq [tree]   (default s3)
 */
#include "uts.h"

int main(int argc, char **argv)
{
	int tree;
	if (apps_arg_max(argc, argv, 1, "uts_seq [tree]") ||
	    (tree = apps_uts_tree(argc, argv, 1, "s3")) < 0)
		return 2;
	const struct uts_tree *t = &uts_trees[tree];
	double t0 = apps_now_ms();
	long r = uts_count_seq(t);
	double ms = apps_now_ms() - t0;
	apps_answer("uts(%s) = %ld nodes", t->name, r);
	return apps_verdict(ms, !t->nodes || r == t->nodes, "published count");
}
