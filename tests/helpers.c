/* SPDX-License-Identifier: MIT */
/*
 * helpers.c - the generic test helpers declared in helpers.h: a forked
 * child with captured stderr, the EARTH_TEST_SCALE divisor, running a node.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int t_run_child(int (*fn)(void *arg), void *arg, struct t_child *out)
{
	int fd[2];
	memset(out, 0, sizeof(*out));
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], STDERR_FILENO);
		close(fd[1]);
		alarm(30);
		int rc = fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	close(fd[1]);
	size_t len = 0;
	for (;;) {
		char buf[4096];
		ssize_t r = read(fd[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t room = sizeof(out->err) - 1 - len;
		size_t take = (size_t)r < room ? (size_t)r : room;
		memcpy(out->err + len, buf, take);
		len += take;
	}
	out->err[len] = 0;
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	out->exited = WIFEXITED(st);
	out->status = out->exited ? WEXITSTATUS(st) : -1;
	out->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return 0;
}

bool t_err_has(const struct t_child *c, const char *s)
{
	return strstr(c->err, s) != NULL;
}

unsigned t_scale(void)
{
	const char *v = getenv("EARTH_TEST_SCALE");
	if (!v || !*v)
		return 1;
	char *end;
	unsigned long s = strtoul(v, &end, 10);
	return *end || s < 1 || s > 1000000 ? 1 : (unsigned)s;
}

uint64_t t_scaled(uint64_t n, uint64_t min)
{
	uint64_t v = n / t_scale();
	return v < min ? min : v;
}

int t_run(const struct earth_options *opts, const struct earth_tfunc *main_fn)
{
	struct earth_options o;
	if (!opts) {
		earth_options_default(&o);
		opts = &o;
	}
	return earth_run(opts, main_fn, NULL, 0);
}

uint64_t t_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
