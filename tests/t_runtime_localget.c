/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_localget.c - GET_SYNC and GET_RSYNC of this node's memory
 * performed by the EU itself (eu/post.c, when every request posted before
 * has been performed): every typed width reads the right
 * value and fires its slot, without a request to the SU in a dual node;
 * and under stress, GETs mixed with DATA_SYNCs and block moves that the SU
 * performs read what the last write stored, whichever unit performed
 * each (posting order: a DATA_SYNC through the SU, then a GET of the same
 * word on the EU, reads the new value), in every node mode. Under TSan too
 * (t_runtime_*).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

TestSuite(runtime_localget, .timeout = 240);

static struct earth_stats g_st;

static void end_main(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

/* ---- every width ---- */

struct width_frame {
	char c, c2;
	short s, s2;
	int i, i2;
	long l, l2;
	float f, f2;
	double d, d2;
	earth_gptr g, g2;
	earth_slot done;
};
/* The sources (static data: this node's memory). */
static char src_c = -7;
static short src_s = -30000;
static int src_i = 0x7abcdef1;
static long src_l = -0x123456789abcdefL;
static float src_f = 3.25f;
static double src_d = -1.0e300;
static earth_gptr src_g;
static int g_width_bad;

static void widths_done(void *frame)
{
	struct width_frame *w = frame;
	g_width_bad = (w->c != src_c) + (w->c2 != src_c) + (w->s != src_s) +
		      (w->s2 != src_s) + (w->i != src_i) + (w->i2 != src_i) +
		      (w->l != src_l) + (w->l2 != src_l) + (w->f != src_f) +
		      (w->f2 != src_f) + (w->d != src_d) + (w->d2 != src_d) +
		      (w->g.bits != src_g.bits) + (w->g2.bits != src_g.bits);
	EARTH_END_FUNCTION(w);
}

static void widths_entry(void *frame)
{
	struct width_frame *w = frame;
	memset(w, 0x5a, sizeof(*w));
	src_g = earth_gptr_make(earth_node_id(), &src_d);
	earth_slot_init(&w->done, 14, 0, widths_done, w);
	earth_gslot gs = earth_slot_global(&w->done);
	/* Each width with a local slot, then a global slot naming it. */
#define GET_BOTH(sfx, src, a, b)                                               \
	do {                                                                   \
		earth_get_sync_##sfx(earth_to_global(&src), &w->a, &w->done);  \
		earth_get_rsync_##sfx(earth_to_global(&src), &w->b, gs);       \
	} while (0)
	GET_BOTH(c, src_c, c, c2);
	GET_BOTH(s, src_s, s, s2);
	GET_BOTH(i, src_i, i, i2);
	GET_BOTH(l, src_l, l, l2);
	GET_BOTH(f, src_f, f, f2);
	GET_BOTH(d, src_d, d, d2);
	GET_BOTH(g, src_g, g, g2);
#undef GET_BOTH
}
EARTH_THREADED_FUNCTION(widths_main, widths_entry, struct width_frame, 0);

Test(runtime_localget, every_width_read_on_the_eu)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL; /* whatever EARTH_MODE says */
	g_width_bad = -1;
	cr_assert_eq(t_run(&o, &widths_main), 0);
	cr_assert_eq(g_width_bad, 0, "%d values wrong", g_width_bad);
	earth_stats_get(&g_st);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], 14);
	/* Nothing was posted before them: the EU read all 14 itself. */
	cr_assert_eq(g_st.su_handled, 0, "the SU handled %llu requests",
		     (unsigned long long)g_st.su_handled);
	cr_assert_eq(g_st.slot_signals, 14);
}

Test(runtime_localget, every_width_in_every_mode)
{
	static const struct {
		enum earth_node_mode node;
		enum earth_queue_mode queue;
	} modes[] = {
	    {EARTH_MODE_DUAL, EARTH_QUEUE_HWQ},
	    {EARTH_MODE_DUAL, EARTH_QUEUE_SW},
	    {EARTH_MODE_SINGLE_POLL, EARTH_QUEUE_SW},
	    {EARTH_MODE_SINGLE_IRQ, EARTH_QUEUE_SW},
	};
	for (unsigned m = 0; m < T_NCASES(modes); m++) {
		struct earth_options o;
		earth_options_default(&o);
		o.node_mode = modes[m].node;
		o.queue_mode = modes[m].queue;
		g_width_bad = -1;
		cr_assert_eq(t_run(&o, &widths_main), 0);
		cr_assert_eq(g_width_bad, 0, "mode %u: %d values wrong", m,
			     g_width_bad);
	}
}

/* ---- GETs after writes the SU performed ---- */

/*
 * Round i: fiber write_step stores value i into the word (a rotating
 * width) with DATA_SYNC, after a block move on odd rounds (then the SU
 * performs the DATA_SYNC: a request with a slot waits), and SPAWNs
 * read_step, which hops twice through the SU (SPAWN) and then GETs the
 * word; the GET's slot fires check_step, which compares and starts round
 * i + 1.
 */
static union word {
	char c;
	short s;
	int i;
	long l;
} g_word;
static char g_blk_src[T_SU_BLOCK], g_blk_dst[T_SU_BLOCK];
static long g_rounds, g_bad_reads;

struct mix_frame {
	long i;
	int hops;
	union word got;
	earth_slot wrote, read;
};

static long want_of(long i)
{
	switch (i & 3) {
	case 0:
		return (char)(i * 13 + 1);
	case 1:
		return (short)(i * 7 + 3);
	case 2:
		return (int)(i * 5 + 11);
	default:
		return i * 0x10001L + 5;
	}
}

static void read_step(void *frame);
static void write_step(void *frame)
{
	struct mix_frame *m = frame;
	if (m->i == g_rounds) {
		EARTH_END_FUNCTION(m);
	}
	earth_gptr w = earth_to_global(&g_word);
	if (m->i & 1)
		earth_blkmov_sync(earth_to_global(g_blk_src),
				  earth_to_global(g_blk_dst), sizeof(g_blk_src),
				  &m->wrote);
	long v = want_of(m->i);
	switch (m->i & 3) {
	case 0:
		earth_data_sync_c((char)v, w, &m->wrote);
		break;
	case 1:
		earth_data_sync_s((short)v, w, &m->wrote);
		break;
	case 2:
		earth_data_sync_i((int)v, w, &m->wrote);
		break;
	default:
		earth_data_sync_l(v, w, &m->wrote);
		break;
	}
	earth_spawn(read_step, m); /* after the writes, by either unit */
}

static void check_step(void *frame)
{
	struct mix_frame *m = frame;
	long want = want_of(m->i), got;
	switch (m->i & 3) {
	case 0:
		got = m->got.c;
		break;
	case 1:
		got = m->got.s;
		break;
	case 2:
		got = m->got.i;
		break;
	default:
		got = m->got.l;
		break;
	}
	if (got != want && g_bad_reads++ < 5)
		fprintf(stderr, "round %ld: read %ld, want %ld\n", m->i, got,
			want);
	m->i++;
	write_step(m);
}

static void hop_step(void *frame)
{
	earth_spawn(read_step, frame);
}

static void read_step(void *frame)
{
	struct mix_frame *m = frame;
	/* Two hops first: a SPAWN posted after writes the SU performs goes
	 * through the SU too, and the fiber it makes ready finds every
	 * earlier request performed (the EU reloads the SU's count when it
	 * takes a ready message), so the read and the hops after it are the
	 * EU's in a dual node. */
	if (m->hops++ < 2) {
		hop_step(m);
		return;
	}
	m->hops = 0;
	earth_gptr w = earth_to_global(&g_word);
	memset(&m->got, 0x77, sizeof(m->got));
	switch (m->i & 3) {
	case 0:
		earth_get_sync_c(w, &m->got.c, &m->read);
		break;
	case 1:
		earth_get_sync_s(w, &m->got.s, &m->read);
		break;
	case 2:
		earth_get_sync_i(w, &m->got.i, &m->read);
		break;
	default:
		earth_get_sync_l(w, &m->got.l, &m->read);
		break;
	}
}

static void mix_entry(void *frame)
{
	struct mix_frame *m = frame;
	m->i = 0;
	m->hops = 0;
	/* Never fires: the writes' slot only counts them. */
	earth_slot_init(&m->wrote, 1 << 29, 1 << 29, end_main, m);
	earth_slot_init(&m->read, 1, 1, check_step, m);
	write_step(m);
}
EARTH_THREADED_FUNCTION(mix_main, mix_entry, struct mix_frame, 0);

static void run_mix(const struct earth_options *o)
{
	g_bad_reads = 0;
	memset(&g_word, 0, sizeof(g_word));
	cr_assert_eq(t_run(o, &mix_main), 0);
	cr_assert_eq(g_bad_reads, 0, "%ld GETs read a stale value",
		     g_bad_reads);
	earth_stats_get(&g_st);
	cr_assert_eq(g_st.ops[EARTH_OP_GET_SYNC], (uint64_t)g_rounds);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], (uint64_t)g_rounds);
}

Test(runtime_localget, reads_after_su_writes_see_them)
{
	g_rounds = (long)t_scaled(1000000, 20000);
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL;
	for (int q = 0; q < 2; q++) {
		o.queue_mode = q ? EARTH_QUEUE_HWQ : EARTH_QUEUE_SW;
		run_mix(&o);
		/* The SU performs the block moves (odd rounds) and what
		 * their fiber posts after them, the DATA_SYNC and the SPAWN:
		 * 1.5 a round; the rest is the EU's (with the GETs through
		 * the SU: 2.5 a round). */
		uint64_t su_max = 2 * (uint64_t)g_rounds;
		cr_assert_lt(g_st.su_handled, su_max,
			     "the SU handled %llu requests in %ld rounds: the "
			     "EU did not read itself",
			     (unsigned long long)g_st.su_handled, g_rounds);
		cr_assert_geq(g_st.su_handled, (uint64_t)g_rounds / 2,
			      "the SU handled %llu requests in %ld rounds: "
			      "not the block moves",
			      (unsigned long long)g_st.su_handled, g_rounds);
	}
}

Test(runtime_localget, same_reads_in_every_mode)
{
	g_rounds = (long)t_scaled(200000, 5000);
	static const enum earth_node_mode modes[] = {EARTH_MODE_SINGLE_POLL,
						     EARTH_MODE_SINGLE_IRQ};
	for (unsigned m = 0; m < T_NCASES(modes); m++) {
		struct earth_options o;
		earth_options_default(&o);
		o.node_mode = modes[m];
		run_mix(&o);
	}
}
