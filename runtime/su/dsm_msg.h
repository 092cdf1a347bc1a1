/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_msg.h - the shared-memory messages between SUs (W_DSM, what in
 * field n), private to su/dsm*.c and its fuzz target:
 *
 *
 *   FETCH      a = page                      -> PAGE from the home
 *   PAGE       a = page, the page's bytes
 *   DIFF       a = page, b = 1: more parts follow, the diff (or a part
 *              of it)                        -> ACK after the last part
 *   ACK
 *   LOCK       a = lock, b = thread slot, the sender's vector time
 *   UNLOCK     a = lock, b = slot, the sender's new write notices
 *   BARRIER    a = barrier, b = slot, c = count, vector time + notices
 *   FLAG_SET   a = flag, notices
 *   FLAG_WAIT  a = flag, b = slot, vector time
 *   FLAG_CLEAR a = flag
 *   GRANT      a = kind, b = slot, c = object, the notices it lacks
 *              (and pages of the manager's they name, GRANT_PAGES)
 *   ALLOC      a = pages, b = place | arg << 8, c = slot (to node 0)
 *   PLACED     b = its number, the placement (from node 0, to every node)
 *   PLACED_ACK a = the placement's number (to node 0, which answers
 *              ALLOCATED once every node has the homes)
 *   ALLOCATED  a = first page, or ~0 with errno in b; c = slot
 *   FREE       a = first page (to node 0)
 *   GLOBALS    a = offset, b = 0 (.data) or 1 (.bss), the bytes (node 0)
 *   CREATE     a = function's index, b = thread id, notices (node 0)
 *   DONE       b = thread id, notices (to node 0)
 *   CLAIM      a = page, b = 1 to write (a first-touch page, to node 0)
 *   HOME       a = page, b = its home (from node 0: to the claimant, or
 *              to every node when the page gets its home), or
 *              DSM_HOME_NONE: not written yet, zeros
 *   NOTICES    whole intervals of the next message's notices (UNLOCK,
 *              BARRIER, FLAG_SET, GRANT, CREATE, DONE) that do not fit
 *              in it, ahead of it: as many as a message takes
 *
 */
#ifndef EARTH_SU_DSM_MSG_H
#define EARTH_SU_DSM_MSG_H

enum dsm_msg {
	M_FETCH = 1,
	M_PAGE,
	M_DIFF,
	M_ACK,
	M_LOCK,
	M_UNLOCK,
	M_BARRIER,
	M_FLAG_SET,
	M_FLAG_WAIT,
	M_FLAG_CLEAR,
	M_GRANT,
	M_ALLOC,
	M_PLACED,
	M_ALLOCATED,
	M_FREE,
	M_GLOBALS,
	M_CREATE,
	M_DONE,
	M_CLAIM,
	M_HOME,
	M_PLACED_ACK,
	M_NOTICES,
	M_COUNT_
};

/* GRANT's field a: the kind, and this bit when the payload ends with the
 * vector time up to which every node may drop notices. */
#define GRANT_COLLECT 0x100u
/* And this one when the payload starts with pages homed at the manager
 * that its notices name (a lock's grant between hosts,
 * EARTH_DSM_GRANT_PAGES): u32 count (at most GRANT_PAGES_MAX), count x
 * u32 page, count pages' bytes; the notices follow. */
#define GRANT_PAGES 0x200u
#define GRANT_PAGES_MAX 8u
/* And this one when a barrier's or flag's grant lets more of the node's
 * waiters go than the one in field b: the payload ends with u32 slot x m,
 * u32 m (1 <= m < DSM_WAITERS_PER_NODE); never with GRANT_PAGES. */
#define GRANT_MORE 0x400u

#endif
