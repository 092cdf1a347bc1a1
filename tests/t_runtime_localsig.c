/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_localsig.c - signals the EU performs itself (SYNC, RSYNC,
 * INCR_SYNC, DATA_SYNC to slots of its own node) while the SU signals the
 * same slot for another thread (earth_sync_from_thread, through the inbox):
 * the count stays exact (10^6 signals, one slot, fired exactly the number
 * of times its count and reset say), the data a local DATA_SYNC stores is
 * seen by the fiber it enables, and a bad slot is refused on the EU path
 * with the SU's message. Under TSan too (t_runtime_*).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "helpers.h"

TestSuite(runtime_localsig, .timeout = 180);

/* Signals from each side; RESET divides their sum. */
#define SIDE 500000
#define RESET 4

static earth_slot g_slot, g_end;
static earth_gslot g_gslot;
static int g_fires, g_local_done, g_want_fires;
static atomic_int g_thread_started;
static pthread_t g_thread;
static struct earth_stats g_st;

static void end_main(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

/* Fires once per RESET signals, whoever sent the last of them. */
static void fire(void *frame)
{
	(void)frame;
	if (++g_fires == g_want_fires)
		earth_sync(&g_end);
}

static void *signaller(void *arg)
{
	(void)arg;
	for (int i = 0; i < SIDE;) {
		int rc = earth_sync_from_thread(g_gslot);
		if (rc == 0)
			i++;
		else
			cr_assert_eq(rc, -EAGAIN);
	}
	return NULL;
}

/* The EU's half, 1000 signals per fiber, a mix of the local ops. */
struct chunk_frame {
	int left;
	long value;
	earth_slot data_slot;
};
static long g_value_seen, g_value_bad;
static void chunk_entry(void *f);
EARTH_THREADED_FUNCTION(chunk_tf, chunk_entry, struct chunk_frame, sizeof(int));

static void data_seen(void *f)
{
	struct chunk_frame *c = f;
	g_value_seen++;
	if (c->value != (long)c->left * 7 + 1)
		g_value_bad++;
	if (c->left > 0) {
		struct chunk_frame a = {.left = c->left};
		earth_token(&chunk_tf, &a, sizeof(int));
	}
	EARTH_END_FUNCTION(c);
}

static void chunk_entry(void *f)
{
	struct chunk_frame *c = f;
	int n = c->left < 1000 ? c->left : 1000;
	for (int i = 0; i < n; i++) {
		switch (i & 3) {
		case 0:
			earth_sync(&g_slot);
			break;
		case 1:
			earth_rsync(g_gslot);
			break;
		case 2:
			/* One more expected, then two signals. */
			earth_incr_sync(&g_slot, 1);
			earth_sync(&g_slot);
			earth_sync(&g_slot);
			break;
		default:
			earth_incr_rsync(g_gslot, 2);
			earth_sync(&g_slot);
			earth_sync(&g_slot);
			earth_sync(&g_slot);
			break;
		}
	}
	c->left -= n;
	if (c->left == 0)
		g_local_done = 1;
	/* The value must be in place when data_seen runs. */
	earth_slot_init(&c->data_slot, 1, 0, data_seen, c);
	earth_data_sync_l((long)c->left * 7 + 1, earth_to_global(&c->value),
			  &c->data_slot);
}

static void race_entry(void *f);
EARTH_THREADED_FUNCTION(race_main, race_entry, struct chunk_frame, 0);

static void race_entry(void *f)
{
	g_want_fires = 2 * SIDE / RESET;
	earth_slot_init(&g_slot, RESET, RESET, fire, f);
	earth_slot_init(&g_end, 1, 0, end_main, f);
	g_gslot = earth_slot_global(&g_slot);
	cr_assert_eq(pthread_create(&g_thread, NULL, signaller, NULL), 0);
	atomic_store(&g_thread_started, 1);
	struct chunk_frame a = {.left = SIDE};
	earth_token(&chunk_tf, &a, sizeof(int));
}

static void check_race(const struct earth_options *opts)
{
	g_fires = 0;
	g_local_done = 0;
	g_value_seen = g_value_bad = 0;
	atomic_store(&g_thread_started, 0);
	cr_assert_eq(t_run(opts, &race_main), 0);
	cr_assert(atomic_load(&g_thread_started));
	cr_assert_eq(pthread_join(g_thread, NULL), 0);
	earth_stats_get(&g_st);
	cr_assert_eq(g_local_done, 1);
	cr_assert_eq(g_fires, 2 * SIDE / RESET, "fired %d times, want %d",
		     g_fires, 2 * SIDE / RESET);
	cr_assert_eq(g_slot.count, RESET, "count %d after the last fire",
		     g_slot.count);
	cr_assert_eq(g_value_seen, SIDE / 1000);
	cr_assert_eq(g_value_bad, 0, "%ld fibers ran before their value",
		     g_value_bad);
	/* Every signal counted once, wherever it was performed: the SIDE
	 * from the thread, 2 * SIDE - SIDE / 2 from the EU (INCR_SYNC adds
	 * signals: a quarter of the rounds send 2, a quarter 3), the data
	 * slots and g_end. */
	uint64_t eu_signals = SIDE / 4 * (1 + 1 + 2 + 3);
	cr_assert_eq(
	    g_st.slot_signals, (uint64_t)SIDE + eu_signals + SIDE / 1000 + 1,
	    "slot_signals %llu", (unsigned long long)g_st.slot_signals);
	cr_assert_eq(g_st.ops[EARTH_OP_SYNC], (uint64_t)SIDE / 4 * 6 + 1);
	cr_assert_eq(g_st.ops[EARTH_OP_RSYNC], (uint64_t)SIDE / 4);
	cr_assert_eq(g_st.ops[EARTH_OP_INCR_SYNC], (uint64_t)SIDE / 2);
	cr_assert_eq(g_st.ops[EARTH_OP_DATA_SYNC], (uint64_t)SIDE / 1000);
}

Test(runtime_localsig, eu_and_su_signal_one_slot_exactly)
{
	struct earth_options o;
	earth_options_default(&o);
	o.node_mode = EARTH_MODE_DUAL; /* whatever EARTH_MODE says */
	check_race(&o);
	/* A dual node signals on the EU: the SU performed the thread's
	 * SIDE requests and few of the EU's 1.6 * SIDE operations. */
	cr_assert_lt(g_st.su_handled, (uint64_t)SIDE + SIDE / 10,
		     "the SU handled %llu requests: the EU did not signal "
		     "its own slots",
		     (unsigned long long)g_st.su_handled);
}

Test(runtime_localsig, same_counts_in_every_mode)
{
	static const struct {
		enum earth_node_mode node;
		enum earth_queue_mode queue;
	} modes[] = {
	    {EARTH_MODE_DUAL, EARTH_QUEUE_HWQ},
	    {EARTH_MODE_SINGLE_POLL, EARTH_QUEUE_SW},
	    {EARTH_MODE_SINGLE_IRQ, EARTH_QUEUE_SW},
	};
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct earth_options o;
		earth_options_default(&o);
		o.node_mode = modes[i].node;
		o.queue_mode = modes[i].queue;
		check_race(&o);
	}
}

/* ---- a bad slot is refused on the EU path as on the SU's ---- */

enum bad {
	B_NEVER_INIT,
	B_ONE_SHOT,
	B_FORGED,
	B_DATA_NEVER_INIT,
	B_FREED_FRAME
};
static earth_slot g_bad_slot;
static long g_sink;

static void armed(void *f)
{
	(void)f;
}
static void never_armed(void *f)
{
	(void)f;
}

/* A frame whose slot is signalled after END_FUNCTION freed it. */
struct gone_frame {
	long pad[2];
	earth_slot s;
};
static earth_slot *g_gone_slot;
static void gone_entry(void *f);
EARTH_THREADED_FUNCTION(gone_tf, gone_entry, struct gone_frame, 0);
static void gone_entry(void *f)
{
	struct gone_frame *g = f;
	earth_slot_init(&g->s, 2, 0, armed, g);
	g_gone_slot = &g->s;
	EARTH_END_FUNCTION(g);
}
static void signal_gone(void *f)
{
	(void)f;
	earth_sync(g_gone_slot);
}

static enum bad g_bad;
static void bad_entry(void *f);
EARTH_THREADED_FUNCTION(bad_main, bad_entry, struct chunk_frame, 0);

static void bad_entry(void *f)
{
	(void)f;
	switch (g_bad) {
	case B_NEVER_INIT:
		earth_sync(&g_bad_slot);
		break;
	case B_ONE_SHOT:
		earth_slot_init(&g_bad_slot, 1, 0, armed, f);
		earth_sync(&g_bad_slot);
		earth_sync(&g_bad_slot);
		break;
	case B_FORGED:
		earth_slot_init(&g_bad_slot, 1, 0, armed, f);
		/* Overwritten, as a store from another node could. */
		g_bad_slot.fiber = never_armed;
		earth_sync(&g_bad_slot);
		break;
	case B_DATA_NEVER_INIT:
		earth_data_sync_l(1, earth_to_global(&g_sink), &g_bad_slot);
		break;
	case B_FREED_FRAME:
		earth_invoke(0, &gone_tf, NULL, 0);
		earth_spawn(signal_gone, NULL);
		break;
	}
}

static int run_bad(void *arg)
{
	g_bad = (enum bad)(intptr_t)arg;
	return t_run(NULL, &bad_main);
}

static void expect_bad(enum bad b, const char *phrase)
{
	struct t_child c;
	cr_assert_eq(t_run_child(run_bad, (void *)(intptr_t)b, &c), 0);
	cr_assert(c.exited && c.status != 0, "exit %d signal %d", c.status,
		  c.signal);
	cr_assert(t_err_has(&c, phrase), "stderr lacks \"%s\": %s", phrase,
		  c.err);
}

Test(runtime_localsig, never_initialised_slot_refused)
{
	expect_bad(B_NEVER_INIT, "SYNC: slot");
	expect_bad(B_NEVER_INIT, "signalled but never initialised");
}

Test(runtime_localsig, one_shot_slot_signalled_twice_refused)
{
	expect_bad(B_ONE_SHOT, "signalled after it fired as a one-shot slot");
}

Test(runtime_localsig, forged_fiber_refused)
{
	expect_bad(B_FORGED,
		   "which is not a fiber this node armed a slot with");
}

Test(runtime_localsig, data_sync_to_never_initialised_slot_refused)
{
	expect_bad(B_DATA_NEVER_INIT, "DATA_SYNC: slot");
}

#if defined(__SANITIZE_ADDRESS__)
/* A freed frame's body is poisoned: the EU's signal into it is reported,
 * as the SU's was. */
Test(runtime_localsig, signal_into_freed_frame_reported)
{
	expect_bad(B_FREED_FRAME, "use-after-poison");
}
#endif
