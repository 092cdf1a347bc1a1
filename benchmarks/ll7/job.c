/* SPDX-License-Identifier: MIT */
/*
 * job.c - the measuring side of the Livermore Loop 7 experiment (the
 * EARTH-MANNA paper's Figure 3), run on 2 nodes. Node 1 owns the input
 * array Y; node 0 owns U and Z and runs the whole loop. Per loop length n,
 * communication factor f (Y fetched f times) and fiber size s, every
 * repetition times, in this order:
 *
 *   seq       the plain loop with Y local (0%)
 *   ff        f BLKMOV_SYNCs of all of Y, then the plain loop (100%)
 *   threaded  one fiber per s iterations: its slot waits for f BLKMOV_SYNCs
 *             of its chunk of Y, then it computes the chunk; fibers are
 *             issued in batches by a fiber that SPAWNs itself, so that
 *             chunks already here are computed while later ones are asked
 *   first     f BLKMOV_SYNCs of the first chunk only (its latency)
 *
 * Y is registered memory of node 1, which its SU serves (the EARTH path),
 * or with p->y_global an object of node 1's global memory, which node 0's
 * SU reads itself over shm (the direct one-sided path, EARTH_REMOTE).
 * Each result is checked bit for bit against the sequential checksum (Y's
 * copy is poisoned with NaN before every fetch). Node 0 prints one CSV row
 * per (n, f, s) and a summary per (n, f); see ll7.h for the formulas.
 */
#define _GNU_SOURCE 1
#include "bench.h"
#include "ll7.h"

#include <earth.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queues/q_arch.h"

/* Fibers of one issuing step: enough to amortise its SPAWN, few enough
 * that computing starts early. */
#define ISSUE_BATCH 16

struct chunk {
	earth_slot s;
	long k0, k1;
};

/* Node 0's state. Fibers of one node run one at a time on its EU, so the
 * fibers below share it without atomics. */
static struct {
	const struct ll7_plan *p;
	int ni, fi, si, rep, phase;
	long n, f, s, nchunks, next, left;
	struct ll7_data d;
	double *ybuf;	  /* Y fetched from node 1 (registered) */
	double want;	  /* checksum of the sequential loop */
	earth_gptr yrem;  /* Y on node 1 */
	struct chunk *ch; /* registered: the slots live here */
	long ch_cap;
	uint64_t t0, t1;
	earth_slot s_fetch, s_prep;
	earth_gptr got;
	/* samples of the current (n, f): [s][rep] */
	double *seq, *ff, *fetch, *th, *first;
	long svals[LL7_MAX_S];
	int ns;
	int bad;
	void *main_frame;
} J;

static double ns_since(uint64_t t0)
{
	return (double)(q_tsc_ordered() - t0) / q_tsc_per_ns();
}

/* ---- node 1: owns Y ---- */

static struct ll7_data remote_d;
static earth_gptr remote_g; /* Y in global memory (y_global), or null */

struct prep_args {
	long n;
	int y_global;
	earth_gptr result; /* where node 0 wants Y's address */
	earth_gslot done;
};
static void prep_entry(void *f)
{
	struct prep_args *a = f;
	size_t bytes = (size_t)a->n * sizeof(double);
	if (remote_g.bits) {
		earth_gfree(remote_g);
		remote_g = EARTH_GPTR_NULL;
	} else if (remote_d.y) {
		earth_unregister_memory(remote_d.y);
	}
	ll7_free(&remote_d);
	int bad = ll7_alloc(&remote_d, a->n);
	if (!bad && a->y_global) {
		remote_g = earth_galloc(bytes);
		bad = !remote_g.bits;
		if (!bad)
			memcpy(earth_gptr_addr(remote_g), remote_d.y, bytes);
	} else if (!bad) {
		bad = earth_register_memory(remote_d.y, bytes) != 0;
	}
	if (bad) {
		fprintf(stderr,
			"ll7: node %u: cannot allocate or register "
			"%ld doubles%s\n",
			earth_node_id(), a->n,
			a->y_global ? " of global memory (earthrun --gmem-mb)"
				    : "");
		earth_data_rsync_g(EARTH_GPTR_NULL, a->result, a->done);
	} else {
		earth_data_rsync_g(a->y_global ? remote_g
					       : earth_to_global(remote_d.y),
				   a->result, a->done);
	}
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(ll7_prep, prep_entry, struct prep_args,
			sizeof(struct prep_args));

/* ---- node 0 ---- */

static void step(void);

static void poison(void)
{
	memset(J.ybuf, 0xff, (size_t)J.n * sizeof(double)); /* NaN */
	memset(J.d.x, 0, (size_t)J.n * sizeof(double));
}

static void verify(const char *what)
{
	double got = ll7_checksum(J.d.x, J.n);
	if (got != J.want) {
		J.bad++;
		printf("ll7: WRONG %s n=%ld f=%ld s=%ld: checksum %.17g, "
		       "sequential %.17g\n",
		       what, J.n, J.f, J.s, got, J.want);
	}
}

static double *sample(double *a)
{
	return &a[J.si * ll7_reps(J.p, J.n) + J.rep];
}

static void ff_got(void *unused)
{
	(void)unused;
	*sample(J.fetch) = ns_since(J.t0);
	ll7_kernel(&J.d, J.d.x, J.ybuf, 0, J.n);
	*sample(J.ff) = ns_since(J.t0);
	verify("fetch-first");
	step();
}

static void th_compute(void *p)
{
	struct chunk *c = p;
	ll7_kernel(&J.d, J.d.x, J.ybuf, c->k0, c->k1);
	if (--J.left == 0) {
		*sample(J.th) = ns_since(J.t0);
		verify("threaded");
		step();
	}
}

static void th_issue(void *unused)
{
	(void)unused;
	long end =
	    J.next + ISSUE_BATCH < J.nchunks ? J.next + ISSUE_BATCH : J.nchunks;
	for (; J.next < end; J.next++) {
		struct chunk *c = &J.ch[J.next];
		c->k0 = J.next * J.s;
		c->k1 = c->k0 + J.s < J.n ? c->k0 + J.s : J.n;
		size_t bytes = (size_t)(c->k1 - c->k0) * sizeof(double);
		earth_gptr src = earth_gptr_add(J.yrem, c->k0 * 8);
		earth_gptr dst = earth_to_global(J.ybuf + c->k0);
		earth_slot_init(&c->s, (int32_t)J.f, 0, th_compute, c);
		for (long i = 0; i < J.f; i++)
			earth_blkmov_sync(src, dst, bytes, &c->s);
	}
	if (J.next < J.nchunks)
		earth_spawn(th_issue, NULL);
}

static void first_got(void *unused)
{
	(void)unused;
	*sample(J.first) = ns_since(J.t0);
	step();
}

static void summarize(void);
static int ensure_chunks(long need)
{
	if (need <= J.ch_cap)
		return 0;
	if (J.ch)
		earth_unregister_memory(J.ch);
	free(J.ch);
	J.ch = calloc((size_t)need, sizeof(*J.ch));
	if (!J.ch || earth_register_memory(J.ch, (size_t)need * sizeof(*J.ch)))
		return -1;
	J.ch_cap = need;
	return 0;
}

static void prep_got(void *unused);
static void start_n(void);

/* Runs the current phase; phases end by calling step() again. */
static void step(void)
{
	for (;;) {
		if (J.phase == 4) {
			J.phase = 0;
			if (++J.rep == ll7_reps(J.p, J.n)) {
				J.rep = 0;
				if (++J.si == J.ns) {
					summarize();
					J.si = 0;
					if (++J.fi == J.p->nf) {
						J.fi = 0;
						J.ni++;
						start_n();
						return;
					}
				}
			}
		}
		if (J.si == 0 && J.rep == 0 && J.phase == 0)
			J.ns = ll7_s_values(J.p, J.n, J.p->f[J.fi], J.svals);
		J.f = J.p->f[J.fi];
		J.s = J.svals[J.si];
		J.nchunks = (J.n + J.s - 1) / J.s;
		switch (J.phase++) {
		case 0: /* seq */
			J.t0 = q_tsc_ordered();
			ll7_kernel(&J.d, J.d.x, J.d.y, 0, J.n);
			*sample(J.seq) = ns_since(J.t0);
			continue;
		case 1: /* fetch everything first: f block moves of all of Y */
			poison();
			earth_slot_init(&J.s_fetch, (int32_t)J.f, 0, ff_got,
					NULL);
			J.t0 = q_tsc_ordered();
			for (long i = 0; i < J.f; i++)
				earth_blkmov_sync(
				    J.yrem, earth_to_global(J.ybuf),
				    (size_t)J.n * sizeof(double), &J.s_fetch);
			return;
		case 2: /* threaded */
			poison();
			J.next = 0;
			J.left = J.nchunks;
			J.t0 = q_tsc_ordered();
			th_issue(NULL);
			return;
		case 3: { /* the first chunk alone */
			long k1 = J.s < J.n ? J.s : J.n;
			earth_slot_init(&J.s_fetch, (int32_t)J.f, 0, first_got,
					NULL);
			J.t0 = q_tsc_ordered();
			for (long i = 0; i < J.f; i++)
				earth_blkmov_sync(
				    J.yrem, earth_to_global(J.ybuf),
				    (size_t)k1 * sizeof(double), &J.s_fetch);
			return;
		}
		}
	}
}

static void summarize(void)
{
	struct ll7_result r;
	ll7_compute(J.p, J.n, J.f, J.svals, J.ns, J.seq, J.ff, J.fetch, J.th,
		    J.first, &r);
	ll7_print(J.p, &r);
}

static void start_n(void)
{
	if (J.d.u) {
		earth_unregister_memory(J.ybuf);
		free(J.ybuf);
		J.ybuf = NULL;
		ll7_free(&J.d);
	}
	if (J.ni == J.p->nn) {
		if (J.bad)
			printf("ll7: %d runs gave a WRONG checksum\n", J.bad);
		else
			printf("ll7: all runs verified against the sequential "
			       "checksum\n");
		fflush(stdout); /* before the job ends and earthrun stops it */
		earth_set_exit_status(J.bad ? 1 : 0);
		EARTH_END_FUNCTION(J.main_frame);
	}
	J.n = J.p->n[J.ni];
	J.ns = ll7_s_values(J.p, J.n, 1, J.svals);
	J.ybuf = malloc((size_t)J.n * sizeof(double));
	long most = 0;
	for (int i = 0; i < J.ns; i++)
		if ((J.n + J.svals[i] - 1) / J.svals[i] > most)
			most = (J.n + J.svals[i] - 1) / J.svals[i];
	if (ll7_alloc(&J.d, J.n) || !J.ybuf ||
	    earth_register_memory(J.ybuf, (size_t)J.n * sizeof(double)) ||
	    ensure_chunks(most)) {
		printf("ll7: node 0: out of memory for n=%ld\n", J.n);
		fflush(stdout);
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(J.main_frame);
	}
	ll7_kernel(&J.d, J.d.x, J.d.y, 0, J.n);
	J.want = ll7_checksum(J.d.x, J.n);
	printf("ll7: n=%ld: sequential checksum %.16e\n", J.n, J.want);
	fflush(stdout);
	/* Ask node 1 to build its Y for this n and tell where it is. */
	earth_slot_init(&J.s_prep, 1, 0, prep_got, NULL);
	struct prep_args a = {J.n, J.p->y_global, earth_to_global(&J.got),
			      earth_slot_global(&J.s_prep)};
	earth_invoke(1, &ll7_prep, &a, sizeof(a));
}

static void prep_got(void *unused)
{
	(void)unused;
	if (!J.got.bits) {
		printf("ll7: node 1 could not prepare n=%ld\n", J.n);
		fflush(stdout);
		earth_set_exit_status(1);
		EARTH_END_FUNCTION(J.main_frame);
	}
	J.yrem = J.got;
	J.fi = J.si = J.rep = J.phase = 0;
	step();
}

struct main_frame {
	struct earth_main_args a;
};
static void main_entry(void *f)
{
	J.main_frame = f;
	if (earth_num_nodes() != 2) {
		printf("ll7: the job needs exactly 2 nodes (earthrun -n 2), "
		       "not %u\n",
		       earth_num_nodes());
		fflush(stdout);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(f);
	}
	J.ni = 0;
	start_n();
}
EARTH_THREADED_FUNCTION(ll7_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int ll7_job(const struct ll7_plan *p, int argc, char **argv)
{
	J.p = p;
	size_t per = (size_t)LL7_MAX_S * (size_t)p->reps * LL7_SHORT_X;
	J.seq = calloc(per, sizeof(double));
	J.ff = calloc(per, sizeof(double));
	J.fetch = calloc(per, sizeof(double));
	J.th = calloc(per, sizeof(double));
	J.first = calloc(per, sizeof(double));
	if (!J.seq || !J.ff || !J.fetch || !J.th || !J.first) {
		fprintf(stderr, "ll7: out of memory\n");
		return 1;
	}
	struct earth_options o;
	earth_options_default(&o);
	if (earth_options_parse(&o, &argc, argv))
		return EARTH_EXIT_USAGE;
	/* 2 nodes on a 2-CPU host: node 0 keeps the default placement (EU on
	 * the first CPU, SU on the second); node 1 serves only block moves,
	 * so both its units go to the second CPU, leaving the first CPU to
	 * node 0's EU alone. */
	if (bench_node_id() == 1 && o.eu_cpu < 0 && o.su_cpu < 0 &&
	    p->cpus >= 2) {
		o.eu_cpu = p->cpu_list[1];
		o.su_cpu = p->cpu_list[1];
	}
	struct earth_main_args a = {argc, argv};
	int st = earth_run(&o, &ll7_main, &a, sizeof(a));
	if (remote_d.y)
		ll7_free(&remote_d);
	return st;
}
