/* SPDX-License-Identifier: MIT */
/*
 * t_tc_dsm_counts.c - the exact counts of the latency-hiding programs
 * (benchmarks/tc_dsm): the Jacobi and the matrix multiply written with
 * fibers (hide.tc, earth_dsm_fiber.h) fetch exactly the pages the same
 * programs with program threads of the page DSM (threads.c) fetch, node
 * by node, and send the same diffs (none: every page is written by its
 * home), on 2 nodes over shm; both meet the formula of the data layout
 * (every page homed on its writer, page-cyclic; each step fetches every
 * page of the other node it reads once, however many workers want it),
 * with 1 and several workers per node and under the emulated network; both
 * compute what a sequential run computes, bit for bit. Bad arguments are
 * refused with the usage. Skipped, with a message, when the fiber version
 * is not built (it needs clang-14 and the earth_tc plugin: make apps).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "hide.h"

TestSuite(tc_dsm_counts, .timeout = 600);

enum { W = 512, M = 16 }; /* doubles a 4 KiB page; rows of A and C */

static struct t_cmd cmd;

struct counts {
	long fetches[2], diffs[2];
	double checksum;
};

static void require_progs(void)
{
	if (access(T_TCD_HIDE, X_OK) != 0 || access(T_TCD_THREADS, X_OK) != 0 ||
	    access(T_EARTHRUN, X_OK) != 0)
		cr_skip_test(
		    "tc_dsm programs skipped: " T_TCD_HIDE " or " T_TCD_THREADS
		    " is not built (make apps; the fiber version needs "
		    "clang-14 and the earth_tc plugin)");
}

/* PROG -m MODE WFLAG WORKERS ARGS on 2 nodes over shm with the emulated
 * delay lat_ns: its counts per node (--stats-json) and its checksum. */
static struct counts run(const char *prog, const char *mode, const char *wflag,
			 int workers, const char *args, long lat_ns)
{
	char dir[64], json[96];
	t_scratch_dir(dir, sizeof(dir), "t_tc_dsm_counts");
	snprintf(json, sizeof(json), "%s/stats.json", dir);
	struct counts c = {{-1, -1}, {-1, -1}, 0};
	/* The protocol's counts: no home page kept writable across releases
	 * (EARTH_DSM_HOME_KEEP: its notices name pages not written since, so
	 * a reader fetches them again, as often as timing lets it) and no
	 * page refreshed at a grant. */
	t_sh(&cmd, 300,
	     "env EARTH_NET_LATENCY_NS=%ld EARTH_DSM_HOME_KEEP=0 "
	     "EARTH_DSM_REFRESH=0 %s -n 2 --transport shm "
	     "--stats-json=%s "
	     "%s -m %s %s %d %s",
	     lat_ns, T_EARTHRUN, json, prog, mode, wflag, workers, args);
	cr_assert_eq(cmd.status, 0, "%s -m %s %s %d %s: status %d\n%s%s", prog,
		     mode, wflag, workers, args, cmd.status, cmd.out, cmd.err);
	const char *p = strstr(cmd.out, "checksum ");
	cr_assert(p, "no checksum in\n%s", cmd.out);
	c.checksum = strtod(p + 9, NULL);
	t_sh(&cmd, 30,
	     "jq -r '.nodes[] | \"\\(.node) \\(.dsm.fetches) \\(.dsm.diffs)\"' "
	     "%s",
	     json);
	t_remove_dir(dir);
	cr_assert_eq(cmd.status, 0, "jq: %s%s", cmd.out, cmd.err);
	const char *s = cmd.out;
	for (int k = 0; k < 2; k++) {
		int node, used = 0;
		long f, d;
		cr_assert_eq(sscanf(s, "%d %ld %ld%n", &node, &f, &d, &used), 3,
			     "stats: %s", cmd.out);
		cr_assert(node == 0 || node == 1, "stats: %s", cmd.out);
		c.fetches[node] = f;
		c.diffs[node] = d;
		s += used;
	}
	return c;
}

/* Fibers against threads, both against the formula and the checksum. */
static void same(const char *mode, int workers, const char *args, long lat_ns,
		 const long want_fetches[2], double want_sum)
{
	struct counts f = run(T_TCD_HIDE, mode, "-f", workers, args, lat_ns);
	struct counts t = run(T_TCD_THREADS, mode, "-k", workers, args, lat_ns);
	for (int k = 0; k < 2; k++) {
		cr_expect_eq(f.fetches[k], t.fetches[k],
			     "%s %s, %d per node: node %d fetches: fibers %ld, "
			     "threads %ld",
			     mode, args, workers, k, f.fetches[k],
			     t.fetches[k]);
		cr_expect_eq(
		    f.fetches[k], want_fetches[k],
		    "%s %s, %d per node: node %d fetches %ld, want %ld", mode,
		    args, workers, k, f.fetches[k], want_fetches[k]);
		cr_expect_eq(f.diffs[k], 0, "%s: node %d diffs (fibers) %ld",
			     mode, k, f.diffs[k]);
		cr_expect_eq(t.diffs[k], 0, "%s: node %d diffs (threads) %ld",
			     mode, k, t.diffs[k]);
	}
	cr_expect(f.checksum == want_sum && t.checksum == want_sum,
		  "%s: checksum fibers %.17g, threads %.17g, sequential %.17g",
		  mode, f.checksum, t.checksum, want_sum);
}

/* n pages, s sweeps, r + 1 repetitions: each sweep every node fetches the
 * n / 2 pages of the other node (its blocks' neighbours: all of them);
 * then main (node 0) reads the result, fetching node 1's n / 2 pages. */
static void jacobi(int workers, long n, long s, long r, long lat_ns)
{
	static double x[64 * W], y[64 * W];
	cr_assert_leq(n, 64);
	long npts = n * W;
	for (long i = 0; i < npts; i++)
		x[i] = y[i] = hj_init(i, npts);
	for (long k = 0; k < s; k++)
		hj_block(k % 2 ? y : x, k % 2 ? x : y, 0, npts, npts);
	double sum = hide_sum(s % 2 ? y : x, npts);
	long per = (r + 1) * s * (n / 2);
	long want[2] = {per + n / 2, per};
	char args[64];
	snprintf(args, sizeof(args), "-n %ld -s %ld -r %ld", n, s, r);
	same("jacobi", workers, args, lat_ns, want, sum);
}

/* K rows of B, r + 1 repetitions: each product every node fetches the
 * K / 2 rows of B homed on the other node, once; then main reads node 1's
 * M / 2 rows of C. */
static void matmul(int workers, long kk, long r, long lat_ns)
{
	static double c[M * W], acc[M / 2 * W];
	memset(c, 0, sizeof(c));
	static double a[M * W], b[256 * W];
	cr_assert_leq(kk, 256);
	for (long i = 0; i < M; i++)
		for (long k = 0; k < kk; k++)
			a[i * W + k] = hm_a(i, k);
	for (long k = 0; k < kk; k++)
		for (long j = 0; j < W; j++)
			b[k * W + j] = hm_b(k, j);
	for (long h = 0; h < 2; h++) {
		for (long k = 0; k < kk; k++)
			hm_update(a, b, acc, M, W, h, k, k == 0);
		for (long i = h; i < M; i += 2)
			memcpy(c + i * W, acc + (i / 2) * W,
			       sizeof(double) * W);
	}
	long per = (r + 1) * (kk / 2);
	long want[2] = {per + M / 2, per};
	char args[64];
	snprintf(args, sizeof(args), "-n %ld -r %ld", kk, r);
	same("matmul", workers, args, lat_ns, want, hide_sum(c, M * W));
}

Test(tc_dsm_counts, jacobi_fibers_equal_threads)
{
	require_progs();
	jacobi(1, 16, 3, 1, 0);
	jacobi(4, 32, 2, 1, 0);
	/* several workers wanting one page while the network delays it */
	jacobi(8, 16, 2, 1, 20000);
}

Test(tc_dsm_counts, matmul_fibers_equal_threads)
{
	require_progs();
	matmul(1, 32, 1, 0);
	matmul(4, 64, 1, 0);
	matmul(8, 32, 1, 20000);
}

/* PROG ARGS on 2 nodes: refused (status not 0), with the usage when
 * usage is not NULL. */
static void refused(const char *prog, const char *args, const char *usage)
{
	t_sh(&cmd, 60, "%s -n 2 --transport shm %s %s", T_EARTHRUN, prog, args);
	cr_expect_neq(cmd.status, 0, "%s %s: status 0", prog, args);
	cr_expect(!usage || strstr(cmd.err, usage) || strstr(cmd.out, usage),
		  "%s %s: no \"%s\" in\n%s%s", prog, args, usage ? usage : "",
		  cmd.out, cmd.err);
}

Test(tc_dsm_counts, bad_arguments_refused)
{
	require_progs();
	refused(T_TCD_HIDE, "-m nope", "usage: earthrun -n 2 hide");
	refused(T_TCD_THREADS, "-m jacobi -k 0",
		"usage: earthrun -n 2 hide_threads");
	refused(T_TCD_HIDE, "-m jacobi -f 65", "usage: earthrun -n 2 hide");
	refused(T_TCD_HIDE, "-m matmul -n 1", NULL);
}
