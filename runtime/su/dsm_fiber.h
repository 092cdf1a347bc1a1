/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_fiber.h - between the SU's shared memory (su/dsm.c) and its
 * fibers' split-phase operations (su/dsm_fiber.c, earth_dsm_fiber.h):
 * what each file asks of the other.
 */
#ifndef EARTH_SU_DSM_FIBER_H
#define EARTH_SU_DSM_FIBER_H

#include <stdbool.h>
#include <stdint.h>

struct dsm_pt;
struct dsm_proto;
struct dsm_stats;
struct earth_node;
struct su_req;

/* ---- su/dsm.c gives ---- */

/* This node's side of the protocol. */
struct dsm_proto *su_dsm_proto(void) __attribute__((visibility("hidden")));
/* A synchronisation request (enum dsm_req, the threads' kinds) of a
 * record: its object checked, the release first where it is one, held
 * behind a release under way; the record is resumed when done. */
void su_dsm_sync_req(struct dsm_pt *pt, unsigned req, uint64_t b, uint64_t c)
    __attribute__((visibility("hidden")));
/* A free waiting slot above the threads' for record pt (pt->slot set,
 * the slot taken), or false when every one is taken. */
bool su_dsm_waiter_take(struct dsm_pt *pt)
    __attribute__((visibility("hidden")));
/* Gives pt's slot back and frees pt. */
void su_dsm_waiter_free(struct dsm_pt *pt)
    __attribute__((visibility("hidden")));
/* The fibers' record that holds lock id on this node, or NULL. */
struct dsm_pt *su_dsm_lock_holder(uint64_t id)
    __attribute__((visibility("hidden")));
/* Threads and fibers waiting for page: it came (or its invalidation was
 * done): they ask again. */
void su_dsm_page_came(uint32_t page) __attribute__((visibility("hidden")));
/* Whether a release's diffs are out or requests wait behind one. */
bool su_dsm_releasing(void) __attribute__((visibility("hidden")));

/* ---- su/dsm_fiber.c gives ---- */

void su_dsm_fiber_request(struct earth_node *n, const struct su_req *r)
    __attribute__((visibility("hidden")));
/* A fiber's synchronisation record is done: its slot signalled. */
void su_dsm_fiber_resume(struct dsm_pt *pt)
    __attribute__((visibility("hidden")));
/* Fibers' acquisitions waiting for page ask again. */
void su_dsm_fiber_page(uint32_t page) __attribute__((visibility("hidden")));
/* Every diff of this node was acknowledged: releases waiting fire. */
void su_dsm_fiber_acked(void) __attribute__((visibility("hidden")));
/* Pages of an allocation every node learnt (an acquisition names only
 * those), tail bytes of its last page allocated. */
void su_dsm_fiber_placed(uint32_t first, uint32_t n, uint32_t tail)
    __attribute__((visibility("hidden")));
/* What a free refused by su_dsm_fiber_unplace is told (after its
 * address), a thread's or a fiber's. */
#define SU_DSM_FREE_REFUSED                                                    \
	"no allocation starts there (freed twice, or an address "              \
	"earth_dsm_alloc did not give): free once what an allocation gave"
/* The allocation that starts at page first is freed: its pages are of no
 * allocation now. -1 when none starts there. */
int su_dsm_fiber_unplace(uint64_t first) __attribute__((visibility("hidden")));
int su_dsm_fiber_open(uint32_t pages) __attribute__((visibility("hidden")));
void su_dsm_fiber_close(void) __attribute__((visibility("hidden")));
/* "fn" or "f.tc:12 in fn, fiber 1" or "at 0x...": the fiber that
 * posted a request (a = its address), for messages. */
const char *su_dsm_fiber_name(uint64_t fiber)
    __attribute__((visibility("hidden")));
void su_dsm_fiber_stats(struct dsm_stats *st)
    __attribute__((visibility("hidden")));

#endif
