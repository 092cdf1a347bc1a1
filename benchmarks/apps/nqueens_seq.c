/* SPDX-License-Identifier: MIT */
/*
 * nqueens_seq.c - the sequential twin of nqueens.tc.
 *   nqueens_seq [n]   (default 12; n <= 16)
 */
#include "apps.h"
#include "nqueens.h"

int main(int argc, char **argv)
{
	int n;
	if (apps_arg_max(argc, argv, 1, "nqueens_seq [n]") ||
	    apps_arg_int(argc, argv, 1, 12, 1, NQ_MAX, "n", &n))
		return 2;
	double t0 = apps_now_ms();
	long r = nq_solve((1u << n) - 1, 0, 0, 0);
	double ms = apps_now_ms() - t0;
	apps_answer("queens(%d) = %ld", n, r);
	return apps_verdict(ms, r == nq_known[n], "OEIS A000170");
}
