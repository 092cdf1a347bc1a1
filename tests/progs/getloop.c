/* SPDX-License-Identifier: MIT */
/*
 * getloop.c - node 1 reads a word of node 0's main frame N times in a row
 * (each GET_SYNC's continuation issues the next), then signals main. Node
 * 1 runs dry for a round trip after every GET: the balancing test checks
 * that such short idle moments do not each send a STEAL.
 *
 *   getloop [N]
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

struct loop_args {
	earth_gptr word;
	earth_gslot done;
	long n;
};
struct loop_frame {
	struct loop_args a;
	long i, got, sum;
	earth_slot s;
};
static void loop_entry(void *f);
static void loop_got(void *f);
EARTH_THREADED_FUNCTION(looper, loop_entry, struct loop_frame,
			sizeof(struct loop_args));

static void loop_entry(void *frame)
{
	struct loop_frame *f = frame;
	f->i = f->sum = 0;
	earth_slot_init(&f->s, 1, 1, loop_got, f);
	earth_get_sync_l(f->a.word, &f->got, &f->s);
}

static void loop_got(void *frame)
{
	struct loop_frame *f = frame;
	f->sum += f->got;
	if (++f->i < f->a.n) {
		earth_get_sync_l(f->a.word, &f->got, &f->s);
		return;
	}
	earth_data_rsync_l(f->sum, earth_gptr_add(f->a.word, sizeof(long)),
			   f->a.done);
	EARTH_END_FUNCTION(f);
}

struct main_frame {
	struct earth_main_args a;
	long word, sum, n;
	earth_slot done;
};
static void main_entry(void *f);
static void main_done(void *f);
EARTH_THREADED_FUNCTION(gl_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->n = m->a.argc > 1 ? atol(m->a.argv[1]) : 2000;
	if (earth_num_nodes() < 2 || m->n < 1) {
		fprintf(stderr, "getloop: needs 2 nodes and N >= 1\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	m->word = 3;
	m->sum = -1;
	earth_slot_init(&m->done, 1, 0, main_done, m);
	struct loop_args la = {earth_to_global(&m->word),
			       earth_slot_global(&m->done), m->n};
	earth_invoke(1, &looper, &la, sizeof(la));
}

static void main_done(void *frame)
{
	struct main_frame *m = frame;
	int ok = m->sum == 3 * m->n;
	printf("getloop: %ld gets: %s\n", m->n, ok ? "all correct" : "WRONG");
	earth_set_exit_status(!ok);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &gl_main);
}
