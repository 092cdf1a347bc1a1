/* SPDX-License-Identifier: MIT */
/*
 * earthrun - starts an EARTH job of N nodes on this host.
 *
 *   earthrun -n N [--prefix] [--ring-kb K] [--transport shm|tcp]
 *            [--gmem-mb M] [--remote su|direct] [--] program [args...]
 *
 * Creates the job's shared mapping (same-host transport: a byte ring per
 * pair of nodes; global memory: one segment of M MiB per node, every node
 * maps them all), starts N processes with EARTH_NODE, EARTH_NODES,
 * EARTH_LOCAL_NODE(S) and EARTH_SHM_FD set (--transport tcp: instead
 * EARTH_TRANSPORT=tcp, EARTH_RENDEZVOUS at a free loopback port and a
 * random EARTH_JOB_SECRET from /dev/urandom), EARTH_GMEM_MB and, if
 * given, EARTH_REMOTE, optionally prefixes their
 * output lines with "[k] ", and waits. Exits with node 0's status. If a
 * node dies (signal or non-zero exit before the job ended) the others are
 * told which one (in the mapping) and stopped with SIGTERM, then SIGKILL
 * after 2 s (tcp: the nodes notice a dead peer themselves; SIGTERM follows
 * only after 3 s); earthrun exits non-zero naming the node. Nodes run without
 * address-space randomisation (EARTH_ASLR=1 keeps it), so a static
 * variable has the same address on every node of the job.
 */
#define _GNU_SOURCE 1
#include "earth.h" /* EARTH_EXIT_USAGE */
#include "earthrun.h"
#include "jsonparts.h"
#include "shm_layout.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* After the job: one file from the nodes' parts (a node that died may
 * have written none). */
static void join_outputs(long nodes, const char *stats_json,
			 const char *trace)
{
	const char *base[2] = {stats_json, trace};
	const char *head[2] = {"{\"nodes\":[\n", "{\"traceEvents\":[\n"};
	const char *tail[2] = {"\n]}\n", "\n],\"displayTimeUnit\":\"ns\"}\n"};
	for (int k = 0; k < 2; k++) {
		if (!base[k])
			continue;
		char(*names)[4096] = calloc((size_t)nodes, sizeof(*names));
		const char **parts = calloc((size_t)nodes, sizeof(*parts));
		char err[512];
		if (!names || !parts) {
			fprintf(stderr, "earthrun: out of memory joining %s\n",
				base[k]);
		} else {
			for (long j = 0; j < nodes; j++)
				parts[j] = jsonparts_name(names[j], sizeof(names[j]),
							  base[k], (unsigned)j);
			if (jsonparts_join(base[k], parts, (unsigned)nodes,
					   head[k], tail[k], 1, err,
					   sizeof(err)))
				fprintf(stderr, "earthrun: %s\n", err);
			else
				fprintf(stderr, "earthrun: %s written\n",
					base[k]);
		}
		free(names);
		free(parts);
	}
}

int main(int argc, char **argv)
{
	struct er_opts opt;
	int rc = er_parse(argc, argv, &opt);
	if (rc)
		return rc;
	struct er_job jb;
	if ((rc = er_map_job(&opt, &jb)))
		return rc;
	long nodes = opt.nodes;
	int tcp = opt.tcp;
	const char *stats_json = opt.stats_json, *trace = opt.trace;
	struct shm_job *job = jb.shm;

	struct er_child *ch = calloc((size_t)nodes, sizeof(*ch));
	if (!ch)
		return 1;
	/* SIGINT/SIGTERM to earthrun stop the whole job. */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if ((rc = er_map_env(&opt)))
		return rc;
	if ((rc = er_spawn(&opt, &jb, ch)))
		return rc;

	long alive = nodes;
	int failed = -1, fail_status = 0;
	double kill_at = 0, end_deadline = 0, term_at = 0;
	int end_grace = 5;
	struct pollfd *pf = calloc((size_t)nodes * 2, sizeof(*pf));
	while (alive > 0) {
		er_pump_output(&opt, ch, pf);
		int st;
		pid_t pid;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			long k = 0;
			while (k < nodes && ch[k].pid != pid)
				k++;
			if (k == nodes)
				continue;
			ch[k].done = 1;
			ch[k].status = st;
			alive--;
			/* Node 0 ends the job, with any status; but a node 0
			 * stopped by a runtime error did not tell the others. */
			int bad = WIFSIGNALED(st) ||
				  (WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
				   (k != 0 ||
				    WEXITSTATUS(st) == EARTH_EXIT_USAGE));
			/* Node 0 ended: the others end on its SHUTDOWN. If it
			 * failed it may not have sent one: wait 1 s, not 5. */
			if (k == 0 && !bad && !end_deadline) {
				end_grace = WIFEXITED(st) &&
						    WEXITSTATUS(st) == 0
					    ? 5
					    : 1;
				end_deadline = now_s() + end_grace;
			}
			if (bad && failed < 0 && !(k != 0 && ch[0].done)) {
				failed = (int)k;
				fail_status = st;
				atomic_store(&job->dead_how,
					     WIFSIGNALED(st) ? WTERMSIG(st)
							     : 256 + WEXITSTATUS(st));
				atomic_store(&job->dead_node, (int32_t)k);
				if (WIFSIGNALED(st))
					fprintf(stderr, "earthrun: node %ld was "
							"killed by signal %d "
							"(%s); stopping the "
							"job\n",
						k, WTERMSIG(st),
						strsignal(WTERMSIG(st)));
				else
					fprintf(stderr, "earthrun: node %ld "
							"exited with status "
							"%d; stopping the "
							"job\n",
						k, WEXITSTATUS(st));
				if (tcp) {
					/* Let the nodes notice (and say) it. */
					term_at = now_s() + 3;
				} else {
					for (long o = 0; o < nodes; o++)
						if (!ch[o].done)
							kill(ch[o].pid, SIGTERM);
					kill_at = now_s() + 2;
				}
			}
		}
		if (term_at && now_s() > term_at) {
			for (long o = 0; o < nodes; o++)
				if (!ch[o].done)
					kill(ch[o].pid, SIGTERM);
			term_at = 0;
			kill_at = now_s() + 1;
		}
		if (stop_signal && failed < 0) {
			fprintf(stderr, "earthrun: %s: stopping the job\n",
				strsignal(stop_signal));
			for (long o = 0; o < nodes; o++)
				if (!ch[o].done)
					kill(ch[o].pid, SIGTERM);
			failed = 0;
			fail_status = stop_signal; /* reported as 128 + sig */
			kill_at = now_s() + 2;
		}
		double t = now_s();
		if ((kill_at && t > kill_at) ||
		    (end_deadline && t > end_deadline)) {
			for (long o = 0; o < nodes; o++)
				if (!ch[o].done) {
					if (end_deadline && !kill_at)
						fprintf(stderr,
							"earthrun: node %ld "
							"did not end %d s "
							"after node 0; "
							"killing it\n",
							o, end_grace);
					kill(ch[o].pid, SIGKILL);
				}
			kill_at = end_deadline = 0;
			if (failed < 0)
				failed = 0, fail_status = 1 << 8;
		}
	}
	join_outputs(nodes, stats_json, trace);
	if (failed >= 0) {
		if (WIFSIGNALED(fail_status))
			return 128 + WTERMSIG(fail_status);
		return WEXITSTATUS(fail_status) ? WEXITSTATUS(fail_status) : 1;
	}
	if (WIFSIGNALED(ch[0].status))
		return 128 + WTERMSIG(ch[0].status);
	return WEXITSTATUS(ch[0].status);
}
