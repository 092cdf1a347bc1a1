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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "earth.h"

/* Number of a threaded function: its index in the earth_tfunc section,
 * the same on every node running the same program; -1 if f is not there. */
int32_t reg_tfunc_id(const struct earth_tfunc *f);
/* The function numbered id, or NULL. */
const struct earth_tfunc *reg_tfunc_at(int32_t id);

/* Adds/removes [base, base+len) to the memory remote nodes may access.
 * Any thread; segments must not overlap. Returns 0 or -errno. */
int reg_mem_add(const void *base, size_t len);
int reg_mem_remove(const void *base);
/* Is [addr, addr+len) inside one registered segment? Any thread. */
bool reg_mem_contains(uint64_t addr, uint64_t len);
/* Registers the executable's static data (node start). */
void reg_mem_add_static(void);
/* Drops every segment (node end). */
void reg_mem_clear(void);

#endif /* EARTH_REGISTRY_H */
