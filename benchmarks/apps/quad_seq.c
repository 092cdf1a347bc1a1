/* SPDX-License-Identifier: MIT */
/*
 * quad_seq.c - the sequential twin of quad.tc.
 *   quad_seq [k]   (tol = 10^-k; default 9; k <= 13)
 */
#include "apps.h"
#include "quad.h"

int main(int argc, char **argv)
{
	int k;
	if (apps_arg_max(argc, argv, 1, "quad_seq [k]") ||
	    apps_arg_int(argc, argv, 1, 9, 0, 13, "k", &k))
		return 2;
	long calls = 0;
	double t0 = apps_now_ms();
	double area = quad_rec(QUAD_L, QUAD_R, quad_f(QUAD_L), quad_f(QUAD_R),
			       0.0, quad_tol(k), &calls);
	double ms = apps_now_ms() - t0;
	return quad_report(k, area, calls, ms);
}
