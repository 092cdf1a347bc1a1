/* SPDX-License-Identifier: MIT */
/*
 * slot.c - resolving the slot a request names. The fast path of a signal
 * is su_slot_signal in su.h; the count itself and the errors of a bad
 * signal are unit/slot.h's.
 */
#define EARTH_INTERNAL 1
#include "su/su.h"

void su_slot_remote(const char *op, earth_gslot g)
{
	earth_fatal("%s: slot pointer names node %u, not this node", op,
		    earth_gslot_node(g));
}

void su_slot_null(const char *op)
{
	earth_fatal("%s: null slot", op);
}
