/* SPDX-License-Identifier: MIT */
/*
 * registry.h - what a message from another node may name on this one:
 * threaded functions by number (never a code pointer), and memory only
 * inside registered segments (frames, program-registered memory).
 */
#ifndef EARTH_REGISTRY_H
#define EARTH_REGISTRY_H

#ifndef EARTH_INTERNAL
#error "registry.h is internal to the EARTH runtime"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queues/q_arch.h"
#include "base/base.h"
#include "earth.h"

/* Number of a threaded function: its index in the earth_tfunc section,
 * the same on every node running the same program; -1 if f is not there. */
int32_t reg_tfunc_id(const struct earth_tfunc *f);
/* The function numbered id, or NULL. */
const struct earth_tfunc *reg_tfunc_at(int32_t id);

/*
 * Fibers this node's program armed a slot with (earth_slot_init): the only
 * code a slot may run. A slot lies in memory other nodes may write, so its
 * fiber field is never trusted as a code pointer: a slot that fires is
 * checked against this set (docs/architecture.md, "Threat model"). An
 * insert-only open-addressing hash set of fiber addresses (0: empty),
 * written by the EU (one thread), read by the SU; the set lives in the
 * runtime's own data, which no message reaches. A fiber is at its hash
 * position unless another one took it first (then the slow paths probe
 * on).
 */
#define REG_FIBER_BITS 13
#define REG_FIBER_CAP (1u << REG_FIBER_BITS)
extern _Atomic uintptr_t reg_fibers[REG_FIBER_CAP] EARTH_HIDDEN;
static inline size_t reg_fiber_pos(earth_fiber_fn f)
{
	return (size_t)(((uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull) >>
			(64 - REG_FIBER_BITS));
}
void reg_fiber_add_slow(earth_fiber_fn f) EARTH_HIDDEN;
bool reg_fiber_known_slow(earth_fiber_fn f) EARTH_HIDDEN;
/* earth_slot_init: f (not null) may now be run by a slot. EU. */
static inline void reg_fiber_add(earth_fiber_fn f)
{
	if (q_unlikely(atomic_load_explicit(&reg_fibers[reg_fiber_pos(f)],
					    memory_order_relaxed) !=
		       (uintptr_t)f))
		reg_fiber_add_slow(f);
}
/* Is f at its hash position? (No call: false says only that the slow
 * search must tell.) */
static inline bool reg_fiber_hit(earth_fiber_fn f)
{
	return atomic_load_explicit(&reg_fibers[reg_fiber_pos(f)],
				    memory_order_relaxed) == (uintptr_t)f;
}
/* Did this node arm a slot with f? (For a null f the answer means
 * nothing: callers reject a null fiber themselves.) Any thread: the EU's
 * arming of a slot happens before any signal of it. */
static inline bool reg_fiber_known(earth_fiber_fn f)
{
	return q_likely(reg_fiber_hit(f)) || reg_fiber_known_slow(f);
}

/* Adds/removes [base, base+len) to the memory remote nodes may access.
 * Any thread; segments must not overlap. Returns 0 or -errno. */
int reg_mem_add(const void *base, size_t len);
int reg_mem_remove(const void *base);
/* Is [addr, addr+len) inside one registered segment? Any thread. */
bool reg_mem_contains(uint64_t addr, uint64_t len);

/*
 * The same question without the lock, for the paths that ask it on every
 * operation (the EU's GET/DATA/BLKMOV on this node's memory, the SU's
 * checks of what peers send): each unit keeps a reg_cache of the segments
 * it recently found, tagged with the registry's generation, which every
 * removal bumps. An entry is used only while the generation it was found
 * in is still the current one: a removed segment is never found in a
 * cache after its removal is visible to the thread asking (an
 * unregistration, then a free and a reuse of the memory, on the thread
 * asking or on one it synchronised with since: the EU's ring to the SU,
 * for the EU's requests; see reg_mem_remove). Adding a segment bumps
 * nothing: segments never overlap and a cache holds hits only. One cache
 * per thread of use (the EU's, the SU's: a single-interrupt node's
 * handler does the SU's work while a fiber's code may be in the EU's),
 * never shared; zero-initialised is empty.
 */
#define REG_CACHE_WAYS 4
struct reg_cache {
	uint64_t gen; /* generation the entries are valid in */
	/* Newest first; empty: 0, 0. */
	uint64_t base[REG_CACHE_WAYS], end[REG_CACHE_WAYS];
};
extern _Atomic uint64_t reg_mem_gen EARTH_HIDDEN;
/* The miss: the segment under the lock, into the cache. */
bool reg_mem_lookup(struct reg_cache *c, uint64_t addr,
		    uint64_t len) EARTH_HIDDEN;
/* Is [lo, hi) in one segment cache c holds? No call: false says only that
 * the cache cannot tell. */
static inline __attribute__((always_inline)) bool
reg_cache_holds(const struct reg_cache *c, uint64_t lo, uint64_t hi)
{
	if (q_likely(atomic_load_explicit(&reg_mem_gen, memory_order_relaxed) ==
		     c->gen) &&
	    q_likely(hi > lo))
#pragma GCC unroll 4
		for (unsigned i = 0; i < REG_CACHE_WAYS; i++)
			if (c->base[i] <= lo && hi <= c->end[i])
				return true;
	return false;
}

/* Is [addr, addr + (len ? len : 1)) in a segment cache c holds? No call. */
static inline __attribute__((always_inline)) bool
reg_mem_hit(const struct reg_cache *c, uint64_t addr, uint64_t len)
{
	return reg_cache_holds(c, addr, addr + (len ? len : 1));
}

/* Are [a, a + len) and [b, b + len) both in segments cache c holds (len
 * 1 to 8)? No call. Two ranges in one segment, the usual case (a GET
 * within one frame or one array), are found by one look at the cache: the
 * smallest range that holds both lies in that segment. */
static inline __attribute__((always_inline)) bool
reg_mem_hit2(const struct reg_cache *c, uint64_t a, uint64_t b, uint64_t len)
{
	uint64_t lo = a < b ? a : b, hi = (a < b ? b : a) + len;
	return reg_cache_holds(c, lo, hi) ||
	       (reg_mem_hit(c, a, len) && reg_mem_hit(c, b, len));
}

/* reg_mem_contains(addr, len ? len : 1) through cache c. */
static inline __attribute__((always_inline)) bool
reg_mem_cached(struct reg_cache *c, uint64_t addr, uint64_t len)
{
	return reg_mem_hit(c, addr, len) || reg_mem_lookup(c, addr, len);
}
/* Registers the executable's static data (node start). */
void reg_mem_add_static(void);
/* Copies up to max segments [base, end) in address order into out;
 * returns how many there are (the stuck-job report searches them). */
size_t reg_mem_list(uint64_t (*out)[2], size_t max);
/* Drops every segment (node end). */
void reg_mem_clear(void);

#endif /* EARTH_REGISTRY_H */
