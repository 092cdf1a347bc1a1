/* SPDX-License-Identifier: MIT */
/*
 * qtest.h - what the queue library's tests share, and the tests of a
 * program that uses the library may share: a per-message checksum, a
 * pseudo-random sequence, the monotonic clock, a divisor for long runs
 * (Q_TEST_SCALE) and a spin-wait that gives up on a hang.
 */
#ifndef Q_TEST_H
#define Q_TEST_H

#include <stdbool.h>
#include <stdint.h>

/* splitmix64 finalizer: a per-message checksum. */
uint64_t qt_mix(uint64_t x);
/* xorshift64: the next pseudo-random number of the sequence in *state. */
uint64_t qt_rnd(uint64_t *state);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t qt_now_ns(void);

/* The environment variable var as a divisor: >= 1, 1 when unset or not a
 * number. */
unsigned qt_divisor(const char *var);
/* qt_divisor("Q_TEST_SCALE"). */
unsigned qt_scale(void);
/* n / qt_scale(), but at least min. */
uint64_t qt_scaled(uint64_t n, uint64_t min);

/* Number of elements of array a. */
#define QT_NCASES(a) (sizeof(a) / sizeof((a)[0]))

/* No progress on one message for this long is a hang, not slowness. */
#define QT_STALL_NS (10ull * 1000000000ull)

/*
 * The state of one wait loop. Set the masks, the rest starts at zero:
 * every spin pauses the CPU, except each (yield_mask + 1)-th, which yields
 * it; of those, each (clock_mask + 1)-th also reads the clock.
 */
struct qt_waiter {
	unsigned yield_mask; /* 2^k - 1 */
	unsigned clock_mask; /* 2^k - 1, >= yield_mask */
	unsigned spins;
	uint64_t deadline;
};

/* One spin of a wait loop; false once QT_STALL_NS passed without success. */
bool qt_wait_more(struct qt_waiter *w);

#endif /* Q_TEST_H */
