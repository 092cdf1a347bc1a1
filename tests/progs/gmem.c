/* SPDX-License-Identifier: MIT */
/*
 * gmem.c - global memory across nodes, for the global-memory tests (run
 * under earthrun). Every node allocates the same block-distributed array
 * (symmetric) and two buffers of its own (earth_galloc); node 0 then reads
 * and writes every element with GET_SYNC/DATA_SYNC (local and global
 * slots), pulls every node's buffer with BLKMOV, moves node k's buffer to
 * node k+1's second buffer (push, pull and third-party moves at once),
 * has node 1 store into an element signalling a slot on node 0, and checks
 * every value. After the job node 0 prints how many messages it sent and
 * how many requests its SU performed, so the tests can tell the direct
 * one-sided path (a few messages; GETs read by the EU) from the path
 * through the remote SU (one or more messages per operation).
 *
 *   gmem [block-bytes]  "gmem: N nodes, B-byte blocks: all correct"
 *   gmem past           GET just past node 1's segment: must be rejected
 *   gmem other          GET node 2's segment through a node-1 pointer
 *   gmem heap           GET node 1's memory at an address it never
 *                       registered (node 0's heap): must be rejected
 *   gmem local-first    fill the segment with earth_galloc, then an array
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 8
#define COUNT 1000
#define BLOCK 7
#define BLK_MAX (256 * 1024)

static long elem_value(long i, int round)
{
	return round ? 1000000 + i * 7 : i * 3 + 1;
}
static unsigned char pat(uint32_t node, long j)
{
	return (unsigned char)(node * 37 + j * 11 + 1);
}

/* ---- on every node: the symmetric allocation and two buffers ---- */

struct setup_args {
	earth_garray expect; /* what node 0 got */
	long blk;
	earth_gptr status, src, dst; /* on node 0: long, 2 x earth_gptr */
	earth_gslot done;
};
struct setup_frame {
	struct setup_args a;
	earth_garray arr;
};

/* Fills this node's elements of the array; allocates the buffers. */
static long fill_local(const earth_garray *arr, long blk, earth_gptr *src,
		       earth_gptr *dst)
{
	uint32_t me = earth_node_id();
	for (long i = 0; i < COUNT; i++)
		if (earth_garray_node(arr, (uint64_t)i) == me)
			*(long *)earth_gptr_addr(earth_garray_at(
			    arr, (uint64_t)i)) = elem_value(i, 0);
	*src = earth_galloc(blk ? (size_t)blk : 1);
	*dst = earth_galloc(blk ? (size_t)blk : 1);
	if (!src->bits || !dst->bits)
		return 2;
	unsigned char *p = earth_gptr_addr(*src);
	for (long j = 0; j < blk; j++)
		p[j] = pat(me, j);
	memset(earth_gptr_addr(*dst), 0, (size_t)blk);
	return 0;
}

static void setup_entry(void *frame)
{
	struct setup_frame *f = frame;
	earth_gptr src = EARTH_GPTR_NULL, dst = EARTH_GPTR_NULL;
	long st = earth_garray_alloc(&f->arr, COUNT, sizeof(long), BLOCK);
	if (!st && memcmp(&f->arr, &f->a.expect, sizeof(f->arr)))
		st = 99; /* not symmetric */
	if (!st)
		st = fill_local(&f->arr, f->a.blk, &src, &dst);
	earth_data_rsync_l(st, f->a.status, f->a.done);
	earth_data_rsync_g(src, f->a.src, f->a.done);
	earth_data_rsync_g(dst, f->a.dst, f->a.done);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(setup, setup_entry, struct setup_frame,
			sizeof(struct setup_args));

/* On node 1: store into an element, signal node 0's slot. */
struct poke_args {
	earth_gptr where;
	long value;
	earth_gslot done;
};
static void poke_entry(void *frame)
{
	struct poke_args *a = frame;
	earth_data_rsync_l(a->value, a->where, a->done);
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(poke, poke_entry, struct poke_args,
			sizeof(struct poke_args));

/* ---- node 0 ---- */

enum step {
	S_SETUP,
	S_GET1,
	S_DATA,
	S_GET2,
	S_PULL,
	S_MOVE,
	S_PULL2,
	S_POKE,
	S_GET3,
	S_END,
	S_BAD = 100
};

struct main_frame {
	struct earth_main_args a;
	earth_garray arr;
	long blk, status[MAXN];
	earth_gptr src[MAXN], dst[MAXN];
	long got[COUNT];
	int step, bad;
	const char *mode;
	earth_slot s;
	unsigned char local[MAXN][BLK_MAX];
};
static void main_step(void *f);
static void main_entry(void *f);
EARTH_THREADED_FUNCTION(gmem_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void fail(struct main_frame *m, const char *what, long i, long got,
		 long want)
{
	if (m->bad++ < 5)
		fprintf(stderr, "gmem: %s %ld: got %ld, want %ld\n", what, i,
			got, want);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	uint32_t n = earth_num_nodes();
	const char *arg = m->a.argc > 1 ? m->a.argv[1] : "65536";
	m->mode = "ok";
	m->blk = atol(arg);
	if (!strcmp(arg, "past") || !strcmp(arg, "other") ||
	    !strcmp(arg, "heap") || !strcmp(arg, "local-first")) {
		m->mode = arg;
		m->blk = 64;
	}
	if (n > MAXN || m->blk < 0 || m->blk > BLK_MAX) {
		fprintf(stderr, "gmem: at most %d nodes, block 0..%d\n", MAXN,
			BLK_MAX);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	if (!strcmp(m->mode, "local-first"))
		while (earth_galloc(1 << 20).bits) /* fill the segment */
			;
	int rc = earth_garray_alloc(&m->arr, COUNT, sizeof(long), BLOCK);
	if (rc) {
		fprintf(stderr, "gmem: earth_garray_alloc: %d\n", rc);
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(m);
	}
	m->status[0] = fill_local(&m->arr, m->blk, &m->src[0], &m->dst[0]);
	m->step = S_SETUP;
	earth_slot_init(&m->s, 3 * ((int32_t)n - 1) + 1, 0, main_step, m);
	for (uint32_t k = 1; k < n; k++) {
		struct setup_args sa = {m->arr,
					m->blk,
					earth_to_global(&m->status[k]),
					earth_to_global(&m->src[k]),
					earth_to_global(&m->dst[k]),
					earth_slot_global(&m->s)};
		earth_invoke(k, &setup, &sa, sizeof(sa));
	}
	earth_sync(&m->s);
}

/* Signals step s will send main's slot. */
static int32_t expected(struct main_frame *m, int s)
{
	int32_t n = (int32_t)earth_num_nodes();
	switch (s) {
	case S_GET1:
	case S_DATA:
	case S_GET2:
		return COUNT;
	case S_PULL:
	case S_MOVE:
	case S_PULL2:
		return n;
	case S_POKE:
		return n > 1;
	case S_GET3:
	case S_BAD:
		return 1;
	}
	(void)m;
	return 0;
}

static void issue(struct main_frame *m)
{
	uint32_t n = earth_num_nodes();
	earth_gslot gs = earth_slot_global(&m->s);
	size_t blk = (size_t)m->blk;
	switch (m->step) {
	case S_GET1:
	case S_GET2:
		for (long i = 0; i < COUNT; i++)
			earth_get_sync_l(earth_garray_at(&m->arr, (uint64_t)i),
					 &m->got[i], &m->s);
		break;
	case S_DATA: /* half of them signal a global slot */
		for (long i = 0; i < COUNT; i++) {
			earth_gptr g = earth_garray_at(&m->arr, (uint64_t)i);
			if (i & 1)
				earth_data_rsync_l(elem_value(i, 1), g, gs);
			else
				earth_data_sync_l(elem_value(i, 1), g, &m->s);
		}
		break;
	case S_PULL:
		for (uint32_t k = 0; k < n; k++)
			earth_blkmov_sync(m->src[k],
					  earth_to_global(m->local[k]), blk,
					  &m->s);
		break;
	case S_MOVE: /* 0 -> 1 push, n-1 -> 0 pull, the rest third-party */
		for (uint32_t k = 0; k < n; k++)
			earth_blkmov_rsync(m->src[k], m->dst[(k + 1) % n], blk,
					   gs);
		break;
	case S_PULL2:
		for (uint32_t k = 0; k < n; k++)
			earth_blkmov_sync(m->dst[k],
					  earth_to_global(m->local[k]), blk,
					  &m->s);
		break;
	case S_POKE:
		if (n > 1) {
			struct poke_args pa = {
			    earth_garray_at(&m->arr, COUNT - 1), -5, gs};
			earth_invoke(1, &poke, &pa, sizeof(pa));
		}
		break;
	case S_GET3:
		earth_get_sync_l(earth_garray_at(&m->arr, COUNT - 1),
				 &m->got[0], &m->s);
		break;
	case S_BAD: {
		/* just past node 1's segment, or inside node 2's */
		uint64_t at = m->arr.base + 2 * m->arr.stride;
		if (!strcmp(m->mode, "other"))
			at += 64;
		static void *heap;
		if (!strcmp(m->mode, "heap") && (heap = malloc(64)))
			at = (uintptr_t)heap;
		earth_get_sync_l(earth_gptr_make(1, (void *)(uintptr_t)at),
				 &m->got[0], &m->s);
		break;
	}
	}
}

static void check(struct main_frame *m)
{
	uint32_t n = earth_num_nodes();
	switch (m->step) {
	case S_SETUP:
		for (uint32_t k = 0; k < n; k++)
			if (m->status[k] || !m->src[k].bits || !m->dst[k].bits)
				fail(m, "setup on node", k, m->status[k], 0);
		break;
	case S_GET1:
	case S_GET2:
		for (long i = 0; i < COUNT; i++)
			if (m->got[i] != elem_value(i, m->step == S_GET2))
				fail(m, "element", i, m->got[i],
				     elem_value(i, m->step == S_GET2));
		break;
	case S_PULL:
	case S_PULL2:
		for (uint32_t k = 0; k < n; k++) {
			uint32_t from = m->step == S_PULL ? k : (k + n - 1) % n;
			for (long j = 0; j < m->blk; j++)
				if (m->local[k][j] != pat(from, j)) {
					fail(m, "block byte from node", k,
					     m->local[k][j], pat(from, j));
					break;
				}
		}
		break;
	case S_GET3:
		if (n > 1 && m->got[0] != -5)
			fail(m, "poked element", COUNT - 1, m->got[0], -5);
		break;
	case S_BAD:
		fprintf(stderr, "gmem: the bad access was not rejected\n");
		m->bad++;
		break;
	}
}

static void main_step(void *frame)
{
	struct main_frame *m = frame;
	check(m);
	if (m->step == S_SETUP && strcmp(m->mode, "ok") && !m->bad)
		m->step = S_BAD;
	else if (m->step == S_GET3 || m->step == S_BAD || m->bad)
		m->step = S_END;
	else
		m->step++;
	if (m->step == S_END) {
		printf("gmem: %u nodes, %ld-byte blocks: %s\n",
		       earth_num_nodes(), m->blk,
		       m->bad ? "WRONG" : "all correct");
		earth_set_exit_status(m->bad != 0);
		EARTH_END_FUNCTION(m);
	}
	int32_t c = expected(m, m->step);
	earth_slot_init(&m->s, c ? c : 1, 0, main_step, m);
	if (c)
		issue(m);
	else
		earth_sync(&m->s);
}

int main(int argc, char **argv)
{
	int ret = earth_main(argc, argv, &gmem_main);
	struct earth_stats st;
	earth_stats_get(&st);
	if (earth_node_id() == 0)
		printf("gmem: node 0 sent %llu messages, handled %llu "
		       "requests\n",
		       (unsigned long long)st.msgs_sent,
		       (unsigned long long)st.su_handled);
	return ret;
}
