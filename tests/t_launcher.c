/* SPDX-License-Identifier: MIT */
/*
 * t_launcher.c - earthrun, the launcher of jobs on this host: its usage
 * errors, --prefix on every output line, a node program started without
 * earthrun or with a malformed environment, and a node killed with SIGKILL
 * stopping the other nodes of its job with a message within 5 s (shm
 * transport; tcp nodes started directly: t_rendezvous.c), the node that
 * failed for its own reason named as the cause whatever the order the
 * others (status 71, or stopped by earthrun) end in.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

TestSuite(launcher, .timeout = 120);

Test(launcher, launcher_usage_errors)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 0 %s/multinode", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2, "status %d", c.status);
	cr_assert(strstr(c.err, "-n 0: give 1..256 nodes"), "%s", c.err);
	t_sh(&c, 30, "%s -n 2 --ring-kb 100 %s/multinode", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "power of two"), "%s", c.err);
	t_sh(&c, 30, "%s -n 2 /nonexistent/prog", T_EARTHRUN);
	/* earthrun(1), EXIT STATUS: as a shell reports a program it cannot
	 * start */
	cr_assert_eq(c.status, 127, "status %d\n%s", c.status, c.err);
	const char *said = strstr(c.err, "cannot run /nonexistent/prog");
	cr_assert(said, "%s", c.err);
	/* every node could not start it: said once for the job */
	cr_assert(!strstr(said + 1, "cannot run /nonexistent/prog"), "%s",
		  c.err);
}

Test(launcher, prefix_lines)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 --prefix %s/multinode 10", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "[0] multinode: 2 nodes"), "%s", c.out);
}

Test(launcher, nodes_without_transport)
{
	struct t_cmd c;
	t_sh(&c, 30, "env EARTH_NODE=0 EARTH_NODES=2 %s/multinode 10",
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "EARTH_SHM_FD is not set: start multi-node "
				"jobs on one host with earthrun -n N"),
		  "%s", c.err);
	t_sh(&c, 30, "env EARTH_NODE=3 EARTH_NODES=2 %s/multinode 10",
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "malformed"), "%s", c.err);
}

Test(launcher, killed_node_stops_the_job)
{
	/* Start a job that never ends, kill node 1, time the end. */
	char out[64], cmdline[512];
	snprintf(out, sizeof(out), "/tmp/t_mn_hang.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline),
		 "(%s -n 3 %s/hang kill%d > %s.o 2> %s.e; echo $? > %s.s) &",
		 T_EARTHRUN, T_PROG_DIR, (int)getpid(), out, out, out);
	cr_assert_eq(system(cmdline), 0);
	char path[80], buf[4096];
	long pid1 = -1;
	uint64_t t0 = t_now_ns();
	snprintf(path, sizeof(path), "%s.o", out);
	while (pid1 < 0 && t_now_ns() - t0 < 10000000000ull) {
		t_slurp(path, buf, sizeof(buf));
		char *p = strstr(buf, "node 1 pid ");
		if (p && strchr(p, '\n'))
			pid1 = atol(p + strlen("node 1 pid "));
		else
			usleep(10000);
	}
	cr_assert_gt(pid1, 0, "node 1 never started: %s", buf);
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill((pid_t)pid1, SIGKILL), 0);
	/* Every process of the job must be gone within 5 s. */
	/* "[h]ang": the pattern must not match this shell's own line; the
	 * test's pid tells this job from any other. */
	snprintf(cmdline, sizeof(cmdline),
		 "pgrep -f '[h]ang kill%d' > /dev/null", (int)getpid());
	while (system(cmdline) == 0 && t_now_ns() - t_kill < 6000000000ull)
		usleep(20000);
	uint64_t took = t_now_ns() - t_kill;
	cr_assert_lt(took, 5000000000ull,
		     "job still running %.1f s after "
		     "the kill",
		     took / 1e9);
	snprintf(path, sizeof(path), "%s.e", out);
	t_slurp(path, buf, sizeof(buf));
	cr_assert(strstr(buf, "node 1 was killed by signal 9"), "%s", buf);
	cr_assert(strstr(buf, "earthrun: the job failed: node 1 was killed by "
			      "signal 9 (Killed)\n"),
		  "%s", buf);
	cr_assert(
	    strstr(buf, "earth: node 0: stopping: node 1 died (signal 9)"),
	    "%s", buf);
	cr_assert(
	    strstr(buf, "earth: node 2: stopping: node 1 died (signal 9)"),
	    "%s", buf);
	unlink(path);
	snprintf(path, sizeof(path), "%s.o", out);
	unlink(path);
	/* earthrun(1), EXIT STATUS: the first failing node's, 128 + 9 */
	snprintf(path, sizeof(path), "%s.s", out);
	buf[0] = 0;
	for (int i = 0; i < 200 && !strchr(buf, '\n'); i++) {
		usleep(10000);
		t_slurp(path, buf, sizeof(buf));
	}
	cr_assert_eq(atoi(buf), 128 + SIGKILL, "earthrun's status: '%s'", buf);
	unlink(path);
}

/* The last line of s, without its newline. */
static const char *last_line(const char *s, char *line, size_t len)
{
	size_t n = strlen(s);
	while (n && s[n - 1] == '\n')
		n--;
	size_t b = n;
	while (b && s[b - 1] != '\n')
		b--;
	snprintf(line, len, "%.*s", (int)(n - b), s + b);
	return line;
}

/* Runs `earthrun -n nodes sh FILE` where FILE holds script (node k's
 * number in $EARTH_NODE) into *c; its time in seconds. */
static double sh_job(struct t_cmd *c, int nodes, const char *script)
{
	char file[64];
	snprintf(file, sizeof(file), "/tmp/t_cause.%d.sh", (int)getpid());
	FILE *f = fopen(file, "w");
	cr_assert(f);
	fputs(script, f);
	fclose(f);
	uint64_t t0 = t_now_ns();
	t_sh(c, 30, "%s -n %d sh %s", T_EARTHRUN, nodes, file);
	unlink(file);
	return (t_now_ns() - t0) / 1e9;
}

/* earthrun(1), EXIT STATUS: a node that stopped because another died
 * (status 71) only echoes that failure: earthrun's status and last line
 * name the node that failed for its own reason, with its message, even
 * when the echoes end (and are reaped) first; with no such node, the
 * first echo is named, and the others stopped, within a second or so. */
Test(launcher, cause_named_whatever_the_order)
{
	static const struct {
		int nodes, status;
		const char *script, *last;
	} cases[] = {
	    /* The echoes end first, the cause 0.5 s later. */
	    {3, 3,
	     "if [ $EARTH_NODE = 1 ]; then sleep 0.5\n"
	     "  echo 'earth: node 1: error: the cause' >&2; exit 3; fi\n"
	     "echo \"earth: node $EARTH_NODE: error: lost node 1\" >&2\n"
	     "exit 71\n",
	     "node 1 exited with status 3: the cause"},
	    /* The cause killed by a signal of its own after the echo. */
	    {2, 128 + SIGSEGV,
	     "if [ $EARTH_NODE = 1 ]; then sleep 0.3; kill -SEGV $$; fi\n"
	     "exit 71\n",
	     "node 1 was killed by signal 11 (Segmentation fault)"},
	    /* Only an echo, node 0 still running: named, node 0 stopped. */
	    {2, 71,
	     "if [ $EARTH_NODE = 0 ]; then exec sleep 30; fi\n"
	     "echo 'earth: node 1: error: lost node 0' >&2; exit 71\n",
	     "node 1 exited with status 71: lost node 0"},
	};
	for (size_t i = 0; i < T_NCASES(cases); i++) {
		struct t_cmd c;
		char last[512], want[256];
		double s = sh_job(&c, cases[i].nodes, cases[i].script);
		cr_assert_eq(c.status, cases[i].status, "%zu: status %d\n%s", i,
			     c.status, c.err);
		snprintf(want, sizeof(want), "earthrun: the job failed: %s",
			 cases[i].last);
		cr_assert_str_eq(last_line(c.err, last, sizeof(last)), want,
				 "%zu: %s", i, c.err);
		cr_assert_lt(s, 5.0, "%zu: the job took %.1f s", i, s);
	}
}

/* earthrun(1), EXIT STATUS: stopped by a signal, earthrun stops the job
 * and exits with 128 + its number. */
Test(launcher, stopped_earthrun_stops_the_job)
{
	char out[64], cmdline[512], path[80], buf[4096];
	snprintf(out, sizeof(out), "/tmp/t_mn_stop.%d", (int)getpid());
	snprintf(cmdline, sizeof(cmdline),
		 "(%s -n 2 %s/hang stop%d > %s.o 2> %s.e & echo $! > %s.p; "
		 "wait $!; echo $? > %s.s) &",
		 T_EARTHRUN, T_PROG_DIR, (int)getpid(), out, out, out, out);
	cr_assert_eq(system(cmdline), 0);
	snprintf(path, sizeof(path), "%s.p", out);
	uint64_t t0 = t_now_ns();
	do {
		usleep(10000);
		t_slurp(path, buf, sizeof(buf));
	} while (!strchr(buf, '\n') && t_now_ns() - t0 < 10000000000ull);
	long er = atol(buf);
	cr_assert_gt(er, 0, "no earthrun pid: '%s'", buf);
	snprintf(path, sizeof(path), "%s.o", out);
	t0 = t_now_ns();
	do {
		usleep(10000);
		t_slurp(path, buf, sizeof(buf));
	} while (!strstr(buf, "node 1 pid ") &&
		 t_now_ns() - t0 < 10000000000ull);
	cr_assert(strstr(buf, "node 1 pid "), "the job never started: %s", buf);
	cr_assert_eq(kill((pid_t)er, SIGTERM), 0);
	snprintf(path, sizeof(path), "%s.s", out);
	buf[0] = 0;
	t0 = t_now_ns();
	while (!strchr(buf, '\n') && t_now_ns() - t0 < 10000000000ull) {
		usleep(10000);
		t_slurp(path, buf, sizeof(buf));
	}
	cr_assert_eq(atoi(buf), 128 + SIGTERM, "earthrun's status: '%s'", buf);
	for (const char *x = "oeps"; *x; x++) {
		snprintf(path, sizeof(path), "%s.%c", out, *x);
		unlink(path);
	}
}

/* The version in the VERSION file at the root (the tests run there). */
static void version(char *buf, size_t len)
{
	t_slurp("VERSION", buf, len);
	buf[strcspn(buf, "\n")] = 0;
	cr_assert(buf[0], "no VERSION file");
}

Test(launcher, help_and_version)
{
	struct t_cmd c;
	char v[64];
	version(v, sizeof(v));
	t_sh(&c, 30, "%s --help", T_EARTHRUN);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "usage: earthrun") && strstr(c.out, "-np N"),
		  "%s", c.out);
	t_sh(&c, 30, "%s --version", T_EARTHRUN);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, v), "%s", c.out);
	/* A program's own: the settings table, the runtime's version. */
	t_sh(&c, 30, "%s/multinode --earth-help", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "--earth-stats-json"), "%s", c.out);
	t_sh(&c, 30, "%s/multinode --earth-version", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, v), "%s", c.out);
}

/* -np N, -nN, --opt=value: the forms mpirun and most tools take. */
Test(launcher, usual_option_forms)
{
	struct t_cmd c;
	static const char *const forms[] = {
	    "-np 2", "-n2", "-n=2 --transport=tcp", "--nodes 2 --transport tcp",
	    "-n 2 --ring-kb=128 --gmem-mb=16 --remote=su"};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		t_sh(&c, 30, "%s %s --prefix %s/multinode 10", T_EARTHRUN,
		     forms[i], T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%s: status %d\n%s", forms[i],
			     c.status, c.err);
		cr_assert(strstr(c.out, "[0] multinode: 2 nodes"), "%s: %s",
			  forms[i], c.out);
	}
	t_sh(&c, 30, "%s -n 2 --transport=udp %s/multinode 10", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "give shm, tcp or ucx"), "%s", c.err);
}

/* Every node refuses the same bad EARTH_* value: the job says it once. */
Test(launcher, bad_setting_said_once)
{
	struct t_cmd c;
	for (int prefix = 0; prefix < 2; prefix++) {
		t_sh(&c, 30,
		     "env EARTH_SPIN_US=bogus %s -n 4 %s %s/multinode 10",
		     T_EARTHRUN, prefix ? "--prefix" : "", T_PROG_DIR);
		cr_assert_neq(c.status, 0, "%s", c.err);
		const char *p = strstr(c.err, "EARTH_SPIN_US='bogus'");
		cr_assert(p, "%s", c.err);
		cr_assert_null(strstr(p + 1, "EARTH_SPIN_US='bogus'"),
			       "said more than once:\n%s", c.err);
	}
}
