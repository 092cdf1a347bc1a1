/* SPDX-License-Identifier: MIT */
/*
 * queue_msg.c - streaming cost per message through the EU<->SU queues:
 * one producer on the EU's CPU, one consumer on the SU's, 64-byte messages
 * carrying a sequence number the consumer checks. METRIC queue_msg.<mode>
 * for the software ring, the hardware-queue emulation and the MPSC inbox.
 */
#include "bench.h"
#include "queues/q_mpsc.h"
#include "lib/qstream.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long count;
static int su_cpu;

static void *mpsc_consumer(void *arg)
{
	struct q_mpsc *q = arg;
	bench_pin(su_cpu);
	for (uint64_t i = 0; i < (uint64_t)count; i++) {
		struct q_msg *m;
		while (!(m = q_mpsc_peek(q)))
			q_cpu_relax();
		if (m->w[0] != i) {
			fprintf(stderr, "queue_msg mpsc: got %lu want %lu\n",
				(unsigned long)m->w[0], (unsigned long)i);
			exit(1);
		}
		q_mpsc_release(q);
	}
	return NULL;
}

static double mpsc_run(void)
{
	struct q_mpsc q;
	if (q_mpsc_init(&q, 1024) != 0)
		exit(1);
	pthread_t t;
	pthread_create(&t, NULL, mpsc_consumer, &q);
	uint64_t t0 = q_tsc_ordered();
	for (uint64_t i = 0; i < (uint64_t)count; i++) {
		struct q_msg *m;
		while (!(m = q_mpsc_reserve(&q)))
			q_cpu_relax();
		m->w[0] = i;
		q_mpsc_publish(&q, m);
	}
	pthread_join(t, NULL);
	uint64_t t1 = q_tsc_ordered();
	q_mpsc_fini(&q);
	return bench_ns((double)(t1 - t0) / (double)count);
}

int main(int argc, char **argv)
{
	bench_init("queue_msg", argc, argv);
	int eu;
	bench_cpus(&eu, &su_cpu);
	bench_pin(eu);
	count = bench_quick ? 1000000 : 5000000;
	double v[64];
	const char *names[] = {"queue_msg.sw", "queue_msg.hwq"};
	for (int mode = 0; mode < 2; mode++) {
		for (int r = 0; r < bench_reps; r++)
			v[r] = bench_queue_msg_ns((enum q_mode)mode, eu, su_cpu,
						  count);
		bench_metric_ns(names[mode], bench_median(v, bench_reps));
	}
	for (int r = 0; r < bench_reps; r++)
		v[r] = mpsc_run();
	bench_metric_ns("queue_msg.mpsc", bench_median(v, bench_reps));
	return 0;
}
