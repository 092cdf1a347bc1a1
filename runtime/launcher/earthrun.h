/* SPDX-License-Identifier: MIT */
/*
 * earthrun's steps, one concern per file (private to the launcher):
 *
 *   earthrun_parse.c  options and their validation into struct er_opts
 *   earthrun_map.c    the shared-memory job area, the nodes' environment
 *                     (tcp rendezvous, statistics/trace parts, gmem, remote)
 *   earthrun_spawn.c  starting the node processes, "[k] " output prefixing
 *   earthrun_watch.c  waiting: a dead node stops the job, timeouts, the exit
 *                     status, joining the nodes' JSON parts
 *   earthrun.c        main: the steps in order
 *
 * Every step that can fail has already said why on stderr and returns the
 * status earthrun exits with (0: go on).
 */
#ifndef EARTHRUN_H
#define EARTHRUN_H

#include <stddef.h>
#include <sys/types.h>

#define MAX_NODES 256

/* What the command line (and EARTH_GMEM_MB) asked for, validated. */
struct er_opts {
	long nodes;		/* -n: 1..MAX_NODES */
	long ring_kb;		/* --ring-kb: power of two, 64..65536 */
	long gmem_mb;		/* --gmem-mb / EARTH_GMEM_MB; nodes x it fits */
	int prefix;		/* --prefix */
	int tcp;		/* --transport tcp or ucx: the tcp rendezvous */
	int ucx;		/* --transport ucx */
	int stats;		/* --stats */
	const char *remote;	/* --remote su|direct, or NULL */
	const char *eus;	/* --eus k|auto (EARTH_EUS), or NULL */
	const char *stats_json; /* --stats=json FILE, or NULL */
	const char *trace;	/* --trace FILE, or NULL */
	char **prog;		/* program and its arguments (NULL-ended) */
};

struct shm_job;

/* The job's shared mapping (also made for tcp: it carries the header). */
struct er_job {
	int fd;		     /* memfd the shm nodes get as EARTH_SHM_FD */
	struct shm_job *shm; /* its header, mapped here */
	int rdv_fd; /* tcp: node 0's listener, its EARTH_RENDEZVOUS_FD; -1 */
};

/* One node process. */
struct er_child {
	pid_t pid;
	int out[2]; /* stdout, stderr pipes (read ends), -1 when closed */
	char *buf[2];
	size_t len[2];
	int done, status;
	int signalled; /* earthrun sent it SIGTERM or SIGKILL */
	char why[200]; /* its last "earth: node K: ..." line, not a note */
};

/* Size of each prefixed output buffer. */
#define ER_OUTBUF 65536

/* earthrun_parse.c: fills *o from argv; usage errors exit(2) there. */
int er_parse(int argc, char **argv, struct er_opts *o);

/* earthrun_map.c */
int er_map_job(const struct er_opts *o, struct er_job *j);
int er_map_env(const struct er_opts *o, struct er_job *j);

/* earthrun_spawn.c: starts o->nodes processes into ch[]. */
int er_spawn(const struct er_opts *o, const struct er_job *j,
	     struct er_child *ch);
/* Waits up to 20 ms for the nodes' output and passes on its complete lines
 * with "[k] " (pf: room for 2 x o->nodes entries). */
struct pollfd;
void er_pump_output(const struct er_opts *o, struct er_child *ch,
		    struct pollfd *pf);

/* earthrun_watch.c */
void er_watch_signals(void);
int er_watch(const struct er_opts *o, const struct er_job *j,
	     struct er_child *ch);

#endif
