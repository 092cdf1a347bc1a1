/* SPDX-License-Identifier: MIT */
/*
 * runner.c - main() of the TSan test binaries, in place of Criterion's
 * runner, which cannot start under ThreadSanitizer (Snaipe/Criterion#274).
 * Runs the tests registered by the shim headers in tests/tsan/criterion/ one at
 * a time, sorted by suite and name, each in its own fork()ed child with its
 * timeout, init/fini hooks and expected exit code or signal, and ends with
 * Criterion's "[====] Synthesis:" line, which tests/run.sh reads.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds a test may run when neither it nor its suite sets .timeout. */
#define DEFAULT_TIMEOUT_S 60.0

/* ThreadSanitizer's exit status after a report (its exitcode option). */
#define TSAN_EXIT_CODE 66

/*
 * Written by a test's child, its threads and the processes it forks
 * (a MAP_SHARED page they all inherit); read by the runner once the
 * child is gone.
 */
struct shared {
	int failed;  /* failed assertions (cr_assert_*, cr_expect_*) */
	int skipped; /* cr_skip_test was called                       */
	char skip_msg[512];
};

enum outcome { PASSED, FAILED, CRASHED, TIMED_OUT, SKIPPED };

/* One run of a test: a plain test, or one parameter of a parameterized one. */
struct run {
	const struct cr_shim_test *t;
	const struct criterion_test_extra_data *sd; /* its suite's, or NULL */
	void *param;				    /* parameterized only   */
	size_t index, count;			    /* parameter i of n     */
};

static struct cr_shim_test *g_tests;
static struct cr_shim_suite *g_suites;

static struct {
	bool verbose;
	bool short_names;
	bool list;
	const char *filter;
	double timeout;
} g_opt = {.timeout = DEFAULT_TIMEOUT_S};

static struct shared *g_sh;

/* In a test's child: its pid and main thread, and where to jump back. */
static pid_t g_child_pid;
static pthread_t g_child_thread;
static jmp_buf g_jmp;
static volatile sig_atomic_t g_jmp_ok;

/* In the runner: the running child (its process group), for SIGINT. */
static volatile sig_atomic_t g_running;

void cr_shim_register_test(struct cr_shim_test *t)
{
	t->next = g_tests;
	g_tests = t;
}

void cr_shim_register_suite(struct cr_shim_suite *s)
{
	s->next = g_suites;
	g_suites = s;
}

static const char *shown_file(const char *file)
{
	const char *slash = strrchr(file, '/');
	return g_opt.short_names && slash ? slash + 1 : file;
}

/*
 * Leaves the test after a fatal assertion or a skip. From the child's
 * main thread it jumps back to run_child, which runs the fini hooks; from
 * another thread of the test, or from a process the test forked, it can
 * only end that process (the fini hooks do not run then).
 */
__attribute__((noreturn)) static void leave_test(void)
{
	if (getpid() == g_child_pid &&
	    pthread_equal(pthread_self(), g_child_thread) && g_jmp_ok)
		longjmp(g_jmp, 1);
	fflush(stdout);
	fflush(stderr);
	if (!g_child_pid) /* in the runner, say a parameter generator */
		exit(2);
	_exit(1);
}

/* fmt is "\x01" and then the user's format, if one was given. */
__attribute__((format(printf, 4, 0))) static void
report(const char *file, unsigned line, const char *dflt, const char *fmt,
       va_list ap)
{
	char msg[4096];
	if (fmt[0] == '\x01')
		fmt++;
	if (*fmt)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	else
		snprintf(msg, sizeof(msg), "%s", dflt);
	__atomic_fetch_add(&g_sh->failed, 1, __ATOMIC_SEQ_CST);
	fprintf(stderr, "%s:%u: Assertion failed: %s%s\n", shown_file(file),
		line, msg, g_child_pid ? "" : " (outside any test)");
	fflush(stderr);
}

void cr_shim_abort_(const char *file, unsigned line, const char *dflt,
		    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(file, line, dflt, fmt, ap);
	va_end(ap);
	leave_test();
}

void cr_shim_expect_(const char *file, unsigned line, const char *dflt,
		     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(file, line, dflt, fmt, ap);
	va_end(ap);
	if (!g_child_pid)
		leave_test();
}

void cr_shim_skip_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (fmt[0] == '\x01')
		fmt++;
	vsnprintf(g_sh->skip_msg, sizeof(g_sh->skip_msg), fmt, ap);
	va_end(ap);
	__atomic_store_n(&g_sh->skipped, 1, __ATOMIC_SEQ_CST);
	leave_test();
}

void cr_log(enum criterion_severity severity, const char *msg, ...)
{
	if (severity == CR_LOG_INFO && !g_opt.verbose)
		return;
	char buf[4096];
	va_list ap;
	va_start(ap, msg);
	vsnprintf(buf, sizeof(buf), msg, ap);
	va_end(ap);
	const char *tag = severity == CR_LOG_INFO      ? "[----]"
			  : severity == CR_LOG_WARNING ? "[WARN]"
						       : "[ERR ]";
	fprintf(stderr, "%s %s\n", tag, buf);
	fflush(stderr);
}

/* The child: hooks and test, then exit 0 (failures are in g_sh). */
__attribute__((noreturn)) static void run_child(const struct run *r)
{
	const struct criterion_test_extra_data *td = r->t->data, *sd = r->sd;
	setpgid(0, 0);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	g_child_pid = getpid();
	g_child_thread = pthread_self();
	g_jmp_ok = 1;
	if (setjmp(g_jmp) == 0) {
		if (sd && sd->init)
			sd->init();
		if (td->init)
			td->init();
		if (r->t->pfn)
			r->t->pfn(r->param);
		else
			r->t->fn();
	}
	/* After a return, a fatal assertion or a skip, as in Criterion. */
	if (setjmp(g_jmp) == 0 && td->fini)
		td->fini();
	if (setjmp(g_jmp) == 0 && sd && sd->fini)
		sd->fini();
	g_jmp_ok = 0;
	fflush(stdout);
	fflush(stderr);
	_exit(0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s};
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void kill_child(pid_t pid)
{
	kill(-pid, SIGKILL); /* the child's process group: its forks too */
	kill(pid, SIGKILL);
}

/* SIGINT/SIGTERM in the runner: take the running test down with it. */
static void on_signal(int sig)
{
	pid_t pid = (pid_t)g_running;
	if (pid > 0)
		kill_child(pid);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Forks, runs r in the child, waits at most timeout_s; the wait status. */
static int fork_and_wait(const struct run *r, double timeout_s, bool *timed_out)
{
	*timed_out = false;
	fflush(stdout);
	fflush(stderr);
	double deadline = now_s() + timeout_s;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		run_child(r);
	setpgid(pid, pid); /* also done by the child; whichever runs first */
	g_running = pid;
	double nap = 0.001;
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, *timed_out ? 0 : WNOHANG);
		if (w == pid)
			break;
		if (w < 0) {
			if (errno == EINTR)
				continue;
			perror("criterion: waitpid");
			exit(2);
		}
		double left = deadline - now_s();
		if (left <= 0) {
			kill_child(pid);
			*timed_out = true;
			continue;
		}
		sleep_s(nap < left ? nap : left);
		nap = nap < 0.02 ? nap * 2 : 0.02;
	}
	g_running = 0;
	return st;
}

static enum outcome run_one(const struct run *r)
{
	const struct criterion_test_extra_data *td = r->t->data, *sd = r->sd;
	char label[512];
	int n =
	    snprintf(label, sizeof(label), "%s::%s", r->t->suite, r->t->name);
	if (r->count && n > 0 && (size_t)n < sizeof(label))
		snprintf(label + n, sizeof(label) - (size_t)n,
			 " [parameter %zu of %zu]", r->index + 1, r->count);

	if (td->disabled || (sd && sd->disabled)) {
		fprintf(stderr, "[SKIP] %s: Test is disabled\n", label);
		return SKIPPED;
	}
	double timeout = td->timeout > 0	 ? td->timeout
			 : sd && sd->timeout > 0 ? sd->timeout
						 : g_opt.timeout;
	int want_signal = td->signal ? td->signal : sd ? sd->signal : 0;
	int want_code = td->exit_code ? td->exit_code : sd ? sd->exit_code : 0;

	memset(g_sh, 0, sizeof(*g_sh));
	if (g_opt.verbose)
		fprintf(stderr, "[RUN ] %s\n", label);
	double t0 = now_s();
	bool timed_out;
	int st = fork_and_wait(r, timeout, &timed_out);
	double took = now_s() - t0;
	if (st < 0) {
		fprintf(stderr, "[FAIL] %s: fork: %s\n", label,
			strerror(errno));
		return CRASHED;
	}
	int failed = __atomic_load_n(&g_sh->failed, __ATOMIC_SEQ_CST);
	int skipped = __atomic_load_n(&g_sh->skipped, __ATOMIC_SEQ_CST);

	if (timed_out) {
		fprintf(stderr, "[FAIL] %s: Timed out. (%.2fs)\n", label, took);
		return TIMED_OUT;
	}
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		if (sig != want_signal) {
			fprintf(stderr, "[FAIL] %s: CRASH! (signal %d, %s)\n",
				label, sig, strsignal(sig));
			return CRASHED;
		}
		if (failed) {
			fprintf(stderr, "[FAIL] %s: (%.2fs)\n", label, took);
			return FAILED;
		}
	} else {
		int code = WEXITSTATUS(st);
		if (failed) {
			fprintf(stderr, "[FAIL] %s: (%.2fs)\n", label, took);
			return FAILED;
		}
		if (skipped) {
			fprintf(stderr, "[SKIP] %s: %s\n", label,
				g_sh->skip_msg[0] ? g_sh->skip_msg
						  : "Test was skipped");
			return SKIPPED;
		}
		if (want_signal) {
			fprintf(stderr,
				"[FAIL] %s: exited with code %d instead of "
				"dying of signal %d (%s) (%.2fs)\n",
				label, code, want_signal,
				strsignal(want_signal), took);
			return FAILED;
		}
		if (code != want_code) {
			fprintf(stderr,
				"[FAIL] %s: exited with code %d, expected %d%s "
				"(%.2fs)\n",
				label, code, want_code,
				code == TSAN_EXIT_CODE
				    ? " (ThreadSanitizer's exit code after "
				      "a report)"
				    : "",
				took);
			return FAILED;
		}
	}
	if (g_opt.verbose)
		fprintf(stderr, "[PASS] %s: (%.2fs)\n", label, took);
	return PASSED;
}

static int by_suite_and_name(const void *pa, const void *pb)
{
	const struct cr_shim_test *a = *(const struct cr_shim_test *const *)pa;
	const struct cr_shim_test *b = *(const struct cr_shim_test *const *)pb;
	int c = strcmp(a->suite, b->suite);
	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = strcmp(a->file, b->file);
	if (!c)
		c = a->line < b->line ? -1 : a->line > b->line;
	return c;
}

static const struct criterion_test_extra_data *suite_data(const char *name)
{
	for (const struct cr_shim_suite *s = g_suites; s; s = s->next)
		if (!strcmp(s->name, name))
			return s->data;
	return NULL;
}

static bool selected(const struct cr_shim_test *t)
{
	if (!g_opt.filter)
		return true;
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", t->suite, t->name);
	return fnmatch(g_opt.filter, path, 0) == 0;
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"usage: %s [--filter=GLOB] [--timeout=SECONDS] [--verbose] "
		"[--list] [--short-filename] [--jobs=N]\n"
		"Criterion stand-in for the TSan build (tests/tsan/README.md):"
		" runs the\ntests matching GLOB (suite/name) one at a time, "
		"each in its own child.\n--jobs is accepted and ignored.\n",
		argv0);
}

/* Value of --opt=VALUE or --opt VALUE (taking argv[*i + 1]); or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t len = strlen(opt);
	if (strncmp(argv[*i], opt, len))
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if ((v = opt_value(argc, argv, &i, "--filter"))) {
			g_opt.filter = v;
		} else if ((v = opt_value(argc, argv, &i, "--timeout"))) {
			char *end;
			g_opt.timeout = strtod(v, &end);
			if (*end || !(g_opt.timeout > 0)) {
				fprintf(stderr, "criterion: bad --timeout %s\n",
					v);
				exit(2);
			}
		} else if (opt_value(argc, argv, &i, "--jobs") ||
			   (!strncmp(a, "-j", 2) && a[2]) ||
			   (!strcmp(a, "-j") && ++i < argc)) {
			/* one test at a time anyway */
		} else if (!strcmp(a, "--short-filename") || !strcmp(a, "-S")) {
			g_opt.short_names = true;
		} else if (!strcmp(a, "--verbose") ||
			   !strncmp(a, "--verbose=", 10)) {
			g_opt.verbose = true;
		} else if (!strcmp(a, "--list") || !strcmp(a, "-l")) {
			g_opt.list = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout, argv[0]);
			exit(0);
		} else {
			fprintf(stderr, "criterion: unsupported option %s\n",
				a);
			usage(stderr, argv[0]);
			exit(2);
		}
	}
}

static void list_tests(struct cr_shim_test **v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(v[j]->suite, v[i]->suite))
			j++;
		printf("%s: %zu test%s\n", v[i]->suite, j - i,
		       j - i == 1 ? "" : "s");
		for (size_t k = i; k < j; k++) {
			const struct criterion_test_extra_data *sd =
			    suite_data(v[k]->suite);
			bool off = v[k]->data->disabled || (sd && sd->disabled);
			printf("%s %s%s\n", k + 1 == j ? "└──" : "├──",
			       v[k]->name, off ? " (skipped)" : "");
		}
		i = j;
	}
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);

	size_t n = 0;
	for (struct cr_shim_test *t = g_tests; t; t = t->next)
		n += selected(t);
	struct cr_shim_test **v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		perror("criterion");
		return 2;
	}
	n = 0;
	for (struct cr_shim_test *t = g_tests; t; t = t->next)
		if (selected(t))
			v[n++] = t;
	qsort(v, n, sizeof(*v), by_suite_and_name);

	if (g_opt.list) {
		list_tests(v, n);
		free(v);
		return 0;
	}

	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED) {
		perror("criterion: mmap");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	size_t tested = 0, passing = 0, failing = 0, crashing = 0;
	for (size_t i = 0; i < n; i++) {
		struct run r = {.t = v[i], .sd = suite_data(v[i]->suite)};
		struct criterion_test_params p = {.length = 1};
		if (v[i]->params) {
			p = v[i]->params();
			r.count = p.length;
		}
		for (size_t k = 0; k < p.length; k++) {
			r.index = k;
			r.param =
			    v[i]->params ? (char *)p.params + k * p.size : NULL;
			switch (run_one(&r)) {
			case PASSED:
				passing++;
				break;
			case FAILED:
				failing++;
				break;
			case CRASHED:
			case TIMED_OUT:
				/*
				 * Criterion counts a crash as failing and
				 * crashing; a timeout as failing only, but
				 * here it is a crash too.
				 */
				failing++;
				crashing++;
				break;
			case SKIPPED:
				continue;
			}
			tested++;
		}
		if (v[i]->params && p.cleanup)
			p.cleanup(&p);
	}
	free(v);
	fprintf(stderr,
		"[====] Synthesis: Tested: %zu | Passing: %zu | Failing: %zu | "
		"Crashing: %zu \n",
		tested, passing, failing, crashing);
	return failing ? 1 : 0;
}
