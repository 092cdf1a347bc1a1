/* SPDX-License-Identifier: MIT */
/*
 * t_ops_invoke.c - starting and ending threaded functions on one node:
 * INVOKE on node 0 and TOKEN copy the argument block intact into a fresh
 * frame, SPAWN adds fibers on a function's own frame, END_FUNCTION frees the
 * frame (and ends the program for main's), and frames are reused from the
 * EU's free lists: 100,000 invocations with their arguments checked, frames
 * at every size-class boundary, and large frames (> 8 KiB) with large
 * argument blocks.
 */
#include <criterion/criterion.h>

#include "fib_tf.h"
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

TestSuite(ops_invoke, .timeout = 60);

static int g_fired, g_bad;
static long g_result;
static struct earth_stats g_st;

/* A frame with one slot, for mains that need no more. */
struct spm_frame {
	earth_slot done;
};

/* ---- one INVOKE / TOKEN with a mixed argument block ---- */

struct mix_args {
	char c;
	short s;
	int i;
	long l;
	double d;
	char tag[13];
	earth_gptr result;
	earth_gslot done;
};
struct mix_frame {
	struct mix_args a;
	long scratch[5];
};
struct one_frame {
	long result;
	earth_slot done;
	int use_token;
};

static void mix_entry(void *f);
EARTH_THREADED_FUNCTION(mix_fn, mix_entry, struct mix_frame,
			sizeof(struct mix_args));

static void mix_entry(void *frame)
{
	struct mix_frame *f = frame;
	bool ok = f->a.c == 'q' && f->a.s == -12345 && f->a.i == 0x7edcba98 &&
		  f->a.l == -0x123456789abcl && f->a.d == 2.75 &&
		  !memcmp(f->a.tag, "hello, earth", 13) &&
		  earth_node_id() == 0 && earth_num_nodes() == 1;
	g_bad += !ok;
	earth_data_rsync_l(ok ? f->a.l + f->a.i : -1, f->a.result, f->a.done);
	EARTH_END_FUNCTION(f);
}

static void one_entry(void *f);
static void one_done(void *f);
EARTH_THREADED_FUNCTION(one_main, one_entry, struct one_frame, 0);

static int g_use_token;

static void one_entry(void *frame)
{
	struct one_frame *f = frame;
	earth_slot_init(&f->done, 1, 0, one_done, f);
	struct mix_args a;
	memset(&a, 0x77, sizeof(a)); /* padding too */
	a.c = 'q';
	a.s = -12345;
	a.i = 0x7edcba98;
	a.l = -0x123456789abcl;
	a.d = 2.75;
	memcpy(a.tag, "hello, earth", 13);
	a.result = earth_to_global(&f->result);
	a.done = earth_slot_global(&f->done);
	if (g_use_token)
		earth_token(&mix_fn, &a, sizeof(a));
	else
		earth_invoke(0, &mix_fn, &a, sizeof(a));
	/* The callee has its own copy: change ours. */
	memset(&a, 0, sizeof(a));
}

static void one_done(void *frame)
{
	struct one_frame *f = frame;
	g_result = f->result;
	g_fired++;
	EARTH_END_FUNCTION(f);
}

static void check_one(int token)
{
	g_use_token = token;
	cr_assert_eq(t_run(NULL, &one_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_bad, 0, "the callee saw wrong arguments");
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_result, -0x123456789abcl + 0x7edcba98);
	cr_assert_eq(g_st.ops[token ? EARTH_OP_TOKEN : EARTH_OP_INVOKE], 1);
	cr_assert_eq(g_st.ops[token ? EARTH_OP_INVOKE : EARTH_OP_TOKEN], 0);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 2);
	cr_assert_eq(g_st.frames_allocated, 2);
	cr_assert_eq(g_st.fibers_run, 3);
}

Test(ops_invoke, invoke_node0_copies_args)
{
	check_one(0);
}

Test(ops_invoke, token_copies_args)
{
	check_one(1);
}

/* ---- TOKEN: fib with one threaded function per call ---- */

struct fibm_frame {
	int result;
	earth_slot done;
};
static void fibm_entry(void *f);
static void fibm_done(void *f);
EARTH_THREADED_FUNCTION(fib_main, fibm_entry, struct fibm_frame, 0);

static void fibm_entry(void *frame)
{
	struct fibm_frame *f = frame;
	earth_slot_init(&f->done, 1, 0, fibm_done, f);
	struct fib_args a = {18, earth_to_global(&f->result),
			     earth_slot_global(&f->done)};
	earth_token(&fib_tf, &a, sizeof(a));
}

static void fibm_done(void *frame)
{
	struct fibm_frame *f = frame;
	g_result = f->result;
	EARTH_END_FUNCTION(f);
}

Test(ops_invoke, token_tree_fib18)
{
	cr_assert_eq(t_run(NULL, &fib_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_result, 2584);
	/* calls(n) = 2 fib(n + 1) - 1 */
	cr_assert_eq(g_st.ops[EARTH_OP_TOKEN], 2 * 4181 - 1);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 2 * 4181);
	cr_assert_eq(g_st.frames_allocated, 2 * 4181);
	cr_assert_eq(g_st.fibers_run, g_st.fibers_ready + g_st.tokens_run + 1);
}

/* ---- 100,000 invocations, one at a time: one frame reused ---- */

#define CHAIN_N 100000
struct chain_args {
	uint32_t i;
	uint32_t not_i;
	uint64_t mix;
	earth_gslot done;
	uint64_t sum;
};
struct chain_frame {
	struct chain_args a;
	char scratch[40];
};
static void *g_addrs_chain[CHAIN_N];
static uint64_t g_chain_n;
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static void chain_child(void *f);
EARTH_THREADED_FUNCTION(chain_fn, chain_child, struct chain_frame,
			sizeof(struct chain_args));

static void chain_child(void *frame)
{
	struct chain_frame *f = frame;
	struct chain_args a = f->a;
	bool ok = a.i < g_chain_n && a.not_i == ~a.i && a.mix == mix64(a.i) &&
		  a.sum == a.i + (uint64_t)a.not_i + a.mix;
	g_bad += !ok;
	if (a.i < g_chain_n)
		g_addrs_chain[a.i] = f;
	/* Scribble over the frame: the next invocation must not see it. */
	memset(f, 0xab, sizeof(*f));
	earth_rsync(a.done);
	EARTH_END_FUNCTION(f);
}

struct chainm_frame {
	uint32_t next;
	earth_slot back;
};
static void chainm_entry(void *f);
static void chainm_back(void *f);
EARTH_THREADED_FUNCTION(chain_main, chainm_entry, struct chainm_frame, 0);

static void chain_invoke_next(struct chainm_frame *f)
{
	uint32_t i = f->next++;
	struct chain_args a = {i, ~i, mix64(i), earth_slot_global(&f->back), 0};
	a.sum = a.i + (uint64_t)a.not_i + a.mix;
	earth_invoke(0, &chain_fn, &a, sizeof(a));
}

static void chainm_entry(void *frame)
{
	struct chainm_frame *f = frame;
	f->next = 0;
	earth_slot_init(&f->back, 1, 1, chainm_back, f);
	chain_invoke_next(f);
}

static void chainm_back(void *frame)
{
	struct chainm_frame *f = frame;
	g_fired++;
	if (f->next < g_chain_n) {
		chain_invoke_next(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a;
	uintptr_t y = (uintptr_t) * (void *const *)b;
	return x < y ? -1 : x > y;
}

/* Distinct non-null pointers among v[0..n). Sorts v. */
static size_t distinct(void **v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_ptr);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += v[i] && (i == 0 || v[i] != v[i - 1]);
	return d;
}

Test(ops_invoke, invoke_100k_one_at_a_time_reuses_frames)
{
	g_chain_n = t_scaled(CHAIN_N, 1000);
	cr_assert_eq(t_run(NULL, &chain_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_bad, 0, "%d invocations saw wrong arguments", g_bad);
	cr_assert_eq(g_fired, (int)g_chain_n);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], g_chain_n);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], g_chain_n + 1);
	cr_assert_eq(g_st.frames_allocated, g_chain_n + 1);
	for (uint64_t i = 0; i < g_chain_n; i++)
		cr_assert_not_null(g_addrs_chain[i], "invocation %lu never ran",
				   (unsigned long)i);
	/* At most one child is live at a time: its frame comes back from the
	 * free list, so the children use at most one chunk of frames. */
	size_t d = distinct(g_addrs_chain, g_chain_n);
	cr_assert(d >= 1 && d <= 64, "%zu distinct frames for %lu invocations",
		  d, (unsigned long)g_chain_n);
}

/* ---- rounds of 1,000 concurrent invocations ---- */

#define FAN_W 1000
#define FAN_ROUNDS 100
struct fan_args {
	uint32_t round, k;
	uint64_t mix;
	earth_gptr out;
	earth_gslot join;
};
struct fan_frame {
	struct fan_args a;
	uint64_t pad[3];
};
static void *g_addrs_fan[FAN_W * FAN_ROUNDS];
static uint32_t g_fan_rounds;

static void fan_child(void *f);
EARTH_THREADED_FUNCTION(fan_fn, fan_child, struct fan_frame,
			sizeof(struct fan_args));

static void fan_child(void *frame)
{
	struct fan_frame *f = frame;
	struct fan_args a = f->a;
	bool ok = a.k < FAN_W && a.round < g_fan_rounds &&
		  a.mix == mix64((uint64_t)a.round * FAN_W + a.k);
	g_bad += !ok;
	if (ok)
		g_addrs_fan[a.round * FAN_W + a.k] = f;
	memset(f->pad, 0xee, sizeof(f->pad));
	earth_data_rsync_l((long)(a.mix >> 1), a.out, a.join);
	EARTH_END_FUNCTION(f);
}

struct fanm_frame {
	uint32_t round;
	earth_slot join;
	long out[FAN_W];
};
static void fanm_entry(void *f);
static void fanm_join(void *f);
EARTH_THREADED_FUNCTION(fan_main, fanm_entry, struct fanm_frame, 0);

static void fan_start_round(struct fanm_frame *f)
{
	for (uint32_t k = 0; k < FAN_W; k++) {
		f->out[k] = -1;
		struct fan_args a = {
		    f->round, k, mix64((uint64_t)f->round * FAN_W + k),
		    earth_to_global(&f->out[k]), earth_slot_global(&f->join)};
		earth_invoke(0, &fan_fn, &a, sizeof(a));
	}
}

static void fanm_entry(void *frame)
{
	struct fanm_frame *f = frame;
	f->round = 0;
	earth_slot_init(&f->join, FAN_W, FAN_W, fanm_join, f);
	fan_start_round(f);
}

static void fanm_join(void *frame)
{
	struct fanm_frame *f = frame;
	for (uint32_t k = 0; k < FAN_W; k++)
		g_bad += f->out[k] !=
			 (long)(mix64((uint64_t)f->round * FAN_W + k) >> 1);
	g_fired++;
	if (++f->round < g_fan_rounds) {
		fan_start_round(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

Test(ops_invoke, invoke_rounds_of_1000_reuse_frames)
{
	g_fan_rounds = (uint32_t)t_scaled(FAN_ROUNDS, 5);
	uint64_t total = (uint64_t)g_fan_rounds * FAN_W;
	cr_assert_eq(t_run(NULL, &fan_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_bad, 0, "%d wrong arguments or results", g_bad);
	cr_assert_eq(g_fired, (int)g_fan_rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], total);
	cr_assert_eq(g_st.frames_allocated, total + 1);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], total);
	/* 1,000 live at most: 16 chunks of 64 frames hold them all. */
	size_t d = distinct(g_addrs_fan, total);
	cr_assert(d >= FAN_W && d <= 1024,
		  "%zu distinct frames for rounds of %d", d, FAN_W);
}

/* ---- large frames, large argument blocks ---- */

#define BIG_ARGS 9000
struct big_args {
	uint32_t k;
	earth_gslot done;
	unsigned char bytes[BIG_ARGS];
};
struct big_frame {
	struct big_args a;
	unsigned char body[4000];
};
static uint32_t g_big_n;
static int g_big_ran;

static unsigned char big_byte(uint32_t k, size_t i)
{
	return (unsigned char)(k * 131 + i * 7 + (i >> 7));
}

static void big_child(void *f);
EARTH_THREADED_FUNCTION(big_fn, big_child, struct big_frame,
			sizeof(struct big_args));

static void big_child(void *frame)
{
	struct big_frame *f = frame;
	int bad = 0;
	for (size_t i = 0; i < BIG_ARGS; i++)
		bad |= f->a.bytes[i] != big_byte(f->a.k, i);
	g_bad += bad;
	g_big_ran++;
	/* The whole frame is ours. */
	memset(f->body, (int)f->a.k, sizeof(f->body));
	earth_gslot done = f->a.done;
	memset(&f->a, 0x99, sizeof(f->a));
	earth_rsync(done);
	EARTH_END_FUNCTION(f);
}

#define BIG_W 20
struct bigm_frame {
	uint32_t next;
	earth_slot join;
	struct big_args a;
};
static void bigm_entry(void *f);
static void bigm_join(void *f);
EARTH_THREADED_FUNCTION(big_main, bigm_entry, struct bigm_frame, 0);

static void big_round(struct bigm_frame *f)
{
	for (int w = 0; w < BIG_W; w++) {
		uint32_t k = f->next++;
		f->a.k = k;
		f->a.done = earth_slot_global(&f->join);
		for (size_t i = 0; i < BIG_ARGS; i++)
			f->a.bytes[i] = big_byte(k, i);
		earth_invoke(0, &big_fn, &f->a, sizeof(f->a));
	}
}

static void bigm_entry(void *frame)
{
	struct bigm_frame *f = frame;
	f->next = 0;
	earth_slot_init(&f->join, BIG_W, BIG_W, bigm_join, f);
	big_round(f);
}

static void bigm_join(void *frame)
{
	struct bigm_frame *f = frame;
	if (f->next < g_big_n) {
		big_round(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

Test(ops_invoke, large_frames_and_args_over_8k)
{
	cr_assert_gt(sizeof(struct big_frame), 8192);
	cr_assert_gt(sizeof(struct big_args), 8192);
	g_big_n = (uint32_t)t_scaled(2000, 100) / BIG_W * BIG_W;
	cr_assert_eq(t_run(NULL, &big_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_bad, 0, "%d large invocations saw wrong arguments",
		     g_bad);
	cr_assert_eq(g_big_ran, (int)g_big_n);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], g_big_n);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], g_big_n + 1);
}

/* ---- frames at the size-class boundaries ---- */

/* A 16-byte header precedes each frame; classes are 64 << k bytes, so
 * these frame sizes sit on both sides of the first and second class
 * boundaries and of the largest class (8192), past which frames come from
 * the heap. Every copy fills its whole frame, waits until all copies have
 * filled theirs, then checks its frame is intact: overlapping frames would
 * show. */
struct bnd_args {
	uint32_t size, id;
};
struct bnd_hdr {
	struct bnd_args a;
	earth_slot check; /* set by the callee */
};
#define BND_ARGS sizeof(struct bnd_args)
#define BND_HDR sizeof(struct bnd_hdr)
#define BND_COPIES 3
#define BND_SIZES 8
static const uint32_t bnd_sizes[BND_SIZES] = {48,  49,	 112,  113,
					      240, 8176, 8177, 20000};
static int g_bnd_bad[BND_SIZES * BND_COPIES];
static int g_bnd_checked;
static earth_slot *g_bnd_checks[BND_SIZES * BND_COPIES];
static earth_slot g_bnd_filled, g_bnd_all_checked;

static unsigned char bnd_byte(uint32_t id, size_t i)
{
	return (unsigned char)(id * 61 + i * 13 + 1);
}

static void bnd_entry(void *f);
static void bnd_check(void *f);
EARTH_THREADED_FUNCTION(bnd48, bnd_entry, unsigned char[48], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd49, bnd_entry, unsigned char[49], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd112, bnd_entry, unsigned char[112], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd113, bnd_entry, unsigned char[113], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd240, bnd_entry, unsigned char[240], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd8176, bnd_entry, unsigned char[8176], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd8177, bnd_entry, unsigned char[8177], BND_ARGS);
EARTH_THREADED_FUNCTION(bnd20000, bnd_entry, unsigned char[20000], BND_ARGS);
static const struct earth_tfunc *const bnd_fns[BND_SIZES] = {
    &bnd48, &bnd49, &bnd112, &bnd113, &bnd240, &bnd8176, &bnd8177, &bnd20000,
};

static void bnd_entry(void *frame)
{
	struct bnd_hdr *h = frame;
	unsigned char *p = frame;
	for (size_t i = BND_HDR; i < h->a.size; i++)
		p[i] = bnd_byte(h->a.id, i);
	earth_slot_init(&h->check, 1, 0, bnd_check, h);
	g_bnd_checks[h->a.id] = &h->check;
	earth_sync(&g_bnd_filled);
}

static void bnd_check(void *frame)
{
	struct bnd_hdr *h = frame;
	unsigned char *p = frame;
	int bad = 0;
	for (size_t i = BND_HDR; i < h->a.size; i++)
		bad += p[i] != bnd_byte(h->a.id, i);
	g_bnd_bad[h->a.id] = bad;
	g_bnd_checked++;
	earth_sync(&g_bnd_all_checked);
	EARTH_END_FUNCTION(frame);
}

static void bndm_entry(void *f);
static void bndm_filled(void *f);
static void bndm_checked(void *f);
EARTH_THREADED_FUNCTION(bnd_main, bndm_entry, struct spm_frame, 0);

static void bndm_entry(void *frame)
{
	const int n = BND_SIZES * BND_COPIES;
	earth_slot_init(&g_bnd_filled, n, 0, bndm_filled, frame);
	earth_slot_init(&g_bnd_all_checked, n, 0, bndm_checked, frame);
	/* Interleaved sizes, so neighbours in memory are mostly live. */
	for (int c = 0; c < BND_COPIES; c++)
		for (int s = 0; s < BND_SIZES; s++) {
			struct bnd_args a = {bnd_sizes[s],
					     (uint32_t)(c * BND_SIZES + s)};
			earth_invoke(0, bnd_fns[s], &a, sizeof(a));
		}
}

static void bndm_filled(void *frame)
{
	(void)frame;
	for (int i = 0; i < BND_SIZES * BND_COPIES; i++)
		earth_sync(g_bnd_checks[i]);
}

static void bndm_checked(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_invoke, frames_at_size_class_boundaries_do_not_overlap)
{
	for (int i = 0; i < BND_SIZES * BND_COPIES; i++)
		g_bnd_bad[i] = -1;
	cr_assert_eq(t_run(NULL, &bnd_main), 0);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_bnd_checked, BND_SIZES * BND_COPIES);
	for (int i = 0; i < BND_SIZES * BND_COPIES; i++)
		cr_assert_eq(g_bnd_bad[i], 0,
			     "copy %d of the %u-byte frame: %d bytes "
			     "changed",
			     i, bnd_sizes[i % BND_SIZES], g_bnd_bad[i]);
}

/* ---- SPAWN on a threaded function's own frame ---- */

struct sp_frame {
	earth_gslot done; /* the argument */
	int hits;
	earth_slot join;
};
static int g_sp_hits;
static void sp_entry(void *f);
static void sp_fiber(void *f);
static void sp_join(void *f);
EARTH_THREADED_FUNCTION(sp_fn, sp_entry, struct sp_frame, sizeof(earth_gslot));

static void sp_entry(void *frame)
{
	struct sp_frame *f = frame;
	f->hits = 0;
	earth_slot_init(&f->join, 3, 0, sp_join, f);
	earth_spawn(sp_fiber, f);
	earth_spawn(sp_fiber, f);
	earth_spawn(sp_fiber, f);
}

static void sp_fiber(void *frame)
{
	struct sp_frame *f = frame;
	f->hits++;
	earth_sync(&f->join);
}

static void sp_join(void *frame)
{
	struct sp_frame *f = frame;
	g_sp_hits += f->hits;
	earth_rsync(f->done);
	EARTH_END_FUNCTION(f);
}

static void spm_entry(void *f);
static void spm_done(void *f);
EARTH_THREADED_FUNCTION(sp_main, spm_entry, struct spm_frame, 0);

static void spm_entry(void *frame)
{
	struct spm_frame *f = frame;
	earth_slot_init(&f->done, 10, 0, spm_done, f);
	earth_gslot g = earth_slot_global(&f->done);
	for (int i = 0; i < 10; i++)
		earth_invoke(0, &sp_fn, &g, sizeof(g));
}

static void spm_done(void *frame)
{
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

Test(ops_invoke, spawn_on_own_frame_then_end_function)
{
	cr_assert_eq(t_run(NULL, &sp_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_sp_hits, 30);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], 30);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], 10);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 11);
}

/* ---- a chain of invocations 1,000 deep ---- */

struct deep_args {
	int depth;
	earth_gptr out;
	earth_gslot done;
};
static void deep_entry(void *f);
EARTH_THREADED_FUNCTION(deep_fn, deep_entry, struct deep_args,
			sizeof(struct deep_args));

static void deep_entry(void *frame)
{
	struct deep_args *a = frame;
	if (a->depth < 1000) {
		struct deep_args next = *a;
		next.depth++;
		earth_invoke(0, &deep_fn, &next, sizeof(next));
	} else {
		earth_data_rsync_i(a->depth, a->out, a->done);
	}
	EARTH_END_FUNCTION(a);
}

struct deepm_frame {
	int depth;
	earth_slot done;
};
static void deepm_entry(void *f);
static void deepm_done(void *f);
EARTH_THREADED_FUNCTION(deep_main, deepm_entry, struct deepm_frame, 0);

static void deepm_entry(void *frame)
{
	struct deepm_frame *f = frame;
	earth_slot_init(&f->done, 1, 0, deepm_done, f);
	struct deep_args a = {1, earth_to_global(&f->depth),
			      earth_slot_global(&f->done)};
	earth_invoke(0, &deep_fn, &a, sizeof(a));
}

static void deepm_done(void *frame)
{
	struct deepm_frame *f = frame;
	g_result = f->depth;
	EARTH_END_FUNCTION(f);
}

Test(ops_invoke, each_invocation_starts_the_next)
{
	cr_assert_eq(t_run(NULL, &deep_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_result, 1000);
	cr_assert_eq(g_st.ops[EARTH_OP_INVOKE], 1000);
	cr_assert_eq(g_st.frames_allocated, 1001);
}

/* ---- END_FUNCTION of main ends the program, work pending or not ---- */

static void endm_entry(void *f);
static void endm_never(void *f);
EARTH_THREADED_FUNCTION(end_main, endm_entry, struct spm_frame, 0);

static void endm_entry(void *frame)
{
	struct spm_frame *f = frame;
	/* Armed but never signalled, and fibers and functions in flight. */
	static earth_slot never;
	earth_slot_init(&never, 5, 0, endm_never, f);
	earth_sync(&never);
	for (int i = 0; i < 1000; i++)
		earth_spawn(endm_never, NULL);
	struct deep_args a = {999, EARTH_GPTR_NULL, earth_slot_global(&never)};
	a.out = earth_to_global(&g_result);
	earth_invoke(0, &deep_fn, &a, sizeof(a));
	earth_set_exit_status(23);
	EARTH_END_FUNCTION(f);
}

static void endm_never(void *frame)
{
	(void)frame;
	g_fired++;
}

Test(ops_invoke, main_end_function_ends_program_with_work_in_flight)
{
	cr_assert_eq(t_run(NULL, &end_main), 23);
	earth_stats_get(&g_st);
	cr_assert_eq(g_st.ops[EARTH_OP_END_FUNCTION], 1);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], 1000);
	/* The entry fiber ended main: the EU runs nothing after it. */
	cr_assert_eq(g_st.fibers_run, 1);
	cr_assert_eq(g_fired, 0);
}

/* ---- functions without arguments ---- */

static void noargs_entry(void *f);
EARTH_THREADED_FUNCTION(noargs_fn, noargs_entry, struct spm_frame, 0);
static earth_slot g_noargs_done;

static void noargs_entry(void *frame)
{
	g_fired++;
	earth_sync(&g_noargs_done);
	EARTH_END_FUNCTION(frame);
}

static void noargsm_entry(void *f);
static void noargsm_done(void *f);
EARTH_THREADED_FUNCTION(noargs_main, noargsm_entry, struct spm_frame, 0);

static void noargsm_entry(void *frame)
{
	earth_slot_init(&g_noargs_done, 4, 0, noargsm_done, frame);
	earth_invoke(0, &noargs_fn, NULL, 0);
	earth_token(&noargs_fn, NULL, 0);
	earth_invoke(0, &noargs_fn, &g_fired, 0);
	earth_token(&noargs_fn, &g_fired, 0);
}

static void noargsm_done(void *frame)
{
	g_result = g_fired;
	EARTH_END_FUNCTION(frame);
}

Test(ops_invoke, invoke_and_token_without_arguments)
{
	cr_assert_eq(t_run(NULL, &noargs_main), 0);
	cr_assert_eq(g_result, 4);
}
