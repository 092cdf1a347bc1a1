/* SPDX-License-Identifier: MIT */
/*
 * ll7.c - `ll7`, the Livermore Loop 7 latency-hiding benchmark (Figure 3
 * of the EARTH-MANNA paper). Run directly, it is the driver: it starts
 * itself as 2-node jobs under earthrun (shm and tcp in dual mode, and shm
 * with Y in node 1's global memory read one-sided, "shm_direct"; shm with
 * an emulated network; shm in the single-core modes when the runtime has
 * them), echoes what they print, writes docs/results/ll7.csv (every s),
 * ll7-summary.csv and ll7-summary.md (every n and factor) and the plots
 * (gnuplot, ll7.gp).
 * Under earthrun (EARTH_NODES set) it is one node of a job:
 *
 *   ll7 --job LABEL MODE NLIST FLIST REPS PER_DECADE OPS_CAP [--earth-...]
 *
 * LL7_Y=global puts node 1's Y in its global memory (default: registered
 * memory, served by node 1's SU).
 * e.g. earthrun -n 2 ll7 --job shm dual 990,9900 1,2 5 4 1048576
 */
#define _GNU_SOURCE 1
#include "ll7.h"

#include <math.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "lib/job.h"
#include "lib/plot.h"

static int parse_list(const char *s, long *out, int max, long lo, long hi)
{
	int k = 0;
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < lo || v > hi || k == max ||
		    (*end && *end != ','))
			return -1;
		out[k++] = v;
		s = *end ? end + 1 : end;
	}
	return k;
}

static void plan_cpus(struct ll7_plan *p)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	p->cpus = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (p->cpus < 2)
				p->cpu_list[p->cpus] = c;
			p->cpus++;
		}
}

static int job_main(int argc, char **argv)
{
	struct ll7_plan p;
	memset(&p, 0, sizeof(p));
	if (argc < 9 || strcmp(argv[1], "--job")) {
		fprintf(stderr, "usage: earthrun -n 2 ll7 --job LABEL MODE "
				"NLIST FLIST REPS PER_DECADE OPS_CAP "
				"[--earth-...]\n");
		return 2;
	}
	snprintf(p.label, sizeof(p.label), "%s", argv[2]);
	snprintf(p.mode, sizeof(p.mode), "%s", argv[3]);
	p.nn = parse_list(argv[4], p.n, LL7_MAX_N, 1, 100000000);
	p.nf = parse_list(argv[5], p.f, LL7_MAX_F, 1, 1024);
	p.reps = atoi(argv[6]);
	p.per_decade = atoi(argv[7]);
	p.ops_cap = atol(argv[8]);
	if (p.nn < 1 || p.nf < 1 || p.reps < 1 || p.reps > 99 ||
	    p.per_decade < 1 || p.per_decade > 10 || p.ops_cap < 1) {
		fprintf(stderr, "ll7: bad job arguments: NLIST and FLIST are "
				"comma-separated (n 1..1e8, f 1..1024), REPS "
				"1..99, PER_DECADE 1..10, OPS_CAP >= 1\n");
		return 2;
	}
	for (int i = 0; i < p.nn; i++)
		if (p.per_decade * log10((double)p.n[i]) + 2 > LL7_MAX_S) {
			fprintf(stderr,
				"ll7: bad job arguments: n=%ld at %d "
				"sizes per decade is more than %d fiber "
				"sizes; use fewer per decade\n",
				p.n[i], p.per_decade, LL7_MAX_S);
			return 2;
		}
	const char *y = getenv("LL7_Y");
	if (y && *y && strcmp(y, "global") && strcmp(y, "registered")) {
		fprintf(stderr,
			"ll7: LL7_Y=%s: must be global (Y in node 1's "
			"global memory) or registered (the default: "
			"served by node 1's SU)\n",
			y);
		return 2;
	}
	p.y_global = y && !strcmp(y, "global");
	plan_cpus(&p);
	/* The rest (--earth-* flags) goes to the runtime. */
	argv[8] = argv[0];
	return ll7_job(&p, argc - 8, argv + 8);
}

/* ---- the driver ---- */

static FILE *rows_csv, *sum_csv;
static char earthrun[PATH_MAX + 32], self[PATH_MAX], outdir[PATH_MAX];
/* The run's conditions, for the plots' captions: CPUs, threads,
 * placement (a gnuplot string in a shell's double quotes: no quote of
 * either kind, no $). */
static char place[256];
static int cpus;

/* Runs one job, its standard error with its output; returns its exit
 * status (-1: could not start). */
static int run_job(const char *env, const char *transport, const char *label,
		   const char *mode, const char *ns, const char *fs, int reps,
		   int per_decade, long cap)
{
	char modeflag[64] = "", r[16], d[16], c[32];
	if (strcmp(mode, "dual"))
		snprintf(modeflag, sizeof(modeflag), "--earth-mode=%s", mode);
	snprintf(r, sizeof(r), "%d", reps);
	snprintf(d, sizeof(d), "%d", per_decade);
	snprintf(c, sizeof(c), "%ld", cap);
	printf("# ll7: env %s %s -n 2 --transport %s %s --job %s %s %s %s %s "
	       "%s %s%s%s 2>&1\n",
	       env, earthrun, transport, self, label, mode, ns, fs, r, d, c,
	       *modeflag ? " " : "", modeflag);
	const char *envv[] = {env, NULL};
	const char *argv[] = {
	    self, "--job", label, mode, ns,
	    fs,	  r,	   d,	  c,	*modeflag ? modeflag : NULL,
	    NULL};
	struct bench_job_spec s = {.earthrun = earthrun,
				   .nodes = 2,
				   .transport = transport,
				   .env = envv,
				   .argv = argv,
				   .merge_stderr = 1,
				   .who = "ll7"};
	struct bench_job j;
	if (bench_job_start(&j, &s))
		return -1;
	char line[1024];
	while (fgets(line, sizeof(line), j.out)) {
		if (!strncmp(line, "ll7row,", 7))
			fputs(line + 7, rows_csv);
		else if (!strncmp(line, "ll7sum,", 7))
			fputs(line + 7, sum_csv);
		else
			fputs(line, stdout);
		fflush(stdout);
	}
	return bench_job_wait(&j);
}

/* Draws ll7-<net>[-<mode>].svg and .png with gnuplot; 0, or 1 when
 * gnuplot is there but a plot did not come out (a missing ll7.gp, say). */
static int plot(const char *net, const char *mode, const char *ns,
		const char *fs, int reps)
{
	if (!bench_have_gnuplot()) {
		printf("# ll7: no gnuplot (Debian gnuplot-nox; `make bench` "
		       "installs it): no plot for %s %s\n",
		       net, mode);
		return 0;
	}
	char gp[PATH_MAX + 32], tag[96];
	bench_beside(self, "ll7.gp", gp, sizeof(gp));
	snprintf(tag, sizeof(tag), "%s%s%s", net,
		 strcmp(mode, "dual") ? "-" : "",
		 strcmp(mode, "dual") ? mode : "");
	char cond[512];
	if (!strcmp(mode, "dual"))
		snprintf(cond, sizeof(cond),
			 "2 nodes x 2 threads (EU + SU) = 4 runtime threads "
			 "on %d CPU%s%s",
			 cpus, cpus == 1 ? "" : "s",
			 cpus < 4 ? " (oversubscribed: the EU of node 0 alone "
				    "on the first, the 3 others share the "
				    "second)"
				  : "");
	else
		snprintf(cond, sizeof(cond),
			 "2 nodes x 1 thread (the EU does the work of the SU) "
			 "= 2 runtime threads on %d CPU%s",
			 cpus, cpus == 1 ? "" : "s");
	const char *terms[] = {"svg", "png"};
	int bad = 0;
	for (int i = 0; i < 2; i++) {
		char vars[4 * PATH_MAX], out[PATH_MAX + 128];
		snprintf(out, sizeof(out), "%s/ll7-%s.%s", outdir, tag,
			 terms[i]);
		snprintf(vars, sizeof(vars),
			 "csv='%s/ll7.csv'; net='%s'; mode='%s'; ns='%s'; "
			 "fs='%s'; out='%s'; term='%s'; cond='%s'; place='%s'; "
			 "reps=%d; "
			 "short_n=%d; short_x=%d",
			 outdir, net, mode, ns, fs, out, terms[i], cond, place,
			 reps, LL7_SHORT_N, LL7_SHORT_X);
		bad |= bench_gnuplot("ll7", gp, vars, out);
	}
	if (!bad)
		printf("# ll7: plot %s/ll7-%s.svg (.png)\n", outdir, tag);
	return bad;
}

/* Other work on the host disturbs every figure: say how much there was. */
static void print_load(const char *when)
{
	char buf[128] = "unknown";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			snprintf(buf, sizeof(buf), "unknown\n");
		fclose(f);
	}
	printf("# ll7: load average %s: %s", when, buf);
}

static void spaced(char *out, size_t len, const char *list)
{
	snprintf(out, len, "%s", list);
	for (char *c = out; *c; c++)
		if (*c == ',')
			*c = ' ';
}

/* ll7-summary.csv as a markdown table (ll7-summary.md). */
static void summary_md(void)
{
	char path[PATH_MAX + 32], line[512];
	snprintf(path, sizeof(path), "%s/ll7-summary.csv", outdir);
	FILE *in = fopen(path, "r");
	snprintf(path, sizeof(path), "%s/ll7-summary.md", outdir);
	FILE *out = in ? fopen(path, "w") : NULL;
	if (!out) {
		if (in)
			fclose(in);
		printf("# ll7: cannot write %s\n", path);
		return;
	}
	fprintf(out,
		"| net | mode | n | factor | comm/comp | best s | residual "
		"%% (median; repetitions min..max) | bound at best s %% | s "
		"with <= 3%% | s with <= "
		"%.1f%% (1995 optimum) | comp us | fetch-first us |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n",
		LL7_PAPER_BEST_PCT);
	if (!fgets(line, sizeof(line), in)) /* header */
		line[0] = 0;
	while (fgets(line, sizeof(line), in)) {
		char net[32], mode[32];
		long n, f, best, lo, hi, plo, phi;
		double cc, res, bmin, bbest, seq, ff, fetch, rmin, rmax;
		if (sscanf(
			line,
			"%31[^,],%31[^,],%ld,%ld,%lf,%ld,%lf,%lf,%lf,%ld,%ld,"
			"%lf,%lf,%lf,%ld,%ld,%lf,%lf",
			net, mode, &n, &f, &cc, &best, &res, &bmin, &bbest, &lo,
			&hi, &seq, &ff, &fetch, &plo, &phi, &rmin, &rmax) != 18)
			continue;
		char range[64] = "none", prange[64] = "none";
		if (lo)
			snprintf(range, sizeof(range), "%ld..%ld", lo, hi);
		if (plo)
			snprintf(prange, sizeof(prange), "%ld..%ld", plo, phi);
		fprintf(out,
			"| %s | %s | %ld | x%ld | %.2f | %ld | %.1f; "
			"%.1f..%.1f | %.1f | %s | %s | %.1f | %.1f |\n",
			net, mode, n, f, cc, best, res, rmin, rmax, bbest,
			range, prange, seq / 1e3, ff / 1e3);
	}
	fclose(in);
	fclose(out);
	printf("# ll7: table %s\n", path);
}

int main(int argc, char **argv)
{
	if (bench_setting(EARTH_SET_NODES)->given)
		return job_main(argc, argv);
	bench_init("ll7", argc, argv);
	struct ll7_plan p;
	plan_cpus(&p);
	printf("# ll7: 2 nodes x 2 threads (EU + SU) = 4 threads on %d usable "
	       "cores%s\n",
	       p.cpus,
	       p.cpus < 4 ? " (oversubscribed: node 0's EU computes alone on "
			    "the first CPU; node 0's SU and both units of "
			    "node 1 share the second, yielding when idle)"
			  : "");
	print_load("at start");
	if (bench_self_and_earthrun(self, sizeof(self), earthrun,
				    sizeof(earthrun)))
		return 1;
	const char *rd = getenv("RESULTS_DIR");
	snprintf(outdir, sizeof(outdir), "%s", rd && *rd ? rd : "docs/results");
	mkdir(outdir, 0755);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/ll7.csv", outdir);
	rows_csv = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/ll7-summary.csv", outdir);
	sum_csv = fopen(path, "w");
	if (!rows_csv || !sum_csv) {
		fprintf(stderr, "ll7: cannot write %s/ll7*.csv\n", outdir);
		return 1;
	}
	fprintf(rows_csv,
		"net,mode,n,factor,s,fibers,seq_ns,ff_ns,fetch_ns,"
		"threaded_ns,first_chunk_ns,comm_comp,pct,bound_pct,pct_min,"
		"pct_max\n");
	fprintf(sum_csv, "net,mode,n,factor,comm_comp,best_s,residual_pct,"
			 "bound_pct,bound_at_best_pct,s_lo_3pct,s_hi_3pct,"
			 "seq_ns,ff_ns,fetch_ns,s_lo_paper_pct,s_hi_paper_pct,"
			 "residual_min_pct,residual_max_pct\n");
	const char *ns =
	    bench_quick ? "9900,1000000" : "990,9900,100000,1000000";
	const char *fs = bench_quick ? "1,16" : "1,2,4,8,16";
	int reps = bench_quick ? 3 : 5, dec = bench_quick ? 2 : 3;
	if (getenv("BENCH_REPS"))
		reps = bench_reps;
	printf("# ll7: medians of %d repetitions per configuration%s, %d "
	       "times as many for n <= %d\n",
	       reps,
	       bench_quick ? "" : " (the emulated and single-core runs: 3)",
	       LL7_SHORT_X, LL7_SHORT_N);
	{
		cpus = p.cpus;
		if (p.cpus >= 2)
			snprintf(place, sizeof(place),
				 "placement: CPUs %d and %d, cache-line round "
				 "trip between them %.0f ns at the start%s",
				 p.cpu_list[0], p.cpu_list[1],
				 bench_xcore_rtt_ns(p.cpu_list[0],
						    p.cpu_list[1], 20000),
				 bench_quick ? "; QUICK run" : "");
		else
			snprintf(place, sizeof(place), "%s",
				 bench_quick ? "QUICK run" : "");
	}
	long cap = bench_quick ? 1L << 16 : 1L << 18;
	char nsp[64], fsp[64];
	spaced(nsp, sizeof(nsp), ns);
	spaced(fsp, sizeof(fsp), fs);
	int bad = 0;
	bad |= run_job("", "shm", "shm", "dual", ns, fs, reps, dec, cap) != 0;
	fflush(rows_csv);
	bad |= plot("shm", "dual", nsp, fsp, reps);
	/* Y in node 1's global memory, read one-sided by node 0's SU: the
	 * transfer of a memory-mapped network interface, without node 1's
	 * SU (which shares a CPU with node 0's on a 2-CPU host). */
	bad |= run_job("LL7_Y=global", "shm", "shm_direct", "dual", ns, fs,
		       reps, dec, cap) != 0;
	fflush(rows_csv);
	bad |= plot("shm_direct", "dual", nsp, fsp, reps);
	bad |= run_job("", "tcp", "tcp", "dual", ns, fs, reps, dec, cap) != 0;
	fflush(rows_csv);
	bad |= plot("tcp", "dual", nsp, fsp, reps);
	if (bench_quick) {
		printf("# ll7: QUICK: emulated network and single-core modes "
		       "skipped\n");
	} else {
		/* The emulated network can only slow the link down, and here
		 * communication already outweighs computation (comm/comp > 1
		 * where the 1995 machine had about 1/10): the paper's ratios
		 * cannot be replayed by adding delay. What it shows is how
		 * the optimum and the bound move with a cluster's latency:
		 * 10 us added each way, bandwidth as is. */
		bad |= run_job("EARTH_NET_LATENCY_NS=10000", "shm", "shm_emu",
			       "dual", "9900,1000000", "1,4,16", 3, 2,
			       1L << 16) != 0;
		fflush(rows_csv);
		bad |= plot("shm_emu", "dual", "9900 1000000", "1 4 16", 3);
		const char *modes[] = {"single-poll", "single-interrupt"};
		for (int i = 0; i < 2; i++) {
			int st =
			    run_job("", "shm", "shm", modes[i], "9900,1000000",
				    "1,4,16", 3, 2, 1L << 16);
			if (st == 70) { /* EARTH_EXIT_USAGE: unknown flag */
				printf("# ll7: %s mode: the runtime refused "
				       "--earth-mode=%s (status 70): "
				       "skipped\n",
				       modes[i], modes[i]);
				continue;
			}
			bad |= st != 0;
			fflush(rows_csv);
			bad |=
			    plot("shm", modes[i], "9900 1000000", "1 4 16", 3);
		}
	}
	fclose(rows_csv);
	fclose(sum_csv);
	summary_md();
	print_load("at end");
	printf("# ll7: results %s/ll7.csv, %s/ll7-summary.csv\n", outdir,
	       outdir);
	return bad;
}
