/* SPDX-License-Identifier: MIT */
/*
 * deque.c - the cold parts of the token deque (deque.h): setting up,
 * growing, freeing; and stealing, which the SU does a few times per STEAL
 * request and an idle EU of a node of k > 1 when its own deque is empty.
 */
#define EARTH_INTERNAL 1
#include "unit/deque.h"

#include <stdlib.h>

static struct deque_array *array_new(int64_t cap)
{
	struct deque_array *a =
	    malloc(sizeof(*a) + (size_t)cap * sizeof(a->slot[0]));
	if (!a)
		return NULL;
	a->mask = cap - 1;
	a->older = NULL;
	for (int64_t i = 0; i < cap; i++)
		atomic_init(&a->slot[i], NULL);
	return a;
}

int deque_init(struct deque *d, size_t max, bool shared)
{
	if (max < DEQUE_MIN_CAP || (max & (max - 1)) || max > (1ull << 40))
		return -1;
	struct deque_array *a = array_new(DEQUE_MIN_CAP);
	if (!a)
		return -1;
	atomic_init(&d->top, 0);
	atomic_init(&d->bottom, 0);
	atomic_init(&d->array, a);
	d->max = (int64_t)max;
	d->shared = shared;
	return 0;
}

void deque_free(struct deque *d)
{
	struct deque_array *a =
	    atomic_load_explicit(&d->array, memory_order_relaxed);
	while (a) {
		struct deque_array *o = a->older;
		free(a);
		a = o;
	}
	atomic_store_explicit(&d->array, NULL, memory_order_relaxed);
}

bool deque_grow(struct deque *d)
{
	struct deque_array *a =
	    atomic_load_explicit(&d->array, memory_order_relaxed);
	int64_t cap = a->mask + 1;
	if (cap >= d->max)
		return false;
	struct deque_array *g = array_new(2 * cap);
	if (!g)
		return false;
	/* Thieves may take from the old array meanwhile: it keeps every
	 * item, and the top they CAS is the same for both arrays. */
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
	for (int64_t i = t; i < b; i++)
		atomic_store_explicit(
		    &g->slot[i & g->mask],
		    atomic_load_explicit(&a->slot[i & a->mask],
					 memory_order_relaxed),
		    memory_order_relaxed);
	g->older = a;
	/* Pairs with the thieves' acquire load of the array. */
	atomic_store_explicit(&d->array, g, memory_order_release);
	return true;
}

void *deque_steal(struct deque *d)
{
	for (;;) {
		int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
		int64_t b =
		    atomic_load_explicit(&d->bottom, memory_order_seq_cst);
		if (t >= b)
			return NULL;
		struct deque_array *a =
		    atomic_load_explicit(&d->array, memory_order_acquire);
		void *x = atomic_load_explicit(&a->slot[t & a->mask],
					       memory_order_relaxed);
		if (atomic_compare_exchange_strong_explicit(
			&d->top, &t, t + 1, memory_order_seq_cst,
			memory_order_relaxed))
			return x;
		/* Lost to the owner or another thief: look again. */
	}
}
