/* SPDX-License-Identifier: MIT */
/*
 * dsm_basic.c - shared memory across nodes through earth_dsm.h: P program
 * threads (-p P, spread over the job's nodes) add to a counter under a
 * lock, write their own part of an array homed block-wise, meet at a
 * barrier, check every other thread's part, pass a token along a chain
 * of flags, and main checks the totals after they end. Prints
 * "dsm_basic ok ... shmem_kb=K" (K: node 0's resident shared memory,
 * RssShmem) and exits 0, or names the first wrong value and
 * exits 1. -r R: each thread's rounds on the counter (50); -s S: then
 * thread 1 adds S more alone (the lock granted to its node after itself).
 *
 * -x MISTAKE makes thread 1 (or main) make one, for the tests of what the
 * job then says: crash (a null pointer written), overflow (recursion past
 * the thread's stack), stuck-lock (a lock never
 * released, main waits for it), stuck-barrier (main never reaches the
 * barrier), stuck-flag (a flag never set), die-holding (node 1 exits
 * with status 9 while its thread holds the lock and has written a page),
 * free-twice (memory from earth_dsm_alloc freed twice), no-room (run
 * with EARTH_DSM_MB=1: 3/4 MiB allocated twice, then 2 MiB; the last two
 * get NULL), unmade-lock (lock 0, which no earth_dsm_lock_new gives),
 * unmade-remote (a lock id of node 0 it never made).
 */
#include <earth_dsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct shared {
	earth_dsm_lock_t lock;
	earth_dsm_barrier_t bar;
	earth_dsm_flag_t flag[65];
	long counter;
	long token;
	int bad;
};

static struct shared *g; /* set by main before CREATE: every node has it */
static long *arr;	 /* P * PER longs */
static int nthreads = 2, rounds = 50, solo = 0;
static const char *mistake = "";
enum { PER = 1024 };

static void work(void)
{
	unsigned me = earth_dsm_thread_id();
	for (int r = 0; r < rounds; r++) {
		earth_dsm_lock(g->lock);
		g->counter++;
		earth_dsm_unlock(g->lock);
	}
	for (int i = 0; i < PER; i++)
		arr[(size_t)me * PER + i] = (long)me * 100000 + i;
	earth_dsm_barrier(g->bar, (unsigned)nthreads);
	for (int t = 0; t < nthreads; t++)
		for (int i = 0; i < PER; i++)
			if (arr[(size_t)t * PER + i] != (long)t * 100000 + i) {
				earth_dsm_lock(g->lock);
				if (!g->bad)
					fprintf(stderr,
						"thread %u: arr[%d][%d] = %ld, "
						"want %ld\n",
						me, t, i,
						arr[(size_t)t * PER + i],
						(long)t * 100000 + i);
				g->bad = 1;
				earth_dsm_unlock(g->lock);
				t = nthreads;
				break;
			}
	/* The token goes 0 -> 1 -> ... -> P-1, one flag each. */
	if (me > 0)
		earth_dsm_flag_wait(g->flag[me]);
	g->token += me;
	earth_dsm_flag_set(g->flag[me + 1]);
}

/* A frame of 4 KiB a level, n levels deep. */
static long recurse(long n)
{
	volatile char frame[4096];
	frame[0] = (char)n;
	return n ? recurse(n - 1) + frame[0] : 0;
}

static void slave(void)
{
	if (!strcmp(mistake, "crash") && earth_dsm_thread_id() == 1)
		*(volatile long *)(uintptr_t)16 = 1;
	if (!strcmp(mistake, "overflow") && earth_dsm_thread_id() == 1)
		printf("dsm_basic: %ld\n", recurse(1L << 20));
	if (!strcmp(mistake, "stuck-lock") && earth_dsm_thread_id() == 1) {
		earth_dsm_lock(g->lock);
		earth_dsm_flag_set(g->flag[0]);
		return; /* never unlocks */
	}
	if (!strcmp(mistake, "die-holding") && earth_dsm_thread_id() == 1) {
		earth_dsm_lock(g->lock);
		g->counter = -1;
		earth_dsm_flag_set(g->flag[0]);
		usleep(200000); /* main waits for the lock meanwhile */
		_exit(9);
	}
	if (!strcmp(mistake, "stuck-barrier"))
		earth_dsm_barrier(g->bar, (unsigned)nthreads);
	if (!strcmp(mistake, "free-twice") && earth_dsm_thread_id() == 1) {
		void *p = earth_dsm_alloc(100, EARTH_DSM_NODE, 0);
		earth_dsm_free(p);
		earth_dsm_free(p);
	}
	if (!strcmp(mistake, "unmade-lock") && earth_dsm_thread_id() == 1)
		earth_dsm_lock(0); /* a zeroed lock: LOCKINIT forgotten */
	if (!strcmp(mistake, "unmade-remote") && earth_dsm_thread_id() == 1)
		earth_dsm_lock(0x65); /* node 0's 101st lock: never made */
	if (!strcmp(mistake, "no-room") && earth_dsm_thread_id() == 1) {
		size_t mb = (size_t)1 << 20; /* run with EARTH_DSM_MB=1 */
		void *a = earth_dsm_alloc(mb / 4 * 3, EARTH_DSM_NODE, 1);
		void *b = earth_dsm_alloc(mb / 4 * 3, EARTH_DSM_NODE, 1);
		void *c = earth_dsm_alloc(mb * 2, EARTH_DSM_NODE, 1);
		printf("dsm_basic: no room: %s %s %s\n", a ? "ok" : "NULL",
		       b ? "ok" : "NULL", c ? "ok" : "NULL");
		return;
	}
	work();
	/* -s: thread 1 adds to the counter alone (every other thread is
	 * past its rounds: they met at the barrier) */
	if (earth_dsm_thread_id() == 1)
		for (int r = 0; r < solo; r++) {
			earth_dsm_lock(g->lock);
			g->counter++;
			earth_dsm_unlock(g->lock);
		}
}

/* Main's part of a mistake (it never returns from it). */
static void main_mistake(void)
{
	if (!strcmp(mistake, "stuck-lock")) {
		earth_dsm_flag_wait(g->flag[0]);
		earth_dsm_lock(g->lock);
	} else if (!strcmp(mistake, "stuck-flag")) {
		earth_dsm_flag_wait(g->flag[nthreads]);
	} else if (!strcmp(mistake, "die-holding")) {
		earth_dsm_flag_wait(g->flag[0]);
		earth_dsm_lock(g->lock);
	} else if (!strcmp(mistake, "stuck-barrier")) {
		earth_dsm_wait_for_end((unsigned)nthreads - 1);
	} else {
		earth_dsm_wait_for_end((unsigned)nthreads - 1);
	}
}

/* This process's resident shared memory (RssShmem of /proc/self/status),
 * KiB; -1 where it cannot be read. */
static long shmem_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssShmem: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "p:r:s:x:")) != -1) {
		if (c == 'p')
			nthreads = atoi(optarg);
		else if (c == 'x')
			mistake = optarg;
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 's')
			solo = atoi(optarg);
		else
			return 2;
	}
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "dsm_basic: -p 1..64\n");
		return 2;
	}
	g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_NODE, 0);
	arr = earth_dsm_alloc(sizeof(long) * PER * (size_t)nthreads,
			      EARTH_DSM_BLOCK, 0);
	if (!g || !arr) {
		perror("earth_dsm_alloc");
		return 1;
	}
	g->lock = earth_dsm_lock_new();
	g->bar = earth_dsm_barrier_new();
	for (int i = 0; i <= nthreads; i++)
		g->flag[i] = earth_dsm_flag_new();
	for (int i = 1; i < nthreads; i++)
		EARTH_DSM_CREATE(slave);
	if (*mistake) {
		main_mistake();
		return 3;
	}
	work();
	earth_dsm_wait_for_end((unsigned)nthreads - 1);
	earth_dsm_flag_wait(g->flag[nthreads]);
	long want = (long)nthreads * (nthreads - 1) / 2;
	long count = (long)nthreads * rounds + (nthreads > 1 ? solo : 0);
	if (g->bad || g->counter != count || g->token != want) {
		fprintf(stderr,
			"dsm_basic: counter %ld (want %ld), token %ld (want "
			"%ld), bad %d\n",
			g->counter, count, g->token, want, g->bad);
		return 1;
	}
	printf("dsm_basic ok nodes=%u threads=%d counter=%ld token=%ld "
	       "shmem_kb=%ld\n",
	       earth_dsm_nodes(), nthreads, g->counter, g->token, shmem_kb());
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
