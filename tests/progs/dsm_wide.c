/* SPDX-License-Identifier: MIT */
/*
 * dsm_wide.c - releases that write more pages than the write notices of
 * one message can name (a 64 KiB message names about 16000 pages): on 3
 * nodes, thread 1 (node 1) writes a byte of each of W pages under a lock
 * (its unlock's notices go to the lock's manager, node 0, in several
 * messages), thread 2 (node 2) takes the lock next (the grant from node 0
 * carries them on) and checks every page; then main (node 0) writes W
 * pages of its own and all meet at a barrier (the barrier's grants carry
 * main's notices to nodes 1 and 2), and threads 1 and 2 check them.
 * Every page is homed on its writer's node, so the writes cost a fault
 * each and no diff. Prints "dsm_wide ok ..." or the first wrong byte,
 * exit 1.
 *
 * -w W  pages each writer writes (default 17000)
 */
#include <earth_dsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct shared {
	earth_dsm_lock_t lock;
	earth_dsm_barrier_t bar;
	earth_dsm_flag_t written;
	int bad;
};

static struct shared *g;
static unsigned char *by1, *by0; /* W pages: homed on node 1, node 0 */
static long W = 17000;
enum { ps = 4096 }; /* EARTH_DSM_PAGE's default: one byte per page */

static void check(const char *who, const unsigned char *a, unsigned char want)
{
	for (long i = 0; i < W; i++)
		if (a[i * ps] != want) {
			fprintf(stderr,
				"dsm_wide: thread %u: %s page %ld holds %u, "
				"want %u\n",
				earth_dsm_thread_id(), who, i, a[i * ps], want);
			earth_dsm_lock(g->lock);
			g->bad++;
			earth_dsm_unlock(g->lock);
			return;
		}
}

static void slave(void)
{
	unsigned me = earth_dsm_thread_id();
	if (me == 1) {
		earth_dsm_lock(g->lock);
		for (long i = 0; i < W; i++)
			by1[i * ps] = 11;
		earth_dsm_unlock(g->lock);
		earth_dsm_flag_set(g->written);
	} else {
		earth_dsm_flag_wait(g->written);
		earth_dsm_lock(g->lock);
		check("node 1's", by1, 11);
		earth_dsm_unlock(g->lock);
	}
	earth_dsm_barrier(g->bar, 3);
	check("node 0's", by0, 22);
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "w:")) != -1)
		if (c == 'w')
			W = atol(optarg);
		else
			return 2;
	if (earth_dsm_nodes() != 3 || W < 1) {
		fprintf(stderr, "dsm_wide: 3 nodes, -w >= 1\n");
		return 2;
	}
	g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_NODE, 0);
	by1 = earth_dsm_alloc((size_t)(W * ps), EARTH_DSM_NODE, 1);
	by0 = earth_dsm_alloc((size_t)(W * ps), EARTH_DSM_NODE, 0);
	if (!g || !by1 || !by0) {
		perror("earth_dsm_alloc");
		return 1;
	}
	g->lock = earth_dsm_lock_new();
	g->bar = earth_dsm_barrier_new();
	g->written = earth_dsm_flag_new();
	EARTH_DSM_CREATE(slave);
	EARTH_DSM_CREATE(slave);
	for (long i = 0; i < W; i++)
		by0[i * ps] = 22;
	earth_dsm_barrier(g->bar, 3);
	earth_dsm_wait_for_end(2);
	if (g->bad)
		return 1;
	printf("dsm_wide ok pages=%ld\n", W);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
