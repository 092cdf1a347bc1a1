/* SPDX-License-Identifier: MIT */
/*
 * dsm_drf.c - seeded random data-race-free programs on shared memory
 * (earth_dsm.h), checked against what a sequential memory holds. P
 * threads run K phases separated by barriers; in each phase every cell
 * of the array has one writer, picked at random from the seed (so threads
 * of different nodes write different bytes of one page), and every
 * thread reads a random sample of the cells written in the phase before,
 * whose values it knows from the seed. Between phases, threads add to
 * random counters under random locks. Main checks the counters and a
 * checksum of the last phase at the end. Prints "dsm_drf ok ..." or the
 * first wrong value, exit 1.
 *
 * -p threads  -s seed  -c cells  -k phases  -l locks
 * -a block|cyclic|first  the cells' placement (default cyclic)
 * -m  main only waits for the P threads it creates (the barriers are
 *     theirs alone)
 */
#include <earth_dsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct shared {
	earth_dsm_barrier_t bar;
	earth_dsm_lock_t lock[16];
	long count[16];
	long bad;
};

static struct shared *g;
static uint32_t *cell;
static int P = 4, K = 6, L = 4;
static uint32_t C = 8192, seed = 1;
static enum earth_dsm_place place = EARTH_DSM_CYCLIC;
static unsigned main_waits; /* -m: 1, the threads' ids start at 1 */

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Who writes cell i in phase k, and what. */
static int writer(int k, uint32_t i)
{
	return (int)(mix(seed * 7919u + (uint32_t)k * 104729u + i) %
		     (uint32_t)P);
}

static uint32_t value(int k, uint32_t i)
{
	return mix(seed ^ ((uint32_t)k << 24) ^ i) | 1u;
}

static void fail(unsigned me, const char *what, long got, long want)
{
	fprintf(stderr, "dsm_drf: thread %u: %s = %ld, want %ld\n", me, what,
		got, want);
	earth_dsm_lock(g->lock[0]);
	g->bad++;
	earth_dsm_unlock(g->lock[0]);
}

static void work(void)
{
	unsigned me = earth_dsm_thread_id() - main_waits;
	uint32_t r = mix(seed + me * 31u);
	for (int k = 0; k < K; k++) {
		for (uint32_t i = 0; i < C; i++)
			if (writer(k, i) == (int)me)
				cell[i] = value(k, i);
		/* Random counters under random locks. */
		for (int j = 0; j < 8; j++) {
			r = mix(r);
			int l = (int)(r % (uint32_t)L);
			earth_dsm_lock(g->lock[l]);
			g->count[l] += (long)(me + 1);
			earth_dsm_unlock(g->lock[l]);
		}
		earth_dsm_barrier(g->bar, (unsigned)P);
		/* Read a sample of what phase k wrote (nobody writes in
		 * between: the next writes come after the next barrier). */
		for (int j = 0; j < 256; j++) {
			r = mix(r);
			uint32_t i = r % C;
			if (cell[i] != value(k, i)) {
				fail(me, "a cell", (long)cell[i],
				     (long)value(k, i));
				break;
			}
		}
		earth_dsm_barrier(g->bar, (unsigned)P);
	}
}

static void slave(void)
{
	work();
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "p:s:c:k:l:a:m")) != -1) {
		switch (c) {
		case 'm':
			main_waits = 1;
			break;
		case 'a':
			place = !strcmp(optarg, "block") ? EARTH_DSM_BLOCK
				: !strcmp(optarg, "first")
				    ? EARTH_DSM_FIRST_TOUCH
				    : EARTH_DSM_CYCLIC;
			break;
		case 'p':
			P = atoi(optarg);
			break;
		case 's':
			seed = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			C = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'k':
			K = atoi(optarg);
			break;
		case 'l':
			L = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (P < 1 || P > 64 || L < 1 || L > 16 || C < 1 || K < 1) {
		fprintf(stderr, "dsm_drf: -p 1..64 -l 1..16 -c >0 -k >0\n");
		return 2;
	}
	g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_NODE, 0);
	cell = earth_dsm_alloc(C * sizeof(uint32_t), place, 1);
	if (!g || !cell) {
		perror("earth_dsm_alloc");
		return 1;
	}
	g->bar = earth_dsm_barrier_new();
	for (int l = 0; l < L; l++)
		g->lock[l] = earth_dsm_lock_new();
	for (int t = 1 - (int)main_waits; t < P; t++)
		EARTH_DSM_CREATE(slave);
	if (!main_waits)
		work();
	earth_dsm_wait_for_end((unsigned)P - 1 + main_waits);
	/* The sequential answer: every thread's draws, replayed. */
	long want[16] = {0};
	for (int t = 0; t < P; t++) {
		uint32_t r = mix(seed + (uint32_t)t * 31u);
		for (int k = 0; k < K; k++) {
			for (int j = 0; j < 8; j++) {
				r = mix(r);
				want[r % (uint32_t)L] += t + 1;
			}
			for (int j = 0; j < 256; j++)
				r = mix(r);
		}
	}
	uint64_t sum = 0;
	for (uint32_t i = 0; i < C; i++) {
		if (cell[i] != value(K - 1, i)) {
			fprintf(stderr, "dsm_drf: cell %u = %u, want %u\n", i,
				cell[i], value(K - 1, i));
			return 1;
		}
		sum += cell[i];
	}
	for (int l = 0; l < L; l++)
		if (g->count[l] != want[l]) {
			fprintf(stderr, "dsm_drf: counter %d = %ld, want %ld\n",
				l, g->count[l], want[l]);
			return 1;
		}
	if (g->bad)
		return 1;
	printf("dsm_drf ok nodes=%u threads=%d cells=%u phases=%d sum=%llu\n",
	       earth_dsm_nodes(), P, C, K, (unsigned long long)sum);
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
