/* SPDX-License-Identifier: MIT */
/*
 * slot.c - resolving the slot a request names, and the errors of a bad
 * signal. The fast path of a signal is su_slot_signal in su.h.
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

void su_slot_invalid(const earth_slot *s, const char *op)
{
	if ((uintptr_t)s & 7)
		earth_fatal("%s: slot pointer %p is misaligned: it does not "
			    "point at an earth_slot",
			    op, (const void *)s);
	if (!s->fiber)
		earth_fatal("%s: slot %p signalled but never initialised: call "
			    "earth_slot_init (INIT_SYNC) before any signal can "
			    "reach it",
			    op, (const void *)s);
	earth_fatal("%s: slot %p signalled after it fired as a one-shot slot "
		    "(reset 0): give it reset >= 1 to re-arm it, or send one "
		    "signal fewer",
		    op, (const void *)s);
}

void su_slot_forged(const earth_slot *s, const char *op)
{
	earth_fatal("%s: slot %p holds fiber %p, which is not a fiber this "
		    "node armed a slot with (earth_slot_init): the slot was "
		    "forged or overwritten, by a store from another node?",
		    op, (const void *)s, (void *)(uintptr_t)s->fiber);
}
