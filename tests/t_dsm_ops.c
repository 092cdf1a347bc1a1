/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_ops.c - the dsm_ops benchmark's shared-memory program
 * (benchmarks/dsm_ops/prog.c, built under ASan+UBSan) on 2 nodes: every
 * mode gives a result over shm, tcp and ucx (the job itself checks each
 * page's word and the locked counter); the Jacobi on shared memory equals
 * the sequential Jacobi bit for bit; latency hiding runs with 4 threads
 * per node under the emulated network; a bad mode or thread count is
 * refused with the usage.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "jacobi.h"

TestSuite(dsm_ops, .timeout = 600);

static struct t_cmd cmd;

/* prog ARGS on 2 nodes over t (env before); asserts status 0 and a
 * positive "result MODE" */
static void ok_mode(const char *env, const char *t, const char *mode,
		    const char *args)
{
	t_sh(&cmd, 120, "env %s %s -n 2 --transport %s %s -m %s %s", env,
	     T_EARTHRUN, t, T_DSM_OPS_PROG, mode, args);
	cr_assert_eq(cmd.status, 0, "%s %s over %s: status %d\n%s%s", mode,
		     args, t, cmd.status, cmd.out, cmd.err);
	char key[64];
	snprintf(key, sizeof(key), "result %s ", mode);
	const char *p = strstr(cmd.out, key);
	cr_assert(p, "%s over %s: no \"%s\" in\n%s%s", mode, t, key, cmd.out,
		  cmd.err);
	cr_assert_gt(strtod(p + strlen(key), NULL), 0, "%s over %s:\n%s", mode,
		     t, cmd.out);
}

Test(dsm_ops, every_mode_every_transport)
{
	const char *const tr[] = {"shm", "tcp", "ucx"};
	for (int t = 0; t < 3; t++) {
		ok_mode("UCX_TLS=tcp", tr[t], "fault", "-n 40 -r 2");
		ok_mode("UCX_TLS=tcp", tr[t], "lock", "-n 50 -r 2");
		ok_mode("UCX_TLS=tcp", tr[t], "incr", "-n 50 -r 2");
		ok_mode("UCX_TLS=tcp", tr[t], "barrier", "-n 50 -r 2");
		/* Fibers' acquisitions against a thread's faults, the EU's
		 * busy time of each (both words checked by the job). */
		ok_mode("UCX_TLS=tcp EARTH_TIMING=1", tr[t], "miss_eu",
			"-n 40 -r 2");
		cr_assert(strstr(cmd.out, "result miss_eu_thread ") &&
			      strstr(cmd.out, "result miss_eu_hit ") &&
			      strstr(cmd.out, "result miss_eu_check "),
			  "%s", cmd.out);
	}
}

Test(dsm_ops, jacobi_equals_sequential)
{
	static double x[JAC_N], y[JAC_N];
	for (long i = 0; i < JAC_N; i++)
		x[i] = y[i] = jac_init(i);
	for (int s = 0; s < JAC_SWEEPS; s++) {
		double *src = s % 2 ? y : x, *dst = s % 2 ? x : y;
		for (long i = 1; i < JAC_N - 1; i++)
			dst[i] = jac_step(src[i - 1], src[i], src[i + 1]);
	}
	double *res = JAC_SWEEPS % 2 ? y : x, want = 0;
	for (long i = 0; i < JAC_N; i++)
		want += res[i] * (double)(i % 7 + 1);
	ok_mode("", "shm", "jacobi", "-r 1");
	const char *p = strstr(cmd.out, "checksum ");
	cr_assert(p, "no checksum in\n%s", cmd.out);
	double got = strtod(p + 9, NULL);
	cr_assert(got == want, "checksum %.17g, sequential %.17g", got, want);
}

Test(dsm_ops, hiding_under_the_emulated_network)
{
	ok_mode("EARTH_NET_LATENCY_NS=20000", "shm", "hidden",
		"-n 32 -k 4 -r 2");
}

Test(dsm_ops, bad_arguments_refused)
{
	const char *const bad[] = {"-m nonsense", "-m hidden -k 40",
				   "-m fault -r 0"};
	for (int i = 0; i < 3; i++) {
		t_sh(&cmd, 60, "%s -n 2 %s %s", T_EARTHRUN, T_DSM_OPS_PROG,
		     bad[i]);
		cr_assert_neq(cmd.status, 0, "%s: status 0", bad[i]);
		cr_assert(strstr(cmd.err, "usage") || strstr(cmd.out, "usage"),
			  "%s: no usage in\n%s%s", bad[i], cmd.out, cmd.err);
	}
}
