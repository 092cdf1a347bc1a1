/* SPDX-License-Identifier: MIT */
/*
 * order.c - values that travel with their fiber (a GET_SYNC's or a small
 * DATA_SYNC's value goes to the EU in the fiber's ready message, and the
 * EU stores it just before running the fiber) keep the ordering rules:
 *
 *  - a value is in place, at its exact width, when the fiber of its slot
 *    runs: GETs of 1, 2, 4 and 8 bytes between guard bytes;
 *  - it is also in place for the fiber of a later signal from the same
 *    source: node k DATA_RSYNCs a value to node 0 and then RSYNCs another
 *    slot of node 0; that slot's fiber must see the value, whichever of
 *    the two fibers runs first. The same on one node with GET_SYNC then
 *    SYNC.
 *
 * Node 0 INVOKEs `visit` on every other node, which GETs node 0's words of
 * each width (through node 0's SU: they are static data) and then sends
 * its value and its signal. Exit 0, or 1 after naming what was wrong.
 *
 *   order [rounds]
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 16
#define GUARD 0x5a

/* Static data: the same address on every node (earthrun), registered. */
static char w1 = (char)0xa7;
static short w2 = (short)0x8e31;
static int w4 = (int)0xd4c3b2a1;
static long w8 = (long)0x8877665544332211;

/* Node 0: the value each visitor sent (registered static data). */
static long got_value[MAXN];
static int errors;

struct wide {
	unsigned char g0[8];
	char v1;
	unsigned char g1[7];
	short v2;
	unsigned char g2[6];
	int v4;
	unsigned char g4[4];
	long v8;
	unsigned char g8[8];
};

struct visit_args {
	long value;
	earth_gslot value_slot, later_slot;
};
struct visit_frame {
	struct visit_args a;
	struct wide w;
	int step;
	earth_slot s;
};
static void visit_entry(void *f);
static void visit_step(void *f);
static void visit_got(struct visit_frame *f);
EARTH_THREADED_FUNCTION(visit, visit_entry, struct visit_frame,
			sizeof(struct visit_args));

/* One GET at a time, each firing the slot (count 1): every width takes
 * the path where the value travels with the fiber. */
static void visit_entry(void *frame)
{
	struct visit_frame *f = frame;
	memset(&f->w, GUARD, sizeof(f->w));
	f->step = -1;
	earth_slot_init(&f->s, 1, 1, visit_step, f);
	visit_step(f);
}

static void visit_step(void *frame)
{
	struct visit_frame *f = frame;
	switch (++f->step) {
	case 0:
		earth_get_sync_c(earth_gptr_make(0, &w1), &f->w.v1, &f->s);
		break;
	case 1:
		earth_get_sync_s(earth_gptr_make(0, &w2), &f->w.v2, &f->s);
		break;
	case 2:
		earth_get_sync_i(earth_gptr_make(0, &w4), &f->w.v4, &f->s);
		break;
	case 3:
		earth_get_sync_l(earth_gptr_make(0, &w8), &f->w.v8, &f->s);
		break;
	default:
		visit_got(f);
	}
}

static int guards_ok(const unsigned char *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (g[i] != GUARD)
			return 0;
	return 1;
}

static void visit_got(struct visit_frame *f)
{
	const struct wide *w = &f->w;
	if (w->v1 != w1 || w->v2 != w2 || w->v4 != w4 || w->v8 != w8 ||
	    !guards_ok(w->g0, sizeof(w->g0)) ||
	    !guards_ok(w->g1, sizeof(w->g1)) ||
	    !guards_ok(w->g2, sizeof(w->g2)) ||
	    !guards_ok(w->g4, sizeof(w->g4)) ||
	    !guards_ok(w->g8, sizeof(w->g8))) {
		printf("order: node %u: GETs of 1, 2, 4, 8 bytes wrong or "
		       "spilled over their guards\n",
		       earth_node_id());
		fflush(stdout);
		exit(1);
	}
	/* The value, then a signal the later fiber waits for. */
	earth_data_rsync_l(f->a.value,
			   earth_gptr_make(0, &got_value[earth_node_id()]),
			   f->a.value_slot);
	earth_rsync(f->a.later_slot);
	EARTH_END_FUNCTION(f);
}

struct main_frame;
struct slot_pair {
	earth_slot value, later;
	struct main_frame *m;
	uint32_t k;
};
struct main_frame {
	struct earth_main_args a;
	long rounds, round, left;
	long src, dst;
	earth_slot s_local, s_local_later, s_all;
	struct slot_pair per[MAXN];
};
static void main_entry(void *f);
static void main_round(void *f);
static void main_value(void *f);
static void main_later(void *f);
static void main_local_value(void *f);
static void main_local_later(void *f);
EARTH_THREADED_FUNCTION(order_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->rounds = m->a.argc > 1 ? atol(m->a.argv[1]) : 200;
	if (earth_num_nodes() > MAXN || m->rounds < 1) {
		printf("order: at most %d nodes, rounds >= 1\n", MAXN);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	m->round = 0;
	main_round(m);
}

/* The fibers of one round: per visitor two, and two local ones. */
static void main_round(void *frame)
{
	struct main_frame *m = frame;
	if (m->round++ == m->rounds) {
		if (errors)
			printf("order: %d fibers did not see the value sent "
			       "before their signal\n",
			       errors);
		else
			printf("order: ok\n");
		fflush(stdout);
		earth_set_exit_status(errors ? 1 : 0);
		EARTH_END_FUNCTION(m);
	}
	uint32_t nodes = earth_num_nodes();
	m->left = 2 * (long)nodes;
	earth_slot_init(&m->s_all, (int32_t)m->left, 0, main_round, m);
	for (uint32_t k = 1; k < nodes; k++) {
		got_value[k] = -1;
		m->per[k].m = m;
		m->per[k].k = k;
		earth_slot_init(&m->per[k].value, 1, 0, main_value, &m->per[k]);
		earth_slot_init(&m->per[k].later, 1, 0, main_later, &m->per[k]);
		struct visit_args a = {m->round * 1000 + k,
				       earth_slot_global(&m->per[k].value),
				       earth_slot_global(&m->per[k].later)};
		earth_invoke(k, &visit, &a, sizeof(a));
	}
	/* On this node: a GET_SYNC whose fiber gets the value, then a SYNC
	 * whose fiber must see it too. */
	m->src = m->round;
	m->dst = -1;
	earth_slot_init(&m->s_local, 1, 0, main_local_value, m);
	earth_slot_init(&m->s_local_later, 1, 0, main_local_later, m);
	earth_get_sync_l(earth_to_global(&m->src), &m->dst, &m->s_local);
	earth_sync(&m->s_local_later);
}

/* The fiber of a visitor's value slot, then of its later signal: both
 * must see the value. */
static void check_visitor(struct slot_pair *p)
{
	struct main_frame *m = p->m;
	if (got_value[p->k] != m->round * 1000 + p->k)
		errors++;
	earth_sync(&m->s_all);
}

static void main_value(void *frame)
{
	check_visitor(frame);
}

static void main_later(void *frame)
{
	check_visitor(frame);
}

static void main_local_value(void *frame)
{
	struct main_frame *m = frame;
	if (m->dst != m->round)
		errors++;
	earth_sync(&m->s_all);
}

static void main_local_later(void *frame)
{
	main_local_value(frame);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &order_main);
}
