/* SPDX-License-Identifier: MIT */
/*
 * job.c - the job driver shared by the benchmarks (see job.h).
 */
#define _GNU_SOURCE 1
#include "job.h"

#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The CPUs this process was started with, before any bench_pin. */
static cpu_set_t bench_start_cpus;
static int bench_start_ok;
__attribute__((constructor)) static void bench_save_cpus(void)
{
	bench_start_ok = sched_getaffinity(0, sizeof(bench_start_cpus),
					   &bench_start_cpus) == 0;
}

int bench_job_cpus(void)
{
	return bench_start_ok ? CPU_COUNT(&bench_start_cpus) : 1;
}

pid_t bench_fork_job(void)
{
	fflush(NULL);
	pid_t c = fork();
	if (c == 0 && bench_start_ok &&
	    sched_setaffinity(0, sizeof(bench_start_cpus), &bench_start_cpus)) {
		perror("bench: cannot restore the CPUs for the job");
		_exit(127);
	}
	return c;
}

int bench_self_and_earthrun(char *self, size_t self_len, char *earthrun,
			    size_t earthrun_len)
{
	ssize_t l = readlink("/proc/self/exe", self, self_len - 1);
	if (l < 0) {
		perror("bench: cannot read /proc/self/exe");
		return -1;
	}
	self[l] = 0;
	char *dir = strdup(self);
	if (!dir)
		return -1;
	snprintf(earthrun, earthrun_len, "%s/../bin/earthrun", dirname(dir));
	free(dir);
	return 0;
}

void bench_beside(const char *self, const char *name, char *out, size_t len)
{
	char *dir = strdup(self);
	snprintf(out, len, "%s/%s", dir ? dirname(dir) : ".", name);
	free(dir);
}

int bench_job_start(struct bench_job *j, const struct bench_job_spec *s)
{
	int fds[2];
	j->pid = -1;
	j->out = NULL;
	if (pipe(fds))
		return -1;
	pid_t c = bench_fork_job();
	if (c == 0) {
		dup2(fds[1], 1);
		if (s->merge_stderr)
			dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		for (const char *const *e = s->env; e && *e; e++) {
			if (!**e)
				continue;
			char *v = strdup(*e), *eq = v ? strchr(v, '=') : NULL;
			if (!eq)
				_exit(127);
			*eq = 0;
			setenv(v, eq + 1, 1);
		}
		int argc = 0;
		while (s->argv[argc])
			argc++;
		const char **av = calloc((size_t)argc + 6, sizeof(*av));
		if (!av)
			_exit(127);
		char nodes[16];
		snprintf(nodes, sizeof(nodes), "%d", s->nodes);
		av[0] = s->earthrun;
		av[1] = "-n";
		av[2] = nodes;
		av[3] = "--transport";
		av[4] = s->transport;
		for (int i = 0; i < argc; i++)
			av[5 + i] = s->argv[i];
		execv(s->earthrun, (char *const *)av);
		fprintf(stderr, "%s: cannot start earthrun: ",
			s->who ? s->who : "bench");
		perror(s->earthrun);
		_exit(127);
	}
	close(fds[1]);
	if (c < 0) {
		close(fds[0]);
		return -1;
	}
	j->pid = c;
	j->out = fdopen(fds[0], "r");
	if (!j->out) {
		close(fds[0]);
		bench_job_wait(j);
		return -1;
	}
	return 0;
}

int bench_job_wait(struct bench_job *j)
{
	if (j->out)
		fclose(j->out);
	j->out = NULL;
	if (j->pid < 0)
		return 1;
	int st;
	if (waitpid(j->pid, &st, 0) < 0)
		return 1;
	j->pid = -1;
	return WIFEXITED(st)	 ? WEXITSTATUS(st)
	       : WIFSIGNALED(st) ? 128 + WTERMSIG(st)
				 : 1;
}

int bench_job_run(const struct bench_job_spec *s, char *out, size_t cap)
{
	struct bench_job j;
	out[0] = 0;
	if (bench_job_start(&j, s))
		return 1;
	size_t len = 0, r;
	char sink[4096];
	while ((r = fread(len < cap - 1 ? out + len : sink, 1,
			  len < cap - 1 ? cap - 1 - len : sizeof(sink),
			  j.out)) > 0)
		len += len < cap - 1 ? r : 0;
	out[len] = 0;
	return bench_job_wait(&j);
}
