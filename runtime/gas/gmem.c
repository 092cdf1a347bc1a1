/* SPDX-License-Identifier: MIT */
/*
 * gmem.c - global memory (gmem.h): mapping the segments, and allocating
 * in this node's segment. Two allocators share the segment: earth_galloc
 * takes the lowest fit (this node only), earth_garray_alloc the highest
 * fit of a second, symmetric bookkeeping that sees only array allocations
 * and frees, so every node that makes the same calls in the same order
 * gets the same offset. Both lists live in process memory under one lock:
 * any thread of a running node may allocate.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "gas/gmem.h"
#include "gas/gheap.h"
#include "base/settings.h"
#include "base/base.h"
#include "net/net.h"
#include "gas/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GMEM_GRAIN 64u /* every object starts on a cache line */

struct gmem_state gmem_g;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gheap heap; /* this node's segment: what is free */
static struct gheap sym;  /* the symmetric allocations alone */
/* Live allocations, sorted by offset. */
static struct grec {
	uint64_t off, len;
	bool sym;
} * recs;
static size_t nrecs, recs_cap;
/* Why there is no global memory here (or NULL). */
static char why[320];

/* EARTH_REMOTE, "su|direct": validated when the node started. */
static const char *remote_mode(bool *direct)
{
	*direct = earth_setting_u64(EARTH_SET_REMOTE) == 1;
	return NULL;
}

/* The shared mapping's header, if earthrun made one with segments. */
static int shared_fd(struct shm_job *hdr, uint32_t nodes)
{
	if (!earth_setting_given(EARTH_SET_SHM_FD))
		return -1;
	uint64_t fd = earth_setting_u64(EARTH_SET_SHM_FD);
	if (pread((int)fd, hdr, sizeof(*hdr), 0) != sizeof(*hdr) ||
	    hdr->magic != SHM_MAGIC || hdr->nodes != nodes || !hdr->gmem_seg)
		return -1;
	return (int)fd;
}

/* The segments' fields of the header (read once, into *hdr) lie within
 * the mapping's file: checked before they are used. */
static bool segments_fit(int fd, const struct shm_job *hdr, uint32_t nodes)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < 0)
		return false;
	uint64_t size = (uint64_t)st.st_size;
	return hdr->gmem_off <= size &&
	       (uint64_t)nodes * hdr->gmem_seg <= size - hdr->gmem_off;
}

static void map_failed(uint64_t at, uint64_t len, int err)
{
	snprintf(why, sizeof(why),
		 "cannot map global memory at [%#llx, +%llu MiB): %s%s",
		 (unsigned long long)at, (unsigned long long)(len >> 20),
		 strerror(err),
		 err == EEXIST ? " (the range is taken in this process: a "
				 "randomised layout, EARTH_ASLR=1, may put the "
				 "program there; start it without, or give "
				 "EARTH_GMEM_MB=0)"
			       : "");
}

/* The direct table, every entry empty but this node's own segment; with
 * all: every node's, where the shared mapping puts it (identity). */
static int direct_table(struct gmem_state *g, bool all)
{
	g->direct = calloc(g->nodes, sizeof(*g->direct));
	if (!g->direct)
		return -1;
	for (uint32_t k = 0; k < g->nodes; k++)
		if (all || k == g->self)
			g->direct[k] =
			    (char *)(uintptr_t)(GMEM_BASE +
						(uint64_t)k * g->seg);
	g->direct_write = all;
	return 0;
}

const char *gmem_open(uint32_t self, uint32_t nodes, const struct net *net)
{
	struct gmem_state *g = &gmem_g;
	memset(g, 0, sizeof(*g));
	why[0] = 0;
	g->self = self;
	g->nodes = nodes;
	bool direct;
	const char *bad = remote_mode(&direct);
	if (!bad)
		bad = net_gmem_seg(&g->seg);
	if (bad)
		return bad;
	g->want_direct = direct;
	struct shm_job hdr;
	int fd = net ? shared_fd(&hdr, nodes) : -1;
	if (fd >= 0) {
		if (hdr.gmem_seg % GMEM_UNIT || hdr.gmem_off % GMEM_ALIGN ||
		    hdr.gmem_seg > GMEM_SPAN / nodes ||
		    !segments_fit(fd, &hdr, nodes))
			return "the job mapping's global memory fields are "
			       "malformed (started by another earthrun?)";
		g->seg = hdr.gmem_seg;
	}
	if (g->nodes > 1 && g->seg > GMEM_SPAN / g->nodes)
		return "EARTH_GMEM_MB times the node count exceeds the 262144 "
		       "MiB global memory range";
	if (!g->seg) {
		snprintf(why, sizeof(why),
			 "this job has no global memory "
			 "(EARTH_GMEM_MB=0 or earthrun "
			 "--gmem-mb 0)");
		return NULL;
	}
	uint64_t mine = GMEM_BASE + (uint64_t)self * g->seg;
	void *want, *p;
	if (fd >= 0) {
		want = (void *)(uintptr_t)GMEM_BASE;
		g->map_len = (uint64_t)nodes * g->seg;
		p = mmap(want, g->map_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd,
			 (off_t)hdr.gmem_off);
	} else {
		want = (void *)(uintptr_t)mine;
		g->map_len = g->seg;
		p = mmap(want, g->map_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			     MAP_FIXED_NOREPLACE,
			 -1, 0);
	}
	if (p == MAP_FAILED || p != want) {
		/* A kernel before 4.17 takes the flag as a hint. */
		int err = p == MAP_FAILED ? errno : EEXIST;
		if (p != MAP_FAILED)
			munmap(p, g->map_len);
		map_failed((uintptr_t)want, g->map_len, err);
		g->map_len = 0;
		return NULL;
	}
	g->map = p;
	g->mapped = true;
	g->shared = fd >= 0;
	/* Not under an emulated network (net/emu.c): it must see the data. */
	bool table = g->shared && direct && !strcmp(net->ops->name, "shm");
	if (reg_mem_add((void *)(uintptr_t)mine, g->seg) ||
	    gheap_init(&heap, g->seg) || gheap_init(&sym, g->seg) ||
	    (table && direct_table(g, true))) {
		gmem_close();
		snprintf(why, sizeof(why),
			 "cannot register global memory: out "
			 "of memory");
	}
	return NULL;
}

const char *gmem_expose(struct net *net)
{
	struct gmem_state *g = &gmem_g;
	if (!net || !net->ops->rma_expose)
		return NULL;
	bool own = g->mapped && !g->shared;
	void *base =
	    own ? (void *)(uintptr_t)(GMEM_BASE + (uint64_t)g->self * g->seg)
		: NULL;
	bool taken = false;
	const char *e =
	    net->ops->rma_expose(net, base, own ? g->seg : 0, &taken);
	if (taken)
		g->map = NULL; /* the transport's now: it unmaps it */
	if (e || !own || !g->want_direct || !net->ops->rma_ptr || g->direct)
		return e;
	/* Where the transport maps the peers' segments here (read-only use:
	 * stores go through the transport, net_ops.rma_put, or their SUs);
	 * known now, before the units start, and fixed until the
	 * transport's fini. */
	if (direct_table(g, false))
		return "out of memory for the global memory table";
	bool any = false;
	for (uint32_t k = 0; k < g->nodes; k++) {
		if (k == g->self)
			continue;
		g->direct[k] = net->ops->rma_ptr(net, k);
		any |= g->direct[k] != NULL;
	}
	if (!any) {
		free(g->direct);
		g->direct = NULL;
	}
	return NULL;
}

void gmem_close(void)
{
	struct gmem_state *g = &gmem_g;
	if (g->map)
		munmap(g->map, g->map_len);
	free(g->direct);
	gheap_fini(&heap);
	gheap_fini(&sym);
	free(recs);
	recs = NULL;
	nrecs = recs_cap = 0;
	why[0] = 0;
	memset(g, 0, sizeof(*g));
}

/* ---- allocation (any thread, under lock) ---- */

static EARTH_COLD _Noreturn void unavailable(const char *op)
{
	pthread_mutex_unlock(&lock);
	earth_fatal("%s: %s", op,
		    why[0] ? why : "no node is running in this process");
}

static EARTH_COLD _Noreturn void out_of_memory(const char *op)
{
	pthread_mutex_unlock(&lock);
	earth_fatal("%s: out of memory for the allocator's lists", op);
}

static size_t rec_find(uint64_t off)
{
	size_t lo = 0, hi = nrecs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (recs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int rec_add(uint64_t off, uint64_t len, bool is_sym)
{
	if (nrecs == recs_cap) {
		size_t c = recs_cap ? recs_cap * 2 : 64;
		struct grec *p = realloc(recs, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		recs = p;
		recs_cap = c;
	}
	size_t i = rec_find(off);
	memmove(recs + i + 1, recs + i, (nrecs - i) * sizeof(*recs));
	recs[i] = (struct grec){off, len, is_sym};
	nrecs++;
	return 0;
}

/* Removes the record at off of the given kind; its length, or 0. */
static uint64_t rec_take(uint64_t off, bool is_sym)
{
	size_t i = rec_find(off);
	if (i == nrecs || recs[i].off != off || recs[i].sym != is_sym)
		return 0;
	uint64_t len = recs[i].len;
	memmove(recs + i, recs + i + 1, (nrecs - i - 1) * sizeof(*recs));
	nrecs--;
	return len;
}

static uint64_t round_up(uint64_t len)
{
	return (len + GMEM_GRAIN - 1) & ~(uint64_t)(GMEM_GRAIN - 1);
}

earth_gptr earth_galloc(size_t size)
{
	struct gmem_state *g = &gmem_g;
	pthread_mutex_lock(&lock);
	if (!g->mapped)
		unavailable("earth_galloc");
	earth_gptr r = EARTH_GPTR_NULL;
	uint64_t len = round_up(size);
	if (size && len >= size && len <= g->seg) {
		int64_t off = gheap_alloc(&heap, len, false);
		if (off >= 0 && rec_add((uint64_t)off, len, false))
			out_of_memory("earth_galloc");
		if (off >= 0)
			r = earth_gptr_make(
			    g->self,
			    (void *)(uintptr_t)(GMEM_BASE + g->self * g->seg +
						(uint64_t)off));
	}
	pthread_mutex_unlock(&lock);
	return r;
}

int earth_gfree(earth_gptr p)
{
	struct gmem_state *g = &gmem_g;
	uint64_t lo = GMEM_BASE + (uint64_t)g->self * g->seg;
	uint64_t a = (uintptr_t)earth_gptr_addr(p);
	pthread_mutex_lock(&lock);
	int ret = -EINVAL;
	if (g->mapped && earth_gptr_node(p) == g->self && a >= lo &&
	    a - lo < g->seg) {
		uint64_t len = rec_take(a - lo, false);
		if (len) {
			if (gheap_put(&heap, a - lo, len))
				out_of_memory("earth_gfree");
			ret = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

int earth_garray_alloc(earth_garray *a, size_t count, size_t elem_size,
		       size_t block_elems)
{
	struct gmem_state *g = &gmem_g;
	if (!a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	if (!count || !elem_size || !block_elems)
		return -EINVAL;
	uint64_t nblocks = count / block_elems + (count % block_elems != 0);
	uint64_t nodes = g->nodes ? g->nodes : 1;
	uint64_t per_node = nblocks / nodes + (nblocks % nodes != 0);
	uint64_t block_bytes = (uint64_t)block_elems * elem_size;
	if (block_bytes / elem_size != block_elems ||
	    (per_node && block_bytes > UINT64_MAX / per_node))
		return -ENOMEM;
	uint64_t len = round_up(per_node * block_bytes);
	pthread_mutex_lock(&lock);
	if (!g->mapped)
		unavailable("earth_garray_alloc");
	int ret = -ENOMEM;
	int64_t off = len <= g->seg ? gheap_alloc(&sym, len, true) : -1;
	if (off >= 0) {
		if (gheap_take(&heap, (uint64_t)off, len)) {
			pthread_mutex_unlock(&lock);
			earth_fatal("earth_garray_alloc: %llu bytes at offset "
				    "%#llx of this node's global segment are "
				    "taken by its own earth_galloc objects, so "
				    "the array cannot be at the same place on "
				    "every node: give more global memory "
				    "(EARTH_GMEM_MB, earthrun --gmem-mb) or "
				    "allocate the arrays first",
				    (unsigned long long)len,
				    (unsigned long long)off);
		}
		if (rec_add((uint64_t)off, len, true))
			out_of_memory("earth_garray_alloc");
		a->base = GMEM_BASE + (uint64_t)off;
		a->stride = g->seg;
		a->count = count;
		a->elem_size = elem_size;
		a->block_elems = block_elems;
		a->nodes = (uint32_t)nodes;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

int earth_garray_free(earth_garray *a)
{
	struct gmem_state *g = &gmem_g;
	if (!a || a->base < GMEM_BASE)
		return -EINVAL;
	uint64_t off = a->base - GMEM_BASE;
	pthread_mutex_lock(&lock);
	int ret = -EINVAL;
	uint64_t len = g->mapped && off < g->seg ? rec_take(off, true) : 0;
	if (len) {
		if (gheap_put(&heap, off, len) || gheap_put(&sym, off, len))
			out_of_memory("earth_garray_free");
		memset(a, 0, sizeof(*a));
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
