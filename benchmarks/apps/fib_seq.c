/* SPDX-License-Identifier: MIT */
/*
 * fib_seq.c - the sequential twin of fib.tc: fib(n) by plain recursion.
 *   fib_seq [n]   (default 30; n <= 50)
 */
#include "apps.h"
#include "fib.h"

int main(int argc, char **argv)
{
	int n;
	if (apps_arg_max(argc, argv, 1, "fib_seq [n]") ||
	    apps_arg_int(argc, argv, 1, 30, 0, FIB_MAX, "n", &n))
		return 2;
	double t0 = apps_now_ms();
	long r = fib_rec(n);
	double ms = apps_now_ms() - t0;
	apps_answer("fib(%d) = %ld", n, r);
	return apps_verdict(ms, r == fib_iter(n), "iterative fib");
}
