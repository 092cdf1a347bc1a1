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

#include "base/arch.h"
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
/* Did this node arm a slot with f? (For a null f the answer means
 * nothing: callers reject a null fiber themselves.) Any thread: the EU's
 * arming of a slot happens before any signal of it. */
static inline bool reg_fiber_known(earth_fiber_fn f)
{
	if (q_likely(atomic_load_explicit(&reg_fibers[reg_fiber_pos(f)],
					  memory_order_relaxed) ==
		     (uintptr_t)f))
		return true;
	return reg_fiber_known_slow(f);
}

/* Adds/removes [base, base+len) to the memory remote nodes may access.
 * Any thread; segments must not overlap. Returns 0 or -errno. */
int reg_mem_add(const void *base, size_t len);
int reg_mem_remove(const void *base);
/* Is [addr, addr+len) inside one registered segment? Any thread. */
bool reg_mem_contains(uint64_t addr, uint64_t len);
/* Registers the executable's static data (node start). */
void reg_mem_add_static(void);
/* Copies up to max segments [base, end) in address order into out;
 * returns how many there are (the stuck-job report searches them). */
size_t reg_mem_list(uint64_t (*out)[2], size_t max);
/* Drops every segment (node end). */
void reg_mem_clear(void);

#endif /* EARTH_REGISTRY_H */
