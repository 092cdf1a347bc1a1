/* SPDX-License-Identifier: MIT */
/*
 * t_bench.c - the benchmark harness (benchmarks/bench.c, and the job
 * driver benchmarks/lib/job.c): a job started by bench_fork_job gets back
 * every CPU the process started with, even after the driver pinned itself
 * to one CPU to measure something (the bug: the remote-load and
 * remote-ops drivers ran every node of their jobs on the CPU they had last
 * pinned themselves to).
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../benchmarks/bench.h"
#include "../benchmarks/lib/job.h"
#include "helpers.h"

TestSuite(bench, .timeout = 30);

Test(bench, job_child_gets_the_start_cpus_back)
{
	cpu_set_t start, now;
	cr_assert_eq(sched_getaffinity(0, sizeof(start), &start), 0);
	int first = -1;
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &start))
			first = c;
	bench_pin(first);
	cr_assert_eq(sched_getaffinity(0, sizeof(now), &now), 0);
	cr_assert_eq(CPU_COUNT(&now), 1);
	pid_t c = bench_fork_job();
	cr_assert_geq(c, 0);
	if (c == 0) {
		cpu_set_t got;
		if (sched_getaffinity(0, sizeof(got), &got))
			_exit(2);
		_exit(CPU_EQUAL(&got, &start) ? 0 : 1);
	}
	int st = t_wait_pid(c, 10000000000ull);
	cr_assert_eq(st, 0, "the job's child had %s CPUs (status %d)",
		     st == 1 ? "other" : "unknown", st);
	/* The caller stays where it pinned itself. */
	cr_assert_eq(sched_getaffinity(0, sizeof(now), &now), 0);
	cr_assert_eq(CPU_COUNT(&now), 1);
	cr_assert(CPU_ISSET(first, &now));
}
