/* SPDX-License-Identifier: MIT */
/*
 * t_ucx_floor.c - the raw floors of benchmarks/ucx_floor/ at tiny sizes:
 * the driver (T_UCX_FLOOR_DRIVER) runs ucp_floor over shm and tcp and,
 * where Open MPI is, mpi_floor over vader and tcp; every figure comes as
 * a well-formed "METRIC name value unit" line with a positive value, each
 * run says where its two processes ran, nothing moved was wrong (the
 * programs check every pong, word fetched and block put or got, and exit 1
 * otherwise). Bad arguments are refused with a message; a target killed
 * mid-run over tcp ends the origin with a message.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#ifndef T_UCX_FLOOR_DIR
#define T_UCX_FLOOR_DIR "build/rel/ucx_floor"
#endif
#ifndef T_UCX_FLOOR_DRIVER
#define T_UCX_FLOOR_DRIVER "build/rel/bench/ucx_floor"
#endif

TestSuite(ucx_floor, .timeout = 120);

static struct t_cmd cmd;

/* The value of the METRIC line named `name` in out, checking that the
 * line is "METRIC name value unit" exactly; NAN when absent. */
static double metric(const char *out, const char *name, const char *unit)
{
	char want[128];
	snprintf(want, sizeof(want), "METRIC %s ", name);
	for (const char *p = out; (p = strstr(p, want)); p++) {
		if (p != out && p[-1] != '\n')
			continue;
		char line[256];
		size_t n = strcspn(p, "\n");
		cr_assert_lt(n, sizeof(line), "METRIC line too long");
		memcpy(line, p, n);
		line[n] = 0;
		char nm[128], u[32], extra[8];
		double v;
		cr_assert_eq(
		    sscanf(line, "METRIC %127s %lf %31s %7s", nm, &v, u, extra),
		    3, "malformed: '%s'", line);
		cr_assert_str_eq(u, unit, "unit of '%s'", line);
		cr_assert(isfinite(v) && v > 0, "value of '%s' not positive",
			  line);
		return v;
	}
	return NAN;
}

static int have_mpi(void)
{
	return access(T_UCX_FLOOR_DIR "/mpi_floor", X_OK) == 0 &&
	       system("command -v mpirun >/dev/null 2>&1") == 0;
}

Test(ucx_floor, every_figure_at_tiny_size)
{
	t_sh(&cmd, 110,
	     "env QUICK=1 BENCH_REPS=5 " T_UCX_FLOOR_DRIVER " 50 65536 4");
	cr_assert_eq(cmd.status, 0, "status %d\nout:\n%s\nerr:\n%s", cmd.status,
		     cmd.out, cmd.err);
	cr_assert_null(strstr(cmd.out, "WRONG"), "%s", cmd.out);
	static const char *const m[] = {"shm", "tcp"};
	for (int i = 0; i < 2; i++) {
		char n[64], pl[64];
		snprintf(n, sizeof(n), "pingpong_rtt.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "ns")), "no %s:\n%s", n,
			  cmd.out);
		snprintf(n, sizeof(n), "ucp_get_lat.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "ns")), "no %s", n);
		snprintf(n, sizeof(n), "ucp_put_bw.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "MB/s")), "no %s", n);
		snprintf(n, sizeof(n), "ucp_get_lat_own.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "ns")), "no %s", n);
		snprintf(n, sizeof(n), "ucp_put_bw_own.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "MB/s")), "no %s", n);
		snprintf(n, sizeof(n), "ucp_get_bw.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "MB/s")), "no %s", n);
		snprintf(n, sizeof(n), "ucp_get_bw_own.ucx_%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "MB/s")), "no %s", n);
		snprintf(pl, sizeof(pl),
			 "# ucp_floor.%s: placement: origin "
			 "pinned to CPU",
			 m[i]);
		cr_assert_not_null(strstr(cmd.out, pl), "no placement:\n%s",
				   cmd.out);
		if (!have_mpi())
			continue;
		snprintf(n, sizeof(n), "mpi_pingpong_rtt.%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "ns")), "no %s:\n%s", n,
			  cmd.out);
		snprintf(n, sizeof(n), "mpi_get_lat.%s", m[i]);
		cr_assert(!isnan(metric(cmd.out, n, "ns")), "no %s", n);
		snprintf(pl, sizeof(pl), "# mpi_floor.%s: placement: rank 0",
			 m[i]);
		cr_assert_not_null(strstr(cmd.out, pl), "no placement:\n%s",
				   cmd.out);
	}
	if (!have_mpi())
		cr_assert_not_null(strstr(cmd.out, "MPI floors skipped"));
}

Test(ucx_floor, bad_arguments_refused)
{
	t_sh(&cmd, 20, T_UCX_FLOOR_DIR "/ucp_floor ib");
	cr_assert_eq(cmd.status, 2);
	cr_assert_not_null(strstr(cmd.err, "usage: ucp_floor shm|tcp"));
	t_sh(&cmd, 20, T_UCX_FLOOR_DIR "/ucp_floor shm 10 100");
	cr_assert_eq(cmd.status, 2);
	cr_assert_not_null(strstr(cmd.err, "BLOCK a multiple of 8"), "%s",
			   cmd.err);
	t_sh(&cmd, 20, T_UCX_FLOOR_DIR "/ucp_floor tcp 0");
	cr_assert_eq(cmd.status, 2);
	if (!have_mpi())
		return;
	t_sh(&cmd, 30,
	     "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
	     "mpirun "
	     "--oversubscribe -np 2 " T_UCX_FLOOR_DIR "/mpi_floor shm 10 5 0");
	cr_assert_neq(cmd.status, 0);
	cr_assert_not_null(strstr(cmd.err, "usage: mpirun -np 2 mpi_floor"),
			   "%s", cmd.err);
}

/* The target killed mid-run over tcp: the origin learns it from its
 * endpoint (peer error handling) and exits 1 saying so, within seconds,
 * instead of dying of SIGPIPE at the end. */
Test(ucx_floor, target_killed_over_tcp)
{
	t_sh(&cmd, 60,
	     "sh -c 'QUICK=1 " T_UCX_FLOOR_DIR "/ucp_floor tcp 1000000000 & "
	     "sleep 2; pkill -KILL -P $!; wait $!'");
	cr_assert_eq(cmd.status, 1, "status %d\nerr:\n%s", cmd.status, cmd.err);
	cr_assert_not_null(strstr(cmd.err, "the peer's endpoint failed"), "%s",
			   cmd.err);
	cr_assert_not_null(strstr(cmd.err, "the target process ended badly"),
			   "%s", cmd.err);
}
