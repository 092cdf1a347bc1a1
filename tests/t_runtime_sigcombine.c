/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_sigcombine.c - signals a fiber gives one slot in a row, which a
 * dual node's EU combines into one change of the count (eu/post.c,
 * signal_here): every count, fire and order is what single signals give.
 * Runs of signals that pass zero several times (reset, and a one-shot
 * slot's second fire refused), then INCR_SYNC, INIT_SYNC, SPAWN, INVOKE,
 * another slot's signal, a request to the SU and END_FUNCTION right after
 * them, or the fiber's end; SYNC, GET_SYNC and DATA_SYNC mixed on one slot with
 * their values in place; the statistics count every signal. Every node mode and
 * both queue modes; under TSan too (t_runtime_*).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

TestSuite(runtime_sigcombine, .timeout = 180);

#define ROUNDS 2700 /* of KINDS kinds */
#define RUN 10	    /* signals in a row */

/* Fibers append their tag; a round checks the tags it expects. */
static int g_seq[64], g_nseq, g_bad_round, g_bad_value, g_rounds;
static bool g_dual;
static long g_src[RUN], g_dst[RUN], g_data[RUN];

struct cmb_frame {
	struct earth_main_args a;
	int round;
	earth_slot s, t, blk;
};
/* Kind 5's block move: one the SU performs. */
static char g_blk_src[T_SU_BLOCK], g_blk_dst[T_SU_BLOCK];

static void note(int tag)
{
	if (g_nseq < (int)(sizeof(g_seq) / sizeof(g_seq[0])))
		g_seq[g_nseq] = tag;
	g_nseq++;
}

static void fire_a(void *f)
{
	(void)f;
	note(1);
}
static void fire_b(void *f)
{
	(void)f;
	note(2);
}
static void fire_c(void *f)
{
	(void)f;
	note(3);
}
static void check_fiber(void *f);
/* Fired by the last of a run that ends its fiber: checks the round. */
static void fire_check(void *f)
{
	note(1);
	earth_spawn(check_fiber, f);
}
static void spawned(void *f)
{
	(void)f;
	note(4);
}
static void blk_done(void *f)
{
	(void)f;
	note(5);
}

/* The values the mixed round's GETs and DATAs stored are in place. */
static void values_seen(void *f)
{
	struct cmb_frame *m = f;
	note(6);
	for (int i = 0; i < RUN; i++)
		if (g_dst[i] != g_src[i] || g_data[i] != m->round * 100 + i)
			g_bad_value++;
}

struct tag_frame {
	int tag;
};
static void tagged(void *f)
{
	struct tag_frame *t = f;
	note(t->tag);
	EARTH_END_FUNCTION(t);
}
EARTH_THREADED_FUNCTION(tag_tf, tagged, struct tag_frame, sizeof(int));

/* A function whose frame holds the slot its fiber signals, then ends:
 * the signals are performed before the frame is freed (ASan would see a
 * signal into the freed frame); the fiber they fire checks the round. */
struct own_frame {
	struct cmb_frame *m;
	earth_slot s;
};
static void own_fired(void *f)
{
	note(7);
	earth_spawn(check_fiber, f);
}
static void own_entry(void *f)
{
	struct own_frame *o = f;
	/* An SU may perform a signal after the frame is gone: the other
	 * modes signal a slot that lives on. */
	earth_slot *s = g_dual ? &o->s : &o->m->t;
	earth_slot_init(s, 2, 0, own_fired, o->m);
	earth_sync(s);
	earth_sync(s);
	EARTH_END_FUNCTION(o);
}
EARTH_THREADED_FUNCTION(own_tf, own_entry, struct own_frame, sizeof(void *));

#define KINDS 9
static void round_fiber(void *f);

/* What each kind of round makes ready, in order (round_fiber). */
static int want_of(int kind, int *want)
{
	int n = 0;
	switch (kind) {
	case 0: /* 10 signals, count 3 reset 3: fires 3 times, 1 left */
		for (int i = 0; i < 3; i++)
			want[n++] = 1;
		break;
	case 1: /* A, A, B, A: A at its second, B, A at its third */
		want[n++] = 1;
		want[n++] = 2;
		want[n++] = 1;
		break;
	case 2: /* count 1, one-shot: SYNC fires; INCR 2; 2 fire it again */
		want[n++] = 1;
		want[n++] = 1;
		break;
	case 3: /* SYNC fires, then INIT_SYNC re-arms: 1 more waits */
		want[n++] = 1;
		want[n++] = 3;
		break;
	case 4: /* SYNC, SPAWN, INVOKE, SYNC */
		want[n++] = 1;
		want[n++] = 4;
		want[n++] = 8;
		want[n++] = 2;
		break;
	case 5: /* SYNCs, a block move through the SU, SYNC */
		want[n++] = 1;
		want[n++] = 5;
		want[n++] = 2;
		break;
	case 6: /* GET, DATA and SYNC mixed on one slot */
		want[n++] = 6;
		break;
	case 7: /* a slot in a frame that ends right after */
		want[n++] = 7;
		break;
	default: /* 10 signals end the fiber, the last fires */
		want[n++] = 1;
		break;
	}
	return n;
}

/* SPAWNed last in its round: every fiber the round made ready has run. */
static void check_fiber(void *f)
{
	struct cmb_frame *m = f;
	int want[16];
	int n = want_of(m->round % KINDS, want);
	if (g_nseq != n || memcmp(g_seq, want, (size_t)n * sizeof(int)) != 0)
		g_bad_round++;
	g_nseq = 0;
	g_rounds++;
	if (++m->round == ROUNDS) {
		EARTH_END_FUNCTION(m);
	}
	round_fiber(m);
}

static void round_fiber(void *f)
{
	struct cmb_frame *m = f;
	earth_gptr gdata = earth_to_global(g_data);
	switch (m->round % KINDS) {
	case 0:
		earth_slot_init(&m->s, 3, 3, fire_a, m);
		for (int i = 0; i < RUN; i++)
			earth_sync(&m->s);
		break;
	case 1:
		earth_slot_init(&m->s, 2, 3, fire_a, m);
		earth_slot_init(&m->t, 1, 0, fire_b, m);
		earth_sync(&m->s);
		earth_sync(&m->s);
		earth_sync(&m->t);
		for (int i = 0; i < 3; i++)
			earth_sync(&m->s);
		break;
	case 2:
		/* A one-shot slot fires, INCR_SYNC re-arms it with 2. */
		earth_slot_init(&m->s, 1, 0, fire_a, m);
		earth_sync(&m->s);
		earth_incr_sync(&m->s, 2);
		earth_sync(&m->s);
		earth_sync(&m->s);
		break;
	case 3: {
		/* Re-armed right after its signal: a dual node's EU signals
		 * before INIT_SYNC, as it always did; an SU might signal
		 * after it, so the other modes re-arm another slot. */
		earth_slot *r = g_dual ? &m->s : &m->t;
		earth_slot_init(&m->s, 1, 0, fire_a, m);
		earth_sync(&m->s);
		earth_slot_init(r, 2, 0, fire_c, m);
		earth_sync(r);
		earth_sync(r);
		break;
	}
	case 4: {
		struct tag_frame a = {8};
		earth_slot_init(&m->s, 2, 0, fire_a, m);
		earth_slot_init(&m->t, 1, 0, fire_b, m);
		earth_sync(&m->s);
		earth_sync(&m->s);
		earth_spawn(spawned, m);
		earth_invoke(earth_node_id(), &tag_tf, &a, sizeof(int));
		earth_sync(&m->t);
		break;
	}
	case 5:
		earth_slot_init(&m->s, 3, 0, fire_a, m);
		earth_slot_init(&m->t, 1, 0, fire_b, m);
		earth_slot_init(&m->blk, 1, 0, blk_done, m);
		for (int i = 0; i < 3; i++)
			earth_sync(&m->s);
		earth_blkmov_sync(earth_to_global(g_blk_src),
				  earth_to_global(g_blk_dst), T_SU_BLOCK,
				  &m->blk);
		earth_sync(&m->t);
		break;
	case 6:
		earth_slot_init(&m->s, 3 * RUN, 0, values_seen, m);
		for (int i = 0; i < RUN; i++) {
			g_src[i] = m->round * 7 + i;
			earth_get_sync_l(earth_to_global(&g_src[i]), &g_dst[i],
					 &m->s);
			earth_data_sync_l(m->round * 100 + i,
					  earth_gptr_add(gdata, i * 8), &m->s);
			earth_sync(&m->s);
		}
		break;
	case 7: {
		struct own_frame o = {m, {0}};
		earth_invoke(earth_node_id(), &own_tf, &o, sizeof(void *));
		return; /* own_fired checks the round */
	}
	default:
		/* Nothing after them: the fiber's end performs them. */
		earth_slot_init(&m->s, RUN, 0, fire_check, m);
		for (int i = 0; i < RUN; i++)
			earth_sync(&m->s);
		return; /* fire_check checks the round */
	}
	/* Posted last: runs after every fiber above. */
	earth_spawn(check_fiber, m);
}

static void cmb_entry(void *f)
{
	struct cmb_frame *m = f;
	m->round = 0;
	round_fiber(m);
}
EARTH_THREADED_FUNCTION(cmb_main, cmb_entry, struct cmb_frame,
			sizeof(struct earth_main_args));

static void check_mode(enum earth_node_mode node, enum earth_queue_mode queue)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = node;
	o.queue_mode = queue;
	g_nseq = g_bad_round = g_bad_value = g_rounds = 0;
	g_dual = node == EARTH_MODE_DUAL;
	struct earth_main_args a = {0, NULL};
	cr_assert_eq(earth_run(&o, &cmb_main, &a, sizeof(a)), 0);
	cr_assert_eq(g_rounds, ROUNDS);
	cr_assert_eq(g_bad_round, 0,
		     "%d of %d rounds made fibers ready in another order or "
		     "number than single signals do (node mode %d, queue "
		     "mode %d)",
		     g_bad_round, ROUNDS, (int)node, (int)queue);
	cr_assert_eq(g_bad_value, 0, "%d values not in place", g_bad_value);
	/* Every signal counted once: per KINDS rounds, those of each kind
	 * (kind 5's block move signals once); INCR_SYNC is not a signal. */
	struct earth_stats st;
	earth_stats_get(&st);
	uint64_t per = 10 + 6 + 3 + 3 + 3 + 5 + 3 * RUN + 2 + RUN;
	cr_assert_eq(st.slot_signals, ROUNDS / KINDS * per,
		     "slot_signals %llu, want %llu",
		     (unsigned long long)st.slot_signals,
		     (unsigned long long)(ROUNDS / KINDS * per));
	if (node != EARTH_MODE_DUAL)
		return;
	/* A dual node performs most signals on the EU: the SU handles the
	 * block moves, what follows them until it has caught up, and the
	 * fibers the EU made ready before them (about a sixth of the
	 * signals in all here; every signal would be through the SU). */
	cr_assert_lt(st.su_handled, ROUNDS / KINDS * per / 3,
		     "the SU performed %llu requests: the EU did not signal "
		     "its own slots",
		     (unsigned long long)st.su_handled);
	cr_assert_geq(st.su_handled, ROUNDS / KINDS,
		      "the SU performed %llu requests: not every block move",
		      (unsigned long long)st.su_handled);
}

Test(runtime_sigcombine, dual_hwq)
{
	check_mode(EARTH_MODE_DUAL, EARTH_QUEUE_HWQ);
}

Test(runtime_sigcombine, dual_sw)
{
	check_mode(EARTH_MODE_DUAL, EARTH_QUEUE_SW);
}

Test(runtime_sigcombine, single_poll)
{
	check_mode(EARTH_MODE_SINGLE_POLL, EARTH_QUEUE_SW);
}

Test(runtime_sigcombine, single_interrupt)
{
	check_mode(EARTH_MODE_SINGLE_IRQ, EARTH_QUEUE_SW);
}

/* ---- a one-shot slot fired by a run of signals refuses the rest ---- */

static earth_slot g_one;
static void one_fired(void *f)
{
	(void)f;
}
static void one_entry(void *f)
{
	earth_slot_init(&g_one, 2, 0, one_fired, f);
	for (int i = 0; i < 3; i++)
		earth_sync(&g_one);
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(one_main, one_entry, struct cmb_frame, 0);

static int run_one(void *arg)
{
	(void)arg;
	return t_run(NULL, &one_main);
}

Test(runtime_sigcombine, one_shot_third_signal_refused)
{
	struct t_child c;
	cr_assert_eq(t_run_child(run_one, NULL, &c), 0);
	cr_assert(c.exited && c.status != 0, "exit %d signal %d", c.status,
		  c.signal);
	cr_assert(t_err_has(&c, "SYNC: slot"), "stderr: %s", c.err);
	cr_assert(t_err_has(&c, "signalled after it fired as a one-shot slot"),
		  "stderr: %s", c.err);
}
