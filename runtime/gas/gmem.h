/* SPDX-License-Identifier: MIT */
/*
 * gmem.h - global memory: one segment per node, node k's at
 * GMEM_BASE + k * seg in every process of the job (shm_layout.h), so a
 * global pointer's address is the same number on every node. Under
 * earthrun's shared mapping every node maps every segment, and the SU may
 * serve GET/DATA/BLKMOV on another node's segment itself (the direct
 * one-sided path, EARTH_REMOTE=direct); otherwise a node maps its own
 * segment only and remote accesses go through the owner's SU, which
 * accepts them because the segment is registered memory.
 */
#ifndef EARTH_GMEM_H
#define EARTH_GMEM_H

#ifndef EARTH_INTERNAL
#error "gmem.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "net/shm_layout.h"

struct net;

/* Written by gmem_open on the earth_run thread before the SU and EU
 * start (pthread_create orders it), read-only until gmem_close. */
struct gmem_state {
	uint64_t seg; /* bytes per node; 0: no global memory */
	uint32_t self, nodes;
	bool mapped; /* this node's segment (at least) is mapped */
	bool shared; /* every node's segment is mapped here */
	bool direct; /* shared, and EARTH_REMOTE=direct */
	void *map;   /* what gmem_open mapped */
	uint64_t map_len;
};
extern struct gmem_state gmem_g __attribute__((visibility("hidden")));

/*
 * Sets global memory up for node self of nodes (earth_run thread, after the
 * transport net opened, NULL for one node): reads EARTH_REMOTE and
 * EARTH_GMEM_MB (or the shared mapping's header), maps the segments, registers
 * this node's. Returns NULL, or what is wrong with the configuration (the node
 * does not start). A segment that cannot be mapped does not stop the start: the
 * first allocation stops the program with the reason.
 */
const char *gmem_open(uint32_t self, uint32_t nodes, const struct net *net);
/* After gmem_open, on every node of a job whose transport reads other
 * nodes' memory one-sided (net_ops.rma_expose): offers this node's segment
 * (none when it is not mapped) and learns the others'. earth_run thread.
 * NULL, or what went wrong. */
const char *gmem_expose(struct net *net);
/* Unmaps and forgets everything (earth_run thread, node end). */
void gmem_close(void);

/* Direct path (SU thread): may [addr, addr + len) of node `node` be
 * accessed right here, in the shared mapping? */
static inline bool gmem_direct_ok(uint32_t node, uint64_t addr, uint64_t len)
{
	const struct gmem_state *g = &gmem_g;
	if (!g->direct || node >= g->nodes)
		return false;
	uint64_t lo = GMEM_BASE + (uint64_t)node * g->seg;
	return addr >= lo && len <= g->seg && addr - lo <= g->seg - len;
}

#endif /* EARTH_GMEM_H */
