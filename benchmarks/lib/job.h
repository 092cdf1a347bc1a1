/* SPDX-License-Identifier: MIT */
/*
 * job.h - the job driver shared by the benchmarks that start themselves
 * (or another program) as a multi-node job under earthrun: finding
 * earthrun beside the benchmark, forking with every CPU the process
 * started with, and running a job with its standard output read back.
 */
#ifndef EARTH_BENCH_JOB_H
#define EARTH_BENCH_JOB_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* fork() for a child that starts a job (earthrun): the child gets back
 * the CPUs the process was allowed at start, whatever the calling thread
 * pinned itself to since (bench_pin), so the job's nodes spread over all
 * of them instead of sharing the CPU the parent last measured on. */
pid_t bench_fork_job(void);
/* How many CPUs the process was allowed at start (what a job gets). */
int bench_job_cpus(void);
/* This benchmark's executable (self) and the earthrun beside it
 * (<dir>/../bin/earthrun, where make puts it); 0, or -1 after a message. */
int bench_self_and_earthrun(char *self, size_t self_len, char *earthrun,
			    size_t earthrun_len);
/* <directory of self>/<name>: a file make puts beside the benchmark (a
 * gnuplot script, say). */
void bench_beside(const char *self, const char *name, char *out, size_t len);

/* A job: `earthrun -n NODES --transport TRANSPORT PROG ARGS...`. */
struct bench_job_spec {
	const char *earthrun;
	int nodes;
	const char *transport;
	/* variables set in the job's environment, "NAME=value" (NULL or ""
	 * entries are skipped); NULL-terminated, or NULL for none */
	const char *const *env;
	/* the program and its arguments, NULL-terminated */
	const char *const *argv;
	/* 1: the job's standard error goes into the same pipe */
	int merge_stderr;
	/* who says it could not start earthrun ("remote_ops", ...) */
	const char *who;
};

struct bench_job {
	pid_t pid;
	FILE *out; /* what the job writes to its standard output */
};

/* Starts the job (bench_fork_job); 0, or -1 when it could not. */
int bench_job_start(struct bench_job *j, const struct bench_job_spec *s);
/* Closes j->out and waits for the job: its exit status, 128 + the
 * signal when a signal ended it. */
int bench_job_wait(struct bench_job *j);
/* Starts the job, reads its standard output into out (at most cap - 1
 * bytes kept, the rest read and dropped, NUL-terminated) and waits: the
 * job's exit status (bench_job_wait), 1 when it could not start. */
int bench_job_run(const struct bench_job_spec *s, char *out, size_t cap);

#endif /* EARTH_BENCH_JOB_H */
