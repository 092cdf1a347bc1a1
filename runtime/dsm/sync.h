/* SPDX-License-Identifier: MIT */
/*
 * dsm/sync.h - the managers of the page DSM's locks, barriers and flags,
 * run by the SU of the managing node: who holds a lock and who waits for
 * it (first come, first served), who has reached a barrier, who waits for
 * a flag. A manager only decides whom to let go; the SU sends each a
 * grant carrying the write notices it lacks (dsm/notice.h: the manager's
 * log holds every release's notices, added before the release is handed
 * here), found from the vector time the waiter sent with its request and
 * that the manager keeps until the grant.
 *
 * Every request names a node of the job, a thread of that node and an
 * object that exists; a thread waits for one thing at a time; only the
 * holder releases a lock; every thread at a barrier agrees on its count.
 * A request that breaks a rule is refused with a reason and changes
 * nothing.
 */
#ifndef EARTH_DSM_SYNC_H
#define EARTH_DSM_SYNC_H

#include <stdbool.h>
#include <stdint.h>

enum dsm_sync_kind { DSM_SYNC_LOCK, DSM_SYNC_BARRIER, DSM_SYNC_FLAG };

/* Let thread `thread` of `node` go past object id of kind; their_vt is
 * the vector time it sent (nodes entries), valid during the call. */
typedef void (*dsm_sync_go_fn)(void *ctx, enum dsm_sync_kind kind, uint32_t id,
			       uint32_t node, uint32_t thread,
			       const uint32_t *their_vt);

struct dsm_waiter; /* sync.c */

struct dsm_sync {
	uint32_t nodes, threads; /* threads: per node, at most */
	uint32_t nlocks, nbarriers, nflags;
	dsm_sync_go_fn go;
	void *ctx;
	struct dsm_waiter *w;	   /* one per thread of the job */
	struct dsm_lockst *lock;   /* per lock */
	struct dsm_barst *barrier; /* per barrier */
	struct dsm_flagst *flag;   /* per flag */
	uint64_t grants, handoffs, barriers_done;
};

int dsm_sync_init(struct dsm_sync *s, uint32_t nodes, uint32_t threads,
		  uint32_t nlocks, uint32_t nbarriers, uint32_t nflags,
		  dsm_sync_go_fn go, void *ctx);
void dsm_sync_fini(struct dsm_sync *s);

/* Each returns 0 (go called now, or the thread queued), or -1 with *why.
 * vt: the requester's vector time (nodes entries). */
int dsm_sync_lock(struct dsm_sync *s, uint32_t id, uint32_t node,
		  uint32_t thread, const uint32_t *vt, const char **why);
int dsm_sync_unlock(struct dsm_sync *s, uint32_t id, uint32_t node,
		    uint32_t thread, const char **why);
/* count: the threads of the job that meet at this barrier. */
int dsm_sync_barrier(struct dsm_sync *s, uint32_t id, uint32_t count,
		     uint32_t node, uint32_t thread, const uint32_t *vt,
		     const char **why);
int dsm_sync_flag_set(struct dsm_sync *s, uint32_t id, const char **why);
int dsm_sync_flag_clear(struct dsm_sync *s, uint32_t id, const char **why);
int dsm_sync_flag_wait(struct dsm_sync *s, uint32_t id, uint32_t node,
		       uint32_t thread, const uint32_t *vt, const char **why);

/* Who holds lock id: its waiter slot (node * threads + thread), or -1. */
int64_t dsm_sync_holder(const struct dsm_sync *s, uint32_t id);
/* How many threads wait on object id of kind. */
uint32_t dsm_sync_waiting(const struct dsm_sync *s, enum dsm_sync_kind kind,
			  uint32_t id);

#endif
