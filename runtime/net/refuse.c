/* SPDX-License-Identifier: MIT */
/*
 * refuse.c - the message that stops a job when this node refuses a
 * message from a peer: in the source terms of the request behind it (the
 * origin it carries, base/srctab.h) when this node can read one, else in
 * the message's terms (type, sender, field).
 */
#define EARTH_INTERNAL 1
#include "net/wire.h"
#include "base/base.h"
#include "base/srctab.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uint64_t wire_origin(const struct wire_hdr *h, const void *payload)
{
	uint64_t o = 0;
	switch (h->type) {
	case W_SYNC:
	case W_INCR:
	case W_BLK_DATA:
		return h->c;
	case W_BLK_REQ:
		if (h->len == sizeof(o) && payload)
			memcpy(&o, payload, sizeof(o));
		return o;
	default:
		return 0;
	}
}

void wire_refuse(const struct wire_hdr *h, uint32_t from, uint32_t nodes,
		 uint64_t origin, const char *field, const char *role,
		 const char *fmt, ...)
{
	char why[512], where[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	const char *type = wire_type_name(h->type);
	uint32_t node = 0;
	if (!origin ||
	    !src_origin_where(origin, nodes, &node, where, sizeof(where)))
		earth_fatal("message %s from node %u rejected: field %s (%s)",
			    type, from, field, why);
	char via[48] = "";
	if (node != from)
		snprintf(via, sizeof(via), " from node %u", from);
	earth_fatal("refused %s: %s%s%s (message %s%s, field %s)", where,
		    role ? role : "", role ? " " : "", why, type, via, field);
}
