/* SPDX-License-Identifier: MIT */
/*
 * qtest.c - the queue tests' shared helpers (qtest.h).
 */
#include "qtest.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "../q_arch.h"

uint64_t qt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t qt_rnd(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

uint64_t qt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned qt_divisor(const char *var)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return 1;
	char *end;
	unsigned long s = strtoul(v, &end, 10);
	return *end || s < 1 || s > 1000000 ? 1 : (unsigned)s;
}

unsigned qt_scale(void)
{
	return qt_divisor("Q_TEST_SCALE");
}

uint64_t qt_scaled(uint64_t n, uint64_t min)
{
	uint64_t v = n / qt_scale();
	return v < min ? min : v;
}

bool qt_wait_more(struct qt_waiter *w)
{
	if (++w->spins & w->yield_mask) {
		q_cpu_relax();
		return true;
	}
	sched_yield();
	if (w->spins & w->clock_mask)
		return true;
	uint64_t now = qt_now_ns();
	if (!w->deadline) {
		w->deadline = now + QT_STALL_NS;
		return true;
	}
	return now < w->deadline;
}
