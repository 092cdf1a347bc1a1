/* SPDX-License-Identifier: MIT */
/*
 * uts.h - Unbalanced Tree Search, shared by uts.tc and uts_seq.c: the
 * trees, node states (SHA-1) and the sequential count of
 * benchmarks/compare/uts.h, and the tree argument.
 */
#ifndef APPS_UTS_H
#define APPS_UTS_H

#include "apps.h"
#include "../compare/uts.h"

/* The tree named by argument i (default def), as an index of uts_trees;
 * -1 after a message. */
static inline int apps_uts_tree(int argc, char **argv, int i, const char *def)
{
	const char *name = argc > i ? argv[i] : def;
	const struct uts_tree *t = uts_tree_named(name);
	if (!t) {
		fprintf(stderr, "uts: tree '%s': use t1, t3, s1 or s3\n", name);
		return -1;
	}
	return (int)(t - uts_trees);
}

#endif /* APPS_UTS_H */
