/* SPDX-License-Identifier: MIT */
/*
 * topology.c - choosing the EU and SU CPUs: two distinct CPUs the process
 * may use, preferring a pair that shares the last-level cache (one CCX /
 * tile) and is not an SMT sibling pair, on one NUMA node. EARTH_CPUS=eu,su
 * overrides. With a single usable CPU both units share it (oversubscribed).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/node.h"

#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a sysfs cpulist ("0-3,8") into set; 0 or -1. */
static int read_cpulist(int cpu, const char *leaf, cpu_set_t *set)
{
	char path[256], buf[1024];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/%s", cpu,
		 leaf);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *ok = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!ok)
		return -1;
	CPU_ZERO(set);
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -1;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				return -1;
		}
		for (long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int numa_of(int cpu)
{
	if (cpu < 0 || numa_available() < 0)
		return -1;
	return numa_node_of_cpu(cpu);
}

/* Score of SU candidate c for EU cpu e: higher is better. */
static int pair_score(int e, int c)
{
	cpu_set_t l3, smt;
	int s = 0;
	if (read_cpulist(e, "cache/index3/shared_cpu_list", &l3) == 0 &&
	    CPU_ISSET(c, &l3))
		s += 4;
	if (read_cpulist(e, "topology/thread_siblings_list", &smt) == 0 &&
	    !CPU_ISSET(c, &smt))
		s += 2;
	if (numa_of(e) == numa_of(c))
		s += 1;
	return s;
}

int earth_topology_choose(struct earth_node *n)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		CPU_ZERO(&allowed);
	int count = CPU_COUNT(&allowed);
	const struct earth_options *o = &n->opts;
	n->oversubscribed = false;
	if (o->eu_cpu >= 0 || o->su_cpu >= 0) {
		int cpus[2] = {o->eu_cpu, o->su_cpu};
		for (int i = 0; i < 2; i++) {
			if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE ||
			    !CPU_ISSET(cpus[i], &allowed)) {
				fprintf(stderr,
					"earth: EARTH_CPUS: CPU %d (%s) is not "
					"one this process may run on; see "
					"`taskset -p $$` or `nproc`\n",
					cpus[i], i ? "SU" : "EU");
				return -22;
			}
		}
		n->eu_cpu = o->eu_cpu;
		n->su_cpu = o->su_cpu;
		n->oversubscribed = n->eu_cpu == n->su_cpu;
	} else if (n->local_size > 1) {
		/* Several nodes on this host: node r takes the allowed CPUs
		 * 2r and 2r+1 (wrapping); with fewer than two CPUs per node
		 * they share, and spinning yields. Sharing, the EUs land
		 * together and the SUs together, on purpose: SUs mostly wait
		 * and yield, so they share a CPU well, while an SU next to
		 * another node's computing EU waits for its time slices
		 * (tried, 2 nodes on 2 CPUs with the SUs spread: remote-load
		 * total 26-31 us instead of 16 us while both EUs compute;
		 * only SU-to-SU exchanges got faster). */
		int cpus[CPU_SETSIZE], m = 0;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[m++] = c;
		if (m < 1)
			m = 1, cpus[0] = 0;
		n->eu_cpu = cpus[(2 * n->local_rank) % (uint32_t)m];
		n->su_cpu = cpus[(2 * n->local_rank + 1) % (uint32_t)m];
		n->oversubscribed = 2 * n->local_size > (uint32_t)m;
	} else if (count < 2) {
		int only = -1;
		for (int c = 0; c < CPU_SETSIZE && only < 0; c++)
			if (CPU_ISSET(c, &allowed))
				only = c;
		n->eu_cpu = n->su_cpu = only;
		n->oversubscribed = true;
		fprintf(stderr,
			"earth: only %d usable CPU: the EU and SU share CPU %d "
			"(oversubscribed; the SU yields, then sleeps when "
			"idle). A dual-processor node needs 2 CPUs.\n",
			count < 1 ? 0 : count, only);
	} else {
		int e = -1, best = -1, best_score = -1;
		for (int c = 0; c < CPU_SETSIZE && e < 0; c++)
			if (CPU_ISSET(c, &allowed))
				e = c;
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (c == e || !CPU_ISSET(c, &allowed))
				continue;
			int s = pair_score(e, c);
			if (s > best_score) {
				best_score = s;
				best = c;
			}
		}
		n->eu_cpu = e;
		n->su_cpu = best;
	}
	n->numa_node = numa_of(n->eu_cpu);
	return 0;
}
