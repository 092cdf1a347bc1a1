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
#include "base/op.h"

#include <stdatomic.h>

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

/* Does the operation written `w` match `key`? */
typedef bool (*op_match_fn)(const char *w, const void *key);

/* The rows of fiber fn whose operation matches: the first, and the lines
 * of the others (", 18, 20", ", ..." past what fits) in lines. */
static const struct earth_src_row *op_rows(earth_fiber_fn fn, op_match_fn m,
					   const void *key, char *lines,
					   size_t lroom)
{
	const struct earth_src_row *first = NULL;
	size_t used = 0, n = nrows();
	unsigned more = 0;
	lines[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		if (r->fiber != fn || !r->op || !m(r->op, key))
			continue;
		if (!first) {
			first = r;
		} else if (used + 12 < lroom) {
			int k = snprintf(lines + used, lroom - used, ", %u",
					 (unsigned)r->line);
			used += k > 0 ? (size_t)k : 0;
		} else {
			more++;
		}
	}
	if (more && used + 6 < lroom)
		snprintf(lines + used, lroom - used, ", ...");
	return first;
}

/* The shared-memory requests of fibers (dsm_req_name), the functions
 * that post them (earth_dsm_fiber.h: the EU names them in what it
 * refuses) and the prefixes of the Threaded-C operations that call those
 * (threadedc.h). */
static const char *const dsm_ops[][3] = {
    {"DSM ACQUIRE", "earth_dsm_acquire_", "ACQUIRE_"},
    {"DSM RELEASE", "earth_dsm_release_", "RELEASE_"},
    {"DSM LOCK_SYNC", "earth_dsm_lock_", "DSM_LOCK_"},
    {"DSM UNLOCK_SYNC", "earth_dsm_unlock_", "DSM_UNLOCK_"},
    {"DSM BARRIER_SYNC", "earth_dsm_barrier_", "DSM_BARRIER_"},
    {"DSM FLAG_SET_SYNC", "earth_dsm_flag_set_", "FLAG_SET_"},
    {"DSM FLAG_WAIT_SYNC", "earth_dsm_flag_wait_", "FLAG_WAIT_"},
    {"DSM ALLOC_SYNC", "earth_dsm_alloc_sync", "DSM_ALLOC_"},
    {"DSM FREE_SYNC", "earth_dsm_free_sync", "DSM_FREE_"},
};

/* Does the operation written `w` reach the runtime as `rt`? */
static bool op_is(const char *w, const void *key)
{
	const char *rt = key;
	for (size_t i = 0; i < sizeof(dsm_ops) / sizeof(dsm_ops[0]); i++)
		if (!strcmp(rt, dsm_ops[i][0]) ||
		    !strncmp(rt, dsm_ops[i][1], strlen(dsm_ops[i][1])))
			return !strncmp(w, dsm_ops[i][2],
					strlen(dsm_ops[i][2]));
	return !strcasecmp(w, rt) ||
	       (!strcmp(rt, "INCR_SYNC") && !strcmp(w, "INCR_RSYNC"));
}

const char *src_op_where(earth_fiber_fn fn, const char *op, char *buf,
			 size_t room)
{
	const struct earth_src_row *f = src_fiber(fn);
	if (!f || !room)
		return NULL;
	char lines[64];
	const struct earth_src_row *first =
	    op_rows(fn, op_is, op, lines, sizeof(lines));
	if (first)
		snprintf(buf, room, "%s:%u%s in %s, fiber %s: %s",
			 str(first->file), (unsigned)first->line, lines,
			 str(f->func), str(f->fiber_name), str(first->op));
	else
		snprintf(buf, room, "in %s, fiber %s (%s:%u): %s", str(f->func),
			 str(f->fiber_name), str(f->file), (unsigned)f->line,
			 op);
	return buf;
}

/* ---- the origin of a request another node handles ---- */

/* Bits of an origin word (srctab.h). */
#define ORIGIN_OP_SHIFT 32
#define ORIGIN_R_SHIFT 36
#define ORIGIN_SIZE_SHIFT 37
#define ORIGIN_TAG_SHIFT 41
#define ORIGIN_TAG_MASK 0x7fu
#define ORIGIN_NODE_SHIFT 48

/* A digest of the table (its rows' lines, slots and operations' first
 * letters, 7 bits): another binary's origins are not read as this one's.
 * Computed once; any thread (the same value each time). */
static unsigned table_tag(void)
{
	static _Atomic unsigned tag; /* the digest + 1; 0: not yet */
	unsigned t = atomic_load_explicit(&tag, memory_order_relaxed);
	if (t)
		return t - 1;
	uint32_t h = 2166136261u;
	size_t n = nrows();
	for (size_t i = 0; i < n; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		uint32_t v[3] = {r->line, (uint32_t)r->slot,
				 r->op ? (uint32_t)(unsigned char)r->op[0] : 0};
		for (int k = 0; k < 3; k++)
			h = (h ^ v[k]) * 16777619u;
	}
	h = (h ^ (uint32_t)n) * 16777619u;
	t = (h ^ h >> 7 ^ h >> 14 ^ h >> 21) & ORIGIN_TAG_MASK;
	atomic_store_explicit(&tag, t + 1, memory_order_relaxed);
	return t;
}

uint64_t src_origin_pack(earth_fiber_fn fn, unsigned op, bool rsync,
			 unsigned size, uint32_t node)
{
	uintptr_t anchor = (uintptr_t)__start_earth_src, f = (uintptr_t)fn;
	if (!anchor || !f || op == 0 || op > 15 || size > 15 || node > 0xffff)
		return 0;
	intptr_t d = (intptr_t)(f - anchor);
	if (d < INT32_MIN || d > INT32_MAX)
		return 0;
	return (uint64_t)(uint32_t)(int32_t)d |
	       (uint64_t)op << ORIGIN_OP_SHIFT |
	       (uint64_t)rsync << ORIGIN_R_SHIFT |
	       (uint64_t)size << ORIGIN_SIZE_SHIFT |
	       (uint64_t)table_tag() << ORIGIN_TAG_SHIFT |
	       (uint64_t)node << ORIGIN_NODE_SHIFT;
}

/* An operation of an origin: the family as the runtime knows it, whether
 * the slot was global (the R variant), the value's size. */
struct origin_op {
	unsigned op;
	bool rsync;
	unsigned size;
};

/* The written names of the typed variants end in a letter of the type;
 * its size must be the value's. */
static bool type_size_is(char t, unsigned size)
{
	switch (t) {
	case 'C':
	case 'c':
		return size == 1;
	case 'S':
	case 's':
		return size == 2;
	case 'I':
	case 'i':
	case 'F':
	case 'f':
		return size == 4;
	case 'L':
	case 'l':
	case 'D':
	case 'd':
	case 'G':
	case 'g':
		return size == 8;
	}
	return false;
}

static bool origin_op_is(const char *w, const void *key)
{
	const struct origin_op *o = key;
	const char *base = NULL;
	bool typed = false;
	switch (o->op) {
	case SU_OP_SYNC:
		base = o->rsync ? "RSYNC" : "SYNC";
		break;
	case SU_OP_INCR_SYNC:
		base = o->rsync ? "INCR_RSYNC" : "INCR_SYNC";
		break;
	case SU_OP_GET_SYNC:
		base = o->rsync ? "GET_RSYNC_" : "GET_SYNC_";
		typed = true;
		break;
	case SU_OP_DATA_SYNC:
		base = o->rsync ? "DATA_RSYNC_" : "DATA_SYNC_";
		typed = true;
		break;
	case SU_OP_BLKMOV_SYNC:
		base = o->rsync ? "BLKMOV_RSYNC" : "BLKMOV_SYNC";
		break;
	case SU_OP_INVOKE_REMOTE:
		base = "INVOKE";
		break;
	default:
		return false;
	}
	size_t k = strlen(base);
	if (strncasecmp(w, base, k))
		return false;
	if (!typed)
		return w[k] == 0;
	return w[k] && !w[k + 1] && type_size_is(w[k], o->size);
}

const char *src_origin_where(uint64_t w, uint32_t nodes, uint32_t *node,
			     char *buf, size_t room)
{
	struct origin_op o = {
	    .op = (unsigned)(w >> ORIGIN_OP_SHIFT) & 0xf,
	    .rsync = (w >> ORIGIN_R_SHIFT) & 1,
	    .size = (unsigned)(w >> ORIGIN_SIZE_SHIFT) & 0xf,
	};
	uint32_t from = (uint32_t)(w >> ORIGIN_NODE_SHIFT);
	uintptr_t anchor = (uintptr_t)__start_earth_src;
	if (!room || !anchor || !o.op || o.op >= SU_OP_COUNT_ ||
	    from >= nodes ||
	    ((w >> ORIGIN_TAG_SHIFT) & ORIGIN_TAG_MASK) != table_tag())
		return NULL;
	/* An integer compared with the table's fiber addresses, never
	 * called or read through. */
	uintptr_t f = anchor + (uintptr_t)(intptr_t)(int32_t)(uint32_t)w;
	earth_fiber_fn fn;
	memcpy(&fn, &f, sizeof(fn));
	const struct earth_src_row *start = src_fiber(fn);
	if (!start)
		return NULL;
	char lines[64];
	const struct earth_src_row *first =
	    op_rows(fn, origin_op_is, &o, lines, sizeof(lines));
	if (first)
		snprintf(buf, room, "%s from node %u (%s:%u%s in %s, fiber %s)",
			 str(first->op), (unsigned)from, str(first->file),
			 (unsigned)first->line, lines, str(start->func),
			 str(start->fiber_name));
	else
		snprintf(buf, room, "%s from node %u (in %s, fiber %s, %s:%u)",
			 su_op_name(o.op), (unsigned)from, str(start->func),
			 str(start->fiber_name), str(start->file),
			 (unsigned)start->line);
	*node = from;
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

static __thread struct {
	uint64_t origin;
	uint32_t from, nodes;
} cur_msg;

void src_origin_set(uint64_t origin, uint32_t from, uint32_t nodes)
{
	cur_msg.origin = origin;
	cur_msg.from = from;
	cur_msg.nodes = nodes;
}

const char *src_origin_now(char *buf, size_t room)
{
	uint32_t node;
	if (!cur_msg.origin)
		return NULL;
	return src_origin_where(cur_msg.origin, cur_msg.nodes, &node, buf,
				room);
}

const char *src_slot_where(const earth_slot *s, char *buf, size_t room)
{
	const struct earth_src_row *f = src_fiber(s->fiber);
	if (!f || !room)
		return NULL;
	/* Fiber 0 of the same function: where its frame holds SYNC_SLOTS. */
	const struct earth_src_row *entry = NULL;
	size_t n = nrows();
	for (size_t i = 0; i < n && !entry; i++) {
		const struct earth_src_row *r = &__start_earth_src[i];
		if (!r->op && r->fiber_name && !strcmp(r->fiber_name, "0") &&
		    r->func && f->func && !strcmp(r->func, f->func))
			entry = r;
	}
	uintptr_t at = (uintptr_t)s, base = (uintptr_t)s->frame;
	if (entry && entry->slot > 0 && base && base + entry->slots_at <= at &&
	    (at - base - entry->slots_at) % sizeof(earth_slot) == 0 &&
	    (at - base - entry->slots_at) / sizeof(earth_slot) <
		(uint32_t)entry->slot) {
		unsigned k = (unsigned)((at - base - entry->slots_at) /
					sizeof(earth_slot));
		const struct earth_src_row *r = src_init_sync(s->fiber, (int)k);
		if (r) {
			snprintf(
			    buf, room,
			    "slot %u of a frame of %s (INIT_SYNC at %s:%u, "
			    "fiber %s)",
			    k, str(f->func), str(r->file), (unsigned)r->line,
			    str(f->fiber_name));
			return buf;
		}
	}
	char w[224];
	if (!src_fiber_where(s->fiber, w, sizeof(w)))
		return NULL;
	snprintf(buf, room, "the slot of %s", w);
	return buf;
}

bool src_overlaps(uintptr_t p, size_t len)
{
	uintptr_t b = (uintptr_t)__start_earth_src,
		  e = (uintptr_t)__stop_earth_src;
	return b && p < e && p + len > b;
}
