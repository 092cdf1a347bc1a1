/* SPDX-License-Identifier: MIT */
/*
 * config.h - compile-time knobs of the runtime, each with its default
 * (override with -D). Run-time settings are in struct earth_options.
 */
#ifndef EARTH_CONFIG_H
#define EARTH_CONFIG_H

#ifndef EARTH_INTERNAL
#error "config.h is internal to the EARTH runtime"
#endif

/* Default capacity of each EU<->SU ring, in 64-byte messages. */
#ifndef EARTH_QUEUE_SLOTS_DEFAULT
#define EARTH_QUEUE_SLOTS_DEFAULT 1024
#endif
/* Capacity of the SU's multi-producer inbox. */
#ifndef EARTH_INBOX_SLOTS
#define EARTH_INBOX_SLOTS 256
#endif
/* The most Execution Units EARTH_EUS may ask for on one node (one SU
 * serves them all). */
#ifndef EARTH_EUS_MAX
#define EARTH_EUS_MAX 1023
#endif
/* Spin this long (µs) with nothing to do before blocking. */
#ifndef EARTH_SPIN_US_DEFAULT
#define EARTH_SPIN_US_DEFAULT 200
#endif
/* An idle SU that finds its core shared with a busy thread (su/loop.c,
 * su_spin_ticks) spins this long (µs) before it dozes. Beside a computing
 * EU its polling costs the EU about 0.375 µs of work per µs; a wake-up
 * costs the request that needs it about 27 µs in a guest (su_wake): past
 * about 70 µs spinning costs more than the wake. */
#ifndef EARTH_SHARED_SPIN_US_DEFAULT
#define EARTH_SHARED_SPIN_US_DEFAULT 50
#endif
/* ... finds it shared when a fixed run of additions takes more than this
 * many percent of the least time it has taken on this node: about 100
 * alone, 150-180 beside a busy SMT sibling. */
#ifndef EARTH_SHARED_SLOWER_PCT
#define EARTH_SHARED_SLOWER_PCT 135
#endif
/* ... measuring at its first idle check, then at most once per this many
 * ns: about 1 µs each time. The first node of a process measures itself
 * alone for this many ns at its start, before its EU starts: a vCPU that
 * just went idle keeps its SMT sibling busy for 25-50 µs (the host polls
 * for it). */
#ifndef EARTH_SHARED_CALIBRATE_NS
#define EARTH_SHARED_CALIBRATE_NS 100000
#endif
#ifndef EARTH_SHARED_PROBE_NS
#define EARTH_SHARED_PROBE_NS 1000000
#endif
/* A node of a job over shm puts the pages of its rings to and from every
 * peer into memory when it attaches (net/shm.c), so that the first pass
 * of messages through a ring takes no page fault on either side (about 2
 * µs a 4 KiB page in a guest, on the writer and the reader); up to this
 * many MiB a node (1 MiB rings: 32 peers), beyond which the pages come
 * on first use. */
#ifndef EARTH_SHM_POPULATE_MB
#define EARTH_SHM_POPULATE_MB 64
#endif
/* Oversubscribed, an idle unit whose partner unit runs on another CPU
 * polls this long (ns) before it starts yielding: a running partner
 * answers sooner than sched_yield returns (about 1 µs in a VM). */
#ifndef EARTH_YIELD_AFTER_NS
#define EARTH_YIELD_AFTER_NS 500
#endif
/* A node that has had nothing to do for this long (ns) asks a peer for a
 * token (TOKEN balancing); a unit about to sleep asks at once. Shorter dry
 * spells, such as waiting for a remote operation, send nothing. */
#ifndef EARTH_STEAL_AFTER_NS
#define EARTH_STEAL_AFTER_NS 20000
#endif
/* Oversubscribed, a unit busy this long (ns) without a break yields once,
 * so that a unit sharing its CPU (another node's SU) is not starved for a
 * whole time slice: an SU serving a stream of block moves kept the SU
 * that consumed them off the CPU for 1.4 ms. */
#ifndef EARTH_BUSY_YIELD_NS
#define EARTH_BUSY_YIELD_NS 20000
#endif
/* A BLKMOV_SYNC of at most this many bytes between two places of the
 * EU's own node is copied by the EU itself (eu/post.c): on the 2-vCPU
 * guests a memmove of 1 KiB in cache costs 9.5 ns, 2 KiB 18 ns, and
 * posting the request to the SU about 18 ns. */
#ifndef EARTH_EU_BLKMOV_MAX
#define EARTH_EU_BLKMOV_MAX 1024
#endif
/* Frame size classes: 64 << k bytes (header included), k < this. */
#ifndef EARTH_FRAME_CLASSES
#define EARTH_FRAME_CLASSES 8
#endif
/* Frames carved per refill of a size class. */
#ifndef EARTH_FRAME_CHUNK
#define EARTH_FRAME_CHUNK 64
#endif
/* Most tokens one node's EU holds in its deque (unit/deque.h), a power of
 * two: 8 bytes each, plus frames. A fiber posting a TOKEN beyond it ends
 * the job with an error naming the limit. */
#ifndef EARTH_TOKEN_DEQUE_MAX
#define EARTH_TOKEN_DEQUE_MAX (1u << 24)
#endif
/* Fibers a node's EUs hand each other (k > 1: a slot signalled on one EU
 * made a fiber of another's frame ready), per EU; more wait go through
 * the SU. */
#ifndef EARTH_SIB_READY_SLOTS
#define EARTH_SIB_READY_SLOTS 256u
#endif
/* The EU returns ready-ring credits every this many messages. */
#ifndef EARTH_READY_CREDIT_BATCH
#define EARTH_READY_CREDIT_BATCH 128
#endif
/* While more ready fibers than this wait beyond the ready ring (the EU is
 * behind: INVOKEs and TOKENs from peers each add one, with their
 * arguments), the SU takes no messages from peers: a peer sending work
 * faster than the EU runs it fills its own transport, not this node's
 * memory. The EU drains the backlog by running fibers, so this cannot
 * deadlock. */
#ifndef EARTH_READY_BACKLOG_MAX
#define EARTH_READY_BACKLOG_MAX 65536
#endif
/* Requests the SU handles before it looks at its other sources. */
#ifndef EARTH_SU_BATCH
#define EARTH_SU_BATCH 64
#endif

/* While busy, the SU looks whether the EU sleeps once per this many batches
 * (and always when it goes idle). */
#ifndef EARTH_SU_WAKE_EVERY
#define EARTH_SU_WAKE_EVERY 16
#endif

/* Single-interrupt nodes (node/irq.c). The signal: SIGRTMIN + this. */
#ifndef EARTH_IRQ_SIGNAL
#define EARTH_IRQ_SIGNAL 4
#endif
/* Bytes of the buffer that holds messages the handler defers, and the
 * room it must have before the handler polls once more: one poll may
 * bring a whole tcp receive buffer (32 KiB) plus a message of the largest
 * payload (64 KiB) it completes, with a record header per message. */
#ifndef EARTH_IRQ_DEFER_BYTES
#define EARTH_IRQ_DEFER_BYTES (1u << 20)
#endif
#ifndef EARTH_IRQ_DEFER_ROOM
#define EARTH_IRQ_DEFER_ROOM (256u << 10)
#endif
/* The handler replies to BLK_REQs of at most this many bytes itself, with
 * queued messages from a pool of this many entries. */
#ifndef EARTH_IRQ_SMALL
#define EARTH_IRQ_SMALL 256
#endif
#ifndef EARTH_IRQ_POOL
#define EARTH_IRQ_POOL 16
#endif
/* Spilled ready fibers the handler may add without allocating. */
#ifndef EARTH_IRQ_READY_ROOM
#define EARTH_IRQ_READY_ROOM 1024
#endif

#endif /* EARTH_CONFIG_H */
