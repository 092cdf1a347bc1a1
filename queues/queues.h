/* SPDX-License-Identifier: MIT */
/*
 * queues.h - the queue library's header: lock-free queues of 64-byte
 * messages between threads of one process (queues/README.md).
 *
 *   struct q_msg    one cache line: a sequence word, a stamp, 48 bytes of
 *                   payload (q_msg.h)
 *   struct q_ring   single producer, single consumer; a software protocol
 *                   (Q_MODE_SW) or a hardware-FIFO emulation (Q_MODE_HWQ),
 *                   chosen at run time (q_ring.h)
 *   struct q_mpsc   several producers, one consumer (q_mpsc.h)
 *   q_tsc, q_cpu_relax, q_tsc_per_ns   the machine primitives they use
 *                   (q_arch.h)
 *
 * Link q_ring.c, q_mpsc.c and q_arch.c (and -lnuma).
 */
#ifndef Q_QUEUES_H
#define Q_QUEUES_H

#include "q_arch.h"
#include "q_mpsc.h"
#include "q_msg.h"
#include "q_ring.h"

#endif /* Q_QUEUES_H */
