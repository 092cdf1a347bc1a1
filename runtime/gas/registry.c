/* SPDX-License-Identifier: MIT */
/*
 * registry.c - function numbering from the earth_tfunc section, and the
 * sorted list of memory segments remote nodes may read or write. The list
 * changes rarely (a frame chunk, a registration) and is read on remote
 * accesses only, so a mutex is enough. Holding it is a critical section
 * for the interrupts of a single-interrupt node (node/irq.h), whose
 * handler reads the list.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/crit.h"
#include "gas/registry.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bounds of the section, from the linker; weak so a program without any
 * threaded function still links. */
extern const struct earth_tfunc __start_earth_tfunc[] __attribute__((weak));
extern const struct earth_tfunc __stop_earth_tfunc[] __attribute__((weak));

int32_t reg_tfunc_id(const struct earth_tfunc *f)
{
	if (!__start_earth_tfunc || f < __start_earth_tfunc ||
	    f >= __stop_earth_tfunc)
		return -1;
	return (int32_t)(f - __start_earth_tfunc);
}

const struct earth_tfunc *reg_tfunc_at(int32_t id)
{
	if (!__start_earth_tfunc || id < 0 ||
	    id >= __stop_earth_tfunc - __start_earth_tfunc)
		return NULL;
	return &__start_earth_tfunc[id];
}

_Atomic uintptr_t reg_fibers[REG_FIBER_CAP];
static _Atomic uint32_t reg_nfibers;

void reg_fiber_add_slow(earth_fiber_fn f)
{
	uintptr_t want = (uintptr_t)f;
	for (size_t i = reg_fiber_pos(f), k = 0; k < REG_FIBER_CAP;
	     i = (i + 1) & (REG_FIBER_CAP - 1), k++) {
		uintptr_t v =
		    atomic_load_explicit(&reg_fibers[i], memory_order_relaxed);
		if (v == want)
			return;
		if (v)
			continue;
		/* Three quarters full: probes would grow long. */
		if (atomic_fetch_add_explicit(&reg_nfibers, 1,
					      memory_order_relaxed) >=
		    REG_FIBER_CAP / 4 * 3)
			earth_fatal("INIT_SYNC: more than %u different fibers "
				    "armed slots on this node",
				    REG_FIBER_CAP / 4 * 3);
		if (atomic_compare_exchange_strong_explicit(
			&reg_fibers[i], &v, want, memory_order_relaxed,
			memory_order_relaxed))
			return;
		atomic_fetch_sub_explicit(&reg_nfibers, 1,
					  memory_order_relaxed);
		if (v == want)
			return;
	}
	earth_fatal("INIT_SYNC: the table of fibers is full");
}

bool reg_fiber_known_slow(earth_fiber_fn f)
{
	uintptr_t want = (uintptr_t)f;
	if (!want)
		return false;
	for (size_t i = reg_fiber_pos(f), k = 0; k < REG_FIBER_CAP;
	     i = (i + 1) & (REG_FIBER_CAP - 1), k++) {
		uintptr_t v =
		    atomic_load_explicit(&reg_fibers[i], memory_order_relaxed);
		if (v == want)
			return true;
		if (!v)
			return false;
	}
	return false;
}

struct seg {
	uint64_t base, end;
};
static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seg *segs;
static size_t nsegs, cap;

/*
 * Bumped, under seg_lock, after every removal (reg_mem_remove,
 * reg_mem_clear) and before the lock is released; read without the lock
 * by reg_mem_cached. Why a cache cannot let a freed buffer through: the
 * program's earth_unregister_memory returns after the bump; a free and a
 * reuse of the memory come after it on that thread, and any later check
 * of the address happens after them (the same thread, or one it
 * synchronised with: the EU's requests reach the SU through the ring's
 * release/acquire). A load that happens after a store sees that store or
 * a later one (coherence), so the check reads the new generation, finds
 * its cache stale and asks under the lock, where the segment is gone. A
 * check not ordered after the unregistration (a peer's message racing
 * it) is one that might as well have run just before it, as with the
 * lock alone. The lock is taken inside irq_crit_enter, as every holder
 * here does: a single-interrupt node's handler, which checks through the
 * SU's cache and may take the lock on a miss, never interrupts a holder.
 */
_Atomic uint64_t reg_mem_gen;

static void gen_bump(void)
{
	atomic_store_explicit(
	    &reg_mem_gen,
	    atomic_load_explicit(&reg_mem_gen, memory_order_relaxed) + 1,
	    memory_order_release);
}

/* First segment whose end is above addr. */
static size_t find(uint64_t addr)
{
	size_t lo = 0, hi = nsegs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int reg_mem_add(const void *base, size_t len)
{
	uint64_t b = (uintptr_t)base, e = b + len;
	if (!base || !len || e < b)
		return -EINVAL;
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	size_t i = find(b);
	if (i < nsegs && segs[i].base < e) {
		pthread_mutex_unlock(&seg_lock);
		irq_crit_leave(crit);
		return -EEXIST;
	}
	if (nsegs == cap) {
		size_t c = cap ? cap * 2 : 64;
		struct seg *p = realloc(segs, c * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&seg_lock);
			irq_crit_leave(crit);
			return -ENOMEM;
		}
		segs = p;
		cap = c;
	}
	memmove(segs + i + 1, segs + i, (nsegs - i) * sizeof(*segs));
	segs[i] = (struct seg){b, e};
	nsegs++;
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
	return 0;
}

int reg_mem_remove(const void *base)
{
	uint64_t b = (uintptr_t)base;
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	size_t i = find(b);
	int ret = -ENOENT;
	if (i < nsegs && segs[i].base == b) {
		memmove(segs + i, segs + i + 1,
			(nsegs - i - 1) * sizeof(*segs));
		nsegs--;
		gen_bump();
		ret = 0;
	}
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
	return ret;
}

bool reg_mem_contains(uint64_t addr, uint64_t len)
{
	if (addr + len < addr)
		return false;
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	size_t i = find(addr);
	bool ok =
	    i < nsegs && segs[i].base <= addr && addr + len <= segs[i].end;
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
	return ok;
}

bool reg_mem_lookup(struct reg_cache *c, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + (len ? len : 1);
	if (end <= addr)
		return false;
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	size_t i = find(addr);
	bool ok = i < nsegs && segs[i].base <= addr && end <= segs[i].end;
	uint64_t gen = atomic_load_explicit(&reg_mem_gen, memory_order_relaxed);
	if (ok) {
		/* Entries of an older generation may name removed
		 * segments: dropped before this one goes in. */
		if (c->gen != gen) {
			memset(c, 0, sizeof(*c));
			c->gen = gen;
		}
		/* Newest first: the segment in use now is checked first. */
		memmove(c->base + 1, c->base,
			(REG_CACHE_WAYS - 1) * sizeof(*c->base));
		memmove(c->end + 1, c->end,
			(REG_CACHE_WAYS - 1) * sizeof(*c->end));
		c->base[0] = segs[i].base;
		c->end[0] = segs[i].end;
	}
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
	return ok;
}

size_t reg_mem_list(uint64_t (*out)[2], size_t max)
{
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	size_t k = nsegs;
	for (size_t i = 0; i < nsegs && i < max; i++) {
		out[i][0] = segs[i].base;
		out[i][1] = segs[i].end;
	}
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
	return k;
}

void reg_mem_clear(void)
{
	int crit = irq_crit_enter();
	pthread_mutex_lock(&seg_lock);
	free(segs);
	segs = NULL;
	nsegs = cap = 0;
	gen_bump();
	pthread_mutex_unlock(&seg_lock);
	irq_crit_leave(crit);
}

int earth_register_memory(void *addr, size_t len)
{
	return reg_mem_add(addr, len);
}

int earth_unregister_memory(void *addr)
{
	return reg_mem_remove(addr);
}

/*
 * What of the executable's writable segment is not the program's data:
 * the runtime's own state (the Makefile renames the .data and .bss
 * sections of libearth.a's objects to earth_rt_data and earth_rt_bss), the
 * table of threaded functions (INVOKE's code pointers), and what lies
 * below the program's .data (__data_start, from crt1.o): .init_array,
 * .data.rel.ro, .dynamic, .got, .got.plt. Weak: a link without one of them
 * has NULL there.
 */
extern char __start_earth_rt_data[] __attribute__((weak));
extern char __stop_earth_rt_data[] __attribute__((weak));
extern char __start_earth_rt_bss[] __attribute__((weak));
extern char __stop_earth_rt_bss[] __attribute__((weak));
extern char __data_start[] __attribute__((weak));

struct hole {
	uint64_t base, end;
};

static int hole_cmp(const void *a, const void *b)
{
	const struct hole *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Registers [b, e) less the holes (sorted by base). */
static void add_around(uint64_t b, uint64_t e, const struct hole *holes,
		       size_t nholes)
{
	for (size_t i = 0; i < nholes && b < e; i++) {
		if (holes[i].end <= b || holes[i].base >= holes[i].end)
			continue;
		if (holes[i].base >= e)
			break;
		if (holes[i].base > b)
			reg_mem_add((void *)(uintptr_t)b, holes[i].base - b);
		b = holes[i].end;
	}
	if (b < e)
		reg_mem_add((void *)(uintptr_t)b, e - b);
}

/* The main program's writable PT_LOAD segments (.data, .bss), less the
 * part read-only after relocation (PT_GNU_RELRO: .data.rel.ro, .got) and
 * the holes above. */
static int add_static(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int *done = arg;
	if (*done)
		return 1;
	*done = 1; /* the first object is the executable */
	struct hole holes[5] = {
	    {(uintptr_t)__start_earth_rt_data, (uintptr_t)__stop_earth_rt_data},
	    {(uintptr_t)__start_earth_rt_bss, (uintptr_t)__stop_earth_rt_bss},
	    {(uintptr_t)__start_earth_tfunc, (uintptr_t)__stop_earth_tfunc},
	    {0, (uintptr_t)__data_start},
	};
	size_t nholes = 4;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_RELRO && ph->p_memsz) {
			uint64_t b = info->dlpi_addr + ph->p_vaddr;
			holes[nholes++] = (struct hole){b, b + ph->p_memsz};
			break;
		}
	}
	qsort(holes, nholes, sizeof(*holes), hole_cmp);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) &&
		    ph->p_memsz) {
			uint64_t b = info->dlpi_addr + ph->p_vaddr;
			add_around(b, b + ph->p_memsz, holes, nholes);
		}
	}
	return 1;
}

void reg_mem_add_static(void)
{
	int done = 0;
	dl_iterate_phdr(add_static, &done);
}
