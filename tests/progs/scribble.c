/* SPDX-License-Identifier: MIT */
/*
 * scribble.c - a local process rewrites the geometry in the shm job
 * header mid-job. Node 0 INVOKEs `scribble` on node 1, which maps the job
 * area itself through EARTH_SHM_FD and writes nonsense into nodes,
 * ring_bytes, total and the global-memory fields, then answers. Node 0
 * then makes 100 more round trips to node 1 and checks every answer: the
 * nodes read the geometry once when they attached, so the job goes on
 * and exits 0 ("scribble: 100 round trips after the scribble: correct").
 */
#include <earth.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "net/shm_layout.h"

#define ROUNDS 100

struct echo_args {
	long round, scribble;
	earth_gptr answer; /* long on node 0 */
	earth_gslot done;  /* main's slot on node 0 */
};
struct echo_frame {
	struct echo_args a;
};

/* Rewrites the job header's geometry (node 1, through its own mapping). */
static void scribble_header(void)
{
	const char *fd = getenv("EARTH_SHM_FD");
	if (!fd) {
		fprintf(stderr, "scribble: EARTH_SHM_FD is not set\n");
		exit(3);
	}
	struct shm_job *j = mmap(NULL, sizeof(*j), PROT_READ | PROT_WRITE,
				 MAP_SHARED, atoi(fd), 0);
	if (j == MAP_FAILED) {
		perror("scribble: mmap");
		exit(3);
	}
	j->nodes = 0x7fffffffu;
	j->ring_bytes = 1ull << 46;
	j->total = ~0ull;
	j->gmem_seg = 1ull << 40;
	j->gmem_off = 1ull << 44;
	munmap(j, sizeof(*j));
	fprintf(stderr, "scribble: node %u rewrote the job header\n",
		earth_node_id());
}

static void echo_entry(void *frame)
{
	struct echo_frame *f = frame;
	if (f->a.scribble)
		scribble_header();
	earth_data_rsync_l(f->a.round * 10 + (long)earth_node_id(), f->a.answer,
			   f->a.done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(echo, echo_entry, struct echo_frame,
			sizeof(struct echo_args));

struct main_frame {
	struct earth_main_args a;
	long round, answer;
	earth_slot got;
};
static void main_entry(void *f);
static void main_got(void *f);
EARTH_THREADED_FUNCTION(scribble_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void ask(struct main_frame *m)
{
	earth_slot_init(&m->got, 1, 0, main_got, m);
	m->answer = -1;
	struct echo_args ea = {m->round, m->round == 0,
			       earth_to_global(&m->answer),
			       earth_slot_global(&m->got)};
	earth_invoke(1, &echo, &ea, sizeof(ea));
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	if (earth_num_nodes() != 2) {
		fprintf(stderr, "scribble: run it on 2 nodes\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	m->round = 0;
	ask(m);
}

static void main_got(void *frame)
{
	struct main_frame *m = frame;
	if (m->answer != m->round * 10 + 1) {
		fprintf(stderr, "scribble: round %ld answered %ld\n", m->round,
			m->answer);
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(m);
	}
	if (m->round++ < ROUNDS) {
		ask(m);
		return;
	}
	printf("scribble: %d round trips after the scribble: correct\n",
	       ROUNDS);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &scribble_main);
}
