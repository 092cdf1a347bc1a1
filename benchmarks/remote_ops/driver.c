/* SPDX-License-Identifier: MIT */
/*
 * driver.c - remote_ops, Table 1 of the EARTH-MANNA paper over both
 * transports, and what remote operations cost against the floors they
 * are built on. Run it directly: it is the driver, and starts itself as
 * 2-node jobs under earthrun (lib/job.h), whose nodes run job.c.
 *
 *   op_latency.<spawn|load|store|call>.<seq|pipe>.<local|remote>.<shm|tcp>
 *   op_eu_post.<op>.<local|remote>.<shm|tcp>  op_eu_post_ratio.<op>.<tr>
 *   get_remote_rtt.<shm|tcp>  get_remote_rtt_su.shm  pingpong_rtt.<shm|tcp>
 *   get_remote_rtt_over_pingpong.<shm|tcp>  get_remote_rtt_su_over_pingpong.shm
 *   blkmov_bw.<shm|tcp>  blkmov_bw_su.shm  memcpy_bw  tcp_stream_bw
 *   blkmov_bw_over_memcpy.shm  blkmov_bw_over_stream.tcp
 *   barrier.<shm|tcp>
 *   get_remote_rtt.<ucx_shm|ucx_tcp> (one-sided)  blkmov_bw.<ucx_*>
 *   get_remote_rtt_su.<ucx_*>  invoke_rtt.<ucx_*>  barrier.<ucx_*>
 *   blkmov_put_bw.<ucx_*> (node 0's data into node 1's global memory)
 *   get_remote_rtt_over_ucp_get.<ucx_*>  blkmov_put_bw_over_ucp_put.<ucx_*>
 *   blkmov_bw_over_ucp_get_bw.<ucx_*>
 *     (UCX_TLS=posix,cma and tcp; the ratios against the raw 8-byte
 *     ucp_get_nbx, and puts and gets of blocks of the same size, of
 *     ucx_floor's ucp_floor, run just before each job)
 *   balance.<fib|nqueens>.<busy_share.min|busy_share.max|work_share.min|
 *                          steals|time>
 *
 * The vCPUs of a shared host move between placements (a cache-line round
 * trip of ~110 ns or ~500 ns), so every target ratio is taken pair by pair
 * (lib/pairs.h): the driver measures a floor (ping-pong, TCP stream;
 * lib/floors.h), then at once starts a short 2-node job that measures what
 * is compared with it (REMOTE_OPS_PART=pair), several times over; a ratio
 * metric is the median of the pairs' ratios. memcpy_bw is measured inside
 * that job by node 0's EU, copying the very bytes a block move fetches
 * (node 1's segment, mapped here) into the same destination, alternated
 * with the moves. Then one longer job per transport measures Table 1 and
 * the barrier (REMOTE_OPS_PART=table), and two more the balancing
 * (REMOTE_OPS_APP=fib|nqueens): each node's EU busy share and the tokens
 * stolen.
 */
#define _GNU_SOURCE 1
#include "remote_ops.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "lib/floors.h"
#include "lib/job.h"
#include "lib/pairs.h"

/* Runs this program as a 2-node job over `transport` with variable
 * `var`=`val` set, its standard output (at most cap - 1 bytes kept) into
 * out; returns the job's exit status (1: it could not run). */
static int run_job(const char *earthrun, const char *self,
		   const char *transport, const char *var, const char *val,
		   char *out, size_t cap)
{
	char set[128];
	snprintf(set, sizeof(set), "%s=%s", var, val);
	const char *env[] = {set, NULL}, *argv[] = {self, NULL};
	struct bench_job_spec s = {.earthrun = earthrun,
				   .nodes = 2,
				   .transport = transport,
				   .env = env,
				   .argv = argv,
				   .who = "remote_ops"};
	return bench_job_run(&s, out, cap);
}

/* The value of "METRIC name VALUE" in text, or -1. */
static double metric_in(const char *text, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), "METRIC %s ", name);
	const char *p = strstr(text, key);
	return p ? strtod(p + strlen(key), NULL) : -1;
}

/* The figures of ucx_floor's ucp_floor a ucx job is compared with: the
 * 8-byte ucp_get_nbx latency (ns), and the bandwidth of blocks of the
 * block move's size put and got (MB/s), into and from memory UCX
 * allocated; -1 each where it could not run. */
struct ucp_floors {
	double get_lat, put_bw, get_bw;
};

/* Runs ucp_floor over medium (shm, tcp), its lines into the log as
 * comments; its figures into *f. */
static void ucp_floors(const char *self, const char *medium,
		       struct ucp_floors *f)
{
	f->get_lat = f->put_bw = f->get_bw = -1;
	char cmd[PATH_MAX + 64], dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	snprintf(cmd, sizeof(cmd), "'%s/../ucx_floor/ucp_floor' %s 2>&1", dir,
		 medium);
	FILE *pf = popen(cmd, "r");
	if (!pf)
		return;
	static char out[8192];
	size_t len = 0;
	char line[512];
	while (fgets(line, sizeof(line), pf)) {
		printf("# ucp_floor: %s", line);
		size_t k = strlen(line);
		if (len + k < sizeof(out)) {
			memcpy(out + len, line, k);
			len += k;
		}
	}
	out[len] = 0;
	if (pclose(pf) != 0)
		return;
	char name[64];
	snprintf(name, sizeof(name), "ucp_get_lat.ucx_%s", medium);
	f->get_lat = metric_in(out, name);
	snprintf(name, sizeof(name), "ucp_put_bw.ucx_%s", medium);
	f->put_bw = metric_in(out, name);
	snprintf(name, sizeof(name), "ucp_get_bw.ucx_%s", medium);
	f->get_bw = metric_in(out, name);
}

/* METRIC <what>_over_<floor_name>.<lanes>: figure `what` of the job's
 * output against a floor, or a comment where either is missing. */
static void ratio_metric(const char *out, const char *what, const char *lanes,
			 const char *floor_name, double floor)
{
	char name[96];
	snprintf(name, sizeof(name), "%s.%s", what, lanes);
	double v = metric_in(out, name);
	if (floor <= 0 || v <= 0) {
		printf("# remote_ops: no %s or %s floor for %s\n", name,
		       floor_name, lanes);
		return;
	}
	snprintf(name, sizeof(name), "%s_over_%s.%s", what, floor_name, lanes);
	bench_metric(name, v / floor, "x");
}

/* The 1-, 5- and 15-minute load averages, as /proc/loadavg says them
 * (with its newline). */
static const char *loadavg(void)
{
	static char buf[128];
	FILE *f = fopen("/proc/loadavg", "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		snprintf(buf, sizeof(buf), "unknown\n");
	if (f)
		fclose(f);
	return buf;
}

/* Runs a 2-node balancing job of `app` over shm, its output into the
 * log as comments; METRIC lines from the nodes' figures. 0 on success. */
static int run_balance(const char *earthrun, const char *self, const char *app)
{
	static char out[16384];
	setenv("EARTH_TIMING", "1", 1);
	int st = run_job(earthrun, self, "shm", "REMOTE_OPS_APP", app, out,
			 sizeof(out));
	unsetenv("EARTH_TIMING");
	double share_min = 101, share_max = -1, steals = 0, time_ns = -1;
	double fib_min = -1, fib_sum = 0; /* fibers run per node */
	int nodes = 0, ok = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned id;
		unsigned long long busy, wall, stolen, given, fibers;
		double t;
		printf("# %s\n", line);
		if (sscanf(line,
			   "balance-node %u busy_ns %llu wall_ns %llu "
			   "stolen %llu given %llu fibers %llu",
			   &id, &busy, &wall, &stolen, &given, &fibers) == 6) {
			double sh =
			    wall ? 100.0 * (double)busy / (double)wall : 0;
			share_min = sh < share_min ? sh : share_min;
			share_max = sh > share_max ? sh : share_max;
			steals += (double)stolen;
			fib_sum += (double)fibers;
			if (fib_min < 0 || (double)fibers < fib_min)
				fib_min = (double)fibers;
			nodes++;
		} else if (strstr(line, "balance-app ") &&
			   strstr(line, "correct") && !strstr(line, "WRONG")) {
			char *p = strstr(line, "time_ns ");
			if (p && sscanf(p, "time_ns %lf", &t) == 1) {
				time_ns = t;
				ok = 1;
			}
		}
	}
	if (st || !ok || nodes != 2) {
		printf("# balance %s: the job failed\n", app);
		return 1;
	}
	char name[96];
	snprintf(name, sizeof(name), "balance.%s.busy_share.min", app);
	bench_metric(name, share_min, "%");
	snprintf(name, sizeof(name), "balance.%s.busy_share.max", app);
	bench_metric(name, share_max, "%");
	/* the smallest node's part of all fibers run (50% is even on 2) */
	snprintf(name, sizeof(name), "balance.%s.work_share.min", app);
	bench_metric(name, fib_sum > 0 ? 100.0 * fib_min / fib_sum : 0, "%");
	snprintf(name, sizeof(name), "balance.%s.steals", app);
	bench_metric(name, steals, "tokens");
	snprintf(name, sizeof(name), "balance.%s.time", app);
	bench_metric_ns(name, time_ns);
	return 0;
}

/* Pairs over `tr`: a floor, then at once a short job measuring what is
 * compared with it; `rounds` times. */
static int run_pairs(const char *earthrun, const char *self, const char *tr,
		     int rounds)
{
	int tcp = !strcmp(tr, "tcp"), bad = 0;
	struct bench_paired rtt, rtt_su, bw, bw_su;
	char n[4][64];
	snprintf(n[0], 64, "get_remote_rtt.%s", tr);
	snprintf(n[1], 64, "pingpong_rtt.%s", tr);
	snprintf(n[2], 64, "get_remote_rtt_over_pingpong.%s", tr);
	bench_paired_init(&rtt, "remote_ops", n[0], n[1], n[2], "ns");
	snprintf(n[0], 64, "blkmov_bw.%s", tr);
	snprintf(n[2], 64, "blkmov_bw_over_%s.%s", tcp ? "stream" : "memcpy",
		 tr);
	bench_paired_init(&bw, "remote_ops", n[0],
			  tcp ? "tcp_stream_bw" : "memcpy_bw", n[2], "MB/s");
	bench_paired_init(&rtt_su, "remote_ops", "get_remote_rtt_su.shm", n[1],
			  "get_remote_rtt_su_over_pingpong.shm", "ns");
	bench_paired_init(&bw_su, "remote_ops", "blkmov_bw_su.shm", "memcpy_bw",
			  "blkmov_bw_su_over_memcpy.shm", "MB/s");
	static char out[8192];
	for (int r = 0; r < rounds; r++) {
		double pp =
		    tcp ? bench_pingpong_rtt_tcp(bench_quick ? 5000 : 20000)
			: bench_pingpong_rtt_shm(bench_quick ? 20000 : 100000);
		double sb = tcp ? bench_tcp_stream_bw(
				      bench_quick ? (64u << 20) : (256u << 20))
				: 0;
		if (run_job(earthrun, self, tr, "REMOTE_OPS_PART", "pair", out,
			    sizeof(out))) {
			printf(
			    "# remote_ops: pair job %d over %s failed:\n%s\n",
			    r, tr, out);
			bad = 1;
			continue;
		}
		double g = bench_pair_value(out, rtt.name);
		double b = bench_pair_value(out, bw.name);
		printf("# pair %d %s: pingpong %.0f ns, get %.0f ns", r, tr, pp,
		       g);
		bench_paired_add(&rtt, g, pp);
		if (tcp) {
			printf(", stream %.0f MB/s, blkmov %.0f MB/s\n", sb, b);
			bench_paired_add(&bw, b, sb);
			continue;
		}
		double gs = bench_pair_value(out, rtt_su.name);
		double bs = bench_pair_value(out, bw_su.name);
		double mc = bench_pair_value(out, "memcpy_bw");
		printf(", get through the SU %.0f ns, memcpy %.0f MB/s, blkmov "
		       "%.0f MB/s (through the SU %.0f)\n",
		       gs, mc, b, bs);
		bench_paired_add(&rtt_su, gs, pp);
		bench_paired_add(&bw, b, mc);
		bench_paired_add(&bw_su, bs, mc);
	}
	bad |= bench_paired_print(&rtt, 1);
	bad |= bench_paired_print(&bw, 1);
	if (!tcp) {
		bad |= bench_paired_print(&rtt_su, 0);
		bad |= bench_paired_print(&bw_su, 0);
	}
	return bad;
}

/* The table job over `tr`, its output echoed. */
static int run_table(const char *earthrun, const char *self, const char *tr)
{
	static char out[65536];
	int st = run_job(earthrun, self, tr, "REMOTE_OPS_PART", "table", out,
			 sizeof(out));
	fputs(out, stdout);
	if (st)
		printf("# remote_ops: the %s job failed (status %d)\n", tr, st);
	return st != 0;
}

int main(int argc, char **argv)
{
	bool node = bench_setting(EARTH_SET_NODES)->given;
	if (getenv("REMOTE_OPS_APP") && node)
		return remote_ops_app_node(argc, argv);
	if (node)
		return remote_ops_job_node(argc, argv);
	bench_init("remote_ops", argc, argv);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("# remote_ops: 2 nodes x 2 threads on %ld cores%s\n", cores,
	       cores < 4 ? " (oversubscribed: the paths through node 1's SU "
			   "are reported, not judged)"
			 : "");
	char self[PATH_MAX], run[PATH_MAX + 32];
	if (bench_self_and_earthrun(self, sizeof(self), run, sizeof(run)))
		return 1;
	int rounds = bench_quick ? 5 : 9, bad = 0;
	for (int t = 0; t < 2; t++) {
		const char *tr = t ? "tcp" : "shm";
		bad |= run_pairs(run, self, tr, rounds);
		bad |= run_table(run, self, tr);
	}
	/* ucx over both kinds of lanes: GET and block moves from global
	 * memory one-sided, the rest through node 1's SU. */
	static const char *const lanes[][2] = {{"posix,cma", "ucx_shm"},
					       {"tcp", "ucx_tcp"}};
	for (int l = 0; l < 2; l++) {
		static char out[16384];
		struct ucp_floors fl;
		ucp_floors(self, lanes[l][1] + 4, &fl);
		printf("# remote_ops %s: load average before the job %s",
		       lanes[l][1], loadavg());
		setenv("UCX_TLS", lanes[l][0], 1);
		int st = run_job(run, self, "ucx", "REMOTE_OPS_PART", "ucx",
				 out, sizeof(out));
		unsetenv("UCX_TLS");
		printf("# remote_ops %s (UCX_TLS=%s)\n", lanes[l][1],
		       lanes[l][0]);
		fputs(out, stdout);
		if (st) {
			printf("# remote_ops: the %s job failed (status %d)\n",
			       lanes[l][1], st);
			bad = 1;
		}
		ratio_metric(out, "get_remote_rtt", lanes[l][1], "ucp_get",
			     fl.get_lat);
		/* block moves into node 1's global memory against puts,
		 * from it against gets, of the same size */
		ratio_metric(out, "blkmov_put_bw", lanes[l][1], "ucp_put",
			     fl.put_bw);
		ratio_metric(out, "blkmov_bw", lanes[l][1], "ucp_get_bw",
			     fl.get_bw);
	}
	printf("# balance: 2 nodes x 2 threads on %ld cores (shm)\n", cores);
	bad |= run_balance(run, self, "fib");
	bad |= run_balance(run, self, "nqueens");
	return bad;
}
