/* SPDX-License-Identifier: MIT */
/*
 * base.h - what every layer of the runtime may use: symbol visibility,
 * the one error exit, blocking on a 32-bit word. The bottom layer: it
 * includes nothing of the runtime's but the public header.
 */
#ifndef EARTH_BASE_H
#define EARTH_BASE_H

#ifndef EARTH_INTERNAL
#error "base/base.h is internal to the EARTH runtime"
#endif

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "queues/q_arch.h"
#include "earth.h"

#define EARTH_HIDDEN __attribute__((visibility("hidden")))
#define EARTH_COLD __attribute__((cold, noinline))

/* Prints "earth: node N: error: <msg>" and exits with EARTH_EXIT_USAGE
 * (fatal.c). N is what earth_fatal_set_node last set (0 before). */
_Noreturn void earth_fatal(const char *fmt, ...) EARTH_HIDDEN
    __attribute__((format(printf, 1, 2), cold));
/* The same line, then exit with EARTH_EXIT_PEER_DIED: for a node that stops
 * because another node died, vanished or left the running job (the cause
 * is that node's; earthrun reports the cause, not this echo). */
_Noreturn void earth_fatal_peer(const char *fmt, ...) EARTH_HIDDEN
    __attribute__((format(printf, 1, 2), cold));
#ifdef EARTH_FATAL_HOOK
/* Tests only: the libFuzzer targets (tests/fuzz) build the runtime's
 * sources with -DEARTH_FATAL_HOOK and set this to a function that
 * longjmps back to the harness, so that a clean rejection ends one input
 * instead of the process (the hook must not return). Absent from every
 * other build. */
extern void (*earth_fatal_hook)(const char *msg) EARTH_HIDDEN;
#endif
/* The node number earth_fatal names; the node sets it at bring-up. */
void earth_fatal_set_node(uint32_t id) EARTH_HIDDEN;

/* States of a unit's futex word: the node's units, and a peer's SU that
 * a transport wakes after sending. */
enum { UNIT_RUNNING = 0, UNIT_SLEEPING = 1 };

/* Futex wait/wake on a 32-bit word (futex.c). Wait returns at once if
 * *word != expected, on a wake, or on a signal: callers recheck. The
 * futex is shared, not private: a word may live in a mapping that other
 * processes wake. */
void earth_futex_wait(_Atomic uint32_t *word, uint32_t expected) EARTH_HIDDEN;
/* The same, returning after ns at the latest. */
void earth_futex_wait_ns(_Atomic uint32_t *word, uint32_t expected,
			 uint64_t ns) EARTH_HIDDEN;
void earth_futex_wake(_Atomic uint32_t *word) EARTH_HIDDEN;

/* Asymmetric fence (fence.c). A thread that stores A then loads B, while
 * another stores B then loads A, needs a full fence on both sides for one
 * of them to see the other's store; with these the frequent side keeps
 * only earth_fence_light (a compiler barrier) and the rare side calls
 * earth_fence_heavy, which runs a full barrier on every other running
 * thread of the process (membarrier(2), private expedited). _init
 * registers the process (once, before the threads that rely on it
 * start); false when the kernel has no such command. earth_fence_heavy
 * returns false when it could not fence: the caller must not rely on it.
 */
bool earth_fence_heavy_init(void) EARTH_HIDDEN;
bool earth_fence_heavy(void) EARTH_HIDDEN;
#define earth_fence_light() __asm__ __volatile__("" ::: "memory")

/* Pins the calling thread to cpu (>= 0); no-op for -1 (cpu.c). */
void earth_pin_cpu(int cpu) EARTH_HIDDEN;

#endif /* EARTH_BASE_H */
