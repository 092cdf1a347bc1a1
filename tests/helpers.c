/* SPDX-License-Identifier: MIT */
/*
 * helpers.c - the generic test helpers declared in helpers.h: a forked
 * child with captured stderr and the checks on how it ended, shell
 * commands with captured output (the multi-node jobs), the nodes of a
 * tcp job started without earthrun, the
 * EARTH_TEST_SCALE divisor, running a node, the first CPU of the affinity
 * set, and the queue tests' checksum, random numbers and spin-wait.
 */
#define _GNU_SOURCE 1
#include "helpers.h"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queues/q_arch.h"

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

void t_expect_exit(int (*fn)(void *arg), void *arg, int status, ...)
{
	struct t_child c;
	cr_assert_eq(t_run_child(fn, arg, &c), 0);
	cr_assert(c.exited, "killed by signal %d; stderr:\n%.800s", c.signal,
		  c.err);
	cr_assert_eq(c.status, status,
		     "exit status %d want %d; stderr:\n%.800s", c.status,
		     status, c.err);
	va_list ap;
	va_start(ap, status);
	const char *s;
	while ((s = va_arg(ap, const char *)) && t_err_has(&c, s))
		;
	va_end(ap);
	cr_assert_null(s, "no '%s' in:\n%s", s, c.err);
}

unsigned t_scale(void)
{
	return qt_divisor("EARTH_TEST_SCALE");
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

void t_busy_ns(uint64_t ns)
{
	uint64_t t0 = t_now_ns();
	while (t_now_ns() - t0 < ns)
		;
}

bool t_node_pids(const char *path, const char *prefix, long *pid, int nodes,
		 uint64_t wait_ns)
{
	char buf[4096];
	uint64_t t0 = t_now_ns();
	for (;;) {
		t_slurp(path, buf, sizeof(buf));
		int got = 0;
		for (int k = 0; k < nodes; k++) {
			char key[64];
			snprintf(key, sizeof(key), "%snode %d pid ", prefix, k);
			char *p = strstr(buf, key);
			pid[k] =
			    p && strchr(p, '\n') ? atol(p + strlen(key)) : -1;
			got += pid[k] > 0;
		}
		if (got == nodes)
			return true;
		if (t_now_ns() - t0 > wait_ns)
			return false;
		usleep(10000);
	}
}

bool t_pid_gone_within(long pid, uint64_t ns)
{
	uint64_t t0 = t_now_ns();
	for (;;) {
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		buf[0] = 0;
		t_slurp(path, buf, sizeof(buf));
		char *p = strrchr(buf, ')');
		if (!p || p[2] == 'Z' || p[2] == 'X')
			return true;
		if (t_now_ns() - t0 > ns)
			return false;
		usleep(10000);
	}
}

double t_kill_node(bool up, const long *pid, int nodes, int victim, uint64_t ns,
		   bool *all_gone, const char *out, char *err, size_t len)
{
	uint64_t t0 = t_now_ns();
	if (up)
		kill((pid_t)pid[victim], SIGKILL);
	*all_gone = up;
	for (int k = 0; k < nodes; k++)
		if (up && k != victim && !t_pid_gone_within(pid[k], ns))
			*all_gone = false;
	double s = (double)(t_now_ns() - t0) / 1e9;
	for (int k = 0; k < nodes; k++)
		if (up && pid[k] > 0)
			kill((pid_t)pid[k], SIGKILL);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.e", out);
	/* The nodes' last lines reach out.e through earthrun, after they
	 * ended: read it once earthrun's last line is whole (5 s at most). */
	uint64_t t1 = t_now_ns();
	do
		t_slurp(path, err, len);
	while (!t_line_whole(err, "earthrun: the job failed: ") &&
	       t_now_ns() - t1 < 5000000000ull && usleep(20000) == 0);
	sleep(1); /* earthrun, once its nodes are gone */
	unlink(path);
	snprintf(path, sizeof(path), "%s.o", out);
	unlink(path);
	return s;
}

int t_first_cpu(int *cpu)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	*cpu = -1;
	for (int c = 0; c < CPU_SETSIZE && *cpu < 0; c++)
		if (CPU_ISSET(c, &set))
			*cpu = c;
	return 0;
}

int t_count_of(const char *text, const char *s)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, s)); p++)
		n++;
	return n;
}

bool t_line_whole(const char *text, const char *start)
{
	const char *at = strstr(text, start);
	return at && strchr(at, '\n');
}

void t_slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

static void t_vsh(struct t_cmd *c, unsigned limit_s, const char *fmt,
		  va_list ap)
{
	char line[2048], full[2400], out[64], err[64];
	vsnprintf(line, sizeof(line), fmt, ap);
	snprintf(out, sizeof(out), "/tmp/t_sh_out.%d", (int)getpid());
	snprintf(err, sizeof(err), "/tmp/t_sh_err.%d", (int)getpid());
	snprintf(full, sizeof(full), "timeout %u %s > %s 2> %s", limit_s, line,
		 out, err);
	int st = system(full);
	c->status = st < 0	    ? -1
		    : WIFEXITED(st) ? WEXITSTATUS(st)
				    : 128 + WTERMSIG(st);
	t_slurp(out, c->out, sizeof(c->out));
	t_slurp(err, c->err, sizeof(c->err));
	unlink(out);
	unlink(err);
}

void t_sh(struct t_cmd *c, unsigned limit_s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	t_vsh(c, limit_s, fmt, ap);
	va_end(ap);
}

double t_sh_timed(struct t_cmd *c, unsigned limit_s, const char *fmt, ...)
{
	uint64_t t0 = t_now_ns();
	va_list ap;
	va_start(ap, fmt);
	t_vsh(c, limit_s, fmt, ap);
	va_end(ap);
	return (double)(t_now_ns() - t0) / 1e9;
}

int t_wait_pid(int pid, uint64_t ns)
{
	uint64_t t0 = t_now_ns();
	int st;
	while (t_now_ns() - t0 < ns) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		usleep(5000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

const char *t_node_field(const char *err, unsigned node, const char *key)
{
	char k[128];
	snprintf(k, sizeof(k), "[%u]   %s", node, key);
	const char *p = strstr(err, k);
	return p ? p + strlen(k) : NULL;
}

int t_tcp_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
		  !getsockname(fd, (struct sockaddr *)&a, &al));
	close(fd);
	return ntohs(a.sin_port);
}

pid_t t_tcp_spawn(const char *prog, const char *const *args, int k, int n,
		  int port, const char *path)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid)
		return pid;
	personality(ADDR_NO_RANDOMIZE);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	dup2(fd, 2);
	char b[64];
	snprintf(b, sizeof(b), "%d", k);
	setenv("EARTH_NODE", b, 1);
	snprintf(b, sizeof(b), "%d", n);
	setenv("EARTH_NODES", b, 1);
	snprintf(b, sizeof(b), "127.0.0.1:%d", port);
	setenv("EARTH_RENDEZVOUS", b, 1);
	setenv("EARTH_JOB_SECRET", T_SECRET, 1);
	setenv("EARTH_CONNECT_TIMEOUT", "20", 1);
	unsetenv("EARTH_SHM_FD");
	unsetenv("EARTH_TRANSPORT");
	char *argv[8] = {(char *)prog};
	for (int i = 0; i < 6 && args[i]; i++)
		argv[i + 1] = (char *)args[i];
	execv(prog, argv);
	_exit(127);
}

bool t_file_has(const char *path, const char *s, char *buf, size_t len)
{
	t_slurp(path, buf, len);
	return strstr(buf, s) != NULL;
}

void t_scratch_dir(char *dir, size_t len, const char *name)
{
	int k = snprintf(dir, len, "/tmp/earth_%s.XXXXXX", name);
	cr_assert(k > 0 && (size_t)k < len, "scratch folder name too long");
	cr_assert(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
}

int t_remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static int t_recurse(int d)
{
	volatile char buf[1024];
	buf[0] = (char)d;
	return d > 1 << 20 ? buf[0] : t_recurse(d + 1) + buf[0];
}

void t_overflow_stack(void *arg)
{
	(void)arg;
	t_recurse(0);
}
