/* SPDX-License-Identifier: MIT */
/*
 * tc_run.h - what the Threaded-C tests (tests/t_tc_*.c) share: skip when
 * clang-14 or the earth_tc plugin is missing, run a shell command and
 * capture its output, a scratch directory per test. Header-only so the
 * other test binaries do not link it. Tests run from the repository root.
 */
#ifndef EARTH_TESTS_TC_RUN_H
#define EARTH_TESTS_TC_RUN_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TC_EARTHCC "threaded-c/earthcc"

/* The build directory earthcc uses: $EARTH_BUILD (make sets it to its
 * BUILD for the tests), else build. */
static inline const char *tc_build_dir(void)
{
	const char *b = getenv("EARTH_BUILD");
	return b && *b ? b : "build";
}

/* Skips the current test, saying why, when Threaded-C cannot be built. */
static inline void tc_require(void)
{
	char plugin[512];
	snprintf(plugin, sizeof plugin, "%s/plugin/earth_tc.so",
		 tc_build_dir());
	if (system("command -v clang-14 >/dev/null 2>&1") != 0 ||
	    access(plugin, R_OK) != 0)
		cr_skip_test(
		    "Threaded-C test skipped: clang-14 or %s is missing "
		    "(apt-get install clang-14 llvm-14-dev "
		    "libclang-14-dev; make tc)",
		    plugin);
}

/* The build's earthrun in path (room 512); skips the current test, saying
 * why, when Threaded-C or earthrun is not built. */
static inline void tc_require_earthrun(char path[512])
{
	tc_require();
	snprintf(path, 512, "%s/rel/bin/earthrun", tc_build_dir());
	if (access(path, X_OK) != 0)
		cr_skip_test("%s is not built (make all)", path);
}

/* Runs `sh -c cmd 2>&1`; stores up to n-1 bytes of output; returns the
 * exit status (128+signal if killed, -1 if it could not run). */
static inline int tc_sh(char *out, size_t n, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	char full[4200];
	snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
	FILE *p = popen(full, "r");
	if (!p)
		return -1;
	size_t len = 0, r;
	char buf[4096];
	while ((r = fread(buf, 1, sizeof buf, p)) > 0)
		for (size_t i = 0; i < r; i++)
			if (out && len + 1 < n)
				out[len++] = buf[i];
	if (out && n)
		out[len] = 0;
	int st = pclose(p);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A fresh scratch directory (removed by tc_cleanup). */
static inline void tc_tmpdir(char dir[64])
{
	strcpy(dir, "/tmp/earth_tc_test.XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
}

static inline void tc_cleanup(const char *dir)
{
	char out[256];
	tc_sh(out, sizeof out, "rm -rf '%s'", dir);
}

/* Builds SRC with earthcc FLAGS into DIR/prog; asserts success. */
static inline void tc_build(const char *dir, const char *src, const char *flags)
{
	static char out[65536];
	int rc = tc_sh(out, sizeof out,
		       TC_EARTHCC " -O2 -Wall -Wextra -Werror %s %s -o %s/prog",
		       flags, src, dir);
	cr_assert_eq(rc, 0, "earthcc %s %s failed (%d):\n%s", flags, src, rc,
		     out);
}

/* Runs DIR/prog ARGS with ENV; returns its status, output in out. The
 * limit is generous: on a shared, oversubscribed 2-core machine each
 * EU-SU hand-off may wait for a time slice. */
static inline int tc_exec(char *out, size_t n, const char *dir, const char *env,
			  const char *args)
{
	return tc_sh(out, n, "%s timeout 60 %s/prog %s", env, dir, args);
}

#endif /* EARTH_TESTS_TC_RUN_H */
