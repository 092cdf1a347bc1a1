/* SPDX-License-Identifier: MIT */
/*
 * rogue.c - a node that breaks the tcp transport's rules from inside a
 * job, for the tests of how its peers end. Node 0 asks node 1 to misbehave
 * and waits for an answer that never comes; node 1, in a fiber:
 *
 *   rogue bye    writes a BYE record on its connection to node 0 and
 *                half-closes it (FIN) mid-job, then stops its process
 *                (SIGSTOP), so that nothing else it might send hides what
 *                node 0 does.
 *
 *   rogue steal  stops its process, while a child process it forked
 *                writes STEAL requests on that connection as fast as it
 *                can: node 1 asks and never reads the answers.
 *
 *   rogue blkreq the same with BLK_REQs of 64 MiB of node 0's static data
 *                back to node 1.
 *
 *   rogue stall  tells node 0 to move 64 MiB to it, then stops its
 *                process before the move: node 1 stops reading mid-move.
 *
 * Node 0 must end the job naming node 1 (tests/t_peer_end.c); before, it
 * took the BYE for a clean end and waited forever, and it queued the
 * answers to the STEALs without limit (gigabytes in seconds).
 */
#define EARTH_INTERNAL 1
#include <earth.h>

#include "net/stream.h"
#include "net/wire.h"

#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct rogue_args {
	earth_gslot answer;
	int how; /* 0: bye, 1: steal, 2: stall, 3: blkreq */
};
struct rogue_frame {
	struct rogue_args a;
};

/* The connected TCP sockets of this process (node 1 of a 2-node job has
 * one: to node 0). */
static int tcp_peer_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);
		struct stat st;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int type = 0;
		socklen_t tl = sizeof(type);
		if (e->d_name[0] == '.' || fstat(fd, &st) ||
		    !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
		    type != SOCK_STREAM ||
		    getpeername(fd, (struct sockaddr *)&ss, &sl))
			continue;
		if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

/* Static data: registered on every node. */
static char big[64 << 20];

/* The forked child: once node 1 is stopped, requests (STEAL, or BLK_REQ
 * of `big` back to node 1), 1024 per write, until the connection fails or
 * 1 Mi of them went. */
static _Noreturn void flood(int fd, pid_t node, bool blkreq)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	char path[64], st[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)node);
	for (int i = 0; i < 2000; i++) { /* up to 2 s */
		FILE *f = fopen(path, "r");
		size_t k = f ? fread(st, 1, sizeof(st) - 1, f) : 0;
		if (f)
			fclose(f);
		st[k] = 0;
		const char *r = strrchr(st, ')');
		if (r && r[1] == ' ' && r[2] == 'T')
			break;
		usleep(1000);
	}
	static struct wire_hdr batch[1024];
	for (size_t i = 0; i < 1024; i++) {
		batch[i].magic = WIRE_MAGIC;
		batch[i].version = WIRE_VERSION;
		batch[i].type = blkreq ? W_BLK_REQ : W_STEAL;
		batch[i].src = 1;
		if (blkreq) {
			batch[i].flags = WIRE_F_NOSLOT;
			batch[i].n = (int32_t)sizeof(big);
			batch[i].b = (uintptr_t)big;
			batch[i].c = earth_gptr_make(1, big).bits;
		}
	}
	for (int k = 0; k < 1024; k++)
		if (send(fd, batch, sizeof(batch), MSG_NOSIGNAL) <= 0)
			break;
	_exit(0);
}

static void stop_fiber(void *unused)
{
	(void)unused;
	usleep(100000);
	raise(SIGSTOP);
}

static void rogue_entry(void *frame)
{
	struct rogue_frame *f = frame;
	int fd = tcp_peer_fd();
	if (fd < 0) {
		fprintf(stderr, "rogue: no tcp connection to node 0\n");
		exit(3);
	}
	if (f->a.how == 2) {
		/* Tell node 0 to start the move, and stop once the SU sent
		 * that (stop_fiber). */
		earth_rsync(f->a.answer);
		earth_spawn(stop_fiber, NULL);
		EARTH_END_FUNCTION(f);
		return;
	}
	if (f->a.how == 1 || f->a.how == 3) {
		pid_t self = getpid();
		if (fork() == 0)
			flood(fd, self, f->a.how == 3);
		raise(SIGSTOP);
		return;
	}
	struct wire_hdr bye;
	memset(&bye, 0, sizeof(bye));
	bye.magic = WIRE_BYE_MAGIC;
	bye.version = WIRE_VERSION;
	bye.src = (uint16_t)earth_node_id();
	if (send(fd, &bye, sizeof(bye), MSG_NOSIGNAL) != (ssize_t)sizeof(bye))
		exit(3);
	shutdown(fd, SHUT_WR);
	raise(SIGSTOP);
}
EARTH_THREADED_FUNCTION(rogue_fn, rogue_entry, struct rogue_frame,
			sizeof(struct rogue_args));

struct main_frame {
	struct earth_main_args a;
	earth_slot answer, moved;
};
static void main_answer(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
/* stall: node 1 is about to stop; half a second later it surely has,
 * and 64 MiB cannot all fit in the sockets' buffers. */
static void main_move(void *frame)
{
	struct main_frame *m = frame;
	usleep(500000);
	earth_blkmov_sync(earth_to_global(big), earth_gptr_make(1, big),
			  sizeof(big), &m->moved);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	int how = m->a.argc < 2			    ? -1
		  : !strcmp(m->a.argv[1], "bye")    ? 0
		  : !strcmp(m->a.argv[1], "steal")  ? 1
		  : !strcmp(m->a.argv[1], "stall")  ? 2
		  : !strcmp(m->a.argv[1], "blkreq") ? 3
						    : -1;
	if (earth_num_nodes() != 2 || how < 0) {
		fprintf(stderr, "rogue: run as earthrun -n 2 --transport tcp "
				"rogue bye|steal|blkreq|stall\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	earth_slot_init(&m->answer, 1, 0, how == 2 ? main_move : main_answer,
			m);
	earth_slot_init(&m->moved, 1, 0, main_answer, m);
	struct rogue_args ra = {earth_slot_global(&m->answer), how};
	earth_invoke(1, &rogue_fn, &ra, sizeof(ra));
}
EARTH_THREADED_FUNCTION(rogue_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &rogue_main);
}
