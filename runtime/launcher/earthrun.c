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

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

struct child {
	pid_t pid;
	int out[2]; /* stdout, stderr pipes (read ends), -1 when closed */
	char *buf[2];
	size_t len[2];
	int done, status;
};

static void emit(struct child *c, int k, int which, int final)
{
	FILE *to = which ? stderr : stdout;
	char *b = c->buf[which];
	size_t start = 0;
	for (size_t i = 0; i < c->len[which]; i++) {
		if (b[i] != '\n')
			continue;
		fprintf(to, "[%d] %.*s\n", k, (int)(i - start), b + start);
		start = i + 1;
	}
	if (final && start < c->len[which]) {
		fprintf(to, "[%d] %.*s\n", k, (int)(c->len[which] - start),
			b + start);
		start = c->len[which];
	}
	memmove(b, b + start, c->len[which] - start);
	c->len[which] -= start;
	fflush(to);
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
	int prefix = opt.prefix, tcp = opt.tcp;
	const char *stats_json = opt.stats_json, *trace = opt.trace;
	struct shm_job *job = jb.shm;

	struct child *ch = calloc((size_t)nodes, sizeof(*ch));
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
	pid_t parent = getpid();
	char fdbuf[16], nbuf[24], kbuf[24]; /* room for any long */
	snprintf(fdbuf, sizeof(fdbuf), "%d", jb.fd);
	snprintf(nbuf, sizeof(nbuf), "%ld", nodes);
	for (long k = 0; k < nodes; k++) {
		int p[2][2] = {{-1, -1}, {-1, -1}};
		if (prefix && (pipe(p[0]) || pipe(p[1]))) {
			fprintf(stderr, "earthrun: pipe: %s\n", strerror(errno));
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "earthrun: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			/* Same addresses on every node for the program's static
			 * data (symmetric globals), unless EARTH_ASLR=1. */
			const char *aslr = getenv("EARTH_ASLR");
			if (!aslr || strcmp(aslr, "1"))
				personality(ADDR_NO_RANDOMIZE);
			/* If earthrun dies, the node is told (SIGTERM). */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(1);
			snprintf(kbuf, sizeof(kbuf), "%ld", k);
			setenv("EARTH_NODE", kbuf, 1);
			setenv("EARTH_NODES", nbuf, 1);
			setenv("EARTH_LOCAL_NODE", kbuf, 1);
			setenv("EARTH_LOCAL_NODES", nbuf, 1);
			if (!tcp)
				setenv("EARTH_SHM_FD", fdbuf, 1);
			if (prefix) {
				dup2(p[0][1], 1);
				dup2(p[1][1], 2);
				close(p[0][0]);
				close(p[1][0]);
				close(p[0][1]);
				close(p[1][1]);
			}
			execvp(opt.prog[0], opt.prog);
			fprintf(stderr, "earthrun: cannot run %s: %s\n", opt.prog[0],
				strerror(errno));
			_exit(127);
		}
		ch[k].pid = pid;
		ch[k].out[0] = ch[k].out[1] = -1;
		if (prefix) {
			close(p[0][1]);
			close(p[1][1]);
			ch[k].out[0] = p[0][0];
			ch[k].out[1] = p[1][0];
			ch[k].buf[0] = malloc(65536);
			ch[k].buf[1] = malloc(65536);
		}
	}

	long alive = nodes;
	int failed = -1, fail_status = 0;
	double kill_at = 0, end_deadline = 0, term_at = 0;
	int end_grace = 5;
	struct pollfd *pf = calloc((size_t)nodes * 2, sizeof(*pf));
	while (alive > 0) {
		int np = 0;
		for (long k = 0; k < nodes; k++)
			for (int w = 0; w < 2; w++)
				if (ch[k].out[w] >= 0)
					pf[np++] = (struct pollfd){ch[k].out[w],
								   POLLIN, 0};
		if (np)
			poll(pf, (nfds_t)np, 20);
		else
			usleep(2000);
		for (long k = 0; k < nodes; k++) {
			for (int w = 0; w < 2; w++) {
				if (ch[k].out[w] < 0)
					continue;
				struct pollfd q = {ch[k].out[w], POLLIN, 0};
				if (poll(&q, 1, 0) <= 0)
					continue;
				ssize_t r = read(ch[k].out[w],
						 ch[k].buf[w] + ch[k].len[w],
						 65536 - ch[k].len[w]);
				if (r <= 0) {
					emit(&ch[k], (int)k, w, 1);
					close(ch[k].out[w]);
					ch[k].out[w] = -1;
					continue;
				}
				ch[k].len[w] += (size_t)r;
				emit(&ch[k], (int)k, w, ch[k].len[w] == 65536);
			}
		}
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
