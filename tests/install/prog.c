/* SPDX-License-Identifier: MIT */
/*
 * prog.c - a tiny program built against an installed EARTH runtime by
 * tests/install.sh: main INVOKEs a threaded function that reads a value
 * with GET_SYNC and signals main back; exit status 0 when the value came.
 */
#include <earth.h>
#include <stdio.h>

struct child_frame {
	struct {
		earth_gptr src;
		earth_gslot done;
		earth_gptr out;
	} a;
	long v;
	earth_slot got;
};
static void child_entry(void *f);
static void child_got(void *f);
EARTH_THREADED_FUNCTION(child_fn, child_entry, struct child_frame,
			sizeof(((struct child_frame *)0)->a));

struct main_frame {
	struct earth_main_args a;
	long src, out;
	earth_slot done;
};
static void main_entry(void *f);
static void main_done(void *f);
EARTH_THREADED_FUNCTION(main_fn, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void child_entry(void *frame)
{
	struct child_frame *c = frame;
	earth_slot_init(&c->got, 1, 0, child_got, c);
	earth_get_sync_l(c->a.src, &c->v, &c->got);
}

static void child_got(void *frame)
{
	struct child_frame *c = frame;
	earth_data_rsync_l(c->v + 1, c->a.out, c->a.done);
	EARTH_END_FUNCTION(c);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->src = 41;
	earth_slot_init(&m->done, 1, 0, main_done, m);
	struct child_frame x = {.a = {earth_to_global(&m->src),
				      earth_slot_global(&m->done),
				      earth_to_global(&m->out)}};
	earth_invoke(earth_node_id(), &child_fn, &x.a, sizeof(x.a));
}

static void main_done(void *frame)
{
	struct main_frame *m = frame;
	printf("installed earth: %ld\n", m->out);
	earth_set_exit_status(m->out == 42 ? 0 : 1);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &main_fn);
}
