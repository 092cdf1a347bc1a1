/* SPDX-License-Identifier: MIT */
/*
 * t_ops_data.c - the data-moving split-phase operations: GET_SYNC and
 * DATA_SYNC for every typed variant (c s i l f d g), each with a local slot
 * and with a global slot pointer (the RSYNC forms), and BLKMOV_SYNC /
 * BLKMOV_RSYNC, including zero-length and overlapping copies. Every value
 * lands between guard bytes, so a wrong width or offset is caught, and the
 * fiber the slot fires records what it sees, so the data must be there by
 * then.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

TestSuite(ops_data, .timeout = 60);

/* ---- typed GET / DATA ---- */

enum ty { TY_c, TY_s, TY_i, TY_l, TY_f, TY_d, TY_g };
enum form { F_GET, F_GET_R, F_DATA, F_DATA_R };

#define OFF 16 /* the value's offset in the buffers */
#define GUARD_SRC 0x5a
#define GUARD_DST 0xc3

static enum ty g_ty;
static enum form g_form;
static _Alignas(16) unsigned char g_src[48], g_dst[48];
/* Copies made by the fired fiber. */
static unsigned char g_seen_src[48], g_seen_dst[48];
static int g_fired;
static struct earth_stats g_st;

/* The test values: every byte differs from the guards and from the others. */
static const char V_c = (char)0xa7;
static const short V_s = (short)0x8e31;
static const int V_i = (int)0xd4c3b2a1;
static const long V_l = (long)0x8877665544332211;
static const float V_f = -1.3125e-7f;
static const double V_d = 4.9406564584124654e-322; /* denormal */
#define V_g earth_gptr_make(0, (void *)(uintptr_t)0x0000123456789abcull)

static size_t ty_size(enum ty t)
{
	static const size_t sz[] = {
	    sizeof(char),  sizeof(short),  sizeof(int),	      sizeof(long),
	    sizeof(float), sizeof(double), sizeof(earth_gptr)};
	return sz[t];
}

/* The value's bytes. */
static void ty_bytes(enum ty t, unsigned char *out)
{
	earth_gptr g = V_g;
	const void *p[] = {&V_c, &V_s, &V_i, &V_l, &V_f, &V_d, &g};
	memcpy(out, p[t], ty_size(t));
}

struct typed_frame {
	earth_slot s;
};
static void typed_entry(void *f);
static void typed_fired(void *f);
EARTH_THREADED_FUNCTION(typed_main, typed_entry, struct typed_frame, 0);

/* Posts the operation for one type; T is the C type, V the value. */
#define POST_TYPED(sfx, T, V)                                                  \
	do {                                                                   \
		T *dst = (T *)(void *)(g_dst + OFF);                           \
		earth_gptr gsrc = earth_to_global(g_src + OFF);                \
		earth_gptr gdst = earth_to_global(g_dst + OFF);                \
		switch (g_form) {                                              \
		case F_GET:                                                    \
			earth_get_sync_##sfx(gsrc, dst, s);                    \
			break;                                                 \
		case F_GET_R:                                                  \
			earth_get_rsync_##sfx(gsrc, dst, gs);                  \
			break;                                                 \
		case F_DATA:                                                   \
			earth_data_sync_##sfx((V), gdst, s);                   \
			break;                                                 \
		case F_DATA_R:                                                 \
			earth_data_rsync_##sfx((V), gdst, gs);                 \
			break;                                                 \
		}                                                              \
	} while (0)

static void typed_entry(void *frame)
{
	struct typed_frame *f = frame;
	earth_slot *s = &f->s;
	earth_slot_init(s, 1, 0, typed_fired, f);
	earth_gslot gs = earth_slot_global(s);
	memset(g_src, GUARD_SRC, sizeof(g_src));
	memset(g_dst, GUARD_DST, sizeof(g_dst));
	ty_bytes(g_ty, g_src + OFF);
	switch (g_ty) {
	case TY_c:
		POST_TYPED(c, char, V_c);
		break;
	case TY_s:
		POST_TYPED(s, short, V_s);
		break;
	case TY_i:
		POST_TYPED(i, int, V_i);
		break;
	case TY_l:
		POST_TYPED(l, long, V_l);
		break;
	case TY_f:
		POST_TYPED(f, float, V_f);
		break;
	case TY_d:
		POST_TYPED(d, double, V_d);
		break;
	case TY_g:
		POST_TYPED(g, earth_gptr, V_g);
		break;
	}
}

static void typed_fired(void *frame)
{
	memcpy(g_seen_src, g_src, sizeof(g_src));
	memcpy(g_seen_dst, g_dst, sizeof(g_dst));
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

static void check_typed(enum ty t, enum form form)
{
	g_ty = t;
	g_form = form;
	cr_assert_eq(t_run(NULL, &typed_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, 1);
	bool get = form == F_GET || form == F_GET_R;
	cr_assert_eq(g_st.ops[get ? EARTH_OP_GET_SYNC : EARTH_OP_DATA_SYNC], 1);
	cr_assert_eq(g_st.slot_signals, 1);
	unsigned char want_src[48], want_dst[48];
	memset(want_src, GUARD_SRC, sizeof(want_src));
	memset(want_dst, GUARD_DST, sizeof(want_dst));
	ty_bytes(t, want_src + OFF);
	ty_bytes(t, want_dst + OFF);
	size_t n = ty_size(t);
	for (size_t i = 0; i < sizeof(want_dst); i++) {
		cr_assert_eq(g_seen_dst[i], want_dst[i],
			     "%zu-byte value: byte %zu of the destination is "
			     "0x%02x in the fired fiber, want 0x%02x",
			     n, i, g_seen_dst[i], want_dst[i]);
		cr_assert_eq(g_dst[i], want_dst[i]);
		cr_assert_eq(g_seen_src[i], want_src[i],
			     "byte %zu of the source changed", i);
	}
}

#define TYPED_TESTS(sfx)                                                       \
	Test(ops_data, get_sync_##sfx)                                         \
	{                                                                      \
		check_typed(TY_##sfx, F_GET);                                  \
	}                                                                      \
	Test(ops_data, get_rsync_##sfx)                                        \
	{                                                                      \
		check_typed(TY_##sfx, F_GET_R);                                \
	}                                                                      \
	Test(ops_data, data_sync_##sfx)                                        \
	{                                                                      \
		check_typed(TY_##sfx, F_DATA);                                 \
	}                                                                      \
	Test(ops_data, data_rsync_##sfx)                                       \
	{                                                                      \
		check_typed(TY_##sfx, F_DATA_R);                               \
	}
TYPED_TESTS(c)
TYPED_TESTS(s)
TYPED_TESTS(i)
TYPED_TESTS(l)
TYPED_TESTS(f)
TYPED_TESTS(d)
TYPED_TESTS(g)

/* ---- many typed operations in flight into a frame ---- */

#define NPIPE 4096
struct pipe_frame {
	earth_slot done;
	long src[NPIPE], dst[NPIPE];
	int isrc[NPIPE], idst[NPIPE];
	double d[NPIPE];
};
static int g_bad_l, g_bad_i, g_bad_d;
static void pipe_entry(void *f);
static void pipe_done(void *f);
EARTH_THREADED_FUNCTION(pipe_main, pipe_entry, struct pipe_frame, 0);

static void pipe_entry(void *frame)
{
	struct pipe_frame *f = frame;
	for (int i = 0; i < NPIPE; i++) {
		f->src[i] = (long)i * 0x100000001l - 7;
		f->dst[i] = -1;
		f->isrc[i] = i ^ 0x5555;
		f->idst[i] = -1;
		f->d[i] = -1;
	}
	earth_slot_init(&f->done, 4 * NPIPE, 0, pipe_done, f);
	earth_gslot gs = earth_slot_global(&f->done);
	for (int i = 0; i < NPIPE; i++) {
		earth_get_sync_l(earth_to_global(&f->src[i]), &f->dst[i],
				 &f->done);
		earth_get_rsync_i(earth_to_global(&f->isrc[i]), &f->idst[i],
				  gs);
		earth_data_sync_d(i * 0.5, earth_to_global(&f->d[i]), &f->done);
		/* Overwrites the same element with the same value: the order
		 * of requests to one address must not matter here. */
		earth_data_rsync_d(i * 0.5, earth_to_global(&f->d[i]), gs);
	}
}

static void pipe_done(void *frame)
{
	struct pipe_frame *f = frame;
	for (int i = 0; i < NPIPE; i++) {
		g_bad_l += f->dst[i] != (long)i * 0x100000001l - 7;
		g_bad_i += f->idst[i] != (i ^ 0x5555);
		g_bad_d += f->d[i] != i * 0.5;
	}
	g_fired++;
	EARTH_END_FUNCTION(f);
}

Test(ops_data, thousands_in_flight_to_one_slot)
{
	cr_assert_eq(t_run(NULL, &pipe_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_bad_l, 0, "%d GET_SYNC_l values wrong", g_bad_l);
	cr_assert_eq(g_bad_i, 0, "%d GET_RSYNC_i values wrong", g_bad_i);
	cr_assert_eq(g_bad_d, 0, "%d DATA_SYNC_d values wrong", g_bad_d);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], 2 * NPIPE);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], 2 * NPIPE);
	cr_assert_eq(g_st.slot_signals, 4 * NPIPE);
}

/* Ordered writes to one address: the last DATA_SYNC posted wins. */
struct order_frame {
	earth_slot done;
	long x;
};
static long g_x_seen;
static void order_entry(void *f);
static void order_done(void *f);
EARTH_THREADED_FUNCTION(order_main, order_entry, struct order_frame, 0);

static void order_entry(void *frame)
{
	struct order_frame *f = frame;
	f->x = -1;
	earth_slot_init(&f->done, 1000, 0, order_done, f);
	for (long i = 0; i < 1000; i++)
		earth_data_sync_l(i * 3, earth_to_global(&f->x), &f->done);
}

static void order_done(void *frame)
{
	struct order_frame *f = frame;
	g_x_seen = f->x;
	EARTH_END_FUNCTION(f);
}

Test(ops_data, data_sync_to_one_address_last_wins)
{
	cr_assert_eq(t_run(NULL, &order_main), 0);
	cr_assert_eq(g_x_seen, 999 * 3);
}

/* ---- BLKMOV ---- */

#define BUF 4096
static unsigned char g_buf[BUF], g_buf2[BUF], g_seen[BUF], g_want[BUF];
static size_t g_src_off, g_dst_off, g_len;
static bool g_two_buffers, g_rsync;

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed * 7 + (i >> 8));
}

static void blk_entry(void *f);
static void blk_fired(void *f);
EARTH_THREADED_FUNCTION(blk_main, blk_entry, struct typed_frame, 0);

static void blk_entry(void *frame)
{
	struct typed_frame *f = frame;
	earth_slot_init(&f->s, 1, 0, blk_fired, f);
	fill_pattern(g_buf, BUF, 1);
	memset(g_buf2, 0xee, BUF);
	unsigned char *src = g_buf + g_src_off;
	unsigned char *dst = (g_two_buffers ? g_buf2 : g_buf) + g_dst_off;
	if (g_rsync)
		earth_blkmov_rsync(earth_to_global(src), earth_to_global(dst),
				   g_len, earth_slot_global(&f->s));
	else
		earth_blkmov_sync(earth_to_global(src), earth_to_global(dst),
				  g_len, &f->s);
}

static void blk_fired(void *frame)
{
	memcpy(g_seen, g_two_buffers ? g_buf2 : g_buf, BUF);
	g_fired++;
	EARTH_END_FUNCTION(frame);
}

/* Runs one BLKMOV and compares with memmove on a copy. */
static void check_blkmov(bool two, size_t src_off, size_t dst_off, size_t len,
			 bool rsync)
{
	g_two_buffers = two;
	g_src_off = src_off;
	g_dst_off = dst_off;
	g_len = len;
	g_rsync = rsync;
	cr_assert_eq(t_run(NULL, &blk_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], 1);
	cr_assert_eq(g_st.slot_signals, 1);
	unsigned char src[BUF];
	fill_pattern(src, BUF, 1);
	if (two) {
		memset(g_want, 0xee, BUF);
		memcpy(g_want + dst_off, src + src_off, len);
	} else {
		memcpy(g_want, src, BUF);
		memmove(g_want + dst_off, g_want + src_off, len);
	}
	for (size_t i = 0; i < BUF; i++)
		cr_assert_eq(g_seen[i], g_want[i],
			     "byte %zu is 0x%02x in the fired fiber, want "
			     "0x%02x (src +%zu, dst +%zu, %zu bytes)",
			     i, g_seen[i], g_want[i], src_off, dst_off, len);
}

Test(ops_data, blkmov_sync_copies_exactly)
{
	check_blkmov(true, 3, 101, 1000, false);
}

Test(ops_data, blkmov_rsync_copies_exactly)
{
	check_blkmov(true, 0, 0, BUF, true);
}

Test(ops_data, blkmov_zero_length_signals_and_copies_nothing)
{
	check_blkmov(true, 10, 10, 0, false);
}

Test(ops_data, blkmov_rsync_zero_length)
{
	check_blkmov(false, 0, 64, 0, true);
}

Test(ops_data, blkmov_overlap_forward)
{
	/* dst inside the source range, above it. */
	check_blkmov(false, 100, 117, 2000, false);
}

Test(ops_data, blkmov_overlap_backward)
{
	check_blkmov(false, 517, 500, 3000, true);
}

Test(ops_data, blkmov_onto_itself)
{
	check_blkmov(false, 256, 256, 1024, false);
}

Test(ops_data, blkmov_one_byte)
{
	check_blkmov(true, BUF - 1, 0, 1, false);
}

/* Every length 0..NLEN-1 at once, to one slot, then a large copy. */
#define NLEN 200
#define BIG (1u << 20)
struct lens_frame {
	earth_slot done;
	unsigned char src[NLEN];
	unsigned char dst[NLEN][NLEN + 2];
};
static int g_bad_lens, g_bad_big;
static unsigned char *g_big_src, *g_big_dst;
static void lens_entry(void *f);
static void lens_done(void *f);
EARTH_THREADED_FUNCTION(lens_main, lens_entry, struct lens_frame, 0);

static void lens_entry(void *frame)
{
	struct lens_frame *f = frame;
	fill_pattern(f->src, NLEN, 9);
	memset(f->dst, 0x11, sizeof(f->dst));
	fill_pattern(g_big_src, BIG, 5);
	/* Heap memory a global pointer names is registered, on one node
	 * too. */
	g_bad_big = earth_register_memory(g_big_src, BIG) ||
		    earth_register_memory(g_big_dst, BIG);
	earth_slot_init(&f->done, NLEN + 1, 0, lens_done, f);
	for (size_t n = 0; n < NLEN; n++)
		earth_blkmov_sync(earth_to_global(f->src),
				  earth_to_global(&f->dst[n][1]), n, &f->done);
	earth_blkmov_rsync(earth_to_global(g_big_src),
			   earth_to_global(g_big_dst), BIG,
			   earth_slot_global(&f->done));
}

static void lens_done(void *frame)
{
	struct lens_frame *f = frame;
	for (size_t n = 0; n < NLEN; n++) {
		g_bad_lens += f->dst[n][0] != 0x11 || f->dst[n][n + 1] != 0x11;
		g_bad_lens += memcmp(&f->dst[n][1], f->src, n) != 0;
	}
	g_bad_big |= memcmp(g_big_src, g_big_dst, BIG) != 0;
	g_bad_big |= earth_unregister_memory(g_big_src) ||
		     earth_unregister_memory(g_big_dst);
	g_fired++;
	EARTH_END_FUNCTION(f);
}

Test(ops_data, blkmov_every_length_and_a_large_one)
{
	g_big_src = malloc(BIG);
	g_big_dst = calloc(1, BIG);
	cr_assert(g_big_src && g_big_dst);
	cr_assert_eq(t_run(NULL, &lens_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, 1);
	cr_assert_eq(g_bad_lens, 0, "%d of %d copies wrong", g_bad_lens, NLEN);
	cr_assert_eq(g_bad_big, 0, "the 1 MiB copy differs");
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], NLEN + 1);
	free(g_big_src);
	free(g_big_dst);
}
