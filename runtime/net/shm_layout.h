/* SPDX-License-Identifier: MIT */
/*
 * shm_layout.h - the shared mapping earthrun creates for a job on one
 * host and every node maps: a header, one line per node (its SU's futex
 * word), and one byte ring per ordered pair of nodes (ring i->j at index
 * i * nodes + j). Shared by the launcher and the shm transport.
 */
#ifndef EARTH_SHM_LAYOUT_H
#define EARTH_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC 0x4541525448534d31ull /* "EARTHSM1" */
#define SHM_LINE 64

struct shm_job {
	uint64_t magic;
	uint32_t nodes;
	uint32_t pad;
	uint64_t ring_bytes; /* power of two */
	uint64_t total;      /* bytes of the whole mapping */
	/* Set by earthrun when a node died: which one, and how. */
	_Atomic int32_t dead_node;
	_Atomic int32_t dead_how; /* signal number, or 256 + exit status */
} __attribute__((aligned(SHM_LINE)));

struct shm_node {
	/* The node's SU sleeps on this (shared futex); peers store RUNNING
	 * and wake it after they fence following a send. */
	_Atomic uint32_t su_state;
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

static inline size_t shm_total(uint32_t nodes, uint64_t ring_bytes)
{
	return sizeof(struct shm_job) + (size_t)nodes * sizeof(struct shm_node) +
	       (size_t)nodes * nodes * shm_ring_stride(ring_bytes);
}

static inline struct shm_node *shm_node_at(struct shm_job *j, uint32_t i)
{
	return (struct shm_node *)(j + 1) + i;
}

static inline struct shm_ring *shm_ring_at(struct shm_job *j, uint32_t from,
					   uint32_t to)
{
	char *rings = (char *)shm_node_at(j, j->nodes);
	return (struct shm_ring *)(rings + ((size_t)from * j->nodes + to) *
						   shm_ring_stride(j->ring_bytes));
}

#endif /* EARTH_SHM_LAYOUT_H */
