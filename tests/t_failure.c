/* SPDX-License-Identifier: MIT */
/*
 * t_failure.c - every node's failure fails the job, and the statistics
 * read right:
 *  - a node that exits non-zero or dies of a signal while the job ends
 *    (after node 0 ended it: an atexit handler) makes earthrun say which
 *    node and exit non-zero; a job whose nodes all end well exits 0;
 *  - earth_rsync is counted as RSYNC, not SYNC, in the statistics table
 *    and in the JSON record;
 *  - a TOKEN that another node stole counts as remote;
 *  - single-poll nodes account their SU's busy time;
 *  - a node writes its tables with one write(2): with 4 nodes, each
 *    node's tables are one block of lines in earthrun's output, and a
 *    reader of a node's stderr gets them whole in its first read.
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"
#include "json.h"

TestSuite(failure, .timeout = 180);

Test(failure, node_exits_non_zero_while_the_job_ends)
{
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 %s/endfail exit", T_EARTHRUN, T_PROG_DIR);
	/* earthrun(1), EXIT STATUS: the first failing node's status */
	cr_expect_eq(c.status, 3, "status %d:\n%s%s", c.status, c.out, c.err);
	cr_expect(strstr(c.err, "earthrun: node 1 exited with status 3"), "%s",
		  c.err);
}

Test(failure, node_crashes_while_the_job_ends)
{
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 %s/endfail segv", T_EARTHRUN, T_PROG_DIR);
	/* 128 + SIGSEGV, as a shell reports it */
	cr_expect_eq(c.status, 128 + SIGSEGV, "status %d:\n%s%s", c.status,
		     c.out, c.err);
	cr_expect(strstr(c.err, "earthrun: node 1 was killed by signal 11"),
		  "%s", c.err);
}

/* A note a node printed (here two EUs sharing one CPU) is not the cause
 * earthrun names when the node dies: the last word is the signal alone. */
Test(failure, a_note_is_not_named_as_the_cause)
{
	static struct t_cmd c;
	int cpu;
	cr_assert_eq(t_first_cpu(&cpu), 0);
	t_sh(&c, 60, "taskset -c %d env EARTH_EUS=2 %s -n 2 %s/endfail segv",
	     cpu, T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, 128 + SIGSEGV, "status %d:\n%s%s", c.status,
		     c.out, c.err);
	cr_expect(strstr(c.err, "earth: node 1: note: 2 Execution Units"), "%s",
		  c.err);
	cr_expect(strstr(c.err,
			 "earthrun: the job failed: node 1 was killed by "
			 "signal 11 (Segmentation fault)\n"),
		  "%s", c.err);
}

/* earthrun(1), EXIT STATUS: with no node failing, node 0's status. */
Test(failure, node_0_status_is_the_job_status)
{
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 %s/endfail status", T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, 5, "status %d:\n%s%s", c.status, c.out, c.err);
	cr_expect(!strstr(c.err, "earthrun: node"), "%s", c.err);
}

Test(failure, all_nodes_fine)
{
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 %s/endfail ok", T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d:\n%s%s", c.status, c.out, c.err);
	cr_expect(strstr(c.out, "endfail: node 0 ends the job"), "%s", c.out);
	cr_expect(!strstr(c.err, "earthrun: node"), "%s", c.err);
}

static char dir[64];

static void make_dir(void)
{
	t_scratch_dir(dir, sizeof(dir), "t_failure");
}

static void remove_dir(void)
{
	cr_expect_eq(t_remove_dir(dir), 0);
}

/* ops.KIND.{local,remote} of node record nd. */
static double op_count(const struct json *nd, const char *kind,
		       const char *which)
{
	const struct json *ops = json_get(nd, "ops");
	cr_assert(ops, "no ops");
	const struct json *o = json_get(ops, kind);
	if (!o)
		return -1;
	const struct json *v = json_get(o, which);
	cr_assert(v, "no ops.%s.%s", kind, which);
	return v->num;
}

/* multinode: every visit RSYNCs main's slot on node 0. */
Test(failure, rsync_counted_as_itself)
{
	static struct t_cmd c;
	make_dir();
	t_sh(&c, 60,
	     "env EARTH_STATS=1 %s -n 2 --prefix --stats=json %s/s.json "
	     "%s/multinode 1000",
	     T_EARTHRUN, dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	/* The table of operations posted. */
	for (unsigned k = 0; k < 2; k++) {
		const char *l = t_node_field(c.err, k, "RSYNC ");
		cr_assert(l, "node %u: no RSYNC line:\n%s", k, c.err);
		cr_expect_eq(atol(l), 1, "node %u: RSYNC %ld", k, atol(l));
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/s.json", dir);
	char err[256];
	struct json *root = json_parse_file(path, err, sizeof(err));
	cr_assert(root, "%s: %s", path, err);
	const struct json *arr = json_get(root, "nodes");
	cr_assert(arr && arr->n == 2);
	/* Node 1's RSYNC of node 0's slot is remote; node 0's is local. */
	cr_expect_eq(op_count(&arr->v[1], "RSYNC", "remote"), 1);
	cr_expect_eq(op_count(&arr->v[1], "RSYNC", "local"), 0);
	cr_expect_eq(op_count(&arr->v[0], "RSYNC", "local"), 1);
	json_free(root);
	remove_dir();
}

/* fibnodes on 2 nodes: the tokens another node stole ran there. */
Test(failure, stolen_tokens_are_remote)
{
	static struct t_cmd c;
	make_dir();
	t_sh(&c, 120, "%s -n 2 --stats=json %s/s.json %s/fibnodes 20",
	     T_EARTHRUN, dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	char path[128];
	snprintf(path, sizeof(path), "%s/s.json", dir);
	char err[256];
	struct json *root = json_parse_file(path, err, sizeof(err));
	cr_assert(root, "%s: %s", path, err);
	const struct json *arr = json_get(root, "nodes");
	cr_assert(arr && arr->n == 2);
	double given = 0, remote = 0;
	for (size_t k = 0; k < 2; k++) {
		given += json_get(&arr->v[k], "tokens_given")->num;
		remote += op_count(&arr->v[k], "TOKEN", "remote");
	}
	cr_assert_geq(given, 1, "no token was stolen");
	cr_expect_eq(remote, given, "%.0f remote TOKENs, %.0f given", remote,
		     given);
	json_free(root);
	remove_dir();
}

Test(failure, single_poll_su_busy)
{
	static struct t_cmd c;
	t_sh(&c, 120,
	     "env EARTH_MODE=single-poll EARTH_STATS=1 %s -n 2 --prefix "
	     "%s/fibnodes 18",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	for (unsigned k = 0; k < 2; k++) {
		const char *l = t_node_field(c.err, k, "SU busy ");
		cr_assert(l, "node %u: no SU busy line:\n%s", k, c.err);
		double ms = atof(l);
		cr_expect_gt(ms, 0, "node %u: SU busy %.3f ms:\n%s", k, ms,
			     c.err);
	}
}

/* The lines from "[k] earth: node k statistics" to node k's last table
 * line ("[k]   remote reads in flight") are all node k's. */
Test(failure, tables_not_interleaved)
{
	make_dir();
	static char buf[1 << 18];
	for (int round = 0; round < 10; round++) {
		static struct t_cmd c;
		t_sh(&c, 60,
		     "sh -c 'EARTH_STATS=1 %s -n 4 --prefix %s/multinode "
		     "1000 2> %s/e'",
		     T_EARTHRUN, T_PROG_DIR, dir);
		int st = c.status;
		char path[128];
		snprintf(path, sizeof(path), "%s/e", dir);
		t_slurp(path, buf, sizeof(buf));
		cr_assert_eq(st, 0, "status %d\n%s", st, buf);
		for (unsigned k = 0; k < 4; k++) {
			char first[64], last[64], pre[16];
			snprintf(first, sizeof(first),
				 "[%u] earth: node %u statistics", k, k);
			snprintf(last, sizeof(last),
				 "[%u]   remote reads in flight", k);
			snprintf(pre, sizeof(pre), "[%u] ", k);
			const char *a = strstr(buf, first);
			const char *b = strstr(buf, last);
			cr_assert(a && b && a < b, "node %u: no table:\n%s", k,
				  buf);
			for (const char *l = a; l <= b;) {
				cr_assert(!strncmp(l, pre, strlen(pre)),
					  "node %u's table is broken by "
					  "another line:\n%s",
					  k, buf);
				const char *nl = strchr(l, '\n');
				if (!nl)
					break;
				l = nl + 1;
			}
		}
	}
	remove_dir();
}

/* A node's stderr read as soon as it holds anything: the first read has
 * both tables, whole (one write of less than PIPE_BUF bytes). */
Test(failure, tables_in_one_write)
{
	static char buf[65536];
	for (int round = 0; round < 5; round++) {
		int p[2];
		cr_assert_eq(pipe(p), 0);
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (!pid) {
			int nul = open("/dev/null", O_WRONLY);
			dup2(nul, 1);
			dup2(p[1], 2);
			close(p[0]);
			close(p[1]);
			setenv("EARTH_STATS", "1", 1);
			execl(T_PROG_DIR "/fibnodes", "fibnodes", "14",
			      (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		ssize_t r = read(p[0], buf, sizeof(buf) - 1);
		buf[r > 0 ? r : 0] = 0;
		char rest[4096];
		while (read(p[0], rest, sizeof(rest)) > 0)
			;
		close(p[0]);
		int st;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d",
			  st);
		cr_expect(strstr(buf, "earth: node 0 statistics") &&
			      strstr(buf, "  remote reads in flight"),
			  "round %d: the first read got only:\n%s", round, buf);
	}
}
