/* SPDX-License-Identifier: MIT */
/*
 * shm_layout.h - the shared mapping earthrun creates for a job on one
 * host and every node maps: a header, one line per node (its SU's futex
 * word), one byte ring per ordered pair of nodes (ring i->j at index
 * i * nodes + j), then, from a 2 MiB boundary, one global-memory segment
 * per node (gmem_seg bytes each), which every node maps at the same
 * address, GMEM_BASE + k * gmem_seg for node k (gas/gmem.c). Shared by the
 * launcher, the shm transport and global memory.
 *
 * Every process of the job can write the whole mapping: a node reads the
 * geometry (nodes, ring_bytes, total, gmem_seg, gmem_off) once when it
 * attaches, checks it against what it knows (its node count, the
 * mapping's size) and uses only its private copies afterwards; the ring
 * indices it must read again are checked against those bounds each time.
 */
#ifndef EARTH_SHM_LAYOUT_H
#define EARTH_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC 0x4541525448534d31ull /* "EARTHSM1" */
#define SHM_LINE 64
/* The most nodes and ring bytes a node accepts from a job header (so that
 * shm_total cannot overflow); earthrun makes far fewer and smaller. */
#define SHM_MAX_NODES 65535u
#define SHM_MAX_RING (1ull << 30)
/* Where node k's global segment lives in every process of a job (any
 * transport): GMEM_BASE + k * segment bytes. Inside the application
 * range of ASan and of TSan (the PIE range, 0x5500..0x5680 << 32) and far
 * above a non-randomised program's heap; the whole range is at most
 * GMEM_SPAN bytes. */
#define GMEM_BASE 0x560000000000ull
#define GMEM_SPAN (256ull << 30)
/* Where the global segments start in the job's file (and the shared
 * regions after them); a segment is a whole number of MiB
 * (EARTH_GMEM_MB), so node k's begins GMEM_UNIT-aligned. */
#define GMEM_ALIGN (2ull << 20)
#define GMEM_UNIT (1ull << 20)
/* Where a node's shared-memory region lies (earth_dsm.h; node/dsm.c),
 * the same in every process of a job: above where the executable and its
 * heap lie without randomisation, below the global segments, so at most
 * DSM_REGION_MAX_MB MiB (EARTH_DSM_MB's most). */
#define DSM_REGION_BASE 0x559000000000ull
#define DSM_REGION_MAX_MB ((GMEM_BASE - DSM_REGION_BASE) >> 20)
/* Default segment size per node (EARTH_GMEM_MB, earthrun --gmem-mb). */
#define GMEM_DEFAULT_MB 64

struct shm_job {
	uint64_t magic;
	uint32_t nodes;
	uint32_t pad;
	uint64_t ring_bytes; /* power of two */
	uint64_t total;	     /* bytes up to the end of the rings */
	/* Set by earthrun when a node died: which one, and how. */
	_Atomic int32_t dead_node;
	_Atomic int32_t dead_how; /* signal number, or 256 + exit status */
	/* Global memory: bytes per node (0: none), and the file offset of
	 * node 0's segment (node k's follows at + k * gmem_seg). */
	uint64_t gmem_seg;
	uint64_t gmem_off;
	/* Shared memory's regions (earth_dsm.h): bytes per node (0: none)
	 * and the file offset of node 0's (node k's follows at + k *
	 * dsm_seg), so that a node reads a page of another one-sided. */
	uint64_t dsm_seg;
	uint64_t dsm_off;
} __attribute__((aligned(SHM_LINE)));

struct shm_node {
	/* The node's SU sleeps on this (shared futex); peers store RUNNING
	 * and wake it after they fence following a send. */
	_Atomic uint32_t su_state;
	/* A single-interrupt node (node/irq.c) publishes its process, thread
	 * and signal (tid 0: none); a peer that published messages for it
	 * takes irq_armed (exchange to 0) and raises the signal with tgkill.
	 * The node stores irq_armed = 1, fences, then reads its rings. */
	_Atomic int32_t irq_pid, irq_tid, irq_sig;
	_Atomic uint32_t irq_armed;
} __attribute__((aligned(SHM_LINE)));

struct shm_ring {
	_Atomic uint64_t head __attribute__((aligned(SHM_LINE))); /* reader */
	_Atomic uint64_t tail __attribute__((aligned(SHM_LINE))); /* writer */
	unsigned char data[] __attribute__((aligned(SHM_LINE)));
};

static inline size_t shm_ring_stride(uint64_t ring_bytes)
{
	return sizeof(struct shm_ring) + (size_t)ring_bytes;
}

/* Bytes of the header, node lines and rings (what the transport maps). */
static inline size_t shm_total(uint32_t nodes, uint64_t ring_bytes)
{
	return sizeof(struct shm_job) +
	       (size_t)nodes * sizeof(struct shm_node) +
	       (size_t)nodes * nodes * shm_ring_stride(ring_bytes);
}

/* File offset of the global segments: after the rings, 2 MiB aligned. */
static inline uint64_t shm_gmem_off(uint32_t nodes, uint64_t ring_bytes)
{
	return ((uint64_t)shm_total(nodes, ring_bytes) + GMEM_ALIGN - 1) &
	       ~(GMEM_ALIGN - 1);
}

static inline struct shm_node *shm_node_at(struct shm_job *j, uint32_t i)
{
	return (struct shm_node *)(j + 1) + i;
}

/* Ring from -> to. nodes and ring_bytes are the node's private copies,
 * read and checked once when it attached (net/shm.c): never the header's
 * fields, which any local process that can map the job may rewrite. */
static inline struct shm_ring *shm_ring_at(struct shm_job *j, uint32_t nodes,
					   uint64_t ring_bytes, uint32_t from,
					   uint32_t to)
{
	char *rings = (char *)shm_node_at(j, nodes);
	return (struct shm_ring *)(rings + ((size_t)from * nodes + to) *
					       shm_ring_stride(ring_bytes));
}

#endif /* EARTH_SHM_LAYOUT_H */
