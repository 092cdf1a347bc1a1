/* SPDX-License-Identifier: MIT */
/*
 * qstream.h - the streaming floor of the EU<->SU ring: a producer on one
 * CPU sends 64-byte messages through a 1024-slot q_ring to a consumer on
 * another, which checks each one's sequence number. queue_msg reports it;
 * eu_overhead divides its per-operation costs by it, measured in the same
 * run (eu_overhead.<op>.<mode>_over_queue_msg).
 */
#ifndef EARTH_BENCH_QSTREAM_H
#define EARTH_BENCH_QSTREAM_H

#include "queues/q_ring.h"

/* ns per message over `count` messages (the first tenth not timed) in
 * `mode`, the calling thread producing on cpu_p (its affinity restored
 * after), the consumer on cpu_c. Exits on a lost or reordered message. */
double bench_queue_msg_ns(enum q_mode mode, int cpu_p, int cpu_c, long count);

#endif /* EARTH_BENCH_QSTREAM_H */
