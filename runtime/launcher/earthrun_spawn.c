/* SPDX-License-Identifier: MIT */
/*
 * earthrun: starts the N node processes with EARTH_NODE, EARTH_NODES,
 * EARTH_LOCAL_NODE(S) and (shm) EARTH_SHM_FD set, without address-space
 * randomisation (EARTH_ASLR=1 keeps it: a static variable then has the
 * same address on every node), and passes their stderr on line by line
 * (with --prefix also their stdout, as "[k] line"), a runtime message
 * ("earth: ...") that several nodes print alike only once.
 */
#define _GNU_SOURCE 1
#include "earthrun.h"
#include "base/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* In the child: node k's environment and output, then the program. */
static void run_node(const struct er_opts *o, const struct er_job *j, long k,
		     int p[2][2], pid_t parent)
{
	char fdbuf[16], nbuf[24], kbuf[24]; /* room for any long */
	snprintf(fdbuf, sizeof(fdbuf), "%d", j->fd);
	snprintf(nbuf, sizeof(nbuf), "%ld", o->nodes);
	/* Same addresses on every node for the program's static
	 * data (symmetric globals), unless EARTH_ASLR=1 (er_parse read it). */
	if (!earth_setting_on(EARTH_SET_ASLR))
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
	if (!o->tcp)
		setenv("EARTH_SHM_FD", fdbuf, 1);
	if (o->tcp && k == 0 && j->rdv_fd >= 0) {
		/* Node 0 inherits the listener (the others do not: it is
		 * close-on-exec). */
		snprintf(fdbuf, sizeof(fdbuf), "%d", j->rdv_fd);
		fcntl(j->rdv_fd, F_SETFD, 0);
		setenv("EARTH_RENDEZVOUS_FD", fdbuf, 1);
	}
	if (o->prefix) {
		dup2(p[0][1], 1);
		close(p[0][0]);
		close(p[0][1]);
	}
	dup2(p[1][1], 2);
	close(p[1][0]);
	close(p[1][1]);
	execvp(o->prog[0], o->prog);
	fprintf(stderr, "earthrun: cannot run %s: %s\n", o->prog[0],
		strerror(errno));
	_exit(127);
}

int er_spawn(const struct er_opts *o, const struct er_job *j,
	     struct er_child *ch)
{
	pid_t parent = getpid();
	for (long k = 0; k < o->nodes; k++) {
		int p[2][2] = {{-1, -1}, {-1, -1}};
		/* stderr always passes through earthrun (the runtime's
		 * messages, said once per job); stdout with --prefix. */
		if ((o->prefix && pipe(p[0])) || pipe(p[1])) {
			int e = errno;
			if (e == EMFILE || e == ENFILE) {
				struct rlimit rl = {0, 0};
				getrlimit(RLIMIT_NOFILE, &rl);
				fprintf(stderr,
					"earthrun: out of file descriptors for "
					"node %ld's output (pipe: %s): raise "
					"ulimit -n (now %llu; %ld nodes need "
					"about %ld)\n",
					k, strerror(e),
					(unsigned long long)rl.rlim_cur,
					o->nodes, 3 * o->nodes + 16);
			} else {
				fprintf(stderr, "earthrun: pipe: %s\n",
					strerror(e));
			}
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "earthrun: fork: %s\n",
				strerror(errno));
			return 1;
		}
		if (pid == 0)
			run_node(o, j, k, p, parent);
		ch[k].pid = pid;
		ch[k].out[0] = ch[k].out[1] = -1;
		if (o->prefix) {
			close(p[0][1]);
			ch[k].out[0] = p[0][0];
			ch[k].buf[0] = malloc(ER_OUTBUF);
		}
		close(p[1][1]);
		ch[k].out[1] = p[1][0];
		ch[k].buf[1] = malloc(ER_OUTBUF);
	}
	return 0;
}

/* The runtime's messages ("earth: ...") and earthrun's own from a node's
 * process ("earthrun: cannot run ...", before the program started) on
 * stderr already passed on, and the node that said each: the same line
 * from another node is a message about the job (every node refused the
 * same EARTH_* value, or could not start the same program) and is said
 * once. */
#define SAID_MAX 64
static struct {
	char *line;
	int node;
} said[SAID_MAX];
static int nsaid;

/* Whether node k's stderr line b[0..n) repeats another node's message. */
static int repeated(int k, const char *b, size_t n)
{
	if ((n < 7 || strncmp(b, "earth: ", 7)) &&
	    (n < 10 || strncmp(b, "earthrun: ", 10)))
		return 0;
	for (int i = 0; i < nsaid; i++)
		if (said[i].node != k && strlen(said[i].line) == n &&
		    !memcmp(said[i].line, b, n))
			return 1;
	if (nsaid < SAID_MAX && (said[nsaid].line = strndup(b, n)))
		said[nsaid++].node = k;
	return 0;
}

/* Whether b[0..n), a line "earth: node K[ of N]: ...", is a note (what
 * the node chose, e.g. EUs sharing CPUs): never the cause of a failure. */
static int is_note(const char *b, size_t n)
{
	size_t i = 12; /* past "earth: node " */
	while (i < n && b[i] >= '0' && b[i] <= '9')
		i++;
	if (i + 4 <= n && !memcmp(b + i, " of ", 4))
		for (i += 4; i < n && b[i] >= '0' && b[i] <= '9'; i++)
			;
	return i + 8 <= n && !memcmp(b + i, ": note: ", 8);
}

/* One line of node k (c): "[k] line" with --prefix, else as it is. Its
 * last line from the runtime ("earth: node K..."), notes aside, is kept,
 * for earthrun's last word. */
static void emit_line(const struct er_opts *o, struct er_child *c, int k,
		      int which, const char *b, size_t n)
{
	if (which && n > 12 && !strncmp(b, "earth: node ", 12) &&
	    !is_note(b, n))
		snprintf(c->why, sizeof(c->why), "%.*s", (int)n, b);
	if (which && repeated(k, b, n))
		return;
	FILE *to = which ? stderr : stdout;
	if (o->prefix)
		fprintf(to, "[%d] %.*s\n", k, (int)n, b);
	else
		fprintf(to, "%.*s\n", (int)n, b);
}

/* Node k's complete lines of stdout (which 0) or stderr (1); final: also
 * the rest (end of output, or a full buffer). */
static void emit(const struct er_opts *o, struct er_child *c, int k, int which,
		 int final)
{
	FILE *to = which ? stderr : stdout;
	char *b = c->buf[which];
	size_t start = 0;
	for (size_t i = 0; i < c->len[which]; i++) {
		if (b[i] != '\n')
			continue;
		emit_line(o, c, k, which, b + start, i - start);
		start = i + 1;
	}
	if (final && start < c->len[which]) {
		emit_line(o, c, k, which, b + start, c->len[which] - start);
		start = c->len[which];
	}
	memmove(b, b + start, c->len[which] - start);
	c->len[which] -= start;
	fflush(to);
}

/* Reads what node k's pipe w holds, if anything; closes it at its end. */
static void pump_one(const struct er_opts *o, struct er_child *c, int k, int w)
{
	struct pollfd q = {c->out[w], POLLIN, 0};
	if (poll(&q, 1, 0) <= 0)
		return;
	ssize_t r =
	    read(c->out[w], c->buf[w] + c->len[w], ER_OUTBUF - c->len[w]);
	if (r <= 0) {
		emit(o, c, k, w, 1);
		close(c->out[w]);
		c->out[w] = -1;
		return;
	}
	c->len[w] += (size_t)r;
	emit(o, c, k, w, c->len[w] == ER_OUTBUF);
}

void er_pump_output(const struct er_opts *o, struct er_child *ch,
		    struct pollfd *pf)
{
	int np = 0;
	for (long k = 0; k < o->nodes; k++)
		for (int w = 0; w < 2; w++)
			if (ch[k].out[w] >= 0)
				pf[np++] =
				    (struct pollfd){ch[k].out[w], POLLIN, 0};
	if (np)
		poll(pf, (nfds_t)np, 20);
	else
		usleep(2000);
	for (long k = 0; k < o->nodes; k++)
		for (int w = 0; w < 2; w++)
			if (ch[k].out[w] >= 0)
				pump_one(o, &ch[k], (int)k, w);
}
