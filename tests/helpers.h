/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - small generic helpers linked into every test binary: running
 * a scenario in a forked child with its stderr captured (for the fatal
 * usage errors, which end the process), the EARTH_TEST_SCALE divisor for
 * long tests, and running a node with default options.
 */
#ifndef EARTH_TEST_HELPERS_H
#define EARTH_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <earth.h>

/* What a child run by t_run_child did. */
struct t_child {
	bool exited; /* ended with exit()/_exit(), status is valid    */
	int status;  /* exit status                                     */
	int signal;  /* terminating signal when !exited, else 0         */
	char err[16384]; /* its stderr, NUL-terminated, cut if longer */
};

/*
 * Forks; the child runs fn(arg) with stderr going to a pipe and exits with
 * its return value (after 30 s it is killed by SIGALRM). The parent reads
 * the pipe to EOF, waits for the child and fills *out. Returns 0, or -1 if
 * the pipe or the fork failed.
 */
int t_run_child(int (*fn)(void *arg), void *arg, struct t_child *out);

/* Does the child's stderr contain s? */
bool t_err_has(const struct t_child *c, const char *s);

/* EARTH_TEST_SCALE as a divisor: >= 1, 1 when unset or not a number. */
unsigned t_scale(void);
/* n / t_scale(), but at least min. */
uint64_t t_scaled(uint64_t n, uint64_t min);

/* earth_run(opts or the defaults, main_fn) with no arguments. */
int t_run(const struct earth_options *opts, const struct earth_tfunc *main_fn);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t t_now_ns(void);

#endif /* EARTH_TEST_HELPERS_H */
