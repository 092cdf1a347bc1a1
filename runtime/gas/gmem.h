/* SPDX-License-Identifier: MIT */
/*
 * gmem.h - global memory: one segment per node, node k's at
 * GMEM_BASE + k * seg in every process of the job (shm_layout.h), so a
 * global pointer's address is the same number on every node. Where another
 * node's segment is mapped in this process too (earthrun's shared mapping,
 * or a transport's mapping of the peer's memory: ucx over shared memory),
 * the direct table says where, and the EU and the SU may access it right
 * here (the direct one-sided path, EARTH_REMOTE=direct); otherwise remote
 * accesses go through the owner's SU, which accepts them because the
 * segment is registered memory.
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
	bool mapped;	  /* this node's segment (at least) is mapped */
	bool shared;	  /* every node's segment is mapped here */
	bool want_direct; /* EARTH_REMOTE=direct */
	void *map;	  /* what gmem_open mapped */
	uint64_t map_len;
	/* The direct table: per node, where its segment is mapped in this
	 * process (NULL: not mapped here; the whole table NULL: none), and
	 * whether this node may store into the other nodes' (the shared
	 * mapping; a transport's mapping is read here, written through the
	 * owner's SU). */
	char **direct;
	bool direct_write;
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

/* Direct path (EU and SU threads): where [addr, addr + len) of node
 * `node`'s global segment may be read (write: and written) right here, in
 * a mapping of that segment in this process; NULL where it may not (no
 * mapping, or the range is not inside that node's segment: bounds from
 * this node's own layout, never from anything a peer wrote). */
static inline void *gmem_direct_ptr(uint32_t node, uint64_t addr, uint64_t len,
				    bool write)
{
	const struct gmem_state *g = &gmem_g;
	if (!g->direct || node >= g->nodes || (write && !g->direct_write))
		return NULL;
	char *base = g->direct[node];
	uint64_t lo = GMEM_BASE + (uint64_t)node * g->seg;
	if (!base || addr < lo || len > g->seg || addr - lo > g->seg - len)
		return NULL;
	return base + (addr - lo);
}

/* Does addr lie in the job's global memory, but outside node `node`'s
 * segment (a global pointer naming another node than the one whose
 * segment holds the address: no node accepts it)? */
static inline bool gmem_misplaced(uint32_t node, uint64_t addr)
{
	const struct gmem_state *g = &gmem_g;
	uint64_t off = addr - GMEM_BASE;
	return g->seg && addr >= GMEM_BASE &&
	       off < (uint64_t)g->nodes * g->seg &&
	       (off < (uint64_t)node * g->seg ||
		off - (uint64_t)node * g->seg >= g->seg);
}

#endif /* EARTH_GMEM_H */
