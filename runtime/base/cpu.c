/* SPDX-License-Identifier: MIT */
/*
 * cpu.c - pinning a thread to a CPU.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/base.h"

#include <pthread.h>
#include <sched.h>

void earth_pin_cpu(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
