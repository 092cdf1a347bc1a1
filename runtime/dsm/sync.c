/* SPDX-License-Identifier: MIT */
/*
 * dsm/sync.c - lock, barrier and flag managers (dsm/sync.h). Waiting
 * threads are kept in one table, a slot per thread of the job, each with
 * room for its vector time; a lock's waiters are a FIFO list through it,
 * a barrier's and a flag's a list too.
 */
#include "dsm/sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct dsm_waiter {
	int kind; /* what it waits for, -1 when nothing */
	uint32_t id;
	uint32_t next; /* the next waiter of the same object */
	uint32_t *vt;
};

struct dsm_lockst {
	uint32_t holder; /* waiter slot, or NONE */
	uint32_t head, tail;
	uint32_t n;
};

struct dsm_barst {
	uint32_t count, arrived, head;
};

struct dsm_flagst {
	bool set;
	uint32_t head, n;
};

static uint32_t slot(const struct dsm_sync *s, uint32_t node, uint32_t thread)
{
	return node * s->threads + thread;
}

int dsm_sync_init(struct dsm_sync *s, uint32_t nodes, uint32_t threads,
		  uint32_t nlocks, uint32_t nbarriers, uint32_t nflags,
		  dsm_sync_go_fn go, void *ctx)
{
	memset(s, 0, sizeof(*s));
	if (!nodes || !threads || (uint64_t)nodes * threads > (1u << 24)) {
		errno = EINVAL;
		return -1;
	}
	s->nodes = nodes;
	s->threads = threads;
	s->nlocks = nlocks;
	s->nbarriers = nbarriers;
	s->nflags = nflags;
	s->go = go;
	s->ctx = ctx;
	uint32_t nw = nodes * threads;
	s->w = calloc(nw, sizeof(*s->w));
	s->lock = calloc(nlocks ? nlocks : 1, sizeof(*s->lock));
	s->barrier = calloc(nbarriers ? nbarriers : 1, sizeof(*s->barrier));
	s->flag = calloc(nflags ? nflags : 1, sizeof(*s->flag));
	uint32_t *vts = calloc((size_t)nw * nodes, sizeof(*vts));
	if (!s->w || !s->lock || !s->barrier || !s->flag || !vts) {
		free(vts);
		dsm_sync_fini(s);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < nw; i++)
		s->w[i] =
		    (struct dsm_waiter){-1, 0, NONE, vts + (size_t)i * nodes};
	for (uint32_t i = 0; i < nlocks; i++)
		s->lock[i] = (struct dsm_lockst){NONE, NONE, NONE, 0};
	for (uint32_t i = 0; i < nbarriers; i++)
		s->barrier[i].head = NONE;
	for (uint32_t i = 0; i < nflags; i++)
		s->flag[i].head = NONE;
	return 0;
}

void dsm_sync_fini(struct dsm_sync *s)
{
	if (s->w)
		free(s->w[0].vt);
	free(s->w);
	free(s->lock);
	free(s->barrier);
	free(s->flag);
	memset(s, 0, sizeof(*s));
}

/* The common checks of a request; NULL or why not. */
static const char *check(const struct dsm_sync *s, uint32_t node,
			 uint32_t thread, uint32_t id, uint32_t n,
			 const char *what)
{
	if (node >= s->nodes)
		return "a request from a node the job does not have";
	if (thread >= s->threads)
		return "a request from a thread its node does not have";
	if (id >= n)
		return what;
	if (s->w[slot(s, node, thread)].kind >= 0)
		return "a request from a thread that waits for something "
		       "already";
	return NULL;
}

static void go(struct dsm_sync *s, enum dsm_sync_kind kind, uint32_t id,
	       uint32_t w)
{
	struct dsm_waiter *x = &s->w[w];
	x->kind = -1;
	s->grants++;
	s->go(s->ctx, kind, id, w / s->threads, w % s->threads, x->vt);
}

/* Lets every waiter of a list go; the caller has detached the list (go
 * may bring a thread straight back to the same object). */
static void go_all(struct dsm_sync *s, enum dsm_sync_kind kind, uint32_t id,
		   uint32_t x)
{
	while (x != NONE) {
		uint32_t next = s->w[x].next;
		go(s, kind, id, x);
		x = next;
	}
}

static void wait_on(struct dsm_sync *s, uint32_t w, enum dsm_sync_kind kind,
		    uint32_t id, const uint32_t *vt)
{
	struct dsm_waiter *x = &s->w[w];
	x->kind = (int)kind;
	x->id = id;
	x->next = NONE;
	memcpy(x->vt, vt, s->nodes * sizeof(*vt));
}

int dsm_sync_lock(struct dsm_sync *s, uint32_t id, uint32_t node,
		  uint32_t thread, const uint32_t *vt, const char **why)
{
	if ((*why = check(s, node, thread, id, s->nlocks,
			  "a lock that does not exist")))
		return -1;
	struct dsm_lockst *l = &s->lock[id];
	uint32_t w = slot(s, node, thread);
	if (l->holder == w) {
		*why = "a lock asked for by the thread that holds it";
		return -1;
	}
	wait_on(s, w, DSM_SYNC_LOCK, id, vt);
	if (l->holder == NONE) {
		l->holder = w;
		go(s, DSM_SYNC_LOCK, id, w);
		return 0;
	}
	if (l->tail == NONE)
		l->head = w;
	else
		s->w[l->tail].next = w;
	l->tail = w;
	l->n++;
	return 0;
}

int dsm_sync_unlock(struct dsm_sync *s, uint32_t id, uint32_t node,
		    uint32_t thread, const char **why)
{
	if (node >= s->nodes || thread >= s->threads) {
		*why = "a release from a node or thread the job does not have";
		return -1;
	}
	if (id >= s->nlocks) {
		*why = "a lock that does not exist";
		return -1;
	}
	struct dsm_lockst *l = &s->lock[id];
	if (l->holder != slot(s, node, thread)) {
		*why = "a lock released by a thread that does not hold it";
		return -1;
	}
	*why = NULL;
	l->holder = l->head;
	if (l->head == NONE)
		return 0;
	l->head = s->w[l->head].next;
	if (l->head == NONE)
		l->tail = NONE;
	l->n--;
	s->handoffs++;
	go(s, DSM_SYNC_LOCK, id, l->holder);
	return 0;
}

int dsm_sync_barrier(struct dsm_sync *s, uint32_t id, uint32_t count,
		     uint32_t node, uint32_t thread, const uint32_t *vt,
		     const char **why)
{
	if ((*why = check(s, node, thread, id, s->nbarriers,
			  "a barrier that does not exist")))
		return -1;
	struct dsm_barst *b = &s->barrier[id];
	if (!count || count > s->nodes * s->threads)
		*why = "a barrier count of 0 or more than the job's threads";
	else if (b->arrived && count != b->count)
		*why = "a barrier count unlike the one its first thread gave";
	if (*why)
		return -1;
	uint32_t w = slot(s, node, thread);
	wait_on(s, w, DSM_SYNC_BARRIER, id, vt);
	b->count = count;
	s->w[w].next = b->head;
	b->head = w;
	if (++b->arrived < count)
		return 0;
	/* All here: let every one go. */
	uint32_t x = b->head;
	b->head = NONE;
	b->arrived = 0;
	s->barriers_done++;
	go_all(s, DSM_SYNC_BARRIER, id, x);
	return 0;
}

int dsm_sync_flag_set(struct dsm_sync *s, uint32_t id, const char **why)
{
	*why = id < s->nflags ? NULL : "a flag that does not exist";
	if (*why)
		return -1;
	struct dsm_flagst *f = &s->flag[id];
	f->set = true;
	uint32_t x = f->head;
	f->head = NONE;
	f->n = 0;
	go_all(s, DSM_SYNC_FLAG, id, x);
	return 0;
}

int dsm_sync_flag_clear(struct dsm_sync *s, uint32_t id, const char **why)
{
	*why = id < s->nflags ? NULL : "a flag that does not exist";
	if (*why)
		return -1;
	s->flag[id].set = false;
	return 0;
}

int dsm_sync_flag_wait(struct dsm_sync *s, uint32_t id, uint32_t node,
		       uint32_t thread, const uint32_t *vt, const char **why)
{
	if ((*why = check(s, node, thread, id, s->nflags,
			  "a flag that does not exist")))
		return -1;
	struct dsm_flagst *f = &s->flag[id];
	uint32_t w = slot(s, node, thread);
	wait_on(s, w, DSM_SYNC_FLAG, id, vt);
	if (f->set) {
		go(s, DSM_SYNC_FLAG, id, w);
		return 0;
	}
	s->w[w].next = f->head;
	f->head = w;
	f->n++;
	return 0;
}

int64_t dsm_sync_holder(const struct dsm_sync *s, uint32_t id)
{
	if (id >= s->nlocks || s->lock[id].holder == NONE)
		return -1;
	return s->lock[id].holder;
}

uint32_t dsm_sync_waiting(const struct dsm_sync *s, enum dsm_sync_kind kind,
			  uint32_t id)
{
	switch (kind) {
	case DSM_SYNC_LOCK:
		return id < s->nlocks ? s->lock[id].n : 0;
	case DSM_SYNC_BARRIER:
		return id < s->nbarriers ? s->barrier[id].arrived : 0;
	case DSM_SYNC_FLAG:
		return id < s->nflags ? s->flag[id].n : 0;
	}
	return 0;
}
