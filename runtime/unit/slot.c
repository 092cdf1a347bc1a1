/* SPDX-License-Identifier: MIT */
/*
 * slot.c - the errors of a bad signal, the same from either unit
 * (unit/slot.h).
 */
#define EARTH_INTERNAL 1
#include "unit/slot.h"
#include "base/srctab.h"

/* Who signalled: the request behind the message being handled (its
 * origin, base/srctab.h), else the runtime's name of the operation. */
static const char *signaller(const char *op, char *buf, size_t room)
{
	const char *w = src_origin_now(buf, room);
	return w ? w : op;
}

void slot_invalid(const earth_slot *s, const char *op)
{
	char who[256], where[288];
	if ((uintptr_t)s & 7)
		earth_fatal("%s: slot pointer %p is misaligned: it does not "
			    "point at an earth_slot",
			    signaller(op, who, sizeof(who)), (const void *)s);
	if (!s->fiber)
		earth_fatal("%s: slot %p signalled but never initialised: call "
			    "earth_slot_init (INIT_SYNC) before any signal can "
			    "reach it",
			    signaller(op, who, sizeof(who)), (const void *)s);
	if (src_slot_where(s, where, sizeof(where)))
		earth_fatal("%s: %s signalled after it fired as a one-shot "
			    "slot (reset 0): give it reset >= 1 to re-arm it, "
			    "or send one signal fewer",
			    signaller(op, who, sizeof(who)), where);
	earth_fatal("%s: slot %p signalled after it fired as a one-shot slot "
		    "(reset 0): give it reset >= 1 to re-arm it, or send one "
		    "signal fewer",
		    signaller(op, who, sizeof(who)), (const void *)s);
}

void slot_forged(const earth_slot *s, const char *op)
{
	earth_fatal("%s: slot %p holds fiber %p, which is not a fiber this "
		    "node armed a slot with (earth_slot_init): the slot was "
		    "forged or overwritten, by a store from another node?",
		    op, (const void *)s, (void *)(uintptr_t)s->fiber);
}

void slot_incr_overflow(const earth_slot *s, int32_t count, int32_t n,
			const char *op)
{
	earth_fatal("%s: slot %p count %d + %d exceeds INT32_MAX", op,
		    (const void *)s, count, n);
}
