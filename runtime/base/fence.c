/* SPDX-License-Identifier: MIT */
/*
 * fence.c - an asymmetric fence: a thread that rarely needs to order its
 * store before a later load against another thread's store and load pays
 * for both with membarrier(2), and the other thread keeps only a compiler
 * barrier on its hot path (base.h).
 */
#define EARTH_INTERNAL 1
#include "base/base.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

static int membarrier(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

bool earth_fence_heavy_init(void)
{
	int have = membarrier(MEMBARRIER_CMD_QUERY);
	if (have < 0 || !(have & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return false;
	return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

bool earth_fence_heavy(void)
{
	return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}
