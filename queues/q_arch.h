/* SPDX-License-Identifier: MIT */
/*
 * arch.h - the few machine primitives the queues and the runtime share:
 * cache-line size, pause, time-stamp counter, branch hints.
 */
#ifndef Q_ARCH_H
#define Q_ARCH_H

#include <stdint.h>

#ifndef Q_CACHE_LINE
#define Q_CACHE_LINE 64
#endif

#define q_likely(x) __builtin_expect(!!(x), 1)
#define q_unlikely(x) __builtin_expect(!!(x), 0)
#define q_aligned_line __attribute__((aligned(Q_CACHE_LINE)))

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline void q_cpu_relax(void)
{
	_mm_pause();
}
/* Reads the TSC; not ordered against surrounding loads (use q_tsc_ordered). */
static inline uint64_t q_tsc(void)
{
	return __rdtsc();
}
/* LFENCE first: earlier instructions complete before the TSC is read
 * (RDTSCP would do, but valgrind cannot run it). */
static inline uint64_t q_tsc_ordered(void)
{
	_mm_lfence();
	return __rdtsc();
}
#else
#include <time.h>
static inline void q_cpu_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
}
static inline uint64_t q_tsc(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t q_tsc_ordered(void)
{
	return q_tsc();
}
#endif

/* TSC ticks per nanosecond, measured once against CLOCK_MONOTONIC. Any thread.
 */
double q_tsc_per_ns(void);

#endif /* Q_ARCH_H */
