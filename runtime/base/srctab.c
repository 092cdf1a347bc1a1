/* SPDX-License-Identifier: MIT */
/*
 * srctab.c - the source table earthcc writes into a Threaded-C program
 * (the earth_src section, struct earth_src_row in earth.h): the threaded
 * function, fiber, operation as written and file:line behind a fiber
 * address, for the runtime's messages (misuse, rejected messages, the
 * stuck-job report, the trace). Read only when a message is written; the
 * rows are the program's own data, searched by comparing fiber addresses.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/srctab.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Bounds of the section, from the linker; weak so a program without a
 * table (the C API) links and has none. */
extern const struct earth_src_row __start_earth_src[] __attribute__((weak));
extern const struct earth_src_row __stop_earth_src[] __attribute__((weak));

static size_t nrows(void)
{
	uintptr_t b = (uintptr_t)__start_earth_src,
		  e = (uintptr_t)__stop_earth_src;
	if (!b || e <= b)
		return 0;
	return (e - b) / sizeof(struct earth_src_row);
}

static const char *str(const char *s)
{
	return s ? s : "?";
}

const struct earth_src_row *src_fiber(earth_fiber_fn fn)
{
	size_t n = nrows();
	for (size_t i = 0; fn && i < n; i++)
		if (__start_earth_src[i].fiber == fn &&
		    !__start_earth_src[i].op)
			return &__start_earth_src[i];
	return NULL;
}

/* Does the operation written `w` reach the runtime as `rt`? */
static bool op_is(const char *w, const char *rt)
{
	return !strcasecmp(w, rt) ||
	       (!strcmp(rt, "INCR_SYNC") && !strcmp(w, "INCR_RSYNC"));
}

const char *src_op_where(earth_fiber_fn fn, const char *op, char *buf,
			 size_t room)
{
	const struct earth_src_row *f = src_fiber(fn);
	if (!f || !room)
		return NULL;
	const struct earth_src_row *first = NULL;
	char lines[64] = "";
	size_t used = 0, n = nrows();
	unsigned more = 0;
	for (size_t i = 0; i < n; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		if (r->fiber != fn || !r->op || !op_is(r->op, op))
			continue;
		if (!first) {
			first = r;
		} else if (used + 12 < sizeof(lines)) {
			int k = snprintf(lines + used, sizeof(lines) - used,
					 ", %u", (unsigned)r->line);
			used += k > 0 ? (size_t)k : 0;
		} else {
			more++;
		}
	}
	if (first)
		snprintf(buf, room, "%s:%u%s%s in %s, fiber %s: %s",
			 str(first->file), (unsigned)first->line, lines,
			 more ? ", ..." : "", str(f->func), str(f->fiber_name),
			 str(first->op));
	else
		snprintf(buf, room, "in %s, fiber %s (%s:%u): %s", str(f->func),
			 str(f->fiber_name), str(f->file), (unsigned)f->line,
			 op);
	return buf;
}

const struct earth_src_row *src_init_sync(earth_fiber_fn fn, int32_t slot)
{
	size_t n = nrows();
	for (size_t i = 0; fn && i < n; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		if (r->target == fn && r->op && !strcmp(r->op, "INIT_SYNC") &&
		    (slot < 0 || r->slot == slot))
			return r;
	}
	return NULL;
}

const char *src_fiber_where(earth_fiber_fn fn, char *buf, size_t room)
{
	const struct earth_src_row *f = src_fiber(fn);
	if (!f || !room)
		return NULL;
	int k = snprintf(buf, room, "fiber %s of %s (%s:%u", str(f->fiber_name),
			 str(f->func), str(f->file), (unsigned)f->line);
	size_t used = k > 0 ? (size_t)k : 0, n = nrows();
	const char *sep = "; INIT_SYNC at";
	for (size_t i = 0; i < n && used < room; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		if (r->target != fn || !r->op || strcmp(r->op, "INIT_SYNC"))
			continue;
		k = snprintf(buf + used, room - used, "%s %s:%u", sep,
			     str(r->file), (unsigned)r->line);
		used += k > 0 ? (size_t)k : 0;
		sep = ",";
	}
	if (used < room)
		snprintf(buf + used, room - used, ")");
	return buf;
}

const char *src_fiber_short(earth_fiber_fn fn, char *buf, size_t room)
{
	const struct earth_src_row *f = src_fiber(fn);
	if (!f || !room)
		return NULL;
	if (f->fiber_name && !strcmp(f->fiber_name, "0"))
		snprintf(buf, room, "%s", str(f->func));
	else
		snprintf(buf, room, "%s:%s", str(f->func), str(f->fiber_name));
	return buf;
}

bool src_slots(earth_fiber_fn entry, uint32_t frame_size, uint32_t *at,
	       uint32_t *n)
{
	const struct earth_src_row *f = src_fiber(entry);
	if (!f || f->slot < 0 || f->slots_at > frame_size ||
	    (uint64_t)f->slot * sizeof(earth_slot) > frame_size - f->slots_at ||
	    f->slots_at % _Alignof(earth_slot))
		return false;
	*at = f->slots_at;
	*n = (uint32_t)f->slot;
	return true;
}

bool src_overlaps(uintptr_t p, size_t len)
{
	uintptr_t b = (uintptr_t)__start_earth_src,
		  e = (uintptr_t)__stop_earth_src;
	return b && p < e && p + len > b;
}
