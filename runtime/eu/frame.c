/* SPDX-License-Identifier: MIT */
/*
 * frame.c - frames of threaded functions: per-size-class free lists owned
 * by each EU (no lock, no malloc, no atomic on the fast path), refilled
 * first from the frames of its lists that ended on other EUs (its
 * remote-free list, one exchange), then a chunk at a time from the heap;
 * frames over the largest class come from the heap, under a lock shared
 * by the node's EUs. With k > 1 EUs, a frame's fibers run on the EU whose
 * lists it came from (unit_frame_eu); a stolen token moves into a frame of
 * its thief's (eu_frame_rehome).
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "gas/registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* EU eu's list of class cls is empty: the frames of its lists other EUs
 * ended take its place if there are any (one exchange, acquire: pairs with
 * their pushes' release, so their stores to the frames, FRAME_FREE and the
 * link included, come before this EU's), else a new chunk. */
void *eu_frame_refill(struct eu_state *eu, unsigned cls)
{
	if (atomic_load_explicit(&eu->remote_free[cls], memory_order_relaxed)) {
		void *back = atomic_exchange_explicit(
		    &eu->remote_free[cls], NULL, memory_order_acquire);
		if (back) {
			eu->remote_lists_taken++;
			eu->free_list[cls] = back;
			return back;
		}
	}
	size_t sz = (size_t)64 << cls;
	size_t bytes = sizeof(struct frame_chunk) + 64 + sz * EARTH_FRAME_CHUNK;
	struct frame_chunk *c = NULL;
	if (posix_memalign((void **)&c, 64, bytes) != 0)
		earth_fatal("out of memory allocating %zu bytes of frames",
			    bytes);
	c->next = eu->chunks;
	eu->chunks = c;
	/* Frames receive results and signals from other nodes. */
	if (reg_mem_add(c, bytes) != 0)
		earth_fatal("cannot register %zu bytes of frames", bytes);
	char *base = (char *)c + 64;
	void *head = NULL;
	for (size_t i = EARTH_FRAME_CHUNK; i-- > 0;) {
		struct frame_hdr *h = (struct frame_hdr *)(base + i * sz);
		h->magic = FRAME_FREE;
		*(void **)(h + 1) = head;
		EU_POISON((char *)(h + 1) + sizeof(void *),
			  sz - sizeof(*h) - sizeof(void *));
		head = h;
	}
	eu->free_list[cls] = head;
	return head;
}

/* A large frame: [struct large_link][struct frame_hdr][body]. Live ones
 * are on `large_live`; ended ones stay allocated on `large_free` (reused
 * first-fit) until the node stops, so a second END_FUNCTION still finds a
 * readable header marked free. */
struct large_link {
	struct large_link *next, *prev;
	size_t body; /* bytes available for the frame */
	size_t pad;
};
static struct large_link large_live = {&large_live, &large_live, 0, 0};
static struct large_link large_free = {&large_free, &large_free, 0, 0};
/* Any EU allocates and ends large frames, its own or another's: the two
 * lists are the node's, under this lock (a slow path: a heap allocation
 * or a first-fit walk anyway). */
static pthread_mutex_t large_lock = PTHREAD_MUTEX_INITIALIZER;

static void link_unlink(struct large_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
}

static void link_push(struct large_link *list, struct large_link *l)
{
	l->next = list->next;
	l->prev = list;
	list->next->prev = l;
	list->next = l;
}

void *eu_frame_alloc_large(struct eu_state *eu, const struct earth_tfunc *f)
{
	pthread_mutex_lock(&large_lock);
	struct large_link *l = large_free.next;
	while (l != &large_free && l->body < f->frame_size)
		l = l->next;
	if (l != &large_free) {
		link_unlink(l);
	} else {
		size_t bytes =
		    sizeof(*l) + sizeof(struct frame_hdr) + f->frame_size;
		if (posix_memalign((void **)&l, 64, bytes) != 0)
			earth_fatal("out of memory allocating a %u-byte frame "
				    "for %s",
				    f->frame_size, f->name);
		l->body = f->frame_size;
		if (reg_mem_add(l, bytes) != 0)
			earth_fatal("cannot register a %u-byte frame",
				    f->frame_size);
	}
	link_push(&large_live, l);
	pthread_mutex_unlock(&large_lock);
	struct frame_hdr *h = (struct frame_hdr *)(l + 1);
	EU_UNPOISON(h + 1, f->frame_size);
	h->fn = f;
	h->cls = FRAME_CLASS_LARGE | eu->owner_tag;
	h->magic = FRAME_LIVE;
	eu_count(&eu->frames_allocated, 1);
	return h + 1;
}

void eu_frame_free_large(struct frame_hdr *h)
{
	struct large_link *l = (struct large_link *)h - 1;
	EU_POISON(h + 1, l->body);
	pthread_mutex_lock(&large_lock);
	link_unlink(l);
	link_push(&large_free, l);
	pthread_mutex_unlock(&large_lock);
}

void *eu_frame_rehome(struct eu_state *eu, void *frame)
{
	struct frame_hdr *h = (struct frame_hdr *)frame - 1;
	const struct earth_tfunc *f = h->fn;
	void *mine = eu_frame_alloc(eu, f);
	eu->frames_allocated--; /* the same frame of f's, moved */
	memcpy(mine, frame, f->args_size);
	eu_frame_free(eu, frame);
	return mine;
}

void eu_frame_free_foreign(struct eu_state *eu, struct frame_hdr *h)
{
	unsigned cls = h->cls & FRAME_CLASS_MASK;
	if (cls == FRAME_CLASS_LARGE) {
		eu_frame_free_large(h);
		return;
	}
	/* Another EU's frame (its magic already FRAME_FREE): back onto its
	 * owner's remote-free list of the class, a Treiber push. Only the
	 * owner takes from it, and only the whole list: no ABA. */
	struct eu_state *o = eu_at(frame_owner(h));
	size_t body = ((size_t)64 << cls) - sizeof(*h);
	void **link = (void **)(h + 1);
	/* Poisoned first: once pushed, the owner may take it. */
	EU_POISON((char *)(h + 1) + sizeof(void *), body - sizeof(void *));
	void *top =
	    atomic_load_explicit(&o->remote_free[cls], memory_order_relaxed);
	do
		*link = top;
	while (!atomic_compare_exchange_weak_explicit(
	    &o->remote_free[cls], &top, h, memory_order_release,
	    memory_order_relaxed));
	eu->frames_sent_back++;
}

static void free_list_all(struct large_link *list)
{
	while (list->next != list) {
		struct large_link *l = list->next;
		link_unlink(l);
		EU_UNPOISON(l, sizeof(*l) + sizeof(struct frame_hdr) + l->body);
		reg_mem_remove(l);
		free(l);
	}
}

void eu_frames_release_all(struct eu_state *eu)
{
	for (struct frame_chunk *c = eu->chunks, *next; c; c = next) {
		next = c->next;
		reg_mem_remove(c);
		free(c);
	}
	eu->chunks = NULL;
	memset(eu->free_list, 0, sizeof(eu->free_list));
	for (unsigned i = 0; i < EARTH_FRAME_CLASSES; i++)
		atomic_store_explicit(&eu->remote_free[i], NULL,
				      memory_order_relaxed);
}

void eu_frames_release_large(void)
{
	pthread_mutex_lock(&large_lock);
	free_list_all(&large_live);
	free_list_all(&large_free);
	pthread_mutex_unlock(&large_lock);
}
