/* SPDX-License-Identifier: MIT */
/*
 * trace_cost.c - what recording the timeline costs: fib(n) with one
 * threaded function per call (tests/examples fib_tf), run with tracing
 * off, then with statistics on (EARTH_STATS_JSON: time breakdown and
 * switch accounting), then with tracing on (EARTH_TRACE), alternating, in
 * the same process. METRIC trace_event_cost = (time traced - time plain) /
 * events recorded; stats_cost_per_fiber = (time with statistics - time
 * plain) / fibers run; trace_event_cost_with_flush adds writing the
 * file at node end (whole earth_run). Medians of the repetitions.
 */
#include "bench.h"
#include "bench_fib.h"
#include "fib_tf.h"

#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fib_timed run;

static long fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

/* One run; returns ns from the first TOKEN to the result, or -1; *whole:
 * ns of the whole earth_run (with writing the files at its end). */
static double run_once(long want, struct earth_stats *st, double *whole)
{
	struct earth_options o;
	earth_options_default(&o);
	run.result = -1;
	struct fib_timed *t = &run;
	uint64_t w0 = q_tsc_ordered();
	int rc = earth_run(&o, &fib_timed_tf, &t, sizeof(t));
	*whole = bench_ns((double)(q_tsc_ordered() - w0));
	if (rc != 0 || run.result != want) {
		fprintf(stderr, "trace_cost: fib(%d) = %d, want %ld\n", run.n,
			run.result, want);
		return -1;
	}
	earth_stats_get(st);
	return bench_ns((double)(run.t_end - run.t_start));
}

int main(int argc, char **argv)
{
	bench_init("trace_cost", argc, argv);
	run.n = argc > 1 ? atoi(argv[1]) : (bench_quick ? 22 : 25);
	long want = fib_seq(run.n);
	char dir[] = "/tmp/earth_trace_cost.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("trace_cost: mkdtemp");
		return 1;
	}
	char trace[256], stats[256];
	snprintf(trace, sizeof(trace), "%s/trace.json", dir);
	snprintf(stats, sizeof(stats), "%s/stats.json", dir);
	unsetenv("EARTH_TRACE");
	unsetenv("EARTH_STATS_JSON");
	printf("cores: %ld online; threads: 2 (one node: EU + SU)\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	double plain[64], counted[64], traced[64], events = 0, fibers = 0;
	double wplain[64], wtraced[64], wcounted;
	struct earth_stats st;
	for (int r = 0; r < bench_reps; r++) {
		if ((plain[r] = run_once(want, &st, &wplain[r])) < 0)
			return 1;
		setenv("EARTH_STATS_JSON", stats, 1);
		if ((counted[r] = run_once(want, &st, &wcounted)) < 0)
			return 1;
		unsetenv("EARTH_STATS_JSON");
		setenv("EARTH_TRACE", trace, 1);
		if ((traced[r] = run_once(want, &st, &wtraced[r])) < 0)
			return 1;
		unsetenv("EARTH_TRACE");
		/* A fiber slice per fiber run, a request slice per request
		 * the SU handled. */
		events = (double)(st.fibers_run + st.su_handled);
		fibers = (double)st.fibers_run;
	}
	double p = bench_median(plain, bench_reps);
	double c = bench_median(counted, bench_reps);
	double t = bench_median(traced, bench_reps);
	double wp = bench_median(wplain, bench_reps);
	double wt = bench_median(wtraced, bench_reps);
	printf("fib(%d): plain %.3f ms, statistics %.3f ms, traced %.3f ms; "
	       "%.0f events per traced run\n",
	       run.n, p / 1e6, c / 1e6, t / 1e6, events);
	bench_metric_ns("trace_event_cost", (t - p) / events);
	/* Recording plus writing the file at node end, per event. */
	bench_metric_ns("trace_event_cost_with_flush", (wt - wp) / events);
	bench_metric_ns("stats_cost_per_fiber", (c - p) / fibers);
	bench_metric("traced_over_plain", t / p, "ratio");
	unlink(trace);
	unlink(stats);
	rmdir(dir);
	return 0;
}
