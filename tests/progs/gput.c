/* SPDX-License-Identifier: MIT */
/*
 * gput.c - writes from node 0's memory into node 1's global memory, for
 * the tests of one-sided writes (t_gput.c; run under earthrun, 2 nodes).
 * Both nodes allocate a block-distributed array with one DST-byte block
 * each (node 1's ends its segment); node 0 then writes into node 1's
 * block from its static data:
 *
 *   gput check   for each size of a list around the transports'
 *                thresholds (1 byte to 4 MiB + 5), K moves at once (64,
 *                fewer where K blocks do not fit), to places K apart:
 *                - BLKMOV_RSYNC signalling a slot on node 1, whose fiber
 *                  checks every written byte (and the gaps between) the
 *                  moment the last SYNC fires: a SYNC that overtook its
 *                  data shows as wrong bytes;
 *                - BLKMOV_SYNC signalling node 0's slot, then node 1
 *                  checks;
 *                - 256 DATA_RSYNCs of a long each, node 1's slot, checked
 *                  as the first;
 *                the pattern changes with every step. Node 0 prints
 *                "gput: S steps: all correct" (or WRONG and how many).
 *   gput kill    node 0 writes 4 MiB blocks into node 1, one after the
 *                other, until killed; each node prints "gput: node K pid
 *                P" once the writes run
 *   gput past    one BLKMOV_SYNC that starts 32 bytes before the end of
 *                node 1's segment and runs 32 bytes past it (node 0 must
 *                refuse it)
 */
#include <earth.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DST (32l << 20) /* node 1's block */
#define SRC ((4l << 20) + (64l << 10))
#define KMAX 64
#define GAP 64	  /* bytes left between two moves' destinations */
#define NDATA 256 /* DATA_RSYNCs in the data step */

enum mode { CHECK, KILL, PAST };
static const char *const mode_names[] = {"check", "kill", "past"};

static const long sizes[] = {1,	     8,	      9,       100,    4095,  4096,
			     8191,   8192,    8193,    16385,  65536, 65537,
			     262147, 1048576, 1048577, 4194309};
#define NSIZES ((long)(sizeof(sizes) / sizeof(sizes[0])))

static unsigned char src[SRC];
static earth_garray arr;

static unsigned char pat(long seed, long i)
{
	uint32_t x = (uint32_t)(i + 1) * 2654435761u ^ (uint32_t)seed * 40503u;
	return (unsigned char)(x >> 13 ^ x >> 24 ^ (uint32_t)seed);
}

/* What move k of a step reads: from src_off(k) on. */
static long src_off(long k)
{
	return 1 + k * 4099 % 32768;
}

static long moves_of(long size)
{
	long k = DST / (size + GAP);
	return k < KMAX ? k : KMAX;
}

static earth_gptr dst_of(long k, long size)
{
	return earth_gptr_add(earth_garray_at(&arr, (uint64_t)DST),
			      GAP / 2 + k * (size + GAP));
}

/* ---- node 1: checks what a step wrote into its block ---- */

struct check_args {
	long seed, size, data; /* data: the DATA step (size is NDATA) */
	earth_gptr result;     /* long on node 0 */
	earth_gslot done;      /* node 0's */
	earth_gptr armed;      /* node 0's earth_gslot: ours, when armed */
};
struct check_frame {
	struct check_args a;
	earth_slot written;
};
static void check_entry(void *f);
EARTH_THREADED_FUNCTION(check_fn, check_entry, struct check_frame,
			sizeof(struct check_args));

/* Bytes of node 1's block that differ from what the step wrote; the gap
 * bytes around every move must still be 0 (node 1 cleared them). */
static long bad_bytes(const struct check_args *a)
{
	unsigned char *d = earth_gptr_addr(earth_garray_at(&arr, DST));
	long bad = 0;
	if (a->data) {
		for (long k = 0; k < a->size; k++) {
			long v;
			memcpy(&v, d + GAP / 2 + k * 16, sizeof(v));
			bad += v != a->seed * 1000003 + k;
		}
		return bad;
	}
	long n = moves_of(a->size);
	for (long k = 0; k < n; k++) {
		unsigned char *p = d + GAP / 2 + k * (a->size + GAP);
		for (long j = 0; j < a->size; j++)
			bad += p[j] != pat(a->seed, src_off(k) + j);
		bad += (p[-1] != 0) + (p[a->size] != 0);
	}
	return bad;
}

static void checked(void *frame)
{
	struct check_frame *f = frame;
	long bad = bad_bytes(&f->a);
	/* clear for the next step (nothing writes while node 0 waits) */
	memset(earth_gptr_addr(earth_garray_at(&arr, DST)), 0, DST);
	earth_data_rsync_l(bad, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}

/* With `armed` set: arms a slot for the step's RSYNCs and tells node 0
 * where it is; the check runs the moment the last SYNC arrives. Else
 * checks at once (node 0's own slot fired). */
static void check_entry(void *frame)
{
	struct check_frame *f = frame;
	if (!f->a.armed.bits) {
		checked(f);
		return;
	}
	int32_t n = (int32_t)(f->a.data ? f->a.size : moves_of(f->a.size));
	earth_slot_init(&f->written, n, 0, checked, f);
	earth_data_rsync_g((earth_gptr){earth_slot_global(&f->written).bits},
			   f->a.armed, f->a.done);
}

/* ---- every node: the array ---- */

struct setup_args {
	earth_gslot done;
	int kill;
};
static void setup_entry(void *f);
EARTH_THREADED_FUNCTION(setup_fn, setup_entry, struct setup_args,
			sizeof(struct setup_args));

static int alloc_array(void)
{
	if (earth_garray_alloc(&arr, 2 * (size_t)DST, 1, DST)) {
		fprintf(stderr, "gput: earth_garray_alloc failed\n");
		return -1;
	}
	memset(earth_gptr_addr(earth_garray_at(&arr, earth_node_id() * DST)), 0,
	       DST);
	return 0;
}

static void setup_entry(void *frame)
{
	struct setup_args *a = frame;
	if (alloc_array())
		exit(1);
	if (a->kill) {
		printf("gput: node %u pid %d\n", earth_node_id(),
		       (int)getpid());
		fflush(stdout);
	}
	earth_rsync(a->done);
	EARTH_END_FUNCTION(a);
}

/* ---- node 0 ---- */

struct main_frame {
	struct earth_main_args a;
	enum mode mode;
	long step, bad, result, seed;
	earth_gslot armed; /* node 1's slot for this step's RSYNCs */
	earth_slot s;
};
static void main_entry(void *f);
EARTH_THREADED_FUNCTION(gput_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

/* Steps: for each size an RSYNC step and a SYNC step, then the DATA
 * step. */
#define NSTEPS (2 * NSIZES + 1)

static void next_step(void *frame);

static void fill(long seed)
{
	for (long i = 0; i < SRC; i++)
		src[i] = pat(seed, i);
}

static void step_checked(void *frame)
{
	struct main_frame *m = frame;
	if (m->result)
		fprintf(stderr, "gput: step %ld: %ld wrong bytes\n", m->step,
			m->result);
	m->bad += m->result;
	m->step++;
	next_step(m);
}

/* Node 1 armed its slot: the RSYNCs (or DATA_RSYNCs) into it. */
static void rsync_writes(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->s, 1, 0, step_checked, m);
	if (m->step == NSTEPS - 1) {
		for (long k = 0; k < NDATA; k++)
			earth_data_rsync_l(m->seed * 1000003 + k,
					   earth_gptr_add(dst_of(0, 0), k * 16),
					   m->armed);
		return;
	}
	long size = sizes[m->step / 2];
	for (long k = 0; k < moves_of(size); k++)
		earth_blkmov_rsync(earth_to_global(src + src_off(k)),
				   dst_of(k, size), (size_t)size, m->armed);
}

/* The SYNC step's moves all done: node 1 checks. */
static void sync_written(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->s, 1, 0, step_checked, m);
	struct check_args ca = {m->seed,
				sizes[m->step / 2],
				0,
				earth_to_global(&m->result),
				earth_slot_global(&m->s),
				EARTH_GPTR_NULL};
	earth_invoke(1, &check_fn, &ca, sizeof(ca));
}

static void next_step(void *frame)
{
	struct main_frame *m = frame;
	if (m->step == NSTEPS) {
		printf("gput: %ld steps: %s (%ld bytes wrong)\n", (long)NSTEPS,
		       m->bad ? "WRONG" : "all correct", m->bad);
		earth_set_exit_status(m->bad ? 1 : 0);
		EARTH_END_FUNCTION(m);
	}
	m->seed = m->step * 7 + 3;
	fill(m->seed);
	bool data = m->step == NSTEPS - 1;
	if (data || m->step % 2 == 0) {
		/* node 1 arms its slot first, then the RSYNCs */
		earth_slot_init(&m->s, 1, 0, rsync_writes, m);
		struct check_args ca = {m->seed,
					data ? NDATA : sizes[m->step / 2],
					data,
					earth_to_global(&m->result),
					earth_slot_global(&m->s),
					earth_to_global(&m->armed)};
		earth_invoke(1, &check_fn, &ca, sizeof(ca));
		return;
	}
	long size = sizes[m->step / 2];
	earth_slot_init(&m->s, (int32_t)moves_of(size), 0, sync_written, m);
	for (long k = 0; k < moves_of(size); k++)
		earth_blkmov_sync(earth_to_global(src + src_off(k)),
				  dst_of(k, size), (size_t)size, &m->s);
}

/* kill: 4 MiB into node 1, again and again. */
static void put_again(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->s, 1, 0, put_again, m);
	earth_blkmov_sync(earth_to_global(src + 1), dst_of(0, 4l << 20),
			  4l << 20, &m->s);
}

static void never(void *frame)
{
	struct main_frame *m = frame;
	printf("gput: past: the move was accepted\n");
	earth_set_exit_status(1);
	EARTH_END_FUNCTION(m);
}

static void ready(void *frame)
{
	struct main_frame *m = frame;
	switch (m->mode) {
	case CHECK:
		m->step = m->bad = 0;
		next_step(m);
		break;
	case KILL:
		printf("gput: node 0 pid %d\n", (int)getpid());
		fflush(stdout);
		put_again(m);
		break;
	case PAST:
		earth_slot_init(&m->s, 1, 0, never, m);
		earth_blkmov_sync(
		    earth_to_global(src),
		    earth_gptr_add(earth_garray_at(&arr, DST), DST - 32), 64,
		    &m->s);
		break;
	}
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->mode = CHECK;
	const char *arg = m->a.argc > 1 ? m->a.argv[1] : "";
	while (m->mode <= PAST && strcmp(arg, mode_names[m->mode]))
		m->mode++;
	if (m->mode > PAST || earth_num_nodes() != 2) {
		fprintf(stderr, "usage: gput check|kill|past (2 nodes)\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	if (alloc_array()) {
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(m);
	}
	fill(1);
	earth_slot_init(&m->s, 1, 0, ready, m);
	struct setup_args sa = {earth_slot_global(&m->s), m->mode == KILL};
	earth_invoke(1, &setup_fn, &sa, sizeof(sa));
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &gput_main);
}
