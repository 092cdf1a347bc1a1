/* SPDX-License-Identifier: MIT */
/*
 * dsm_fiber.c - shared memory from fibers (earth_dsm_fiber.h): main
 * (program thread 0 on node 0) sets up two arrays of -n doubles and
 * INVOKEs -f workers per node; each worker sweeps its part of a 1-D
 * Jacobi -i times as fibers that never block: acquire its range of the
 * source for read and of the destination for write, compute, release
 * both, take the lock and add one to a shared counter (acquire, write,
 * release, unlock), then meet main and every other worker at a barrier
 * (main a program thread, the workers fibers). Main checks the result
 * bit for bit against the same sweeps run sequentially, and the counter.
 * Then a relay of flags: node k's fiber waits for flag k, adds k + 1 to a
 * shared token and sets flag k + 1 (split phase, the acquire and release
 * with global slots); main waits for the last. Prints "dsm_fiber ok
 * counter=C token=T sum=S" and exits 0, or names the first wrong value
 * and exits 1.
 *
 * -c 1: main touches no shared memory (no page fault anywhere, for
 * ThreadSanitizer): the workers fill a, and after the sweeps check their
 * part against a sequential run of their own and the first the counter;
 * prints "dsm_fiber ok checked by the fibers".
 *
 * -p node0 homes every page on node 0 (the other nodes' fibers fetch
 * all, several wanting one page at once); block (the default) homes each
 * node's part on it. -x MISTAKE makes the first worker of the last node
 * make one, for the tests of what the job then says: outside (acquires
 * memory outside shared memory), unalloc (a range in the region that no
 * allocation gave), release2 (releases a range twice), unlock2 (unlocks
 * the lock twice), nounlock (never unlocks it: the job is stuck),
 * noacquire (reads its part of b without acquiring it: with -p node0 the
 * page is not there).
 */
#include <earth.h>
#include <earth_dsm.h>
#include <earth_dsm_fiber.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shared {
	earth_dsm_lock_t lock;
	earth_dsm_barrier_t bar;
	earth_dsm_flag_t flag[5]; /* the relay: node k waits for flag k */
	long counter;
	long token;
	long *block[4]; /* -a: node k's fiber's allocation */
};

/* -a 1, after the relay: node k's fiber allocates ALLOC_LONGS longs homed
 * on its node, split phase, acquires them for writing, fills them with
 * k * 1000003 + i, releases them, publishes the address in g->block[k]
 * and meets main at the barrier; main checks every block, then each
 * fiber frees its block (earth_dsm_free_sync) and meets main again. -x
 * alloc0 makes node 0's fiber allocate 0 bytes (the job ends naming it). */
static void r_done(void *f);
#define ALLOC_LONGS 2000
struct a_args {
	struct shared *g;
	earth_dsm_barrier_t bar;
	unsigned node;
	int parties;
	char mistake[16];
};
struct a_frame {
	struct a_args x;
	long *mine;
	earth_slot s_alloc, s_acq, s_rel, s_pub, s_pubrel, s_bar, s_free,
	    s_bar2;
};
static void a_entry(void *f);
static void a_have(void *f);
static void a_filled(void *f);
static void a_released(void *f);
static void a_published(void *f);
static void a_met(void *f);
static void a_freed(void *f);
static void a_end(void *f);
EARTH_THREADED_FUNCTION(allocer, a_entry, struct a_frame,
			sizeof(struct a_args));

static void a_entry(void *frame)
{
	struct a_frame *f = frame;
	f->mine = (long *)(uintptr_t)1; /* overwritten before s_alloc fires */
	earth_slot_init(&f->s_alloc, 1, 0, a_have, f);
	size_t bytes =
	    !strcmp(f->x.mistake, "alloc0") ? 0 : ALLOC_LONGS * sizeof(long);
	earth_dsm_alloc_sync(bytes, EARTH_DSM_NODE, f->x.node,
			     (void **)&f->mine, &f->s_alloc);
}

static void a_have(void *frame)
{
	struct a_frame *f = frame;
	if (!f->mine) {
		fprintf(stderr, "dsm_fiber: node %u: no room for %d longs\n",
			f->x.node, ALLOC_LONGS);
		exit(1);
	}
	earth_slot_init(&f->s_acq, 1, 0, a_filled, f);
	earth_dsm_acquire_sync(f->mine, ALLOC_LONGS * sizeof(long),
			       EARTH_DSM_WRITE, &f->s_acq);
}

static void a_filled(void *frame)
{
	struct a_frame *f = frame;
	for (long i = 0; i < ALLOC_LONGS; i++)
		f->mine[i] = (long)f->x.node * 1000003 + i;
	earth_slot_init(&f->s_rel, 1, 0, a_released, f);
	earth_dsm_release_sync(f->mine, ALLOC_LONGS * sizeof(long), &f->s_rel);
}

static void a_released(void *frame)
{
	struct a_frame *f = frame;
	earth_slot_init(&f->s_pub, 1, 0, a_published, f);
	earth_dsm_acquire_sync(&f->x.g->block[f->x.node], sizeof(long *),
			       EARTH_DSM_WRITE, &f->s_pub);
}

static void a_published(void *frame)
{
	struct a_frame *f = frame;
	f->x.g->block[f->x.node] = f->mine;
	earth_slot_init(&f->s_pubrel, 1, 0, a_met, f);
	earth_dsm_release_sync(&f->x.g->block[f->x.node], sizeof(long *),
			       &f->s_pubrel);
}

/* The barrier before main checks, then the one after: free between. */
static void a_met(void *frame)
{
	struct a_frame *f = frame;
	earth_slot_init(&f->s_bar, 1, 0, a_freed, f);
	earth_dsm_barrier_sync(f->x.bar, (unsigned)f->x.parties, &f->s_bar);
}

static void a_freed(void *frame)
{
	struct a_frame *f = frame;
	earth_slot_init(&f->s_free, 1, 0, a_end, f);
	earth_dsm_free_sync(f->mine, &f->s_free);
}

static void a_end(void *frame)
{
	struct a_frame *f = frame;
	earth_slot_init(&f->s_bar2, 1, 0, r_done, f);
	earth_dsm_barrier_sync(f->x.bar, (unsigned)f->x.parties, &f->s_bar2);
}

/* The relay after the sweeps: node k's fiber waits for flag k, adds k + 1
 * to the token (acquired with a global slot: the _rsync form), releases
 * it and sets flag k + 1; main waits for the last flag. */
struct r_args {
	long *token;
	earth_dsm_flag_t wait, set;
	long add;
};
struct r_frame {
	struct r_args x;
	earth_slot s_flag, s_acq, s_rel, s_set;
};
static void r_entry(void *f);
static void r_go(void *f);
static void r_add(void *f);
static void r_released(void *f);
static void r_done(void *f);
EARTH_THREADED_FUNCTION(relay, r_entry, struct r_frame, sizeof(struct r_args));

static void r_entry(void *frame)
{
	struct r_frame *f = frame;
	earth_slot_init(&f->s_flag, 1, 0, r_go, f);
	earth_dsm_flag_wait_sync(f->x.wait, &f->s_flag);
}

static void r_go(void *frame)
{
	struct r_frame *f = frame;
	earth_slot_init(&f->s_acq, 1, 0, r_add, f);
	earth_dsm_acquire_rsync(f->x.token, sizeof(long), EARTH_DSM_WRITE,
				earth_slot_global(&f->s_acq));
}

static void r_add(void *frame)
{
	struct r_frame *f = frame;
	*f->x.token += f->x.add;
	earth_slot_init(&f->s_rel, 1, 0, r_released, f);
	earth_dsm_release_rsync(f->x.token, sizeof(long),
				earth_slot_global(&f->s_rel));
}

static void r_released(void *frame)
{
	struct r_frame *f = frame;
	earth_slot_init(&f->s_set, 1, 0, r_done, f);
	earth_dsm_flag_set_sync(f->x.set, &f->s_set);
}

static void r_done(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

struct w_args {
	struct shared *g;
	double *a, *b;
	long n, lo, hi; /* [lo, hi) of the n elements */
	int iters, parties;
	/* g's, copied: a fiber reads shared memory only inside a range it
	 * acquired. */
	earth_dsm_lock_t lock;
	earth_dsm_barrier_t bar;
	/* -c: the workers fill a and check the result and the counter
	 * themselves (main touches no shared memory: no fault anywhere). */
	int self_check;
	char mistake[16];
};

struct w_frame {
	struct w_args x;
	int it;
	earth_slot s_acq, s_rel, s_lock, s_cnt, s_crel, s_unl, s_bar, s_bad;
	earth_slot s_fill, s_filled, s_chk, s_chkrel, s_end;
};
static void w_fill(void *f);
static void w_filled(void *f);
static void w_check(void *f);
static void w_checked(void *f);
static void w_end(void *f);
static double start_value(long i);
static void sequential(double *a, double *b, long n, int iters);

/* The bytes of this worker's part, [lo, hi). */
static size_t part(const struct w_frame *f)
{
	return (size_t)(f->x.hi - f->x.lo) * sizeof(double);
}

/* Slot s armed for next, then the barrier with main and the others. */
static void meet(struct w_frame *f, earth_slot *s, earth_fiber_fn next)
{
	earth_slot_init(s, 1, 0, next, f);
	earth_dsm_barrier_sync(f->x.bar, (unsigned)f->x.parties, s);
}

static void w_entry(void *f);
static void w_sweep(void *f);
static void w_compute(void *f);
static void w_released(void *f);
static void w_locked(void *f);
static void w_counted(void *f);
static void w_unlocked(void *f);
static void w_passed(void *f);
static void w_again(void *f);
static void w_noacquire(void *f);
EARTH_THREADED_FUNCTION(worker, w_entry, struct w_frame, sizeof(struct w_args));

/* -x noacquire: a[lo] acquired, b[lo] read without acquiring it. */
static void w_noacquire(void *frame)
{
	struct w_frame *f = frame;
	volatile double *v = f->x.b + f->x.lo;
	printf("dsm_fiber: read %g\n", *v);
	EARTH_END_FUNCTION(f);
}

/* The worker's source and destination this sweep. */
static double *src(struct w_frame *f)
{
	return f->it % 2 ? f->x.b : f->x.a;
}
static double *dst(struct w_frame *f)
{
	return f->it % 2 ? f->x.a : f->x.b;
}

static void w_entry(void *frame)
{
	struct w_frame *f = frame;
	f->it = 0;
	const char *m = f->x.mistake;
	if (*m) {
		earth_slot_init(&f->s_bad, 1, 0, w_again, f);
		if (!strcmp(m, "outside")) {
			earth_dsm_acquire_sync(f, sizeof(*f), EARTH_DSM_READ,
					       &f->s_bad);
		} else if (!strcmp(m, "unalloc")) {
			/* Past the end of b: pages no allocation gave. */
			earth_dsm_acquire_sync(f->x.b + f->x.n + 8192, 8,
					       EARTH_DSM_WRITE, &f->s_bad);
		} else if (!strcmp(m, "noacquire")) {
			earth_slot_init(&f->s_bad, 1, 0, w_noacquire, f);
			earth_dsm_acquire_sync(f->x.a + f->x.lo, sizeof(double),
					       EARTH_DSM_READ, &f->s_bad);
		} else if (!strcmp(m, "release2") || !strcmp(m, "unlock2") ||
			   !strcmp(m, "nounlock") || !strcmp(m, "alloc0")) {
			w_sweep(f);
			return;
		} else {
			fprintf(stderr, "dsm_fiber: unknown mistake %s\n", m);
			exit(2);
		}
		return;
	}
	if (f->x.self_check) {
		earth_slot_init(&f->s_fill, 1, 0, w_fill, f);
		earth_dsm_acquire_sync(f->x.a + f->x.lo, part(f),
				       EARTH_DSM_WRITE, &f->s_fill);
		return;
	}
	w_sweep(f);
}

/* -c: this worker's part of a filled, released, then the first barrier. */
static void w_fill(void *frame)
{
	struct w_frame *f = frame;
	for (long i = f->x.lo; i < f->x.hi; i++)
		f->x.a[i] = start_value(i);
	earth_slot_init(&f->s_filled, 1, 0, w_filled, f);
	earth_dsm_release_sync(f->x.a + f->x.lo, part(f), &f->s_filled);
}

static void w_filled(void *frame)
{
	struct w_frame *f = frame;
	meet(f, &f->s_bar, w_sweep);
}

/* -c: after the sweeps, this worker's part of the result against its own
 * sequential run, and (the first worker) the counter. */
static void w_check(void *frame)
{
	struct w_frame *f = frame;
	long n = f->x.n;
	double *ra = malloc((size_t)n * sizeof(double));
	double *rb = calloc((size_t)n, sizeof(double));
	if (!ra || !rb) {
		perror("dsm_fiber");
		exit(1);
	}
	for (long i = 0; i < n; i++)
		ra[i] = start_value(i);
	sequential(ra, rb, n, f->x.iters);
	const double *want = f->x.iters % 2 ? rb : ra;
	const double *got = f->x.iters % 2 ? f->x.b : f->x.a;
	for (long i = f->x.lo; i < f->x.hi; i++)
		if (memcmp(&got[i], &want[i], sizeof(double))) {
			printf("dsm_fiber: element %ld = %.17g, want %.17g\n",
			       i, got[i], want[i]);
			exit(1);
		}
	free(ra);
	free(rb);
	long workers = f->x.parties - 1;
	if (f->x.lo == 0 && f->x.g->counter != workers * f->x.iters) {
		printf("dsm_fiber: counter = %ld, want %ld\n", f->x.g->counter,
		       workers * f->x.iters);
		exit(1);
	}
	earth_slot_init(&f->s_chkrel, f->x.lo == 0 ? 2 : 1, 0, w_checked, f);
	earth_dsm_release_sync(got + f->x.lo, part(f), &f->s_chkrel);
	if (f->x.lo == 0)
		earth_dsm_release_sync(&f->x.g->counter, sizeof(long),
				       &f->s_chkrel);
}

static void w_checked(void *frame)
{
	struct w_frame *f = frame;
	meet(f, &f->s_end, w_end);
}

static void w_end(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

static void w_sweep(void *frame)
{
	struct w_frame *f = frame;
	long lo = f->x.lo ? f->x.lo - 1 : 0;
	long hi = f->x.hi < f->x.n ? f->x.hi + 1 : f->x.n;
	earth_slot_init(&f->s_acq, 2, 0, w_compute, f);
	earth_dsm_acquire_sync(src(f) + lo, (size_t)(hi - lo) * sizeof(double),
			       EARTH_DSM_READ, &f->s_acq);
	earth_dsm_acquire_sync(dst(f) + f->x.lo, part(f), EARTH_DSM_WRITE,
			       &f->s_acq);
}

static void w_compute(void *frame)
{
	struct w_frame *f = frame;
	const double *s = src(f);
	double *d = dst(f);
	long n = f->x.n;
	for (long i = f->x.lo; i < f->x.hi; i++)
		d[i] = i == 0 || i == n - 1
			   ? s[i]
			   : (s[i - 1] + s[i] + s[i + 1]) / 3.0;
	long lo = f->x.lo ? f->x.lo - 1 : 0;
	long hi = f->x.hi < n ? f->x.hi + 1 : n;
	earth_slot_init(&f->s_rel, 2, 0, w_released, f);
	earth_dsm_release_sync(s + lo, (size_t)(hi - lo) * sizeof(double),
			       &f->s_rel);
	earth_dsm_release_sync(d + f->x.lo, part(f), &f->s_rel);
	if (!strcmp(f->x.mistake, "release2"))
		earth_dsm_release_sync(d + f->x.lo, sizeof(double), &f->s_bad);
}

static void w_released(void *frame)
{
	struct w_frame *f = frame;
	earth_slot_init(&f->s_lock, 1, 0, w_locked, f);
	earth_dsm_lock_sync(f->x.lock, &f->s_lock);
}

static void w_locked(void *frame)
{
	struct w_frame *f = frame;
	earth_slot_init(&f->s_cnt, 1, 0, w_counted, f);
	earth_dsm_acquire_sync(&f->x.g->counter, sizeof(long), EARTH_DSM_WRITE,
			       &f->s_cnt);
}

static void w_counted(void *frame)
{
	struct w_frame *f = frame;
	f->x.g->counter++;
	earth_slot_init(&f->s_crel, 1, 0, w_unlocked, f);
	earth_dsm_release_sync(&f->x.g->counter, sizeof(long), &f->s_crel);
}

static void w_unlocked(void *frame)
{
	struct w_frame *f = frame;
	if (!strcmp(f->x.mistake, "nounlock")) {
		w_passed(f); /* the lock stays held: the others wait */
		return;
	}
	earth_slot_init(&f->s_unl, 1, 0, w_passed, f);
	earth_dsm_unlock_sync(f->x.lock, &f->s_unl);
	if (!strcmp(f->x.mistake, "unlock2"))
		earth_dsm_unlock_sync(f->x.lock, &f->s_bad);
}

static void w_passed(void *frame)
{
	struct w_frame *f = frame;
	meet(f, &f->s_bar, w_again);
}

static void w_again(void *frame)
{
	struct w_frame *f = frame;
	if (++f->it < f->x.iters) {
		w_sweep(f);
		return;
	}
	if (f->x.self_check) {
		const double *got = f->x.iters % 2 ? f->x.b : f->x.a;
		earth_slot_init(&f->s_chk, f->x.lo == 0 ? 2 : 1, 0, w_check, f);
		earth_dsm_acquire_sync(got + f->x.lo, part(f), EARTH_DSM_READ,
				       &f->s_chk);
		if (f->x.lo == 0)
			earth_dsm_acquire_sync(&f->x.g->counter, sizeof(long),
					       EARTH_DSM_READ, &f->s_chk);
		return;
	}
	EARTH_END_FUNCTION(f);
}

static void sequential(double *a, double *b, long n, int iters)
{
	for (int it = 0; it < iters; it++) {
		const double *s = it % 2 ? b : a;
		double *d = it % 2 ? a : b;
		for (long i = 0; i < n; i++)
			d[i] = i == 0 || i == n - 1
				   ? s[i]
				   : (s[i - 1] + s[i] + s[i + 1]) / 3.0;
	}
}

static double start_value(long i)
{
	return (double)((i * 7919) % 1000) / 7.0;
}

static int program(int argc, char **argv)
{
	long n = 20000;
	int per = 2, iters = 10;
	const char *place = "block", *mistake = "";
	int self_check = 0, alloc = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-f"))
			per = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-i"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-p"))
			place = argv[i + 1];
		else if (!strcmp(argv[i], "-x"))
			mistake = argv[i + 1];
		else if (!strcmp(argv[i], "-c"))
			self_check = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-a"))
			alloc = atoi(argv[i + 1]);
		else
			break;
	}
	unsigned nodes = earth_dsm_nodes();
	long workers = (long)nodes * per;
	if (n < 2 * workers || per < 1 || iters < 1 || strlen(mistake) > 15 ||
	    nodes > 4) {
		fprintf(stderr,
			"usage: dsm_fiber [-n N] [-f FIBERS_PER_NODE] "
			"[-i ITERS] [-p block|node0] [-x MISTAKE] [-c 1] "
			"[-a 1], "
			"on 1-4 nodes\n");
		return 2;
	}
	bool node0 = !strcmp(place, "node0");
	struct shared *g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_NODE, 0);
	double *a =
	    earth_dsm_alloc((size_t)n * sizeof(double),
			    node0 ? EARTH_DSM_NODE : EARTH_DSM_BLOCK, 0);
	double *b =
	    earth_dsm_alloc((size_t)n * sizeof(double),
			    node0 ? EARTH_DSM_NODE : EARTH_DSM_BLOCK, 0);
	if (!g || !a || !b) {
		perror("dsm_fiber: alloc");
		return 1;
	}
	earth_dsm_lock_t lock = earth_dsm_lock_new();
	earth_dsm_barrier_t bar = earth_dsm_barrier_new();
	int parties = (int)workers + 1;
	/* -c: no access to shared memory here, the fibers fill and check
	 * (memory from earth_dsm_alloc starts zeroed). */
	if (!self_check) {
		g->lock = lock;
		g->bar = bar;
		g->counter = 0;
		g->token = 0;
		for (unsigned k = 0; k <= nodes; k++)
			g->flag[k] = earth_dsm_flag_new();
		for (long i = 0; i < n; i++)
			a[i] = start_value(i);
		memset(b, 0, (size_t)n * sizeof(double));
		/* Main's writes released before the workers start. */
		earth_dsm_barrier(bar, 1);
	}
	for (long w = 0; w < workers; w++) {
		struct w_args x = {.g = g,
				   .a = a,
				   .b = b,
				   .n = n,
				   .lo = n * w / workers,
				   .hi = n * (w + 1) / workers,
				   .iters = iters,
				   .parties = parties,
				   .lock = lock,
				   .bar = bar,
				   .self_check = self_check};
		if (w == workers - per)
			snprintf(x.mistake, sizeof(x.mistake), "%s", mistake);
		earth_invoke((uint32_t)(w / per), &worker, &x, sizeof(x));
	}
	if (self_check) {
		for (int it = 0; it < iters + 2; it++)
			earth_dsm_barrier(bar, (unsigned)parties);
		printf("dsm_fiber ok checked by the fibers\n");
		return 0;
	}
	for (int it = 0; it < iters; it++)
		earth_dsm_barrier(bar, (unsigned)parties);
	for (unsigned k = 0; k < nodes; k++) {
		struct r_args x = {&g->token, g->flag[k], g->flag[k + 1],
				   (long)k + 1};
		earth_invoke(k, &relay, &x, sizeof(x));
	}
	earth_dsm_flag_set(g->flag[0]);
	earth_dsm_flag_wait(g->flag[nodes]);
	/* Allocated here: a job stopped before (a mistake) leaks nothing. */
	double *ra = malloc((size_t)n * sizeof(double));
	double *rb = calloc((size_t)n, sizeof(double));
	if (!ra || !rb) {
		perror("dsm_fiber: malloc");
		return 1;
	}
	for (long i = 0; i < n; i++)
		ra[i] = start_value(i);
	sequential(ra, rb, n, iters);
	const double *got = iters % 2 ? b : a, *want = iters % 2 ? rb : ra;
	double sum = 0;
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		if (memcmp(&got[i], &want[i], sizeof(double))) {
			printf("dsm_fiber: element %ld = %.17g, want %.17g\n",
			       i, got[i], want[i]);
			rc = 1;
		}
		sum += got[i];
	}
	if (!rc && g->counter != workers * iters) {
		printf("dsm_fiber: counter = %ld, want %ld\n", g->counter,
		       workers * iters);
		rc = 1;
	}
	long want_token = (long)nodes * (nodes + 1) / 2;
	if (!rc && g->token != want_token) {
		printf("dsm_fiber: token = %ld, want %ld\n", g->token,
		       want_token);
		rc = 1;
	}
	free(ra);
	free(rb);
	if (!rc && alloc) {
		for (unsigned k = 0; k < nodes; k++) {
			struct a_args x = {g, bar, k, (int)nodes + 1, ""};
			if (k == 0)
				snprintf(x.mistake, sizeof(x.mistake), "%s",
					 mistake);
			earth_invoke(k, &allocer, &x, sizeof(x));
		}
		earth_dsm_barrier(bar, nodes + 1);
		long bad = 0;
		for (unsigned k = 0; k < nodes; k++) {
			long *blk = g->block[k];
			for (long i = 0; blk && i < ALLOC_LONGS; i++)
				bad += blk[i] != (long)k * 1000003 + i;
			if (!blk || bad) {
				printf("dsm_fiber: node %u's block %p: %ld "
				       "wrong\n",
				       k, (void *)blk, bad);
				rc = 1;
			}
		}
		earth_dsm_barrier(bar, nodes + 1);
		if (!rc)
			printf("dsm_fiber: %u blocks allocated, filled and "
			       "freed by fibers\n",
			       nodes);
	}
	if (!rc)
		printf("dsm_fiber ok counter=%ld token=%ld sum=%.6f\n",
		       g->counter, g->token, sum);
	return rc;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
