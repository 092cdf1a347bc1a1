/* SPDX-License-Identifier: MIT */
/*
 * earth_uts.c - Unbalanced Tree Search with TOKEN (uts.h), on one node or
 * several (under earthrun: idle nodes steal tokens). One threaded function
 * per task of uts.h: a range of a node's children, split in two halves or
 * counted with one TOKEN per child that has children; each task's count
 * comes back with DATA_RSYNC_L into its parent's frame. Node 0 checks the
 * count against the published one (t1, t3) or the sequential count (s1,
 * s3) and prints the median wall time of REPS runs and nodes per second.
 *
 *   earth_uts TREE [REPS]      TREE: t1 t3 s1 s3; REPS 1..64 (default 1)
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uts.h"

struct uts_args {
	struct uts_node p; /* the node whose children [lo, hi) this covers */
	int32_t lo, hi;
	int32_t tree;	   /* index in uts_trees: the same on every node */
	earth_gptr result; /* long on the parent's node */
	earth_gslot done;  /* signalled once *result is written */
};

struct uts_frame {
	struct uts_args a;
	long sum[UTS_RANGE_LEAF];
	long count;
	int kids;
	earth_slot join;
};
static void uts_entry(void *f);
static void uts_join(void *f);
EARTH_THREADED_FUNCTION(uts_tf, uts_entry, struct uts_frame,
			sizeof(struct uts_args));

static void uts_entry(void *frame)
{
	struct uts_frame *f = frame;
	const struct uts_args *a = &f->a;
	const struct uts_tree *t = &uts_trees[a->tree];
	struct uts_args kid[UTS_RANGE_LEAF];
	f->count = 0;
	f->kids = 0;
	if (a->hi - a->lo > UTS_RANGE_LEAF) { /* split the range */
		/* Each half built in place (a copy of the first would load
		 * it while its stores are still in flight). */
		int32_t mid = a->lo + (a->hi - a->lo) / 2;
		earth_gslot join = earth_slot_global(&f->join);
		kid[0] = (struct uts_args){
		    a->p, a->lo, mid, a->tree, earth_to_global(&f->sum[0]),
		    join};
		kid[1] = (struct uts_args){
		    a->p, mid, a->hi, a->tree, earth_to_global(&f->sum[1]),
		    join};
		f->kids = 2;
	} else {
		/* Each child's state straight into the arguments of the
		 * task that would count its children (kept when it has
		 * some). */
		for (int32_t i = a->lo; i < a->hi; i++) {
			struct uts_args *c = &kid[f->kids];
			uts_child_at(&a->p, (uint32_t)i, &c->p);
			int k = uts_num_children(t, &c->p);
			f->count++;
			if (k > 0) {
				c->lo = 0;
				c->hi = k;
				c->tree = a->tree;
				c->result = earth_to_global(&f->sum[f->kids]);
				c->done = earth_slot_global(&f->join);
				f->kids++;
			}
		}
	}
	if (!f->kids) {
		earth_data_rsync_l(f->count, a->result, a->done);
		EARTH_END_FUNCTION(f);
	}
	int kids = f->kids;
	earth_slot_init(&f->join, kids, 0, uts_join, f);
	for (int k = 0; k < kids; k++)
		earth_token(&uts_tf, &kid[k], sizeof(kid[k]));
}

static void uts_join(void *frame)
{
	struct uts_frame *f = frame;
	long s = f->count;
	for (int k = 0; k < f->kids; k++)
		s += f->sum[k];
	earth_data_rsync_l(s, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}

/* ---- node 0's main ---- */

struct main_frame {
	struct earth_main_args a;
	int tree, reps, rep, bad;
	long want, result;
	double ns[64];
	struct timespec t0;
	earth_slot done;
};

static double since_ns(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e9 +
	       (double)(t.tv_nsec - t0->tv_nsec);
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static void start(struct main_frame *m)
{
	const struct uts_tree *t = &uts_trees[m->tree];
	struct uts_node r = uts_root(t);
	clock_gettime(CLOCK_MONOTONIC, &m->t0);
	m->result = 0;
	struct uts_args a = {r,
			     0,
			     uts_num_children(t, &r),
			     m->tree,
			     earth_to_global(&m->result),
			     earth_slot_global(&m->done)};
	if (a.hi == 0)
		earth_data_rsync_l(0, a.result, a.done);
	else
		earth_token(&uts_tf, &a, sizeof(a));
}

static void main_done(void *frame)
{
	struct main_frame *m = frame;
	m->ns[m->rep] = since_ns(&m->t0);
	if (1 + m->result != m->want) {
		printf("uts: %s run %d: %ld nodes, want %ld: WRONG\n",
		       uts_trees[m->tree].name, m->rep, 1 + m->result, m->want);
		m->bad++;
	}
	if (++m->rep < m->reps) {
		start(m);
		return;
	}
	qsort(m->ns, (size_t)m->reps, sizeof(m->ns[0]), cmp_d);
	double med = m->ns[m->reps / 2];
	printf("uts: %s nodes=%ld %s (%s %ld), %d nodes, median %.0f ns, "
	       "nodes/s %.0f\n",
	       uts_trees[m->tree].name, 1 + m->result,
	       m->bad ? "WRONG" : "correct",
	       uts_trees[m->tree].nodes ? "published" : "sequential", m->want,
	       (int)earth_num_nodes(), med, (double)m->want / med * 1e9);
	earth_set_exit_status(m->bad ? 1 : 0);
	EARTH_END_FUNCTION(m);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	const struct uts_tree *t =
	    m->a.argc > 1 ? uts_tree_named(m->a.argv[1]) : NULL;
	m->reps = m->a.argc > 2 ? atoi(m->a.argv[2]) : 1;
	if (!t || m->a.argc > 3 || m->reps < 1 || m->reps > 64) {
		fprintf(stderr, "usage: earth_uts TREE [REPS]: TREE one of "
				"t1 t3 s1 s3, REPS 1..64\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	m->tree = (int)(t - uts_trees);
	m->want = t->nodes ? t->nodes : uts_count_seq(t);
	m->rep = 0;
	m->bad = 0;
	earth_slot_init(&m->done, 1, 1, main_done, m);
	start(m);
}
EARTH_THREADED_FUNCTION(uts_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &uts_main);
}
