/* SPDX-License-Identifier: MIT */
/*
 * t_shm_rings.c - a node of a job over shm puts its rings into memory when
 * it attaches (runtime/net/shm.c, EARTH_SHM_POPULATE_MB): the pages of its
 * rings to and from every peer are in the job's file once net_shm_open
 * returns, their bytes unchanged; rings of other pairs are left alone, and
 * so are all of them past the limit. A job mapping laid out as earthrun
 * makes it (a memfd and the job header); residency read with mincore.
 * White-box: includes the internal net.h and shm_layout.h.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/config.h"
#include "base/settings.h"
#include "helpers.h"
#include "net/net.h"
#include "net/shm_layout.h"

TestSuite(shm_rings, .timeout = 30);

struct job {
	int fd;
	struct shm_job *map;
	size_t total;
	uint32_t nodes;
	uint64_t ring;
};

/* A job mapping of `nodes` nodes and rings of `ring` bytes, as earthrun
 * makes it, its rings untouched (the file sparse); EARTH_SHM_FD names it. */
static struct job job_new(uint32_t nodes, uint64_t ring)
{
	struct job j = {.nodes = nodes, .ring = ring};
	j.total = shm_total(nodes, ring);
	j.fd = memfd_create("t_shm_rings", MFD_CLOEXEC);
	cr_assert(j.fd >= 0 && !ftruncate(j.fd, (off_t)j.total));
	j.map =
	    mmap(NULL, j.total, PROT_READ | PROT_WRITE, MAP_SHARED, j.fd, 0);
	cr_assert(j.map != MAP_FAILED);
	j.map->nodes = nodes;
	j.map->ring_bytes = ring;
	j.map->total = j.total;
	atomic_store(&j.map->dead_node, -1);
	j.map->magic = SHM_MAGIC;
	char fd[16];
	snprintf(fd, sizeof(fd), "%d", j.fd);
	cr_assert(!setenv("EARTH_SHM_FD", fd, 1));
	cr_assert(!earth_settings_load(), "the settings were refused");
	return j;
}

static void job_free(struct job *j)
{
	munmap(j->map, j->total);
	close(j->fd);
}

/* How many of the pages wholly inside the data of ring from -> to are in
 * the job's file, and how many there are. */
static size_t resident(const struct job *j, uint32_t from, uint32_t to,
		       size_t *pages)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t base = (uintptr_t)j->map;
	struct shm_ring *r = shm_ring_at(j->map, j->nodes, j->ring, from, to);
	uintptr_t lo = ((uintptr_t)r->data - base + ps - 1) / ps * ps;
	uintptr_t hi = ((uintptr_t)r->data - base + j->ring) / ps * ps;
	size_t n = (hi - lo) / ps, in = 0;
	unsigned char *v = malloc(n);
	cr_assert(v && !mincore((void *)(base + lo), hi - lo, v));
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	*pages = n;
	return in;
}

Test(shm_rings, a_node_puts_its_rings_into_memory_when_it_attaches)
{
	struct job j = job_new(3, 256 * 1024);
	/* A message node 0 already wrote to node 1, at the end of its ring. */
	struct shm_ring *r01 = shm_ring_at(j.map, 3, j.ring, 0, 1);
	memcpy(r01->data + j.ring - 8, "written", 8);
	size_t pages;
	cr_assert_eq(resident(&j, 1, 0, &pages), 0);
	const char *err;
	struct net *t = net_shm_open(1, 3, &err);
	cr_assert(t, "net_shm_open: %s", err ? err : "?");
	/* Node 1's rings: to and from nodes 0 and 2, every page. */
	uint32_t mine[][2] = {{1, 0}, {0, 1}, {1, 2}, {2, 1}};
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		size_t in = resident(&j, mine[i][0], mine[i][1], &pages);
		cr_expect_eq(in, pages, "ring %u -> %u: %zu of %zu pages",
			     mine[i][0], mine[i][1], in, pages);
	}
	/* Not the rings between nodes 0 and 2. */
	cr_expect_eq(resident(&j, 0, 2, &pages), 0);
	cr_expect_eq(resident(&j, 2, 0, &pages), 0);
	/* What was in them is still there, and nothing else changed. */
	cr_expect_str_eq((const char *)r01->data + j.ring - 8, "written");
	cr_expect_eq(r01->data[0], 0);
	cr_expect_eq(atomic_load(&r01->tail), 0);
	t->ops->fini(t);
	job_free(&j);
}

Test(shm_rings, rings_past_the_limit_come_on_first_use)
{
	/* Two nodes whose two rings are larger than the limit together. */
	uint64_t ring = 1;
	while (2 * ring <= ((uint64_t)EARTH_SHM_POPULATE_MB << 20))
		ring *= 2;
	struct job j = job_new(2, ring);
	const char *err;
	struct net *t = net_shm_open(0, 2, &err);
	cr_assert(t, "net_shm_open: %s", err ? err : "?");
	size_t pages;
	cr_expect_eq(resident(&j, 0, 1, &pages), 0);
	cr_expect_eq(resident(&j, 1, 0, &pages), 0);
	t->ops->fini(t);
	job_free(&j);
}
