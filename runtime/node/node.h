/* SPDX-License-Identifier: MIT */
/*
 * node.h - the top layer: bringing the node up and down (node.c), its
 * modes (single.c, irq.c), the job it belongs to (job.c), its CPUs
 * (topology.c), options (options.c) and statistics (stats.c, report.c).
 * It sees both units (eu/eu.h, su/su.h); nothing below includes it.
 */
#ifndef EARTH_NODE_H
#define EARTH_NODE_H

#ifndef EARTH_INTERNAL
#error "node/node.h is internal to the EARTH runtime"
#endif

#include "eu/eu.h"
#include "su/su.h"
#include "unit/unit.h"
#include "earth_dsm.h"

#include <stdio.h>

/* Node number, node count and local rank from the environment (job.c).
 * Returns NULL or what is wrong. */
const char *earth_job_from_env(struct earth_node *n) EARTH_HIDDEN;
/* Started by a PMIx launcher with a randomised address-space layout:
 * executes this program again without (aslr.c); returns otherwise. */
void node_same_layout(void) EARTH_HIDDEN;

/* Shared memory across nodes (dsm.c): earth_dsm_main asks for it, and
 * earth_run readies it once the transport and global memory are up. */
extern bool node_dsm_wanted EARTH_HIDDEN;
int node_dsm_open(struct earth_node *n) EARTH_HIDDEN;
/* The page table earth_dsm_usable reads (node/dsm_fiber.c). */
void node_dsm_fiber_open(void) EARTH_HIDDEN;
/* Does earth_dsm_alloc take this placement and argument (a placement of
 * earth_dsm.h; CYCLIC's pages per block > 0, NODE's node in the job; at
 * most 24 bits)? Also the fibers' earth_dsm_alloc_sync. */
bool node_dsm_place_ok(enum earth_dsm_place place, unsigned arg) EARTH_HIDDEN;
/* Ends the job at operation op when id (of a lock, barrier or flag:
 * kind) names no object any node could have made. */
void node_dsm_check_object(const char *op, const char *kind,
			   uint64_t id) EARTH_HIDDEN;
struct dsm_stats;
/* The EU's hits into the fibers' counts (node/dsm_fiber.c). */
void node_dsm_fiber_stats(struct dsm_stats *st) EARTH_HIDDEN;

/* Topology: pick and validate the EU and SU CPUs (topology.c). Returns 0 or
 * -EINVAL after printing why. */
int earth_topology_choose(struct earth_node *n) EARTH_HIDDEN;

/* The Execution Units of a node (EARTH_EUS, docs/user-guide.md "Execution
 * Units"; topology.c). asked: the setting (0: auto); cores: the cores of
 * the process's affinity set (SMT siblings once); local_size: the nodes on
 * this host, which share them; cpus_given: EARTH_CPUS names the node's CPUs;
 * single: the name of a single-core node mode, NULL for dual. Returns k >= 1,
 * or 0 with what is wrong in msg (k > 1 in a single-core mode). */
unsigned earth_eus_resolve(uint64_t asked, unsigned cores, unsigned local_size,
			   bool cpus_given, const char *single, char *msg,
			   size_t len) EARTH_HIDDEN;
/* The CPUs of EUs 1 .. k-1 of a node into out[0 .. k-2] (topology.c):
 * free[0 .. m-1] are the allowed CPUs that neither this node's SU
 * (su_cpu) nor its EU 0 (eu_cpu) has, the SU's NUMA node's first; the
 * node is local_rank of the local_size nodes on the host and takes its
 * share of them, in order. With too few, the EUs wrap over its share, then
 * the SU's CPU (the SU dozes when idle), then EU 0's. Returns whether each
 * had a CPU of its own. */
bool earth_eu_cpus_place(int eu_cpu, int su_cpu, const int *free, unsigned m,
			 unsigned local_rank, unsigned local_size, unsigned k,
			 int *out) EARTH_HIDDEN;
/* n->eus from EARTH_EUS and the process's affinity set; 0, or -EINVAL
 * after printing why. */
int earth_eus_choose(struct earth_node *n) EARTH_HIDDEN;

/* Prints the statistics table of this node to stderr (stats.c). */
void earth_stats_print(const struct earth_stats *st) EARTH_HIDDEN;

/* The one thread of a single-core node (single.c): EU and SU work. */
void *eu_single_thread(void *start) EARTH_HIDDEN;
/* Stuck jobs (stuck.c): the calling thread is the node's own; may a
 * thread that is not still signal a slot; the report of this node's
 * waiting slots. */
void node_tid_known(void) EARTH_HIDDEN;
void node_tids_reset(void) EARTH_HIDDEN;
void node_tids_started(void) EARTH_HIDDEN;
void node_tids_transport(void) EARTH_HIDDEN;
bool node_may_signal(struct earth_node *n,
		     _Atomic uint32_t *inbox_users) EARTH_HIDDEN;
void node_stuck_report(struct earth_node *n) EARTH_HIDDEN;

/* The breakdown of base/acct.h (report.c). Node bring-up (earth_run
 * thread): clears the counters, turns counting on when statistics or a
 * trace were asked for. Returns 0 or -EINVAL after printing what is wrong
 * with EARTH_STATS_JSON. */
int acct_open(struct earth_node *n) EARTH_HIDDEN;
/* Node end (earth_run thread, units ended): prints the statistics and
 * breakdown tables when statistics were asked for (one write(2), so the
 * lines of two nodes never mix), and writes the JSON record. */
int acct_close(struct earth_node *n) EARTH_HIDDEN;
/* earth_stats_print's table, into f (stats.c). */
void stats_print_to(FILE *f, const struct earth_stats *st) EARTH_HIDDEN;
/* Writes the len bytes at buf to stderr with as few write(2) calls as it
 * takes (one, unless interrupted or cut short) (stats.c). */
void stats_write_err(const char *buf, size_t len) EARTH_HIDDEN;

/* EARTH_MODE's values, indexed by enum earth_node_mode (options.c). */
extern const char *const earth_mode_names[3] EARTH_HIDDEN;

#endif /* EARTH_NODE_H */
