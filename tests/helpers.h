/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - small generic helpers linked into every test binary: running
 * a scenario in a forked child with its stderr captured (for the fatal
 * usage errors, which end the process) and checking how it ended, the
 * EARTH_TEST_SCALE divisor for long tests, running a node with default
 * options, the first CPU of the affinity set, the nodes of a tcp job
 * started without earthrun; and, from the queue library's tests
 * (queues/tests/qtest.h), a checksum, a pseudo-random sequence and a
 * spin-wait that gives up on a hang.
 */
#ifndef EARTH_TEST_HELPERS_H
#define EARTH_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <earth.h>

/* What a child run by t_run_child did. */
struct t_child {
	bool exited;	 /* ended with exit()/_exit(), status is valid    */
	int status;	 /* exit status                                     */
	int signal;	 /* terminating signal when !exited, else 0         */
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

/*
 * Asserts that fn(arg), run by t_run_child, exited with `status` and wrote
 * each of the strings that follow to stderr (a NULL ends them).
 */
__attribute__((sentinel)) void t_expect_exit(int (*fn)(void *arg), void *arg,
					     int status, ...);

/* What a shell command run by t_sh did. */
struct t_cmd {
	int status;	 /* exit status, or 128 + signal; 124: timed out */
	char out[65536]; /* stdout, NUL-terminated, cut if longer */
	char err[16384]; /* stderr, likewise */
};

/*
 * Runs a shell command line (printf-style) under `timeout limit_s`, with
 * stdout and stderr captured into *c. The jobs of the multi-node tests
 * (earthrun, the programs of tests/progs) run this way.
 */
void t_sh(struct t_cmd *c, unsigned limit_s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* t_sh, and the seconds the command took. */
double t_sh_timed(struct t_cmd *c, unsigned limit_s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* In the stderr of an `earthrun --prefix` job with EARTH_STATS=1: the text
 * right after "[node]   key" (a line of that node's statistics table), or
 * NULL. */
const char *t_node_field(const char *err, unsigned node, const char *key);

/* Waits up to ns for child pid; its exit status (128 + signal), or -1
 * after killing it with SIGKILL. */
int t_wait_pid(int pid, uint64_t ns);

/* Reads a file into buf (at most len - 1 bytes, NUL-terminated; "" if it
 * cannot be read). */
void t_slurp(const char *path, char *buf, size_t len);
/* Occurrences of s in text. */
int t_count_of(const char *text, const char *s);
/* Does text hold a line that begins with start and has its newline
 * (a log line written whole, not one still being written)? */
bool t_line_whole(const char *text, const char *start);

/* Does the file at path contain s? Reads it into buf (t_slurp). */
bool t_file_has(const char *path, const char *s, char *buf, size_t len);

/* Nodes of a tcp job started without earthrun, as srun/mpirun start them
 * (t_rendezvous.c, t_blkmove.c): the job secret they share, a free port
 * on the loopback for node 0's rendezvous, and starting node k of n of
 * prog with the arguments args (NULL-terminated, at most 6) and its
 * stdout and stderr going to path. Returns the node's pid. */
#define T_SECRET "00112233445566778899aabbccddeeff0123456789abcdef"
int t_tcp_free_port(void);
pid_t t_tcp_spawn(const char *prog, const char *const *args, int k, int n,
		  int port, const char *path);

/* Bytes of a block move between two places of one node that the SU
 * performs, not the EU (more than EARTH_EU_BLKMOV_MAX: t_runtime_localblk
 * checks it): the tests that need a request the SU performs post one. */
#define T_SU_BLOCK 4096

/* EARTH_TEST_SCALE as a divisor: >= 1, 1 when unset or not a number. */
unsigned t_scale(void);
/* n / t_scale(), but at least min. */
uint64_t t_scaled(uint64_t n, uint64_t min);

/* earth_run(opts or the defaults, main_fn) with no arguments. */
int t_run(const struct earth_options *opts, const struct earth_tfunc *main_fn);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t t_now_ns(void);
/* Computes (spins on the clock) for ns nanoseconds: a busy thread, such as
 * a fiber that must not end yet. */
void t_busy_ns(uint64_t ns);

/* The pids a job's nodes printed into the file at path, one line
 * "<prefix>node K pid P" per node K < nodes, once all did (wait_ns at
 * most); false if they did not. */
bool t_node_pids(const char *path, const char *prefix, long *pid, int nodes,
		 uint64_t wait_ns);
/* Whether process pid (not a child of ours) ended within ns. */
bool t_pid_gone_within(long pid, uint64_t ns);
/* Kills node `victim` of a job whose nodes are pid[0..nodes-1] (when up)
 * and whether every other node then ended within ns each: *all_gone (false
 * when !up); returns the seconds from the kill until the last answer. Then
 * kills whatever node is left, reads the job's stderr, out.e, into err
 * (len bytes) once earthrun wrote its last line there (the nodes' own
 * lines pass through earthrun after they ended), and removes out.e and
 * out.o once earthrun is gone. */
double t_kill_node(bool up, const long *pid, int nodes, int victim, uint64_t ns,
		   bool *all_gone, const char *out, char *err, size_t len);

/* A new scratch folder for a test: /tmp/earth_<name>.XXXXXX, the X's
 * filled in by mkdtemp, into dir (len bytes); the test fails if it cannot
 * be made. */
void t_scratch_dir(char *dir, size_t len, const char *name);
/* Removes folder dir and what it holds; the status of rm -rf. */
int t_remove_dir(const char *dir);

/*
 * The lowest CPU this process may run on into *cpu (-1 if none); returns
 * what sched_getaffinity returned (0, or -1 with *cpu left alone).
 */
int t_first_cpu(int *cpu);

/* Number of elements of array a. */
#define T_NCASES(a) (sizeof(a) / sizeof((a)[0]))

/* A program thread's function that recurses until its stack overflows
 * (1 KiB a level): for the guard-page tests. */
void t_overflow_stack(void *arg);

/* The queue library's test helpers (checksum, pseudo-random sequence,
 * a spin-wait that gives up on a hang) are the runtime tests' too. */
#include "queues/tests/qtest.h"

#endif /* EARTH_TEST_HELPERS_H */
