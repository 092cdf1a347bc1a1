/* SPDX-License-Identifier: MIT */
/*
 * futex.c - blocking and waking a thread on a 32-bit word.
 */
#define EARTH_INTERNAL 1
#include "base/base.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void earth_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, NULL, NULL,
		0);
}

void earth_futex_wait_ns(_Atomic uint32_t *word, uint32_t expected, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u),
			      (long)(ns % 1000000000u)};
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL,
		0);
}

void earth_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}
