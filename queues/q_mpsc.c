/* SPDX-License-Identifier: MIT */
/*
 * q_mpsc.c - set-up of the MPSC queue (see q_mpsc.h).
 */
#include "q_mpsc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int q_mpsc_init(struct q_mpsc *q, uint32_t capacity)
{
	if (capacity < 2 || (capacity & (capacity - 1)))
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	void *mem = NULL;
	if (posix_memalign(&mem, 4096, (size_t)capacity * sizeof(struct q_msg)))
		return -ENOMEM;
	q->slots = mem;
	q->mask = capacity - 1;
	q->capacity = capacity;
	for (uint32_t i = 0; i < capacity; i++) {
		atomic_init(&q->slots[i].seq, i);
		q->slots[i].stamp = 0;
		memset(q->slots[i].w, 0, sizeof(q->slots[i].w));
	}
	atomic_init(&q->tail, 0);
	return 0;
}

void q_mpsc_fini(struct q_mpsc *q)
{
	free(q->slots);
	q->slots = NULL;
}
