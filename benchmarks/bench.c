/* SPDX-License-Identifier: MIT */
/*
 * bench.c - shared benchmark support (see bench.h).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "bench.h"
#include "base/settings.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_quick;
static const char *bench_name;

static void bench_fini(void)
{
	int eu, su;
	bench_cpus(&eu, &su);
	printf("# %s: xcore round trip at end %.0f ns\n", bench_name,
	       bench_xcore_rtt_ns(eu, su, 20000));
	printf("# %s: dispatch on the EU's CPU at end %.2f ns\n", bench_name,
	       bench_dispatch_ns(eu));
	fflush(stdout);
}
int bench_reps = 7;

static void cpu_model(char *out, size_t len)
{
	snprintf(out, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');
			if (c) {
				c += 2;
				c[strcspn(c, "\n")] = 0;
				snprintf(out, len, "%s", c);
			}
			break;
		}
	}
	fclose(f);
}

void bench_init(const char *name, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const char *q = getenv("QUICK");
	bench_quick = q && *q && strcmp(q, "0") != 0;
	const char *r = getenv("BENCH_REPS");
	bench_reps = r ? atoi(r) : (bench_quick ? 5 : 11);
	if (bench_reps < 5)
		bench_reps = 5;
	char model[256];
	cpu_model(model, sizeof(model));
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	int eu, su;
	bench_cpus(&eu, &su);
	printf("# %s: cpu \"%s\", %ld online cores, %d usable, TSC %.3f GHz, "
	       "reps %d%s; cpus %d,%d\n",
	       name, model, sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&set),
	       q_tsc_per_ns(), bench_reps, bench_quick ? ", QUICK" : "", eu,
	       su);
	/* The hypervisor moves vCPUs: the line round trip between the two
	 * CPUs tells which placement these figures were taken in. */
	printf("# %s: xcore round trip at start %.0f ns\n", name,
	       bench_xcore_rtt_ns(eu, su, 20000));
	printf("# %s: dispatch on the EU's CPU at start %.2f ns\n", name,
	       bench_dispatch_ns(eu));
	fflush(stdout);
	bench_name = name;
	atexit(bench_fini);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_ns(double ticks)
{
	return ticks / q_tsc_per_ns();
}

void bench_metric(const char *name, double value, const char *unit)
{
	printf("METRIC %s %.3f %s\n", name, value, unit);
	fflush(stdout);
}

void bench_metric_ns(const char *name, double ns)
{
	char cyc[256];
	bench_metric(name, ns, "ns");
	snprintf(cyc, sizeof(cyc), "%s.cycles", name);
	bench_metric(cyc, ns * q_tsc_per_ns(), "cycles");
}

void bench_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

const struct earth_set_value *bench_setting(enum earth_set id)
{
	char msg[256];
	if (earth_setting_load(id, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "bench: %s\n", msg);
		exit(2);
	}
	return earth_setting(id);
}

int bench_node_id(void)
{
	const struct earth_set_value *v = bench_setting(EARTH_SET_NODE);
	return v->given ? (int)v->u : -1;
}

void bench_cpus(int *eu, int *su)
{
	const struct earth_set_value *v = bench_setting(EARTH_SET_CPUS);
	*eu = v->given ? v->eu : 0;
	*su = v->given ? v->su : 1;
}

/* ---- cross-core cache-line ping-pong ---- */

static struct {
	_Atomic uint64_t ping q_aligned_line;
	_Atomic uint64_t pong q_aligned_line;
} pp;
static long pp_rounds;
static int pp_cpu;

static void *ponger(void *arg)
{
	(void)arg;
	bench_pin(pp_cpu);
	for (uint64_t i = 1; i <= (uint64_t)pp_rounds; i++) {
		/* Pairs with the pinger's release store of ping. */
		while (atomic_load_explicit(&pp.ping, memory_order_acquire) !=
		       i)
			q_cpu_relax();
		atomic_store_explicit(&pp.pong, i, memory_order_release);
	}
	return NULL;
}

double bench_xcore_rtt_ns(int cpu_a, int cpu_b, long rounds)
{
	atomic_store(&pp.ping, 0);
	atomic_store(&pp.pong, 0);
	pp_rounds = rounds;
	pp_cpu = cpu_b;
	cpu_set_t old;
	pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	bench_pin(cpu_a);
	pthread_t t;
	pthread_create(&t, NULL, ponger, NULL);
	uint64_t t0 = 0;
	long warm = rounds / 10;
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		if (i == (uint64_t)warm + 1)
			t0 = q_tsc_ordered();
		atomic_store_explicit(&pp.ping, i, memory_order_release);
		/* Pairs with the ponger's release store of pong. */
		while (atomic_load_explicit(&pp.pong, memory_order_acquire) !=
		       i)
			q_cpu_relax();
	}
	uint64_t t1 = q_tsc_ordered();
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return bench_ns((double)(t1 - t0) / (double)(rounds - warm));
}

/* ---- the speed of a CPU: calls through a table ---- */

#define DISPATCH_N 2048
#define DISPATCH_PASSES 100

typedef void (*dispatch_fn)(void *);
static __attribute__((noinline)) void dispatch_nop(void *arg)
{
	__asm__ __volatile__("" : : "r"(arg) : "memory");
}
static struct {
	dispatch_fn fn;
	void *arg;
} dispatch_table[DISPATCH_N];

double bench_dispatch_ns(int cpu)
{
	cpu_set_t old;
	pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	bench_pin(cpu);
	for (int i = 0; i < DISPATCH_N; i++) {
		dispatch_table[i].fn = dispatch_nop;
		dispatch_table[i].arg = &dispatch_table[i];
	}
	double v[9];
	for (int r = 0; r < 9; r++) {
		uint64_t t0 = q_tsc_ordered();
		for (int p = 0; p < DISPATCH_PASSES; p++)
			for (int i = 0; i < DISPATCH_N; i++)
				dispatch_table[i].fn(dispatch_table[i].arg);
		uint64_t t1 = q_tsc_ordered();
		v[r] = bench_ns((double)(t1 - t0)) /
		       (DISPATCH_PASSES * DISPATCH_N);
	}
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return bench_median(v, 9);
}
