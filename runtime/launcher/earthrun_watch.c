/* SPDX-License-Identifier: MIT */
/*
 * earthrun: waits for the job. Exits with node 0's status. If a node dies
 * (signal or non-zero exit before the job ended) the others are told which
 * one (in the mapping) and stopped with SIGTERM, then SIGKILL after 2 s
 * (tcp and ucx: the nodes notice a dead peer themselves and say so;
 * SIGTERM follows only after 3 s); earthrun exits non-zero naming the
 * node. A node that fails after node 0 ended the job (while the nodes
 * exit: a non-zero status other than node 0's, which the others repeat, or
 * a signal, earthrun's SIGKILL 5 s after node 0 included) is named too and
 * fails the job with its status (the first such node's).
 *
 * The cause, not its echo: a node that stopped because another died,
 * vanished or left (status EARTH_EXIT_PEER_DIED), or that earthrun itself
 * stopped (killed by the SIGTERM or SIGKILL earthrun sent it), only
 * repeats another's failure. Reaped first, it is held for ECHO_GRACE_S
 * while a node that failed for its own reason may still end (the nodes
 * of one job end in any order, and are reaped in any order); that one is
 * named. Only when none comes is the echo named. earthrun's last line
 * names the node that failed, its status and its message.
 *
 * Afterwards the nodes' statistics/trace parts are joined into one file
 * each; a node that could not write its part (status EARTH_EXIT_OUTPUT,
 * the part removed) or a join that fails leaves no file and makes
 * earthrun exit non-zero.
 */
#define _GNU_SOURCE 1
#include "earth.h" /* EARTH_EXIT_USAGE */
#include "earthrun.h"
#include "base/jsonparts.h"
#include "net/shm_layout.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a node's echo of another's failure waits for the cause. */
#define ECHO_GRACE_S 1.0
/* tcp and ucx: how long the nodes have to notice a dead peer and say so
 * before earthrun stops them. */
#define NOTICE_GRACE_S 3.0

static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* SIGINT/SIGTERM to earthrun stop the whole job. */
void er_watch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The watch over one job. */
struct watch {
	const struct er_opts *o;
	struct shm_job *job;
	struct er_child *ch;
	long alive;
	int failed, fail_status; /* node that stopped the job (-1: none) */
	int echo, echo_status;	 /* first echo of a failure (-1: none) */
	int zero_ended;		 /* node 0 ended the job (not an echo) */
	double kill_at, end_deadline, term_at, echo_until;
	int end_grace;
};

static void signal_others(struct watch *w, int sig)
{
	for (long o = 0; o < w->o->nodes; o++)
		if (!w->ch[o].done) {
			w->ch[o].signalled = 1;
			kill(w->ch[o].pid, sig);
		}
}

/* "earthrun: node K was killed by signal N (name)" or "... exited with
 * status S", then tail. */
static void say_end(long k, int st, const char *tail)
{
	if (WIFSIGNALED(st))
		fprintf(stderr,
			"earthrun: node %ld was killed by signal %d (%s)%s\n",
			k, WTERMSIG(st), strsignal(WTERMSIG(st)), tail);
	else
		fprintf(stderr, "earthrun: node %ld exited with status %d%s\n",
			k, WEXITSTATUS(st), tail);
}

/* Node k failed first with status st: the others are told and stopped
 * (tcp and ucx: after NOTICE_GRACE_S, or at once when notice is 0). */
static void node_failed(struct watch *w, long k, int st, int notice)
{
	w->failed = (int)k;
	w->fail_status = st;
	atomic_store(&w->job->dead_how,
		     WIFSIGNALED(st) ? WTERMSIG(st) : 256 + WEXITSTATUS(st));
	atomic_store(&w->job->dead_node, (int32_t)k);
	say_end(k, st, "; stopping the job");
	if (w->o->tcp && notice) {
		/* Let the nodes notice (and say) it. */
		w->term_at = now_s() + NOTICE_GRACE_S;
	} else {
		signal_others(w, SIGTERM);
		w->kill_at = now_s() + 2;
	}
}

/* Whether st, the status of a node other than 0 that ended after node 0,
 * is a failure: killed by a signal (SIGKILL included: earthrun's, after
 * the grace), or a non-zero exit that is not node 0's status (the others
 * end with node 0's status, from its SHUTDOWN) nor a part not written. */
static int failed_at_end(const struct watch *w, int st)
{
	if (WIFSIGNALED(st))
		return 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 0 ||
	    WEXITSTATUS(st) == EARTH_EXIT_OUTPUT ||
	    WEXITSTATUS(st) == EARTH_EXIT_PEER_DIED)
		return 0;
	int s0 = w->ch[0].status;
	return !(WIFEXITED(s0) && WEXITSTATUS(s0) == WEXITSTATUS(st));
}

/* Node k failed after node 0 ended the job (while the nodes were exiting:
 * an atexit handler, a destructor, a late error): said, and the job fails
 * with its status; the others are ending already. */
static void node_failed_at_end(struct watch *w, long k, int st)
{
	w->failed = (int)k;
	w->fail_status = st;
	say_end(k, st, " after node 0 ended the job");
}

/* Whether node k's end (status st) only echoes another's failure: it
 * stopped because a peer died, vanished or left, or earthrun stopped it. */
static int is_echo(const struct watch *w, long k, int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st) == EARTH_EXIT_PEER_DIED;
	return WIFSIGNALED(st) && w->ch[k].signalled &&
	       (WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGKILL);
}

/* Node k ended with status st. */
static void node_ended(struct watch *w, long k, int st)
{
	w->ch[k].done = 1;
	w->ch[k].status = st;
	w->alive--;
	if (is_echo(w, k, st)) {
		/* Held while the cause may still end (ECHO_GRACE_S). */
		if (w->echo < 0) {
			w->echo = (int)k;
			w->echo_status = st;
			w->echo_until = now_s() + ECHO_GRACE_S;
		}
		return;
	}
	/* Node 0 ends the job, with any status; but a node 0
	 * stopped by a runtime error did not tell the others. */
	/* A node that could not write its statistics or trace part ran
	 * its job: that file fails (join_outputs), the job goes on. */
	int bad = WIFSIGNALED(st) ||
		  (WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
		   WEXITSTATUS(st) != EARTH_EXIT_OUTPUT &&
		   (k != 0 || WEXITSTATUS(st) == EARTH_EXIT_USAGE));
	/* Node 0 ended: the others end on its SHUTDOWN. If it
	 * failed it may not have sent one: wait 1 s, not 5. A stuck
	 * job's node 0 sent it (WIRE_F_STUCK), and the others are
	 * writing their reports (a search of their memory): 5 s. */
	if (k == 0 && !bad && !w->end_deadline) {
		w->zero_ended = 1;
		w->end_grace =
		    WIFEXITED(st) && (WEXITSTATUS(st) == 0 ||
				      WEXITSTATUS(st) == EARTH_EXIT_STUCK)
			? 5
			: 1;
		w->end_deadline = now_s() + w->end_grace;
	}
	if (bad && w->failed < 0 && !(k != 0 && w->zero_ended))
		node_failed(w, k, st, 1);
	else if (k != 0 && w->zero_ended && w->failed < 0 &&
		 failed_at_end(w, st))
		node_failed_at_end(w, k, st);
}

static void reap(struct watch *w)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		long k = 0;
		while (k < w->o->nodes && w->ch[k].pid != pid)
			k++;
		if (k < w->o->nodes)
			node_ended(w, k, st);
	}
}

/* SIGTERM after the tcp grace, a stop signal to earthrun, SIGKILL after
 * the grace of a stopped job or of the end of node 0. */
static void deadlines(struct watch *w)
{
	if (w->echo >= 0 && w->failed < 0 && !w->zero_ended &&
	    now_s() > w->echo_until)
		/* No cause came: the echo is all there is to name; the
		 * others had their time to notice. */
		node_failed(w, w->echo, w->echo_status, 0);
	if (w->term_at && now_s() > w->term_at) {
		signal_others(w, SIGTERM);
		w->term_at = 0;
		w->kill_at = now_s() + 1;
	}
	if (stop_signal && w->failed < 0) {
		fprintf(stderr, "earthrun: %s: stopping the job\n",
			strsignal(stop_signal));
		signal_others(w, SIGTERM);
		w->failed = 0;
		w->fail_status = stop_signal; /* reported as 128 + sig */
		w->kill_at = now_s() + 2;
	}
	double t = now_s();
	if ((w->kill_at && t > w->kill_at) ||
	    (w->end_deadline && t > w->end_deadline)) {
		long first = -1; /* the job fails naming it */
		for (long o = 0; o < w->o->nodes; o++)
			if (!w->ch[o].done) {
				if (first < 0)
					first = o;
				if (w->end_deadline && !w->kill_at)
					fprintf(
					    stderr,
					    "earthrun: node %ld did not end "
					    "%d s after node 0; killing it\n",
					    o, w->end_grace);
				w->ch[o].signalled = 1;
				kill(w->ch[o].pid, SIGKILL);
			}
		w->kill_at = w->end_deadline = 0;
		if (w->failed < 0)
			w->failed = first > 0 ? (int)first : 0,
			w->fail_status = 1 << 8;
	}
}

/* Whether node k said it could not write one of its parts. */
static int output_failed(const struct er_child *ch)
{
	return ch->done && WIFEXITED(ch->status) &&
	       WEXITSTATUS(ch->status) == EARTH_EXIT_OUTPUT;
}

/* After the job: one file from the nodes' parts (a node that died may
 * have written none; one that could not write its part removed it and
 * exited with EARTH_EXIT_OUTPUT: then no file). Returns -1 if a file was
 * not written (said on stderr, naming it and why). */
static int join_outputs(long nodes, const char *stats_json, const char *trace,
			const struct er_child *ch)
{
	int bad = 0;
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
			bad = -1;
			free(names);
			free(parts);
			continue;
		}
		long lost = -1, filled = 0;
		for (long j = 0; j < nodes; j++) {
			struct stat st;
			parts[j] = jsonparts_name(
			    names[j], sizeof(names[j]), base[k],
			    (unsigned long)getpid(), (unsigned)j);
			if (lost < 0 && output_failed(&ch[j]) &&
			    access(names[j], F_OK) != 0)
				lost = j;
			if (stat(names[j], &st) == 0 && st.st_size > 0)
				filled++;
		}
		if (lost >= 0) {
			jsonparts_remove(parts, (unsigned)nodes);
			fprintf(stderr,
				"earthrun: %s not written: node %ld could not "
				"write its part (its message above says why)\n",
				base[k], lost);
			bad = -1;
		} else if (jsonparts_join(base[k], parts, (unsigned)nodes,
					  head[k], tail[k], 1, err,
					  sizeof(err))) {
			fprintf(stderr, "earthrun: %s\n", err);
			bad = -1;
		} else if (!filled) {
			/* No node wrote a part: the program ended before
			 * its nodes started (a usage error, --help) or
			 * never started one. The file is valid, but empty. */
			fprintf(stderr,
				"earthrun: warning: %s written empty: no node "
				"of the job recorded anything (the program "
				"ended before it started its nodes: its "
				"output above may say why)\n",
				base[k]);
		} else {
			fprintf(stderr, "earthrun: %s written\n", base[k]);
		}
		free(names);
		free(parts);
	}
	return bad;
}

/* earthrun's status: the failure that stopped the job, else node 0's. */
static int exit_status(const struct watch *w)
{
	if (w->failed >= 0) {
		if (WIFSIGNALED(w->fail_status))
			return 128 + WTERMSIG(w->fail_status);
		return WEXITSTATUS(w->fail_status) ? WEXITSTATUS(w->fail_status)
						   : 1;
	}
	if (WIFSIGNALED(w->ch[0].status))
		return 128 + WTERMSIG(w->ch[0].status);
	return WEXITSTATUS(w->ch[0].status);
}

/* earthrun's last word on a failed job: which node failed, how, and its
 * message. */
static void say_cause(const struct watch *w)
{
	if (w->failed < 0 ||
	    (stop_signal && w->failed == 0 && w->fail_status == stop_signal))
		return;
	/* Its message without "earth: node K[ of N]: [error: ]". */
	const char *why = w->ch[w->failed].why;
	if (*why) {
		why += strlen("earth: node ");
		why += strspn(why, "0123456789");
		if (!strncmp(why, " of ", 4))
			why += 4 + strspn(why + 4, "0123456789");
		why += strspn(why, ": ");
		if (!strncmp(why, "error: ", 7))
			why += 7;
	}
	char tail[256];
	snprintf(tail, sizeof(tail), "%s%s", *why ? ": " : "", why);
	/* One call, so one write: a reader of the log that sees the line's
	 * start sees all of it. */
	if (WIFSIGNALED(w->fail_status))
		fprintf(stderr,
			"earthrun: the job failed: node %d was killed by "
			"signal %d (%s)%s\n",
			w->failed, WTERMSIG(w->fail_status),
			strsignal(WTERMSIG(w->fail_status)), tail);
	else
		fprintf(stderr,
			"earthrun: the job failed: node %d exited with status "
			"%d%s\n",
			w->failed, WEXITSTATUS(w->fail_status), tail);
}

int er_watch(const struct er_opts *o, const struct er_job *j,
	     struct er_child *ch)
{
	struct watch w = {.o = o,
			  .job = j->shm,
			  .ch = ch,
			  .alive = o->nodes,
			  .failed = -1,
			  .echo = -1,
			  .end_grace = 5};
	struct pollfd *pf = calloc((size_t)o->nodes * 2, sizeof(*pf));
	while (w.alive > 0) {
		er_pump_output(o, ch, pf);
		reap(&w);
		deadlines(&w);
	}
	/* Every node ended and none for its own reason: the first echo
	 * is the failure (after node 0 ended the job too). */
	if (w.failed < 0 && w.echo >= 0) {
		w.failed = w.echo;
		w.fail_status = w.echo_status;
		say_end(w.echo, w.echo_status, "");
	}
	/* What the nodes wrote just before they ended (up to 1 s: a pipe
	 * a process the program started still holds is left). */
	for (int t = 0; t < 50; t++) {
		int open = 0;
		for (long k = 0; k < o->nodes; k++)
			open |= ch[k].out[0] >= 0 || ch[k].out[1] >= 0;
		if (!open)
			break;
		er_pump_output(o, ch, pf);
	}
	free(pf);
	int bad = join_outputs(o->nodes, o->stats_json, o->trace, ch);
	int status = exit_status(&w);
	for (long k = 0; k < o->nodes && !status; k++)
		if (output_failed(&ch[k]))
			bad = -1;
	say_cause(&w);
	return bad && !status ? EARTH_EXIT_OUTPUT : status;
}
