/* SPDX-License-Identifier: MIT */
/*
 * pfold_seq.c - the sequential twin of pfold.tc: every start vertex,
 * then backtracking.
 *   pfold_seq [x y z]   (default 2 3 3; x*y*z <= 64)
 */
#include "apps.h"
#include "pfold.h"

int main(int argc, char **argv)
{
	int x, y, z;
	if (apps_arg_max(argc, argv, 3, "pfold_seq [x y z]") ||
	    pf_args(argc, argv, &x, &y, &z))
		return 2;
	double t0 = apps_now_ms();
	pf_build(x, y, z);
	long n = 0;
	for (int s = 0; s < pf.v; s++)
		n += pf_count(s, 1ull << s, pf.v - 1);
	double ms = apps_now_ms() - t0;
	apps_answer("pfold(%d,%d,%d) = %ld directed paths", x, y, z, n);
	long want = pf_known(x, y, z);
	return apps_verdict(ms, !want || n == want,
			    want ? "known count"
				 : "no known count for this grid");
}
