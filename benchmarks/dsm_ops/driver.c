/* SPDX-License-Identifier: MIT */
/*
 * driver.c - dsm_ops: shared memory across two nodes (earth_dsm.h) over
 * shm, tcp and ucx (UCX_TLS=tcp: ucx_tcp, UCX_TLS=posix,cma: ucx_shm),
 * each figure beside its floor taken in the same run. It runs the
 * shared-memory program prog.c (progs/dsm_ops_prog beside it) as 2-node
 * jobs, and itself as 2-node jobs for the GET floor.
 *
 *   dsm_fault.<t>             a read of a page homed on the other node,
 *                             fault to resume (ns per page)
 *   dsm_fault_floor.<t>       the kernel's part of a fault as the nodes
 *                             take it (the dsm_fault benchmark, run here:
 *                             dsm_fault_uffd where the kernel has
 *                             userfaultfd and EARTH_DSM_FAULTS does not
 *                             ask for protections, else dsm_fault_kernel:
 *                             the signal, the mapping or protection
 *                             change, the 4 KiB copy) + get4k.<t>
 *   get4k.<t>                 a raw 4 KiB GET over the transport: a block
 *                             move of 4 KiB from node 1's static data into
 *                             node 0's, one at a time (through node 1's
 *                             SU, as a page fetch goes)
 *   dsm_fault_over_floor.<t>  their ratio
 *   dsm_lock_handoff.<t>      a lock taken in turn by a thread of each
 *                             node, both contending: ns per acquisition
 *   dsm_locked_incr.<t>       the same with a shared counter incremented
 *                             under the lock: ns per increment
 *   dsm_barrier.<t>           a barrier of one thread on each node
 *   tc_dsm_miss_eu.<t>        the EU's time per miss of fibers (prog.c -m
 *                             miss_eu): node 1's EU busy ns per page a
 *                             chain of fibers acquired split phase (a
 *                             request, a fiber's end and start)
 *   dsm_fault_eu.<t>          the same for a program thread's fault in
 *                             the same job (the signal, the handler, the
 *                             request, the switch out and back)
 *   tc_dsm_hit_acquire.<t>    an acquisition of a page usable already,
 *                             taken by the EU with no request (ns)
 *   tc_dsm_check.<t>          the inline check earth_dsm_usable (ns, with
 *                             its loop)
 *   dsm_jacobi / pthreads_jacobi / dsm_jacobi_over_pthreads
 *                             the 1-D Jacobi of jacobi.h over shm, each
 *                             half homed on its writer, against two
 *                             pthreads on this host (same results checked)
 *   dsm_fault.shm.single_poll, dsm_lock_handoff.shm.single_poll,
 *   dsm_locked_incr.shm.single_poll, dsm_barrier.shm.single_poll
 *                             the same over shm on single-poll nodes (one
 *                             thread each: two cores in all)
 *   dsm_jacobi.single_poll / dsm_jacobi_over_pthreads.single_poll
 *                             the same on single-poll nodes (one thread
 *                             each: two cores, as the pthreads)
 *   mpi_jacobi / dsm_jacobi_over_mpi
 *                             the same Jacobi in Open MPI, two ranks on
 *                             this host (mpi_jacobi.c, in progs/ beside
 *                             this driver where mpicc was; same results
 *                             checked)
 *   dsm_hidden.t<k>.lat<us>   latency hiding, k threads per node, the
 *                             emulated network's one-way delay (us) over
 *                             shm: (T1 - Tk) / (T1 - T_local), T_local the
 *                             same work (1 thread per node, the same
 *                             remote pages) with no emulated delay
 *   dsm_hidden_time.t<k>.lat<us>, dsm_hidden_local   those times (ns)
 *   dsm_setting.<s>.off, dsm_setting.<s>.on, dsm_setting_gain.<s>
 *                             what each protocol setting buys, on
 *                             single-poll nodes (two cores in all): the
 *                             program it is for with the setting at 0
 *                             and at its default, jobs alternating (three
 *                             pairs, one with QUICK=1), medians, and
 *                             off / on: home_keep (EARTH_DSM_HOME_KEEP,
 *                             the Jacobi, ns a run), refresh
 *                             (EARTH_DSM_REFRESH, the Jacobi),
 *                             lock_pretwin (EARTH_DSM_LOCK_PRETWIN, the
 *                             locked increment over shm, ns each),
 *                             grant_pages (EARTH_DSM_GRANT_PAGES, the
 *                             same over tcp), claim_ahead
 *                             (EARTH_DSM_CLAIM_AHEAD, -m first: ns per
 *                             page first written)
 *   the same three with .single_poll (dsm_hidden_local.single_poll):
 *                             on single-poll nodes, T_local too
 *
 * On fewer than 4 cores the two nodes' EUs and SUs share CPUs: the
 * figures are reported, not judged.
 */
#define _GNU_SOURCE 1
#include <earth.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jacobi.h"
#include "lib/job.h"

/* ---- the GET floor: this program as a node of a 2-node job ---- */

#define G4K 4096
static unsigned char g_src[G4K], g_dst[G4K];

struct get_frame {
	struct earth_main_args a;
	long i, count;
	int rep, reps;
	uint64_t t0;
	double v[64];
	earth_slot s;
};

static void get_step(void *f)
{
	struct get_frame *m = f;
	if (m->i == 0)
		m->t0 = q_tsc_ordered();
	if (m->i == m->count) {
		double ns = bench_ns((double)(q_tsc_ordered() - m->t0));
		if (m->rep >= 0)
			m->v[m->rep] = ns / (double)m->count;
		if (++m->rep == m->reps) {
			if (g_dst[G4K - 1] != g_src[G4K - 1]) {
				printf("wrong get4k byte %u, want %u\n",
				       g_dst[G4K - 1], g_src[G4K - 1]);
				earth_set_exit_status(1);
			} else {
				printf("get4k %.1f\n",
				       bench_median(m->v, m->reps));
			}
			EARTH_END_FUNCTION(m);
		}
		m->i = -1; /* a first move, not counted, each repetition */
	}
	m->i++;
	earth_blkmov_sync(earth_gptr_make(1, g_src), earth_to_global(g_dst),
			  G4K, &m->s);
}

static void get_entry(void *f)
{
	struct get_frame *m = f;
	m->count = bench_quick ? 500 : 2000;
	m->reps = bench_quick ? 5 : 9;
	m->rep = -1;
	m->i = -1;
	earth_slot_init(&m->s, 1, 1, get_step, m);
	get_step(m);
}
EARTH_THREADED_FUNCTION(get_main, get_entry, struct get_frame,
			sizeof(struct earth_main_args));

static int get_node(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0");
	for (int i = 0; i < G4K; i++)
		g_src[i] = (unsigned char)(i * 131 + 7);
	return earth_main(argc, argv, &get_main);
}

/* ---- the jobs ---- */

static char self[PATH_MAX], earthrun[PATH_MAX + 32], prog[PATH_MAX + 64];
static int bad;

/* Runs `earthrun -n 2 --transport tr ARGV` with env; its output in out;
 * 0, or 1 after saying which job failed. */
static int job(const char *tr, const char *const *env, const char *const *argv,
	       const char *what, char *out, size_t cap)
{
	struct bench_job_spec s = {.earthrun = earthrun,
				   .nodes = 2,
				   .transport = tr,
				   .env = env,
				   .argv = argv,
				   .merge_stderr = 1,
				   .who = "dsm_ops"};
	int st = bench_job_run(&s, out, cap);
	if (st) {
		printf("# dsm_ops: the %s job over %s failed (status %d):\n%s",
		       what, tr, st, out);
		fprintf(stderr, "dsm_ops: the %s job over %s FAILED\n", what,
			tr);
		bad = 1;
	}
	return st;
}

/* The number after "key " in text, or -1. */
static double value_in(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? strtod(p + strlen(key), NULL) : -1;
}

/* `prog -m mode ARGS` over tr: its "result mode NS", or -1. */
static double prog_result(const char *tr, const char *const *env,
			  const char *mode, const char *n, const char *k,
			  char *out, size_t cap)
{
	char reps[16];
	snprintf(reps, sizeof(reps), "%d", bench_quick ? 5 : 9);
	const char *argv[] = {prog, "-m", mode, "-n", n,
			      "-r", reps, "-k", k,    NULL};
	if (job(tr, env, argv, mode, out, cap))
		return -1;
	char key[64];
	snprintf(key, sizeof(key), "result %s ", mode);
	double v = value_in(out, key);
	if (v < 0) {
		printf("# dsm_ops: no result from the %s job over %s:\n%s",
		       mode, tr, out);
		bad = 1;
	}
	return v;
}

/* The kernel's part of a fault as the jobs' nodes take it, from the
 * dsm_fault benchmark beside this one: dsm_fault_uffd where it printed
 * one (the kernel has userfaultfd, which EARTH_DSM_FAULTS=auto takes),
 * unless EARTH_DSM_FAULTS asks for protections; else dsm_fault_kernel. */
static double fault_kernel(void)
{
	char cmd[PATH_MAX + 64], line[512];
	bench_beside(self, "dsm_fault", cmd, sizeof(cmd));
	const char *how = getenv("EARTH_DSM_FAULTS");
	bool prot = how && !strcmp(how, "protections");
	FILE *f = popen(cmd, "r");
	double v = -1, u = -1;
	while (f && fgets(line, sizeof(line), f)) {
		printf("# dsm_fault: %s", line);
		if (!strncmp(line, "METRIC dsm_fault_kernel ", 24))
			v = strtod(line + 24, NULL);
		if (!strncmp(line, "METRIC dsm_fault_uffd ", 22))
			u = strtod(line + 22, NULL);
	}
	if (!prot && u > 0)
		v = u;
	printf("# dsm_ops: the nodes' faults by %s\n",
	       !prot && u > 0 ? "userfaultfd" : "protections");
	if (!f || pclose(f) || v <= 0) {
		fprintf(stderr, "dsm_ops: dsm_fault (%s) FAILED\n", cmd);
		bad = 1;
		return -1;
	}
	return v;
}

/* The shared-memory messages the two nodes sent each other per operation
 * of mode (lock, incr, barrier): jobs of 500 and 1000 operations per
 * thread, one repetition after the unrecorded one, under EARTH_STATS=1
 * (each node's "messages M (N to other nodes)" of its shared-memory
 * line: N, added), their difference over the 500 more: what setup and
 * the repetitions' barriers send cancels. -1 when a job failed. */
static double sync_msgs(const char *tr, const char *tls_set, const char *mode,
			char *out, size_t cap)
{
	const char *env[] = {"EARTH_STATS=1", tls_set, NULL};
	double sent[2];
	for (int j = 0; j < 2; j++) {
		const char *argv[] = {
		    prog, "-m", mode, "-n", j ? "1000" : "500",
		    "-r", "1",	NULL};
		if (job(tr, env, argv, mode, out, cap))
			return -1;
		sent[j] = 0;
		int nodes = 0;
		for (const char *p = out;
		     (p = strstr(p, "barrier messages sent; "
				    "messages "));
		     nodes++) {
			p = strchr(
			    p + strlen("barrier messages sent; messages "),
			    '(');
			if (!p)
				break;
			sent[j] += strtod(p + 1, NULL);
		}
		if (nodes != 2) {
			printf("# dsm_ops: no shared-memory messages of both "
			       "nodes from the %s job over %s:\n%s",
			       mode, tr, out);
			bad = 1;
			return -1;
		}
	}
	/* 500 more per thread, in 2 repetitions; a lock's or an increment's
	 * by both threads */
	double ops = 500.0 * 2 * (strcmp(mode, "barrier") ? 2 : 1);
	return (sent[1] - sent[0]) / ops;
}

/* The fault and the three synchronisations every transport measures:
 * prog.c's mode, the METRIC name, and how many a job makes (pages read,
 * or synchronisations per thread). */
enum { OPS = 4 };
static const char *const op_mode[OPS] = {"fault", "lock", "incr", "barrier"};
static const char *const op_name[OPS] = {"dsm_fault", "dsm_lock_handoff",
					 "dsm_locked_incr", "dsm_barrier"};

static const char *op_count(int i)
{
	if (i == 0)
		return bench_quick ? "200" : "1000";
	return bench_quick ? "500" : "2000";
}

static void transport(const char *tr, const char *sfx, const char *tls,
		      double kernel)
{
	static char out[65536];
	char set[64], name[96];
	snprintf(set, sizeof(set), "UCX_TLS=%s", tls ? tls : "");
	const char *env[] = {tls ? set : NULL, NULL};
	/* The fault: every page faults (none refreshed at the barrier). */
	const char *fenv[] = {"EARTH_DSM_REFRESH=0", tls ? set : NULL, NULL};
	const char *gargv[] = {self, NULL};
	const char *genv[] = {"DSM_OPS_GET=1", tls ? set : NULL, NULL};
	double get = -1;
	if (!job(tr, genv, gargv, "get4k", out, sizeof(out))) {
		get = value_in(out, "get4k ");
		if (get <= 0) {
			printf("# dsm_ops: no get4k over %s:\n%s", sfx, out);
			bad = 1;
		}
	}
	double v[OPS];
	for (int i = 0; i < OPS; i++)
		v[i] = prog_result(tr, i ? env : fenv, op_mode[i], op_count(i),
				   "1", out, sizeof(out));
	double fault = v[0];
	if (fault > 0) {
		snprintf(name, sizeof(name), "dsm_fault.%s", sfx);
		bench_metric_ns(name, fault);
	}
	if (get > 0) {
		snprintf(name, sizeof(name), "get4k.%s", sfx);
		bench_metric_ns(name, get);
	}
	if (get > 0 && kernel > 0) {
		snprintf(name, sizeof(name), "dsm_fault_floor.%s", sfx);
		bench_metric_ns(name, kernel + get);
		if (fault > 0) {
			snprintf(name, sizeof(name), "dsm_fault_over_floor.%s",
				 sfx);
			bench_metric(name, fault / (kernel + get), "x");
		}
	}
	/* The EU's time per miss: fibers' split-phase acquisition against a
	 * program thread's fault, node 1's EU busy time in the same job. */
	const char *tenv[] = {"EARTH_TIMING=1", tls ? set : NULL, NULL};
	double miss = prog_result(tr, tenv, "miss_eu", op_count(0), "1", out,
				  sizeof(out)),
	       miss_thread =
		   miss > 0 ? value_in(out, "result miss_eu_thread ") : -1;
	if (miss > 0 && miss_thread > 0) {
		snprintf(name, sizeof(name), "tc_dsm_miss_eu.%s", sfx);
		bench_metric_ns(name, miss);
		snprintf(name, sizeof(name), "dsm_fault_eu.%s", sfx);
		bench_metric_ns(name, miss_thread);
		double hit = value_in(out, "result miss_eu_hit "),
		       check = value_in(out, "result miss_eu_check ");
		snprintf(name, sizeof(name), "tc_dsm_hit_acquire.%s", sfx);
		bench_metric_ns(name, hit);
		snprintf(name, sizeof(name), "tc_dsm_check.%s", sfx);
		bench_metric_ns(name, check);
	} else if (miss > 0) {
		printf("# dsm_ops: no miss_eu_thread over %s:\n%s", sfx, out);
		bad = 1;
	}
	for (int i = 1; i < OPS; i++) /* the synchronisations */
		if (v[i] > 0) {
			snprintf(name, sizeof(name), "%s.%s", op_name[i], sfx);
			bench_metric_ns(name, v[i]);
			double m = sync_msgs(tr, tls ? set : NULL, op_mode[i],
					     out, sizeof(out));
			if (m >= 0) {
				snprintf(name, sizeof(name), "%s_msgs.%s",
					 op_name[i], sfx);
				bench_metric(name, m, "msgs");
			}
		}
}

/* The fault, the lock, the increment and the barrier over shm on
 * single-poll nodes: one thread a node, two cores in all, so where the
 * dual nodes' four units share fewer than four cores these wait for no
 * scheduler (each node's protocol work runs between its thread's runs, on
 * its one core). */
static void single_poll(void)
{
	static char out[65536];
	const char *env[] = {"EARTH_MODE=single-poll", NULL};
	const char *fenv[] = {"EARTH_MODE=single-poll", "EARTH_DSM_REFRESH=0",
			      NULL};
	for (int i = 0; i < OPS; i++) {
		double v = prog_result("shm", i ? env : fenv, op_mode[i],
				       op_count(i), "1", out, sizeof(out));
		if (v > 0) {
			char name[96];
			snprintf(name, sizeof(name), "%s.shm.single_poll",
				 op_name[i]);
			bench_metric_ns(name, v);
		}
	}
}

/* Barriers of k threads a node over shm, k = 4 and 16, on dual nodes and
 * on single-poll ones: dsm_barrier.shm.k<k>[.single_poll]. */
static void barrier_threads(void)
{
	static char out[65536];
	static const char *const ks[] = {"4", "16"};
	const char *modes[] = {NULL, "EARTH_MODE=single-poll"};
	for (int m = 0; m < 2; m++)
		for (int i = 0; i < 2; i++) {
			const char *env[] = {modes[m], NULL};
			double v =
			    prog_result("shm", env, "barrier", op_count(3),
					ks[i], out, sizeof(out));
			if (v > 0) {
				char name[96];
				snprintf(name, sizeof(name),
					 "dsm_barrier.shm.k%s%s", ks[i],
					 m ? ".single_poll" : "");
				bench_metric_ns(name, v);
			}
		}
}

/* ---- Jacobi with two pthreads ---- */

static double pj_x[JAC_N], pj_y[JAC_N];
static pthread_barrier_t pj_bar;

/* Thread me's part: its half set up, a barrier (main's clock starts
 * there: it is thread 0), the sweeps, each ended by a barrier. */
static void pj_run(long me, uint64_t *t0)
{
	long lo = me * JAC_HALF, hi = lo + JAC_HALF;
	for (long i = lo; i < hi; i++)
		pj_x[i] = pj_y[i] = jac_init(i);
	pthread_barrier_wait(&pj_bar);
	if (t0)
		*t0 = q_tsc_ordered();
	for (int s = 0; s < JAC_SWEEPS; s++) {
		double *src = s % 2 ? pj_y : pj_x, *dst = s % 2 ? pj_x : pj_y;
		jac_sweep(src + lo, dst + lo, JAC_HALF, lo ? src[lo - 1] : 0,
			  hi < JAC_N ? src[hi] : 0, lo == 0, hi == JAC_N);
		pthread_barrier_wait(&pj_bar);
	}
}

static void *pj_thread(void *arg)
{
	pj_run((long)(intptr_t)arg, NULL);
	return NULL;
}

/* One run of two pthreads (ns from their first barrier to the end of the
 * sweeps, main's clock) and its checksum. */
static double pthreads_jacobi(double *checksum)
{
	pthread_t t;
	uint64_t t0;
	pthread_barrier_init(&pj_bar, NULL, 2);
	if (pthread_create(&t, NULL, pj_thread, (void *)(intptr_t)1)) {
		perror("dsm_ops: pthread_create");
		exit(1);
	}
	pj_run(0, &t0);
	double ns = bench_ns((double)(q_tsc_ordered() - t0));
	pthread_join(t, NULL);
	pthread_barrier_destroy(&pj_bar);
	double *res = JAC_SWEEPS % 2 ? pj_y : pj_x, sum = 0;
	for (long i = 0; i < JAC_N; i++)
		sum += res[i] * (double)(i % 7 + 1);
	*checksum = sum;
	return ns;
}

/* The Jacobi in Open MPI (progs/mpi_jacobi beside this driver), 2 ranks on
 * this host over shared memory: its median ns and checksum; 0 when it or
 * mpirun is missing (said), or the run fails (said, counted bad). */
static double mpi_jacobi(double *checksum)
{
	char path[PATH_MAX + 64], cmd[2 * PATH_MAX];
	static char out[4096];
	bench_beside(self, "progs/mpi_jacobi", path, sizeof(path));
	if (access(path, X_OK) || system("command -v mpirun >/dev/null 2>&1")) {
		printf("# dsm_ops: no mpi_jacobi or mpirun (Debian "
		       "libopenmpi-dev, openmpi-bin): the MPI Jacobi "
		       "skipped\n");
		return 0;
	}
	snprintf(cmd, sizeof(cmd),
		 "mpirun --allow-run-as-root --oversubscribe --bind-to none "
		 "-np 2 --mca btl self,vader '%s' %d 2>&1",
		 path, bench_reps);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	if (p) {
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
	}
	int st = p ? pclose(p) : -1;
	double ns = value_in(out, "median ");
	*checksum = value_in(out, "checksum ");
	if (st != 0 || ns <= 0) {
		printf("# dsm_ops: the MPI Jacobi FAILED (status %d): %s\n", st,
		       out);
		bad = 1;
		return 0;
	}
	return ns;
}

static void jacobi(void)
{
	static char out[65536];
	double v[64], sum = 0;
	pthreads_jacobi(&sum); /* first touches, not counted */
	for (int r = 0; r < bench_reps; r++)
		v[r] = pthreads_jacobi(&sum);
	double pt = bench_median(v, bench_reps);
	const char *env[] = {NULL};
	double dsm =
	    prog_result("shm", env, "jacobi", "1", "1", out, sizeof(out));
	if (dsm <= 0)
		return;
	double dsum = value_in(out, "checksum ");
	if (dsum != sum) {
		printf("# dsm_ops: Jacobi WRONG: checksum %.17g on shared "
		       "memory, %.17g with pthreads\n",
		       dsum, sum);
		bad = 1;
		return;
	}
	printf("# dsm_ops: Jacobi checksum %.17g on both\n", sum);
	bench_metric_ns("dsm_jacobi", dsm);
	bench_metric_ns("pthreads_jacobi", pt);
	bench_metric("dsm_jacobi_over_pthreads", dsm / pt, "x");
	/* Single-poll nodes: one thread each, so two nodes need two cores,
	 * as the pthreads do; where the dual nodes' four units share fewer
	 * than four cores, this is the figure that waits for no scheduler. */
	const char *one[] = {"EARTH_MODE=single-poll", NULL};
	double sp =
	    prog_result("shm", one, "jacobi", "1", "1", out, sizeof(out));
	if (sp > 0 && value_in(out, "checksum ") != sum) {
		printf("# dsm_ops: Jacobi WRONG on single-poll nodes: "
		       "checksum %.17g, %.17g with pthreads\n",
		       value_in(out, "checksum "), sum);
		bad = 1;
	} else if (sp > 0) {
		bench_metric_ns("dsm_jacobi.single_poll", sp);
		bench_metric("dsm_jacobi_over_pthreads.single_poll", sp / pt,
			     "x");
	}
	double msum = 0, mpi = mpi_jacobi(&msum);
	if (mpi <= 0)
		return;
	if (msum != sum) {
		printf("# dsm_ops: Jacobi WRONG: checksum %.17g with MPI, "
		       "%.17g with pthreads\n",
		       msum, sum);
		bad = 1;
		return;
	}
	bench_metric_ns("mpi_jacobi", mpi);
	bench_metric("dsm_jacobi_over_mpi", dsm / mpi, "x");
}

/* ---- latency hiding ---- */

/* sfx: "" for dual nodes, ".single_poll" for single-poll ones (mode
 * set: EARTH_MODE=...), each measured against its own T_local. */
static void hidden_in(const char *mode, const char *sfx)
{
	static char out[65536];
	const char *np = bench_quick ? "64" : "256";
	const char *none[] = {mode, NULL};
	char name[96];
	double local =
	    prog_result("shm", none, "hidden", np, "1", out, sizeof(out));
	if (local <= 0)
		return;
	snprintf(name, sizeof(name), "dsm_hidden_local%s", sfx);
	bench_metric_ns(name, local);
	static const long lat_us[] = {20, 100};
	static const int ks[] = {1, 2, 4, 8, 16};
	for (int l = 0; l < 2; l++) {
		char set[64], kk[8];
		snprintf(set, sizeof(set), "EARTH_NET_LATENCY_NS=%ld",
			 lat_us[l] * 1000);
		const char *env[] = {set, mode, NULL};
		double t1 = -1;
		for (int i = 0; i < 5; i++) {
			snprintf(kk, sizeof(kk), "%d", ks[i]);
			double t = prog_result("shm", env, "hidden", np, kk,
					       out, sizeof(out));
			if (t <= 0)
				continue;
			if (ks[i] == 1)
				t1 = t;
			snprintf(name, sizeof(name),
				 "dsm_hidden_time.t%d.lat%ld%s", ks[i],
				 lat_us[l], sfx);
			bench_metric_ns(name, t);
			if (t1 > local) {
				snprintf(name, sizeof(name),
					 "dsm_hidden.t%d.lat%ld%s", ks[i],
					 lat_us[l], sfx);
				bench_metric(name, (t1 - t) / (t1 - local),
					     "x");
			}
		}
	}
}

/* Dual nodes, and single-poll ones: one thread a node, which runs the
 * program threads and serves the protocol between their runs (two cores
 * in all, so nothing waits for the scheduler on a 2-core machine). */
static void hidden(void)
{
	hidden_in(NULL, "");
	hidden_in("EARTH_MODE=single-poll", ".single_poll");
}

/* ---- what each protocol setting buys ---- */

static void settings(void)
{
	static char out[65536];
	static const struct {
		const char *name, *off, *mode, *n, *tr;
	} s[] = {
	    {"home_keep", "EARTH_DSM_HOME_KEEP=0", "jacobi", "1", "shm"},
	    {"refresh", "EARTH_DSM_REFRESH=0", "jacobi", "1", "shm"},
	    {"lock_pretwin", "EARTH_DSM_LOCK_PRETWIN=0", "incr", "1000", "shm"},
	    {"grant_pages", "EARTH_DSM_GRANT_PAGES=0", "incr", "1000", "tcp"},
	    {"claim_ahead", "EARTH_DSM_CLAIM_AHEAD=0", "first", "200", "shm"},
	};
	int pairs = bench_quick ? 1 : 3;
	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++) {
		double v[2][3];
		int got = 0;
		for (int r = 0; r < pairs; r++) {
			const char *off[] = {"EARTH_MODE=single-poll", s[i].off,
					     NULL};
			const char *on[] = {"EARTH_MODE=single-poll", NULL};
			v[0][got] = prog_result(s[i].tr, off, s[i].mode, s[i].n,
						"1", out, sizeof(out));
			v[1][got] = prog_result(s[i].tr, on, s[i].mode, s[i].n,
						"1", out, sizeof(out));
			if (v[0][got] > 0 && v[1][got] > 0)
				got++;
		}
		if (!got)
			continue;
		char name[96];
		double m[2];
		for (int w = 0; w < 2; w++) {
			m[w] = bench_median(v[w], got);
			snprintf(name, sizeof(name), "dsm_setting.%s.%s",
				 s[i].name, w ? "on" : "off");
			bench_metric_ns(name, m[w]);
		}
		snprintf(name, sizeof(name), "dsm_setting_gain.%s", s[i].name);
		bench_metric(name, m[0] / m[1], "x");
	}
}

int main(int argc, char **argv)
{
	if (getenv("DSM_OPS_GET") && bench_setting(EARTH_SET_NODES)->given)
		return get_node(argc, argv);
	bench_init("dsm_ops", argc, argv);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("# dsm_ops: 2 nodes x 2 threads (EU, SU) on %ld cores%s\n",
	       cores,
	       cores < 4 ? " (oversubscribed: the figures are reported, not "
			   "judged)"
			 : "");
	if (bench_self_and_earthrun(self, sizeof(self), earthrun,
				    sizeof(earthrun)))
		return 1;
	bench_beside(self, "progs/dsm_ops_prog", prog, sizeof(prog));
	if (access(prog, X_OK)) {
		fprintf(stderr, "dsm_ops: %s: not found (make builds it)\n",
			prog);
		return 1;
	}
	double kernel = fault_kernel();
	transport("shm", "shm", NULL, kernel);
	transport("tcp", "tcp", NULL, kernel);
	transport("ucx", "ucx_tcp", "tcp", kernel);
	transport("ucx", "ucx_shm", "posix,cma", kernel);
	single_poll();
	barrier_threads();
	jacobi();
	hidden();
	settings();
	return bad;
}
