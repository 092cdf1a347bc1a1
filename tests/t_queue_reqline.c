/* SPDX-License-Identifier: MIT */
/*
 * t_queue_reqline.c - requests packed several per queue message
 * (runtime/unit/req_line.h): the SU's decoder on every record form and on
 * every malformed record it must refuse; then a node under stress with
 * records of every width (1 to 4 words and whole messages), whose sum per
 * round is no multiple of a message, through 8-slot rings in both queue
 * modes (the ring wraps and fills with partly filled messages at every
 * position, requests spill) and through the default rings, with exact
 * counts and every value checked (>= 10^7 operations in all; totals are
 * divided by EARTH_TEST_SCALE, which the TSan run sets); and a flood of
 * SPAWNs, three records per message, that fills both rings at once. Every
 * signal goes through the SU here (EARTH_EU_SIGNALS=0: the records are
 * what is tested).
 */
#include <criterion/criterion.h>

#define EARTH_INTERNAL 1
#include "helpers.h"
#include "unit/req_line.h"

#include <stdlib.h>
#include <string.h>

TestSuite(reqline, .timeout = 120);

/* ---- the decoder ---- */

static int dec(const uint64_t *w, unsigned i, struct su_req *r)
{
	memset(r, 0xa5, sizeof(*r));
	return req_decode(w, i, r);
}

Test(reqline, compact_records_decode)
{
	uint64_t slot = 0x7f0012345678ull, g = 0x0003000012345678ull;
	struct su_req r;
	uint64_t w[6] = {req_head(SU_OP_SYNC, 0, 0, slot),
			 req_head(SU_OP_INCR_SYNC, 0, 0, slot),
			 5,
			 req_head(SU_OP_GET_SYNC, 4, SU_REQ_GSLOT, 0),
			 g,
			 0};
	cr_assert_eq(dec(w, 0, &r), 1);
	cr_assert_eq(r.op, SU_OP_SYNC);
	cr_assert_eq(r.slot, slot);
	cr_assert_eq(r.flags, 0);
	cr_assert_eq(dec(w, 1, &r), 2);
	cr_assert_eq(r.op, SU_OP_INCR_SYNC);
	cr_assert_eq(r.n, 5);
	cr_assert_eq(r.slot, slot);
	/* GET with the global slot in its own word: 4 words, one too many
	 * from word 3. */
	cr_assert_eq(dec(w, 3, &r), -REQ_BAD_LENGTH);
	uint64_t v[6] = {
	    req_head(SU_OP_GET_SYNC, 4, SU_REQ_GSLOT, 0), g, 0x11, 0x22,
	    req_head(SU_OP_DATA_SYNC, 1, 0, slot),	  0};
	cr_assert_eq(dec(v, 0, &r), 4);
	cr_assert_eq(r.op, SU_OP_GET_SYNC);
	cr_assert_eq(r.size, 4);
	cr_assert_eq(r.flags, SU_REQ_GSLOT);
	cr_assert_eq(r.slot, g);
	cr_assert_eq(r.a, 0x11);
	cr_assert_eq(r.b, 0x22);
	cr_assert_eq(r.c, 0);
	cr_assert_eq(dec(v, 4, &r), -REQ_BAD_LENGTH);
	uint64_t p[6] = {
	    req_head(SU_OP_DATA_SYNC, 8, 0, slot),	7,    9,
	    req_head(SU_OP_SPAWN, 0, SU_REQ_NOSLOT, 0), 0x33, 0x44};
	cr_assert_eq(dec(p, 0, &r), 3);
	cr_assert_eq(r.op, SU_OP_DATA_SYNC);
	cr_assert_eq(r.size, 8);
	cr_assert_eq(r.a, 7);
	cr_assert_eq(r.b, 9);
	cr_assert_eq(dec(p, 3, &r), 3);
	cr_assert_eq(r.op, SU_OP_SPAWN);
	cr_assert_eq(r.flags, SU_REQ_NOSLOT);
	cr_assert_eq(r.slot, 0);
	cr_assert_eq(r.a, 0x33);
	cr_assert_eq(r.b, 0x44);
	/* A local slot beyond 48 bits follows the head, as a global one. */
	uint64_t hi = 0x00ff000000001000ull;
	uint64_t q[6] = {req_head(SU_OP_INCR_SYNC, 0, 0, 0), hi, 9,
			 req_head(SU_OP_SYNC, 0, 0, 0),	     hi, 0};
	cr_assert_eq(dec(q, 0, &r), 3);
	cr_assert_eq(r.op, SU_OP_INCR_SYNC);
	cr_assert_eq(r.flags, 0);
	cr_assert_eq(r.slot, hi);
	cr_assert_eq(r.n, 9);
	cr_assert_eq(dec(q, 3, &r), 2);
	cr_assert_eq(r.op, SU_OP_SYNC);
	cr_assert_eq(r.slot, hi);
	cr_assert_eq(req_slot_words(0, hi), 1);
	cr_assert_eq(req_slot_words(0, 0x7ffffffff000ull), 0);
	cr_assert_eq(req_slot_words(SU_REQ_GSLOT, 0x1000), 1);
	/* A zero head ends the message. */
	uint64_t z[6] = {req_head(SU_OP_SYNC, 0, 0, slot), 0, 0, 0, 0, 0};
	cr_assert_eq(dec(z, 1, &r), 0);
}

Test(reqline, wide_record_decodes)
{
	uint64_t w[6] = {
	    req_head(SU_OP_INVOKE_REMOTE, 0, SU_REQ_NOSLOT | SU_REQ_INLINE, 3) |
		REQ_WIDE,
	    1,
	    2,
	    3,
	    4,
	    5};
	struct su_req r;
	cr_assert_eq(dec(w, 0, &r), 6);
	cr_assert_eq(r.op, SU_OP_INVOKE_REMOTE);
	cr_assert_eq(r.flags, SU_REQ_NOSLOT | SU_REQ_INLINE);
	cr_assert_eq(r.n, 3);
	cr_assert_eq(r.slot, 1);
	cr_assert_eq(r.a, 2);
	cr_assert_eq(r.b, 3);
	cr_assert_eq(r.c, 4);
	cr_assert_eq(r.spare, 5);
}

/* A wide record bound for another node names its fiber in spare
 * (REQ_WIDE_WHERE -> SU_REQ_WHERE); other bits of 32-46 stay refused. */
Test(reqline, wide_record_with_its_fiber)
{
	uint64_t w[6] = {req_head(SU_OP_GET_SYNC, 8, SU_REQ_GSLOT, 0) |
			     REQ_WIDE | REQ_WIDE_WHERE,
			 0x11,
			 0x22,
			 0x33,
			 0,
			 0x4455};
	struct su_req r;
	cr_assert_eq(dec(w, 0, &r), 6);
	cr_assert_eq(r.op, SU_OP_GET_SYNC);
	cr_assert_eq(r.size, 8);
	cr_assert_eq(r.flags, SU_REQ_GSLOT | SU_REQ_WHERE);
	cr_assert_eq(r.n, 0);
	cr_assert_eq(r.slot, 0x11);
	cr_assert_eq(r.spare, 0x4455);
	w[0] = req_head(SU_OP_SYNC, 0, 0, 0x1000) | REQ_WIDE;
	cr_assert_eq(dec(w, 0, &r), 6);
	cr_assert_eq(r.flags & SU_REQ_WHERE, 0);
	w[0] |= REQ_WIDE_WHERE >> 1;
	cr_assert_eq(dec(w, 0, &r), -REQ_BAD_N);
}

Test(reqline, malformed_records_refused)
{
	uint64_t s = 0x1000;
	struct {
		uint64_t w[6];
		unsigned at;
		int want;
	} bad[] = {
	    {{req_head(0, 1, 0, s)}, 0, -REQ_BAD_OP},
	    {{req_head(SU_OP_COUNT_, 0, 0, s)}, 0, -REQ_BAD_OP},
	    {{(uint64_t)0xff << 48 | s}, 0, -REQ_BAD_OP},
	    {{req_head(SU_OP_BLKMOV_SYNC, 0, 0, s)}, 0, -REQ_BAD_OP},
	    {{req_head(SU_OP_COLL, 0, 0, s)}, 0, -REQ_BAD_OP},
	    {{req_head(SU_OP_SYNC, 0, 0, s),
	      req_head(SU_OP_SYNC, 0, 0, s) | REQ_WIDE},
	     1,
	     -REQ_BAD_WIDE_POS},
	    {{req_head(SU_OP_SYNC, 0, SU_REQ_NOSLOT, s)}, 0, -REQ_BAD_FLAGS},
	    {{req_head(SU_OP_GET_SYNC, 8, SU_REQ_INLINE, s)},
	     0,
	     -REQ_BAD_FLAGS},
	    {{req_head(SU_OP_SPAWN, 0, 0, 0)}, 0, -REQ_BAD_FLAGS},
	    {{req_head(SU_OP_SYNC, 1, 0, s)}, 0, -REQ_BAD_SIZE},
	    {{req_head(SU_OP_GET_SYNC, 3, 0, s)}, 0, -REQ_BAD_SIZE},
	    {{req_head(SU_OP_DATA_SYNC, 0, 0, s)}, 0, -REQ_BAD_SIZE},
	    {{req_head(SU_OP_DATA_SYNC, 16 - 1, 0, s)}, 0, -REQ_BAD_SIZE},
	    {{req_head(SU_OP_TOKEN, 0, SU_REQ_NOSLOT, 0)}, 0, -REQ_BAD_OP},
	    {{req_head(SU_OP_INVOKE, 2, SU_REQ_NOSLOT, 0)}, 0, -REQ_BAD_SIZE},
	    {{req_head(SU_OP_SYNC, 0, SU_REQ_GSLOT, s)}, 0, -REQ_BAD_SLOT},
	    {{req_head(SU_OP_INVOKE, 0, SU_REQ_NOSLOT, s)}, 0, -REQ_BAD_SLOT},
	    {{req_head(SU_OP_INCR_SYNC, 0, 0, s), (uint64_t)INT32_MAX + 1},
	     0,
	     -REQ_BAD_N},
	    {{req_head(SU_OP_INCR_SYNC, 0, 0, s), (uint64_t)-1}, 0, -REQ_BAD_N},
	    {{req_head(SU_OP_COLL, 0, 0, 1ull << 32) | REQ_WIDE},
	     0,
	     -REQ_BAD_N},
	    {{0, 0, 0, 0, 0, req_head(SU_OP_INCR_SYNC, 0, 0, s)},
	     5,
	     -REQ_BAD_LENGTH},
	    {{0, 0, 0, 0, req_head(SU_OP_SPAWN, 0, SU_REQ_NOSLOT, 0)},
	     4,
	     -REQ_BAD_LENGTH},
	    {{0, 0, 0, req_head(SU_OP_SYNC, 0, SU_REQ_GSLOT, 0), 1,
	      req_head(SU_OP_SYNC, 0, 0, 0)},
	     5,
	     -REQ_BAD_LENGTH},
	};
	for (size_t i = 0; i < T_NCASES(bad); i++) {
		struct su_req r;
		cr_assert_eq(dec(bad[i].w, bad[i].at, &r), bad[i].want,
			     "case %zu", i);
	}
}

/* ---- a node under stress with every record width ---- */

#define R 32 /* rounds of records per fiber */
/* Per round, 10 signals count `done` down and the two INCR_SYNCs add 3
 * back. */
#define SIG_PER_ROUND 7
#define OPS_PER_ROUND 12
#define BLK 24

struct mix_frame {
	earth_slot done;
	uint64_t fiber;
	char src_c;
	long src_l;
	char get_c[R];
	long get_l[R];
	short data_s[R];
	int data_i[R];
	char blk_src[BLK];
	char blk_dst[R][BLK];
};

static uint64_t g_fibers; /* fibers of R rounds to run */
static uint64_t g_bad, g_checked;
static struct earth_stats g_st;

static void mix_entry(void *f);
static void mix_fired(void *f);
EARTH_THREADED_FUNCTION(mix_main, mix_entry, struct mix_frame, 0);

/* R rounds of 12 records: 1+2+2+1+3+2+3+2+4+3+4+6 = 33 words. */
static void mix_post(struct mix_frame *f)
{
	uint64_t k = f->fiber;
	f->src_c = (char)(k * 3 + 1);
	f->src_l = (long)(k * 1000003 + 7);
	memset(f->blk_src, (int)(k & 0x7f) + 1, BLK);
	earth_gslot gd = earth_slot_global(&f->done);
	for (int j = 0; j < R; j++) {
		earth_sync(&f->done);
		earth_rsync(gd);
		earth_incr_sync(&f->done, 1);
		earth_sync(&f->done);
		earth_incr_rsync(gd, 2);
		earth_rsync(gd);
		earth_get_sync_c(earth_to_global(&f->src_c), &f->get_c[j],
				 &f->done);
		earth_rsync(gd);
		earth_get_rsync_l(earth_to_global(&f->src_l), &f->get_l[j], gd);
		earth_data_sync_s((short)(k + (uint64_t)j),
				  earth_to_global(&f->data_s[j]), &f->done);
		earth_data_rsync_i((int)(k * 7 + (uint64_t)j),
				   earth_to_global(&f->data_i[j]), gd);
		earth_blkmov_sync(earth_to_global(f->blk_src),
				  earth_to_global(f->blk_dst[j]), BLK,
				  &f->done);
	}
}

static void mix_entry(void *frame)
{
	struct mix_frame *f = frame;
	f->fiber = 0;
	earth_slot_init(&f->done, SIG_PER_ROUND * R, SIG_PER_ROUND * R,
			mix_fired, f);
	mix_post(f);
}

static void mix_fired(void *frame)
{
	struct mix_frame *f = frame;
	uint64_t k = f->fiber;
	for (int j = 0; j < R; j++) {
		char b[BLK];
		memset(b, (int)(k & 0x7f) + 1, BLK);
		g_bad += f->get_c[j] != (char)(k * 3 + 1);
		g_bad += f->get_l[j] != (long)(k * 1000003 + 7);
		g_bad += f->data_s[j] != (short)(k + (uint64_t)j);
		g_bad += f->data_i[j] != (int)(k * 7 + (uint64_t)j);
		g_bad += memcmp(f->blk_dst[j], b, BLK) != 0;
		g_checked++;
	}
	if (++f->fiber < g_fibers) {
		mix_post(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

static void check_mix(enum earth_queue_mode mode, uint32_t slots, uint64_t ops)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.queue_slots = slots;
	g_fibers = t_scaled(ops, OPS_PER_ROUND * R * 4) / (OPS_PER_ROUND * R);
	g_bad = g_checked = 0;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	cr_assert_eq(t_run(&o, &mix_main), 0);
	earth_stats_get(&g_st);
	uint64_t rounds = g_fibers * R;
	cr_assert_eq(g_bad, 0);
	cr_assert_eq(g_checked, rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], 2 * rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_RSYNC], 3 * rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], 2 * rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], 2 * rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], 2 * rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], rounds);
	cr_assert_eq(g_st.su_handled, OPS_PER_ROUND * rounds);
	cr_assert_eq(g_st.slot_signals, (SIG_PER_ROUND + 3) * rounds);
	cr_assert_eq(g_st.fibers_ready, g_fibers);
	cr_assert_eq(g_st.fibers_run, g_fibers + 1);
}

Test(reqline, every_width_hwq_8_slots)
{
	check_mix(EARTH_QUEUE_HWQ, 8, 3000000);
	cr_assert_gt(g_st.req_overflow, 0, "no request message spilled");
}

Test(reqline, every_width_sw_8_slots)
{
	check_mix(EARTH_QUEUE_SW, 8, 3000000);
	cr_assert_gt(g_st.req_overflow, 0, "no request message spilled");
}

Test(reqline, every_width_hwq_default_rings)
{
	check_mix(EARTH_QUEUE_HWQ, 0, 2000000);
}

Test(reqline, every_width_sw_default_rings)
{
	check_mix(EARTH_QUEUE_SW, 0, 2000000);
}

/* ---- both rings full: SPAWNs (three per message) of fibers that each
 * signal the join ---- */

static earth_slot g_join;
static uint64_t g_spawns, g_ran;
static void spawned(void *f)
{
	(void)f;
	g_ran++;
	earth_sync(&g_join);
}
static void joined(void *f)
{
	EARTH_END_FUNCTION(f);
}
static void flood_entry(void *f);
EARTH_THREADED_FUNCTION(flood_main, flood_entry, struct mix_frame, 0);
static void flood_entry(void *frame)
{
	earth_slot_init(&g_join, (int32_t)g_spawns, 0, joined, frame);
	for (uint64_t i = 0; i < g_spawns; i++)
		earth_spawn(spawned, frame);
}

static void check_flood(enum earth_queue_mode mode)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.queue_slots = 8;
	g_spawns = t_scaled(200000, 2000);
	g_ran = 0;
	setenv("EARTH_EU_SIGNALS", "0", 1);
	cr_assert_eq(t_run(&o, &flood_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_ran, g_spawns);
	cr_assert_eq(g_st.ops[EARTH_OP_SPAWN], g_spawns);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], g_spawns);
	cr_assert_eq(g_st.su_handled, 2 * g_spawns);
	cr_assert_eq(g_st.fibers_run, g_spawns + 2);
	cr_assert_gt(g_st.req_overflow, 0, "no request message spilled");
	cr_assert_gt(g_st.ready_overflow, 0, "no ready fiber spilled");
}

Test(reqline, spawn_flood_fills_both_rings_hwq)
{
	check_flood(EARTH_QUEUE_HWQ);
}

Test(reqline, spawn_flood_fills_both_rings_sw)
{
	check_flood(EARTH_QUEUE_SW);
}
