/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_slots.c - sync slot semantics in the running node: a slot with
 * count C and reset R fires once after C signals and then once per R more,
 * exactly; one-shot slots (reset 0) fire once and may be re-armed with
 * INIT_SYNC by the fiber they fire; INCR_SYNC raises the pending count
 * only, not the reset; and data written by GET/DATA/BLKMOV is visible to the
 * fiber the signalled slot makes ready (checked 10,000 times in a chain and
 * 10,000 times at once, under both queue modes and with tiny rings).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

TestSuite(runtime_slots, .timeout = 60);

static int g_fired, g_ended, g_bad;
static earth_slot g_slot, g_end;
static struct earth_stats g_st;

struct plain_frame {
	int rounds;
	earth_slot s;
};

static void count_fire(void *frame)
{
	(void)frame;
	g_fired++;
}

static void end_main(void *frame)
{
	g_ended++;
	EARTH_END_FUNCTION(frame);
}

/* ---- count C, reset R: fires exactly once per R signals after C ---- */

static int g_count, g_reset, g_signals;
static void reset_entry(void *f);
EARTH_THREADED_FUNCTION(reset_main, reset_entry, struct plain_frame, 0);

static void reset_entry(void *frame)
{
	earth_slot_init(&g_slot, g_count, g_reset, count_fire, frame);
	earth_slot_init(&g_end, 1, 0, end_main, frame);
	for (int i = 0; i < g_signals; i++)
		earth_sync(&g_slot);
	/* Handled after every signal above: the firings are all ready
	 * before end_main is. */
	earth_sync(&g_end);
}

static void check_reset(int count, int reset, int signals, int fires, int left)
{
	g_count = count;
	g_reset = reset;
	g_signals = signals;
	cr_assert_eq(t_run(NULL, &reset_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_ended, 1);
	cr_assert_eq(g_fired, fires,
		     "count %d reset %d, %d signals: fired %d "
		     "times, want %d",
		     count, reset, signals, g_fired, fires);
	cr_assert_eq(g_slot.count, left, "%d signals still expected, want %d",
		     g_slot.count, left);
	cr_assert_eq(g_st.slot_signals, (uint64_t)signals + 1);
	cr_assert_eq(g_st.fibers_ready, (uint64_t)fires + 1);
	cr_assert_eq(g_st.fibers_run, (uint64_t)fires + 2);
}

Test(runtime_slots, count3_reset3_fires_k_times_for_3k_signals)
{
	check_reset(3, 3, 3 * 1000, 1000, 3);
}

Test(runtime_slots, count3_reset3_3k_plus_2_signals)
{
	check_reset(3, 3, 3 * 1000 + 2, 1000, 1);
}

Test(runtime_slots, reset_differs_from_count)
{
	/* 5 to the first firing, then every 2. */
	check_reset(5, 2, 5 + 2 * 10 + 1, 11, 1);
}

Test(runtime_slots, count1_reset1_fires_on_every_signal)
{
	check_reset(1, 1, 5000, 5000, 1);
}

Test(runtime_slots, one_shot_fires_once)
{
	check_reset(4, 0, 4, 1, 0);
}

Test(runtime_slots, large_count_fires_once)
{
	check_reset(100000, 0, 100000, 1, 0);
}

/* ---- one-shot slots re-armed by the fiber they fire ---- */

#define REARM_ROUNDS 500
static void rearm_entry(void *f);
static void rearm_fired(void *f);
EARTH_THREADED_FUNCTION(rearm_main, rearm_entry, struct plain_frame, 0);

static int rearm_count(int round)
{
	return round % 7 + 1;
}

static void rearm_post(struct plain_frame *f)
{
	int c = rearm_count(f->rounds);
	earth_slot_init(&f->s, c, 0, rearm_fired, f);
	for (int i = 0; i < c; i++)
		earth_sync(&f->s);
}

static void rearm_entry(void *frame)
{
	struct plain_frame *f = frame;
	f->rounds = 0;
	rearm_post(f);
}

static void rearm_fired(void *frame)
{
	struct plain_frame *f = frame;
	g_fired++;
	if (++f->rounds < REARM_ROUNDS) {
		rearm_post(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

Test(runtime_slots, one_shot_rearmed_by_its_fiber)
{
	cr_assert_eq(t_run(NULL, &rearm_main), 0);
	earth_stats_get(&g_st);
	uint64_t signals = 0;
	for (int r = 0; r < REARM_ROUNDS; r++)
		signals += (uint64_t)rearm_count(r);
	cr_assert_eq(g_fired, REARM_ROUNDS);
	cr_assert_eq(g_st.slot_signals, signals);
	cr_assert_eq(g_st.fibers_ready, REARM_ROUNDS);
}

/* ---- INCR_SYNC raises the pending count, not the reset ---- */

static int g_fired_at_probe[4];
static int g_probes;
static earth_slot g_probe;

static void probe_fire(void *frame)
{
	(void)frame;
	if (g_probes < 4)
		g_fired_at_probe[g_probes] = g_fired;
	g_probes++;
}

static void incr_entry(void *f);
EARTH_THREADED_FUNCTION(incr_main, incr_entry, struct plain_frame, 0);

static void incr_entry(void *frame)
{
	earth_slot_init(&g_slot, 1, 1, count_fire, frame);
	earth_slot_init(&g_probe, 1, 1, probe_fire, frame);
	earth_slot_init(&g_end, 1, 0, end_main, frame);
	earth_incr_sync(&g_slot, 4); /* 5 */
	for (int i = 0; i < 4; i++)
		earth_sync(&g_slot);
	earth_sync(&g_probe);	     /* 0 fired: 1 signal to go */
	earth_sync(&g_slot);	     /* fires; count reloads to 1, not 5 */
	earth_sync(&g_probe);	     /* 1 fired */
	earth_sync(&g_slot);	     /* fires again */
	earth_sync(&g_probe);	     /* 2 fired */
	earth_sync(&g_slot);	     /* 1 -> 0: fires a third time */
	earth_incr_sync(&g_slot, 2); /* a partly counted slot: 1 + 2 */
	earth_sync(&g_slot);
	earth_sync(&g_slot);
	earth_sync(&g_probe); /* 3 fired: 1 to go */
	earth_sync(&g_slot);  /* fourth */
	earth_sync(&g_end);
}

Test(runtime_slots, incr_sync_raises_pending_count_only)
{
	cr_assert_eq(t_run(NULL, &incr_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_probes, 4);
	cr_assert_eq(g_fired_at_probe[0], 0);
	cr_assert_eq(g_fired_at_probe[1], 1);
	cr_assert_eq(g_fired_at_probe[2], 2);
	cr_assert_eq(g_fired_at_probe[3], 3);
	cr_assert_eq(g_fired, 4);
	cr_assert_eq(g_slot.count, 1);
	cr_assert_eq(g_slot.reset, 1);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], 2);
}

/* ---- ordering: data is visible in the fiber the slot fires ---- */

#define CHAIN 10000
#define BLK 256
struct chain_frame {
	int round;
	earth_slot s;
	long x;	  /* DATA_SYNC_l target  */
	double y; /* GET_SYNC_d target   */
	double ysrc;
	unsigned char blk[BLK], blksrc[BLK];
};
static int g_chain_rounds;
static void chain_entry(void *f);
static void chain_fired(void *f);
EARTH_THREADED_FUNCTION(chain_main, chain_entry, struct chain_frame, 0);

static long chain_x(int r)
{
	return (long)r * 2654435761l ^ 0x5a5a5a5al;
}

static void chain_post(struct chain_frame *f)
{
	int r = f->round;
	f->ysrc = r * 0.25 + 1;
	for (int i = 0; i < BLK; i++)
		f->blksrc[i] = (unsigned char)(r + i * 3);
	earth_data_sync_l(chain_x(r), earth_to_global(&f->x), &f->s);
	earth_get_sync_d(earth_to_global(&f->ysrc), &f->y, &f->s);
	earth_blkmov_rsync(earth_to_global(f->blksrc), earth_to_global(f->blk),
			   BLK, earth_slot_global(&f->s));
}

static void chain_entry(void *frame)
{
	struct chain_frame *f = frame;
	f->round = 0;
	f->x = -1;
	f->y = -1;
	earth_slot_init(&f->s, 3, 3, chain_fired, f);
	chain_post(f);
}

static void chain_fired(void *frame)
{
	struct chain_frame *f = frame;
	int r = f->round;
	int bad = f->x != chain_x(r) || f->y != r * 0.25 + 1;
	for (int i = 0; i < BLK; i++)
		bad |= f->blk[i] != (unsigned char)(r + i * 3);
	g_bad += bad;
	g_fired++;
	if (++f->round < g_chain_rounds) {
		chain_post(f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

static void check_chain(enum earth_queue_mode mode, uint32_t slots)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.queue_slots = slots;
	g_chain_rounds = CHAIN;
	cr_assert_eq(t_run(&o, &chain_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_fired, CHAIN);
	cr_assert_eq(g_bad, 0, "%d of %d fired fibers saw stale data", g_bad,
		     CHAIN);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], CHAIN);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], CHAIN);
	cr_assert_eq(g_st.ops[EARTH_OP_BLKMOV_SYNC], CHAIN);
}

Test(runtime_slots, chain_of_10000_data_get_blkmov_visible_sw)
{
	check_chain(EARTH_QUEUE_SW, 0);
}

Test(runtime_slots, chain_of_10000_data_get_blkmov_visible_hwq)
{
	check_chain(EARTH_QUEUE_HWQ, 0);
}

/* 10,000 DATA_SYNCs at once, each to its own slot; each fired fiber
 * checks its own element. */
#define FLOOD 10000
struct cell {
	long v;
	long want;
	earth_slot s;
};
static struct cell g_cells[FLOOD];
static void flood_entry(void *f);
static void flood_cell(void *f);
EARTH_THREADED_FUNCTION(flood_main, flood_entry, struct plain_frame, 0);

static void flood_entry(void *frame)
{
	earth_slot_init(&g_end, FLOOD, 0, end_main, frame);
	for (int i = 0; i < FLOOD; i++) {
		struct cell *c = &g_cells[i];
		c->v = -1;
		c->want = (long)i * 1000003 + 17;
		earth_slot_init(&c->s, 1, 0, flood_cell, c);
	}
	for (int i = 0; i < FLOOD; i++) {
		struct cell *c = &g_cells[i];
		if (i & 1)
			earth_data_sync_l(c->want, earth_to_global(&c->v),
					  &c->s);
		else
			earth_data_rsync_l(c->want, earth_to_global(&c->v),
					   earth_slot_global(&c->s));
	}
}

static void flood_cell(void *frame)
{
	struct cell *c = frame;
	g_bad += c->v != c->want;
	g_fired++;
	earth_sync(&g_end);
}

static void check_flood(enum earth_queue_mode mode, uint32_t slots)
{
	struct earth_options o;
	earth_options_default(&o);
	o.queue_mode = mode;
	o.queue_slots = slots;
	cr_assert_eq(t_run(&o, &flood_main), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_ended, 1);
	cr_assert_eq(g_fired, FLOOD);
	cr_assert_eq(g_bad, 0, "%d of %d fired fibers saw stale data", g_bad,
		     FLOOD);
	cr_assert_eq(g_st.slot_signals, 2 * FLOOD);
}

Test(runtime_slots, flood_of_10000_each_visible_sw)
{
	check_flood(EARTH_QUEUE_SW, 0);
}

Test(runtime_slots, flood_of_10000_each_visible_hwq)
{
	check_flood(EARTH_QUEUE_HWQ, 0);
}

Test(runtime_slots, flood_of_10000_each_visible_sw_tiny_rings)
{
	check_flood(EARTH_QUEUE_SW, 8);
}

Test(runtime_slots, flood_of_10000_each_visible_hwq_tiny_rings)
{
	check_flood(EARTH_QUEUE_HWQ, 8);
}
