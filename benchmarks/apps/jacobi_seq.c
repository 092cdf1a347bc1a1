/* SPDX-License-Identifier: MIT */
/*
 * jacobi_seq.c - the sequential twin of jacobi.tc.
 *   jacobi_seq [n]   (default 256; n <= 1024)
 */
#include "apps.h"
#include "jacobi.h"

static jac_grid g[2];

int main(int argc, char **argv)
{
	int n;
	if (apps_arg_max(argc, argv, 1, "jacobi_seq [n]") ||
	    apps_arg_int(argc, argv, 1, 256, 1, JAC_NMAX, "n", &n))
		return 2;
	jac_init(n, g[0]);
	jac_init(n, g[1]);
	double t0 = apps_now_ms();
	int it = 0;
	double d;
	do
		d = jac_sweep(n, 1, n + 1, g[it & 1], g[(it + 1) & 1]);
	while (++it < JAC_MAXIT && d >= JAC_EPS);
	double sum = jac_sum(n, g[it & 1]);
	double ms = apps_now_ms() - t0;
	return jac_report(n, it, sum, ms, it, sum, 1);
}
