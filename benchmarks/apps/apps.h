/* SPDX-License-Identifier: MIT */
/*
 * apps.h - what every benchmark program of benchmarks/apps/ shares, the
 * Threaded-C version (prog.tc) and its sequential C twin (prog_seq.c)
 * alike: reading integer arguments with range checks, a millisecond clock,
 * 64-bit hashing for checksums, and the output every program ends with:
 *
 *   answer: <the result, the same text for the twin and every node count>
 *   time_ms: <time of the computation, setup and checking excluded>
 *   ok                          (or "MISMATCH: <what>", exit status 1)
 *
 * benchmarks/apps/run_apps.sh and tests/t_apps.c read these lines.
 * Any thread; no state.
 */
#ifndef APPS_H
#define APPS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds. */
static inline double apps_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Integer argument i of argv (a default when absent) checked against
 * [lo, hi]. On bad input prints "prog: argument i (what) 'text': give an
 * integer in lo..hi" and returns -1; else stores it in *out and returns 0.
 */
static inline int apps_arg_long(int argc, char **argv, int i, long def, long lo,
				long hi, const char *what, long *out)
{
	long v = def;
	if (i < argc) {
		char *end;
		v = strtol(argv[i], &end, 10);
		if (end == argv[i] || *end || v < lo || v > hi) {
			fprintf(stderr,
				"%s: argument %d (%s) '%s': give an integer in "
				"%ld..%ld\n",
				argv[0], i, what, argv[i], lo, hi);
			return -1;
		}
	}
	*out = v;
	return 0;
}

static inline int apps_arg_int(int argc, char **argv, int i, int def, int lo,
			       int hi, const char *what, int *out)
{
	long v;
	if (apps_arg_long(argc, argv, i, def, lo, hi, what, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* Too many arguments: says which are accepted; returns -1 (else 0). */
static inline int apps_arg_max(int argc, char **argv, int max,
			       const char *usage)
{
	if (argc - 1 <= max)
		return 0;
	fprintf(stderr, "%s: too many arguments; usage: %s\n", argv[0], usage);
	return -1;
}

/* splitmix64 finalizer: a well-mixed 64-bit hash of x. */
static inline uint64_t apps_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* FNV-1a over n bytes, continuing from h (start with APPS_FNV_INIT). */
#define APPS_FNV_INIT 0xcbf29ce484222325ull
static inline uint64_t apps_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Prints "answer: <fmt...>". */
__attribute__((format(printf, 1, 2))) static inline void
apps_answer(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("answer: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

/*
 * Prints time_ms and the verdict: "ok (<how>)" when ok, else
 * "MISMATCH: <how>"; returns the exit status (0 or 1).
 */
static inline int apps_verdict(double ms, int ok, const char *how)
{
	printf("time_ms: %.3f\n", ms);
	if (ok)
		printf("ok (%s)\n", how);
	else
		printf("MISMATCH: %s\n", how);
	fflush(stdout);
	return ok ? 0 : 1;
}

#endif /* APPS_H */
