/* SPDX-License-Identifier: MIT */
/*
 * tomcatv_seq.c - the sequential twin of tomcatv.tc.
 *   tomcatv_seq [n [itmax]]   (default 129 100; n <= 513)
 */
#include "apps.h"
#include "tomcatv.h"

static tv_grid x, y, aa, dd, rx, ry;
static double hx[TV_ITMAX], hy[TV_ITMAX];

int main(int argc, char **argv)
{
	int n, itmax;
	if (apps_arg_max(argc, argv, 2, "tomcatv_seq [n [itmax]]") ||
	    tv_args(argc, argv, &n, &itmax))
		return 2;
	tv_init(n, x, y);
	double t0 = apps_now_ms();
	int iters = tv_seq(n, itmax, x, y, aa, dd, rx, ry, hx, hy);
	double ms = apps_now_ms() - t0;
	tv_answer(n, iters, hx, hy);
	return apps_verdict(ms, 1, "the reference run itself");
}
