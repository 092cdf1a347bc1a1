/* SPDX-License-Identifier: MIT */
/*
 * blkmove.c - large block moves between nodes, for the tests of block
 * payloads received straight into their destination over tcp (run under
 * earthrun, or started directly). Each node's static buffers (registered
 * memory) hold a pattern of its own; node 0 learns where they lie, then:
 *
 *   blkmove pull BYTES [REPS]  node 0 moves BYTES from node 1 to itself
 *   blkmove push BYTES [REPS]  ... from itself to node 1
 *   blkmove third BYTES [REPS] ... from node 1 to node 2 (3 nodes)
 *   blkmove mix BYTES REPS     REPS pulls and REPS pushes of about BYTES
 *                              at once, each with a GET, an INVOKE and a
 *                              SYNC beside it
 *   blkmove kill BYTES         node 1 pushes BYTES to node 0 until killed
 *   blkmove bad BYTES          a push to node 1, then one to memory node 1
 *                              never registered (node 1 must refuse it)
 *
 * Moves are one after another (except mix), from and to odd offsets that
 * change with each move; every destination byte is checked on the node
 * that holds it, and on the first move the bytes around it too. Node 0
 * prints "blkmove: MODE, N nodes, BYTES-byte blocks x REPS: all correct";
 * kill prints "blkmove: node K pid P" on each node.
 */
#include <earth.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF ((64l << 20) + (64l << 10))
#define BYTES_MAX ((64l << 20) + 4096)
#define REPS_MAX 256
#define BAD_ADDR 0x10000 /* never mapped, let alone registered */

enum mode { PULL, PUSH, THIRD, MIX, KILL, BAD };
static const char *const mode_names[] = {"pull", "push", "third",
					 "mix",	 "kill", "bad"};

static unsigned char src[BUF], dst[BUF];

static unsigned char pat(uint32_t node, long i)
{
	uint32_t x = (uint32_t)i * 2654435761u;
	return (unsigned char)((x >> 16) ^ (uint32_t)(i >> 13) ^ node * 101);
}

/* Where move r reads and writes, and how much it moves. */
static long src_off(long r)
{
	return 1 + r * 4099 % 32768;
}
static long dst_off(long r, long bytes, enum mode m)
{
	return m == MIX ? 3 + r * (bytes + 16) : 3 + r * 1031 % 32768;
}
static long len_of(long r, long bytes, enum mode m)
{
	return m == MIX ? bytes - r * 777 % (bytes < 4096 ? bytes : 4096)
			: bytes;
}

/* Bytes of dst[off, off + len) that are not node `from`'s pattern from
 * sof on; with guard, also the bytes just around it (never written). */
static long bad_bytes(long off, long len, uint32_t from, long sof, bool guard)
{
	long bad = 0;
	for (long i = 0; i < len; i++)
		bad += dst[off + i] != pat(from, sof + i);
	if (guard)
		bad += (dst[off - 1] != 0) +
		       (off + len < BUF && dst[off + len] != 0);
	return bad;
}

/* ---- on every node ---- */

struct where_args {
	earth_gptr loc; /* node 0: two earth_gptr, src and dst */
	earth_gslot done;
	earth_gptr kill_dst; /* kill: node 0's dst */
	long bytes;
};
struct where_frame {
	struct where_args a;
	earth_slot pushed;
};
static void where_entry(void *f);
EARTH_THREADED_FUNCTION(where_fn, where_entry, struct where_frame,
			sizeof(struct where_args));

/* The pattern where moves of `bytes` read (and mix's GETs). */
static void fill(long bytes)
{
	long n = bytes + 65536 < BUF ? bytes + 65536 : BUF;
	for (long i = 0; i < n; i++)
		src[i] = pat(earth_node_id(), i);
}

/* kill: push to node 0 again and again. */
static void push_again(void *frame)
{
	struct where_frame *f = frame;
	earth_slot_init(&f->pushed, 1, 0, push_again, f);
	earth_blkmov_sync(earth_to_global(src + 1), f->a.kill_dst,
			  (size_t)f->a.bytes, &f->pushed);
}

static void where_entry(void *frame)
{
	struct where_frame *f = frame;
	fill(f->a.bytes);
	earth_data_rsync_g(earth_to_global(src), f->a.loc, f->a.done);
	earth_data_rsync_g(earth_to_global(dst),
			   earth_gptr_add(f->a.loc, sizeof(earth_gptr)),
			   f->a.done);
	if (!f->a.kill_dst.bits)
		EARTH_END_FUNCTION(f);
	printf("blkmove: node %u pid %d\n", earth_node_id(), (int)getpid());
	fflush(stdout);
	push_again(f);
}

struct check_args {
	long off, len, sof;
	uint32_t from;
	bool guard;
	earth_gptr result; /* long on node 0 */
	earth_gslot done;
};
struct check_frame {
	struct check_args a;
};
static void check_entry(void *f);
EARTH_THREADED_FUNCTION(check_fn, check_entry, struct check_frame,
			sizeof(struct check_args));

static void check_entry(void *frame)
{
	struct check_frame *f = frame;
	long bad =
	    bad_bytes(f->a.off, f->a.len, f->a.from, f->a.sof, f->a.guard);
	earth_data_rsync_l(bad, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}

struct ping_args {
	earth_gslot done;
};
struct ping_frame {
	struct ping_args a;
};
static void ping_entry(void *f);
EARTH_THREADED_FUNCTION(ping_fn, ping_entry, struct ping_frame,
			sizeof(struct ping_args));

static void ping_entry(void *frame)
{
	struct ping_frame *f = frame;
	earth_rsync(f->a.done);
	EARTH_END_FUNCTION(f);
}

/* ---- node 0 ---- */

struct main_frame {
	struct earth_main_args a;
	enum mode mode;
	long bytes, reps, rep, bad;
	earth_gptr loc[3][2]; /* each node's src and dst */
	earth_slot ready, moved, checked, all;
	long result[REPS_MAX];
	long got[REPS_MAX];
};
static void main_entry(void *f);
EARTH_THREADED_FUNCTION(bm_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void finish(struct main_frame *m)
{
	printf("blkmove: %s, %u nodes, %ld-byte blocks x %ld: ",
	       mode_names[m->mode], earth_num_nodes(), m->bytes, m->reps);
	if (m->bad)
		printf("WRONG (%ld bytes differ)\n", m->bad);
	else
		printf("all correct\n");
	earth_set_exit_status(m->bad ? 1 : 0);
	EARTH_END_FUNCTION(m);
}

/* Has node `at` check move r (its result lands in result[slot]). */
static void check_on(struct main_frame *m, uint32_t at, uint32_t from, long r,
		     long slot, earth_slot *done)
{
	struct check_args ca = {dst_off(r, m->bytes, m->mode),
				len_of(r, m->bytes, m->mode),
				src_off(r),
				from,
				r == 0 && m->mode != MIX,
				earth_to_global(&m->result[slot]),
				earth_slot_global(done)};
	earth_invoke(at, &check_fn, &ca, sizeof(ca));
}

static void step(void *frame);

static void checked(void *frame)
{
	struct main_frame *m = frame;
	m->bad += m->result[0];
	m->rep++;
	step(m);
}

static void moved(void *frame)
{
	struct main_frame *m = frame;
	long r = m->rep;
	if (m->mode == PULL) {
		m->bad += bad_bytes(dst_off(r, m->bytes, PULL), m->bytes, 1,
				    src_off(r), r == 0);
		m->rep++;
		step(m);
		return;
	}
	earth_slot_init(&m->checked, 1, 0, checked, m);
	check_on(m, m->mode == PUSH ? 1 : 2, m->mode == PUSH ? 0 : 1, r, 0,
		 &m->checked);
}

/* The next of the one-after-another moves. */
static void step(void *frame)
{
	struct main_frame *m = frame;
	if (m->rep == m->reps) {
		finish(m);
		return;
	}
	long r = m->rep;
	uint32_t from = m->mode == PUSH ? 0 : 1;
	uint32_t to = m->mode == PULL ? 0 : m->mode == PUSH ? 1 : 2;
	earth_slot_init(&m->moved, 1, 0, moved, m);
	earth_blkmov_sync(
	    earth_gptr_add(m->loc[from][0], src_off(r)),
	    earth_gptr_add(m->loc[to][1], dst_off(r, m->bytes, m->mode)),
	    (size_t)m->bytes, &m->moved);
}

static void mix_checked(void *frame)
{
	struct main_frame *m = frame;
	for (long r = 0; r < m->reps; r++)
		m->bad += m->result[r];
	finish(m);
}

/* Every move and message of mix arrived: check the pulled blocks and the
 * GETs here, the pushed blocks on node 1. */
static void mix_arrived(void *frame)
{
	struct main_frame *m = frame;
	for (long r = 0; r < m->reps; r++) {
		m->bad +=
		    bad_bytes(dst_off(r, m->bytes, MIX),
			      len_of(r, m->bytes, MIX), 1, src_off(r), false);
		for (long j = 0; j < 8; j++)
			m->bad += ((unsigned char *)&m->got[r])[j] !=
				  pat(1, 8 * r + j);
	}
	earth_slot_init(&m->checked, (int32_t)m->reps, 0, mix_checked, m);
	for (long r = 0; r < m->reps; r++)
		check_on(m, 1, 0, r, r, &m->checked);
}

static void mix(struct main_frame *m)
{
	/* Per move: the pull, the push, the GET, the ping's SYNC. */
	earth_slot_init(&m->all, 4 * (int32_t)m->reps, 0, mix_arrived, m);
	for (long r = 0; r < m->reps; r++) {
		long off = dst_off(r, m->bytes, MIX);
		size_t len = (size_t)len_of(r, m->bytes, MIX);
		earth_blkmov_sync(earth_gptr_add(m->loc[1][0], src_off(r)),
				  earth_gptr_add(m->loc[0][1], off), len,
				  &m->all);
		struct ping_args pa = {earth_slot_global(&m->all)};
		earth_invoke(1, &ping_fn, &pa, sizeof(pa));
		earth_blkmov_sync(earth_gptr_add(m->loc[0][0], src_off(r)),
				  earth_gptr_add(m->loc[1][1], off), len,
				  &m->all);
		earth_get_sync_l(earth_gptr_add(m->loc[1][0], 8 * r),
				 &m->got[r], &m->all);
	}
}

static void never(void *frame)
{
	struct main_frame *m = frame;
	printf("blkmove: %s: the moves were accepted\n", mode_names[m->mode]);
	earth_set_exit_status(1);
	EARTH_END_FUNCTION(m);
}

static void ready(void *frame)
{
	struct main_frame *m = frame;
	switch (m->mode) {
	case MIX:
		mix(m);
		break;
	case KILL:
		printf("blkmove: node 0 pid %d\n", (int)getpid());
		fflush(stdout);
		break;
	case BAD:
		earth_slot_init(&m->moved, 2, 0, never, m);
		earth_blkmov_sync(earth_gptr_add(m->loc[0][0], 1),
				  earth_gptr_add(m->loc[1][1], 3),
				  (size_t)m->bytes, &m->moved);
		earth_blkmov_sync(earth_gptr_add(m->loc[0][0], 1),
				  earth_gptr_make(1, (void *)BAD_ADDR),
				  (size_t)m->bytes, &m->moved);
		break;
	default:
		step(m);
	}
}

static int parse(struct main_frame *m)
{
	if (m->a.argc < 3)
		return -1;
	m->mode = (enum mode)0;
	while (m->mode <= BAD && strcmp(m->a.argv[1], mode_names[m->mode]))
		m->mode++;
	m->bytes = atol(m->a.argv[2]);
	m->reps = m->a.argc > 3 ? atol(m->a.argv[3]) : 1;
	m->rep = m->bad = 0;
	uint32_t need = m->mode == THIRD ? 3 : 2;
	if (m->mode > BAD || m->bytes < 1 || m->bytes > BYTES_MAX ||
	    m->reps < 1 || m->reps > REPS_MAX || earth_num_nodes() < need)
		return -1;
	if (m->mode == MIX && dst_off(m->reps, m->bytes, MIX) > BUF)
		return -1;
	return 0;
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	if (parse(m)) {
		fprintf(stderr,
			"usage: blkmove pull|push|third|mix|kill|bad "
			"BYTES [REPS] (BYTES 1..%ld, REPS 1..%d, mix: "
			"REPS x BYTES within %ld; third: 3 nodes)\n",
			BYTES_MAX, REPS_MAX, BUF);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	fill(m->bytes);
	m->loc[0][0] = earth_to_global(src);
	m->loc[0][1] = earth_to_global(dst);
	uint32_t n = earth_num_nodes() < 3 ? earth_num_nodes() : 3;
	earth_slot_init(&m->ready, 2 * (int32_t)(n - 1), 0, ready, m);
	for (uint32_t k = 1; k < n; k++) {
		struct where_args wa = {
		    earth_to_global(m->loc[k]), earth_slot_global(&m->ready),
		    m->mode == KILL && k == 1 ? m->loc[0][1] : EARTH_GPTR_NULL,
		    m->bytes};
		earth_invoke(k, &where_fn, &wa, sizeof(wa));
	}
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &bm_main);
}
