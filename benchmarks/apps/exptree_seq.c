/* SPDX-License-Identifier: MIT */
/*
 * exptree_seq.c - the sequential twin of exptree.tc: the tree evaluated
 * depth first.
 *   exptree_seq [n [height]]   (default 70 7; n <= 96, height <= 10)
 */
#include "apps.h"
#include "exptree.h"

/* Node `idx` of level h (leaves: h = 0) into out. */
static void eval(int n, int h, int idx, double *out)
{
	if (h == 0) {
		et_leaf(n, idx, out);
		return;
	}
	double *l = malloc(2 * sizeof(double) * n * n);
	if (!l) {
		fprintf(stderr, "exptree_seq: out of memory\n");
		exit(2);
	}
	eval(n, h - 1, 2 * idx, l);
	eval(n, h - 1, 2 * idx + 1, l + n * n);
	et_mul(n, l, l + n * n, out);
	free(l);
}

static double root[ET_NMAX * ET_NMAX];

int main(int argc, char **argv)
{
	int n, h;
	if (apps_arg_max(argc, argv, 2, "exptree_seq [n [height]]") ||
	    et_args(argc, argv, &n, &h))
		return 2;
	double t0 = apps_now_ms();
	eval(n, h, 0, root);
	double ms = apps_now_ms() - t0;
	return et_report(n, h, root, ms);
}
