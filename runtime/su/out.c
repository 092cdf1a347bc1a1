/* SPDX-License-Identifier: MIT */
/*
 * out.c - memory for messages queued for a peer whose transport had no
 * room: malloc, or, while an interrupt handler of a single-interrupt node
 * does the SU's work (su_out_pool set, node/irq.c), a fixed pool, since a
 * handler must not allocate.
 */
#define EARTH_INTERNAL 1
#include "su/su.h"

#include <stdlib.h>

__thread volatile sig_atomic_t su_out_pool
    __attribute__((tls_model("initial-exec")));

#define POOL_ENTRY (sizeof(struct su_out_msg) + EARTH_IRQ_SMALL)
static _Alignas(64) unsigned char pool[EARTH_IRQ_POOL][POOL_ENTRY];
static uint32_t pool_used; /* bit i: entry i taken */
_Static_assert(EARTH_IRQ_POOL <= 32, "pool_used has 32 bits");

unsigned su_out_pool_free(void)
{
	return EARTH_IRQ_POOL - (unsigned)__builtin_popcount(pool_used);
}

void su_out_pool_reset(void)
{
	pool_used = 0;
}

void *su_out_alloc(size_t bytes)
{
	if (!su_out_pool)
		return malloc(bytes);
	/* The handler checked the room before it let the message through. */
	if (bytes > POOL_ENTRY || !su_out_pool_free())
		earth_fatal("interrupt: no pool entry for a %zu-byte queued "
			    "message",
			    bytes);
	unsigned i = (unsigned)__builtin_ctz(~pool_used);
	pool_used |= 1u << i;
	return pool[i];
}

void su_out_free(void *p)
{
	unsigned char *c = p, *lo = (unsigned char *)(void *)pool;
	if (c >= lo && c < lo + sizeof(pool)) {
		pool_used &= ~(1u << ((size_t)(c - lo) / POOL_ENTRY));
		return;
	}
	free(p);
}
