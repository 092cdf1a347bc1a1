/* SPDX-License-Identifier: MIT */
/*
 * paraffins_seq.c - the sequential twin of paraffins.tc: builds the
 * radicals and runs every task in order.
 *   paraffins_seq [n]   (default 22; n <= 28)
 */
#include "apps.h"
#include "paraffins.h"

int main(int argc, char **argv)
{
	int n;
	if (apps_arg_max(argc, argv, 1, "paraffins_seq [n]") ||
	    apps_arg_int(argc, argv, 1, 22, 1, PAR_MAX_N, "n", &n))
		return 2;
	long mol[PAR_MAX_N + 1] = {0};
	uint64_t hash[PAR_MAX_N + 1] = {0};
	double t0 = apps_now_ms();
	par_build(n);
	for (int i = 1; i <= n; i++)
		for (int t = par.first[i]; t < par.first[i + 1]; t++)
			par_run_task(&par.task[t], &mol[i], &hash[i]);
	double ms = apps_now_ms() - t0;
	return par_report(n, mol, hash, ms);
}
