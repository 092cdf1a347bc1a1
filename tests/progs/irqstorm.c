/* SPDX-License-Identifier: MIT */
/*
 * irqstorm.c - many arrivals at node 0 while it runs fibers and its
 * runtime, for the node-mode tests (tests/t_modes.c). Node 0 keeps a chain
 * of busy fibers going (long ones, in which interrupts land, and empty
 * ones, so that arrivals also land between fibers, inside the runtime);
 * every other node runs `per` rounds of: GET a word from node 0 and check
 * it, INCR_SYNC and SYNC a slot on node 0, DATA_RSYNC a value into node
 * 0's table, and every 16th round INVOKE `tick` on node 0. Node 0 checks
 * that no operation was lost or duplicated: the table slot fires once, the
 * INCR/SYNC slot reaches zero only after it (a lost INCR fires it early, a
 * lost or doubled SYNC or a doubled INCR never), a second signal of the
 * one-shot slots is a runtime error, every value and every tick count is
 * exact.
 *
 *   irqstorm [rounds-per-node]
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXN 16
#define MAXR 20000
#define WORDS 64

/* Node 0's state, in static memory (registered on every node). */
static long g_words[WORDS];
static long g_vals[MAXN][MAXR];
static long g_ticks[MAXN];
static earth_slot g_table, g_incr;
static int g_per, g_table_done, g_bad;
static volatile int g_stop;
static unsigned long g_busy_runs;

/* ---- node 0's busy chain ---- */

static earth_slot g_busy_slot;
static void busy_fiber(void *frame);
static void busy_noop(void *frame)
{
	(void)frame;
}

static void busy_fiber(void *frame)
{
	(void)frame;
	if (g_stop)
		return;
	g_busy_runs++;
	if (g_busy_runs & 1) {
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L +
			   (t.tv_nsec - t0.tv_nsec) <
		       20000);
	}
	/* Posts while interrupts may land: a local INCR then SYNC (the
	 * count never reaches zero). */
	earth_incr_sync(&g_busy_slot, 1);
	earth_sync(&g_busy_slot);
	earth_spawn(busy_fiber, NULL);
}

/* ---- INVOKE target on node 0 ---- */

struct tick_args {
	long from, round;
};
struct tick_frame {
	struct tick_args a;
};
static void tick_entry(void *frame)
{
	struct tick_frame *f = frame;
	if (f->a.from < 1 || f->a.from >= MAXN)
		g_bad = 1;
	else
		g_ticks[f->a.from]++;
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(tick, tick_entry, struct tick_frame,
			sizeof(struct tick_args));

/* ---- the senders (nodes 1..N-1) ---- */

struct send_args {
	long per;
};
struct send_frame {
	struct send_args a;
	long round, got;
	earth_slot s_got;
};
static void send_start(void *frame);
static void send_round(void *frame);
static void send_got(void *frame);
EARTH_THREADED_FUNCTION(sender, send_start, struct send_frame,
			sizeof(struct send_args));

static void send_start(void *frame)
{
	struct send_frame *f = frame;
	f->round = 0;
	send_round(f);
}

static void send_round(void *frame)
{
	struct send_frame *f = frame;
	earth_slot_init(&f->s_got, 1, 0, send_got, f);
	earth_get_sync_l(earth_gptr_make(0, &g_words[f->round % WORDS]),
			 &f->got, &f->s_got);
}

static void send_got(void *frame)
{
	struct send_frame *f = frame;
	long me = earth_node_id(), r = f->round;
	long want = 1000 + r % WORDS;
	earth_gslot incr = {earth_gptr_make(0, &g_incr).bits};
	earth_gslot table = {earth_gptr_make(0, &g_table).bits};
	/* A wrong word goes back as a wrong value: node 0 reports it. */
	long v = f->got == want ? me * 1000000 + r : -1;
	earth_incr_rsync(incr, 1);
	earth_rsync(incr);
	if (r % 16 == 0) {
		struct tick_args ta = {me, r};
		earth_invoke(0, &tick, &ta, sizeof(ta));
	}
	earth_data_rsync_l(v, earth_gptr_make(0, &g_vals[me][r]), table);
	if (++f->round < f->a.per) {
		earth_spawn(send_round, f);
		return;
	}
	EARTH_END_FUNCTION(f);
}

/* ---- node 0's main ---- */

struct main_frame {
	struct earth_main_args a;
};
static void main_entry(void *frame);
static void table_done(void *frame);
static void incr_done(void *frame);
EARTH_THREADED_FUNCTION(storm_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	long n = earth_num_nodes();
	g_per = m->a.argc > 1 ? atoi(m->a.argv[1]) : 2000;
	if (n < 2 || n > MAXN || g_per < 1 || g_per > MAXR) {
		fprintf(stderr, "irqstorm: 2..%d nodes, 1..%d rounds\n", MAXN,
			MAXR);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	for (int i = 0; i < WORDS; i++)
		g_words[i] = 1000 + i;
	earth_slot_init(&g_table, (int32_t)((n - 1) * g_per), 0, table_done, m);
	earth_slot_init(&g_incr, 1, 0, incr_done, m);
	earth_slot_init(&g_busy_slot, 1, 0, busy_noop, NULL);
	for (long k = 1; k < n; k++) {
		struct send_args sa = {g_per};
		earth_invoke((uint32_t)k, &sender, &sa, sizeof(sa));
	}
	earth_spawn(busy_fiber, NULL);
}

static void table_done(void *frame)
{
	(void)frame;
	g_table_done = 1;
	earth_sync(&g_incr);
}

static void incr_done(void *frame)
{
	struct main_frame *m = frame;
	long n = earth_num_nodes();
	int bad = g_bad;
	if (!g_table_done) {
		fprintf(stderr,
			"irqstorm: the INCR/SYNC slot fired before "
			"every value arrived (an INCR_SYNC was lost)\n");
		bad = 1;
	}
	for (long k = 1; k < n; k++) {
		for (long r = 0; r < g_per; r++)
			if (g_vals[k][r] != k * 1000000 + r) {
				fprintf(stderr,
					"irqstorm: node %ld round %ld: "
					"%ld\n",
					k, r, g_vals[k][r]);
				bad = 1;
				break;
			}
		long want = (g_per + 15) / 16;
		if (g_ticks[k] != want) {
			fprintf(stderr,
				"irqstorm: node %ld: %ld ticks, want "
				"%ld\n",
				k, g_ticks[k], want);
			bad = 1;
		}
	}
	g_stop = 1;
	printf("irqstorm: %ld nodes, %d rounds each, %lu busy fibers: %s\n", n,
	       g_per, g_busy_runs, bad ? "WRONG" : "all correct");
	earth_set_exit_status(bad);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &storm_main);
}
