/* SPDX-License-Identifier: MIT */
/*
 * qstream.c - the streaming floor of the EU<->SU ring (qstream.h).
 */
#define _GNU_SOURCE
#include "qstream.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "../bench.h"

struct qs_arg {
	struct q_ring *q;
	long count;
	int cpu;
};

static void *qs_consumer(void *arg)
{
	struct qs_arg *a = arg;
	bench_pin(a->cpu);
	for (uint64_t i = 0; i < (uint64_t)a->count; i++) {
		struct q_msg *m;
		while (!(m = q_ring_peek(a->q)))
			q_cpu_relax();
		if (m->w[0] != i) {
			fprintf(stderr, "queue_msg: got %lu want %lu\n",
				(unsigned long)m->w[0], (unsigned long)i);
			exit(1);
		}
		q_ring_release(a->q);
	}
	return NULL;
}

double bench_queue_msg_ns(enum q_mode mode, int cpu_p, int cpu_c, long count)
{
	struct q_ring q;
	if (q_ring_init(&q, mode, 1024, 0, -1) != 0)
		exit(1);
	cpu_set_t old;
	pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	bench_pin(cpu_p);
	struct qs_arg a = {&q, count, cpu_c};
	pthread_t t;
	pthread_create(&t, NULL, qs_consumer, &a);
	/* The first tenth warms the ring and the consumer up, untimed. */
	uint64_t warm = (uint64_t)count / 10, t0 = 0;
	for (uint64_t i = 0; i < (uint64_t)count; i++) {
		struct q_msg *m;
		if (i == warm)
			t0 = q_tsc_ordered();
		while (!(m = q_ring_reserve(&q))) {
			q_ring_flush(&q);
			q_cpu_relax();
		}
		m->w[0] = i;
		m->w[1] = i ^ 0x5a5a;
		q_ring_publish(&q, m);
	}
	q_ring_flush(&q);
	pthread_join(t, NULL);
	uint64_t t1 = q_tsc_ordered();
	q_ring_fini(&q);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return bench_ns((double)(t1 - t0) / (double)(count - (long)warm));
}
