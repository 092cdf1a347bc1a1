/* SPDX-License-Identifier: MIT */
/*
 * futex.c - blocking and waking a thread on a 32-bit word.
 */
#define EARTH_INTERNAL 1
#include "base/base.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void earth_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, NULL, NULL,
		0);
}

void earth_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}
