/* SPDX-License-Identifier: MIT */
/*
 * matmul_seq.c - the sequential twin of matmul.tc.
 *   matmul_seq [n]   (default 256; n <= 1024)
 */
#include "apps.h"
#include "matmul.h"

static mm_mat a, b, c;

int main(int argc, char **argv)
{
	int n;
	if (apps_arg_max(argc, argv, 1, "matmul_seq [n]") ||
	    apps_arg_int(argc, argv, 1, 256, 1, MM_NMAX, "n", &n))
		return 2;
	mm_init(n, a, b);
	double t0 = apps_now_ms();
	mm_rows(n, 0, n, a, b, c);
	double ms = apps_now_ms() - t0;
	return mm_report(n, c, ms);
}
