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

/*
 * The origin of a request another node handles, packed in 64 bits that
 * every node of a job running one binary reads the same way, address
 * randomisation or not: the issuing fiber as its offset from the table
 * (32 bits), the operation (enum su_op, 4 bits), whether its slot was
 * global (1), the value's size (4), a 7-bit digest of the table (another
 * binary's origin is not read as this one's) and the issuing node (16).
 * It travels in field c of a SYNC, INCR or BLK_DATA message and as a
 * BLK_REQ's 8-byte payload (docs/architecture.md, "Errors in source
 * terms"). 0: none (fn in no table, or too far from it).
 */
uint64_t src_origin_pack(earth_fiber_fn fn, unsigned op, bool rsync,
			 unsigned size, uint32_t node);
/* An origin from a message (untrusted): "BLKMOV_SYNC from node 0
 * (f.tc:21 in main, fiber 0)", the operation as written, and *node the
 * issuing node. NULL (buf untouched) unless w names the start of a fiber
 * in this table, an operation, a node below nodes and this table's
 * digest. */
const char *src_origin_where(uint64_t w, uint32_t nodes, uint32_t *node,
			     char *buf, size_t room);

/* The message being handled on this thread (the SU's deliver sets it,
 * 0 after): its origin, sender and the job's node count, so a slot's
 * error found deep in a signal names the request behind it. */
void src_origin_set(uint64_t origin, uint32_t from, uint32_t nodes);
/* "DATA_RSYNC_L from node 1 (f.tc:7 in sq, fiber 0)" for the message
 * being handled, or NULL (none, or its origin names nothing here). */
const char *src_origin_now(char *buf, size_t room);

/* Slot s (aligned, with a fiber) in source terms: "slot 0 of a frame of
 * main (INIT_SYNC at f.tc:11, fiber THREAD_1)", or "the slot of fiber
 * THREAD_1 of main (f.tc:19; INIT_SYNC at f.tc:14)" when its place in a
 * frame is not known; NULL when its fiber is in no table. Its fields are
 * compared and used in arithmetic only. */
const char *src_slot_where(const earth_slot *s, char *buf, size_t room);

/* Does [p, p+len) overlap the table itself (static data that holds fiber
 * addresses, which a search for slots must skip)? */
bool src_overlaps(uintptr_t p, size_t len);

#endif /* EARTH_SRCTAB_H */
