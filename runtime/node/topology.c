/* SPDX-License-Identifier: MIT */
/*
 * topology.c - choosing the EU and SU CPUs: two distinct CPUs the process
 * may use, preferring a pair that shares the last-level cache (one CCX /
 * tile) and is not an SMT sibling pair, on one NUMA node. EARTH_CPUS=eu,su
 * overrides. With a single usable CPU both units share it (oversubscribed).
 * The node's number of Execution Units (EARTH_EUS) is chosen here too.
 * The machine is read through hwloc: its topology is loaded once, when the
 * node starts (twice with EARTH_EUS=auto, which counts its cores),
 * restricted to the CPUs this thread may run on, and dropped once the CPUs
 * are chosen.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "base/settings.h"

#include <hwloc.h>
#include <inttypes.h>
#include <hwloc/glibc-sched.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loads the topology restricted to the calling thread's CPU binding and
 * fills allowed with that binding; NULL (allowed from sched_getaffinity)
 * when hwloc cannot read the machine. */
static hwloc_topology_t topo_load(cpu_set_t *allowed)
{
	hwloc_topology_t t;
	CPU_ZERO(allowed);
	if (hwloc_topology_init(&t) != 0)
		goto plain;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	if (!set || hwloc_topology_load(t) != 0 ||
	    hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD) != 0 ||
	    hwloc_cpuset_to_glibc_sched_affinity(t, set, allowed,
						 sizeof(*allowed)) != 0 ||
	    hwloc_topology_restrict(t, set, 0) != 0) {
		hwloc_bitmap_free(set);
		hwloc_topology_destroy(t);
		goto plain;
	}
	hwloc_bitmap_free(set);
	return t;
plain:
	if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0)
		CPU_ZERO(allowed);
	return NULL;
}

static int numa_of(hwloc_topology_t t, int cpu)
{
	if (cpu < 0 || numa_available() < 0)
		return -1;
	if (t) {
		hwloc_obj_t nn = NULL;
		while ((
		    nn = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nn)))
			if (nn->cpuset &&
			    hwloc_bitmap_isset(nn->cpuset, (unsigned)cpu))
				return (int)nn->os_index;
	}
	return numa_node_of_cpu(cpu);
}

/* The last-level cache above CPU cpu: its topmost cache ancestor. */
static hwloc_obj_t llc_of(hwloc_obj_t pu)
{
	hwloc_obj_t llc = NULL;
	for (hwloc_obj_t o = pu ? pu->parent : NULL; o; o = o->parent)
		if (hwloc_obj_type_is_cache(o->type) &&
		    !hwloc_obj_type_is_icache(o->type))
			llc = o;
	return llc;
}

/* Score of SU candidate c for EU cpu e: higher is better. */
static int pair_score(hwloc_topology_t t, int e, int c)
{
	int s = 0;
	hwloc_obj_t pu =
	    t ? hwloc_get_pu_obj_by_os_index(t, (unsigned)e) : NULL;
	if (pu) {
		hwloc_obj_t llc = llc_of(pu);
		if (llc && hwloc_bitmap_isset(llc->cpuset, (unsigned)c))
			s += 4;
		hwloc_obj_t core =
		    hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
		if (core && !hwloc_bitmap_isset(core->cpuset, (unsigned)c))
			s += 2;
	}
	if (numa_of(t, e) == numa_of(t, c))
		s += 1;
	return s;
}

bool earth_eu_cpus_place(int eu_cpu, int su_cpu, const int *free, unsigned m,
			 unsigned local_rank, unsigned local_size, unsigned k,
			 int *out)
{
	/* Nodes on one host: the free CPUs split between them. */
	unsigned share = m / (local_size ? local_size : 1);
	unsigned from = share * local_rank;
	if (share >= k - 1) {
		for (unsigned i = 1; i < k; i++)
			out[i - 1] = free[from + i - 1];
		return true;
	}
	/* Too few: wrap over the share, then the SU's CPU (an idle SU
	 * dozes and leaves it to the EU), then EU 0's (busy whenever the
	 * node has work), never one of another node's share. */
	int wrap[CPU_SETSIZE + 2];
	unsigned w = 0;
	for (unsigned j = 0; j < share; j++)
		wrap[w++] = free[from + j];
	if (su_cpu != eu_cpu)
		wrap[w++] = su_cpu;
	wrap[w++] = eu_cpu;
	for (unsigned i = 1; i < k; i++)
		out[i - 1] = wrap[(i - 1) % w];
	return false;
}

/* The CPUs of a node's k EUs (n->eu_cpus): EU 0's is n->eu_cpu; EU i > 0
 * takes the allowed CPUs that neither this node's SU nor its EU 0 has,
 * those of the SU's NUMA node first, in order, a share of them per node
 * of the host (earth_eu_cpus_place); with too few they share, the node
 * counts as oversubscribed (its idle units yield, the SU dozes when idle),
 * and the node says so once. */
static int eu_cpus_choose(struct earth_node *n, hwloc_topology_t topo,
			  const cpu_set_t *allowed)
{
	unsigned k = n->eus ? n->eus : 1;
	n->eu_cpus = calloc(k, sizeof(*n->eu_cpus));
	if (!n->eu_cpus) {
		fprintf(stderr, "earth: out of memory choosing CPUs\n");
		return -12;
	}
	n->eu_cpus[0] = n->eu_cpu;
	if (k == 1)
		return 0;
	int cpus[CPU_SETSIZE], m = 0;
	int su_numa = numa_of(topo, n->su_cpu);
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, allowed) && c != n->eu_cpu &&
			    c != n->su_cpu &&
			    (numa_of(topo, c) == su_numa) == (pass == 0))
				cpus[m++] = c;
	unsigned share = (unsigned)m / (n->local_size ? n->local_size : 1);
	if (!earth_eu_cpus_place(n->eu_cpu, n->su_cpu, cpus, (unsigned)m,
				 n->local_rank, n->local_size, k,
				 n->eu_cpus + 1)) {
		unsigned own = share + (n->eu_cpu == n->su_cpu ? 1 : 2);
		n->oversubscribed = true;
		fprintf(
		    stderr,
		    "earth: node %u: note: %u Execution Units and the SU on %u "
		    "CPU%s: EUs share CPUs (oversubscribed: idle units "
		    "yield, the SU dozes when idle); fewer EUs "
		    "(EARTH_EUS=auto) run each on a CPU of its own\n",
		    n->id, k, own, own == 1 ? "" : "s");
	}
	return 0;
}

int earth_topology_choose(struct earth_node *n)
{
	cpu_set_t allowed;
	hwloc_topology_t topo = topo_load(&allowed);
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
				if (topo)
					hwloc_topology_destroy(topo);
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
			int s = pair_score(topo, e, c);
			if (s > best_score) {
				best_score = s;
				best = c;
			}
		}
		n->eu_cpu = e;
		n->su_cpu = best;
	}
	n->numa_node = numa_of(topo, n->eu_cpu);
	int rc = eu_cpus_choose(n, topo, &allowed);
	if (topo)
		hwloc_topology_destroy(topo);
	return rc;
}

_Static_assert(EARTH_EUS_MAX <= UINT16_MAX, "earth_node.eus is 16 bits");

unsigned earth_eus_resolve(uint64_t asked, unsigned cores, unsigned local_size,
			   bool cpus_given, const char *single, char *msg,
			   size_t len)
{
	if (asked == 0) {
		/* auto: this node's share of the cores, one kept for the SU;
		 * EARTH_CPUS names one EU's CPU and the SU's; a single-core
		 * node's one thread is its EU. */
		unsigned share = cores / (local_size ? local_size : 1);
		unsigned k = share > 1 ? share - 1 : 1;
		if (cpus_given || single)
			k = 1;
		return k < EARTH_EUS_MAX ? k : EARTH_EUS_MAX;
	}
	if (asked > 1 && single) {
		snprintf(msg, len,
			 "EARTH_EUS=%" PRIu64 " with EARTH_MODE=%s: a "
			 "single-core node runs one EU, which does the SU's "
			 "work too; give EARTH_EUS=1 or auto, or "
			 "EARTH_MODE=dual",
			 asked, single);
		return 0;
	}
	return (unsigned)asked;
}

/* The cores of the process's affinity set (hwloc), or its CPUs where hwloc
 * cannot read the machine: SMT siblings count once, as EUs want cores of
 * their own. */
static unsigned affinity_cores(void)
{
	cpu_set_t allowed;
	hwloc_topology_t t = topo_load(&allowed);
	int cores = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) : 0;
	if (t)
		hwloc_topology_destroy(t);
	return (unsigned)(cores > 0 ? cores : CPU_COUNT(&allowed));
}

int earth_eus_choose(struct earth_node *n)
{
	uint64_t asked = earth_setting_u64(EARTH_SET_EUS);
	char msg[512];
	unsigned k = earth_eus_resolve(
	    asked, asked ? 0 : affinity_cores(), n->local_size,
	    n->opts.eu_cpu >= 0 || n->opts.su_cpu >= 0,
	    n->opts.node_mode != EARTH_MODE_DUAL
		? earth_mode_names[n->opts.node_mode]
		: NULL,
	    msg, sizeof(msg));
	if (!k) {
		fprintf(stderr, "earth: %s\n", msg);
		return -22;
	}
	n->eus = (uint16_t)k;
	return 0;
}
