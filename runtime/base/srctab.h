/* SPDX-License-Identifier: MIT */
/*
 * srctab.h - a Threaded-C program's source table (struct earth_src_row,
 * earth.h) looked up by fiber address, for messages only (srctab.c).
 * Nothing here runs on the busy path. Keys are compared by value: no
 * pointer that came in a message is ever followed into the table.
 */
#ifndef EARTH_SRCTAB_H
#define EARTH_SRCTAB_H

#ifndef EARTH_INTERNAL
#error "srctab.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "earth.h"

/* The start row of fiber fn, or NULL (not in any table). */
const struct earth_src_row *src_fiber(earth_fiber_fn fn);
/* Operation op (the runtime's name, e.g. "GET_SYNC_i") issued by fiber fn:
 * "f.tc:16 in fib, fiber 0: DATA_RSYNC_I" (several lines when the fiber
 * issues it at several: "f.tc:16, 18 in ..."), or "in fib, fiber 0
 * (f.tc:9): OP" when the fiber has no row for it. NULL when fn is in no
 * table (buf untouched). */
const char *src_op_where(earth_fiber_fn fn, const char *op, char *buf,
			 size_t room);
/* "fiber THREAD_1 of fib (f.tc:19; INIT_SYNC at f.tc:14)", or NULL. */
const char *src_fiber_where(earth_fiber_fn fn, char *buf, size_t room);
/* "fib" for fiber 0, "fib:THREAD_1" for another; NULL if unknown. */
const char *src_fiber_short(earth_fiber_fn fn, char *buf, size_t room);
/* The INIT_SYNC of slot `slot` arming fiber fn: its row, or NULL. */
const struct earth_src_row *src_init_sync(earth_fiber_fn fn, int32_t slot);
/* SYNC_SLOTS of a frame whose fiber 0 is entry and whose size is
 * frame_size: offset and count. False when no table knows entry or the
 * row does not fit the frame. */
bool src_slots(earth_fiber_fn entry, uint32_t frame_size, uint32_t *at,
	       uint32_t *n);

/* Does [p, p+len) overlap the table itself (static data that holds fiber
 * addresses, which a search for slots must skip)? */
bool src_overlaps(uintptr_t p, size_t len);

#endif /* EARTH_SRCTAB_H */
