/* SPDX-License-Identifier: MIT */
/*
 * dsm_litmus.c - litmus programs of release consistency on shared memory
 * (earth_dsm.h), one thread per node (thread t on node t mod N), each
 * repeated -r times with new values:
 *   lock     message passing through a lock: the writer sets data, then
 *            ready under the lock; the reader takes the lock until it
 *            sees ready, then must see the data
 *   barrier  data written before a barrier, read after it by every node
 *   flag     data written before a flag is set, read after waiting on it
 *   chain    transitivity over three threads: 0 writes x and releases L1,
 *            1 acquires L1, sees x, writes y and releases L2, 2 acquires
 *            L2, sees y, and must see x (it never synchronised with 0)
 *   merge    every thread writes its own bytes of the same pages (false
 *            sharing), then a barrier: every byte is its writer's
 * Prints "dsm_litmus <test> ok" or what was stale, exit 1.
 */
#include <earth_dsm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MERGE_BYTES = 3 * 4096 };

struct shared {
	earth_dsm_lock_t l1, l2;
	earth_dsm_barrier_t bar;
	earth_dsm_flag_t flag;
	long pad0[512];
	long data; /* its own page from the rest */
	long pad1[512];
	long ready, x, y;
	long pad2[512];
	unsigned char bytes[MERGE_BYTES];
	long bad;
};

static struct shared *g;
static const char *test = "lock";
static int P, rounds = 20;

static void stale(int round, const char *what, long got, long want)
{
	fprintf(stderr,
		"dsm_litmus %s: thread %u round %d: %s = %ld, want %ld\n", test,
		earth_dsm_thread_id(), round, what, got, want);
	g->bad = 1; /* a race on purpose: the job fails anyway */
	exit(1);
}

static void t_lock(unsigned me, int r)
{
	long v = 1000 + r;
	if (me == 0) {
		g->data = v;
		earth_dsm_lock(g->l1);
		g->ready = v;
		earth_dsm_unlock(g->l1);
	} else if (me == 1) {
		for (;;) {
			earth_dsm_lock(g->l1);
			long seen = g->ready;
			earth_dsm_unlock(g->l1);
			if (seen == v)
				break;
		}
		if (g->data != v)
			stale(r, "data", g->data, v);
	}
	earth_dsm_barrier(g->bar, (unsigned)P);
}

static void t_barrier(unsigned me, int r)
{
	long v = 2000 + r;
	if (me == (unsigned)r % (unsigned)P)
		g->data = v;
	earth_dsm_barrier(g->bar, (unsigned)P);
	if (g->data != v)
		stale(r, "data", g->data, v);
	earth_dsm_barrier(g->bar, (unsigned)P);
}

static void t_flag(unsigned me, int r)
{
	long v = 3000 + r;
	if (me == 0) {
		g->data = v;
		earth_dsm_flag_set(g->flag);
	} else {
		earth_dsm_flag_wait(g->flag);
		if (g->data != v)
			stale(r, "data", g->data, v);
	}
	earth_dsm_barrier(g->bar, (unsigned)P);
	if (me == 0)
		earth_dsm_flag_clear(g->flag);
	earth_dsm_barrier(g->bar, (unsigned)P);
}

static void t_chain(unsigned me, int r)
{
	long v = 4000 + r;
	if (me == 0) {
		g->x = v;
		earth_dsm_lock(g->l1);
		g->ready = v;
		earth_dsm_unlock(g->l1);
	} else if (me == 1) {
		for (long seen = 0; seen != v;) {
			earth_dsm_lock(g->l1);
			seen = g->ready;
			earth_dsm_unlock(g->l1);
		}
		earth_dsm_lock(g->l2);
		g->y = g->x + 1;
		earth_dsm_unlock(g->l2);
	} else if (me == 2) {
		for (long seen = 0; seen != v + 1;) {
			earth_dsm_lock(g->l2);
			seen = g->y;
			earth_dsm_unlock(g->l2);
		}
		if (g->x != v)
			stale(r, "x", g->x, v);
	}
	earth_dsm_barrier(g->bar, (unsigned)P);
}

static void t_merge(unsigned me, int r)
{
	for (int i = (int)me; i < MERGE_BYTES; i += P)
		g->bytes[i] = (unsigned char)(me * 16 + r);
	earth_dsm_barrier(g->bar, (unsigned)P);
	for (int i = 0; i < MERGE_BYTES; i++)
		if (g->bytes[i] != (unsigned char)(i % P * 16 + r))
			stale(r, "a byte", g->bytes[i], i % P * 16 + r);
	earth_dsm_barrier(g->bar, (unsigned)P);
}

static void work(void)
{
	unsigned me = earth_dsm_thread_id();
	for (int r = 0; r < rounds; r++) {
		if (!strcmp(test, "lock"))
			t_lock(me, r);
		else if (!strcmp(test, "barrier"))
			t_barrier(me, r);
		else if (!strcmp(test, "flag"))
			t_flag(me, r);
		else if (!strcmp(test, "chain"))
			t_chain(me, r);
		else
			t_merge(me, r);
	}
}

static void slave(void)
{
	work();
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "t:r:")) != -1) {
		if (c == 't')
			test = optarg;
		else if (c == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	const char *tests[] = {"lock", "barrier", "flag", "chain", "merge"};
	int known = 0;
	for (int i = 0; i < 5; i++)
		known |= !strcmp(test, tests[i]);
	P = (int)earth_dsm_nodes();
	if (P < 3)
		P = 3; /* chain needs three threads */
	if (!known || rounds < 1) {
		fprintf(stderr, "dsm_litmus: -t lock|barrier|flag|chain|merge "
				"-r rounds\n");
		return 2;
	}
	g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_BLOCK, 0);
	if (!g) {
		perror("earth_dsm_alloc");
		return 1;
	}
	g->l1 = earth_dsm_lock_new();
	g->l2 = earth_dsm_lock_new();
	g->bar = earth_dsm_barrier_new();
	g->flag = earth_dsm_flag_new();
	for (int t = 1; t < P; t++)
		EARTH_DSM_CREATE(slave);
	work();
	earth_dsm_wait_for_end((unsigned)P - 1);
	if (g->bad)
		return 1;
	printf("dsm_litmus %s ok threads=%d rounds=%d\n", test, P, rounds);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
