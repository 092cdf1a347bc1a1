/* SPDX-License-Identifier: MIT */
/*
 * net.h - the SU's transports to other nodes. A transport moves whole
 * messages (struct wire_hdr + payload) in order per pair of nodes, never
 * blocks the SU, and delivers what arrived when polled. Only the SU thread
 * uses a transport, except open and fini (the earth_run thread, before the
 * SU starts and after it ended) and wake (any thread).
 */
#ifndef EARTH_NET_H
#define EARTH_NET_H

#ifndef EARTH_INTERNAL
#error "net.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/wire.h"

struct net;

/* Bytes of BLK_DATA payloads (block moves, GET and DATA replies) received
 * straight into their destination and copied there out of receive
 * buffers; sent from where they lie and copied into the send buffers. */
struct net_blk_bytes {
	uint64_t recv_direct, recv_copied;
	uint64_t sent_ref, sent_copied;
};

/* A one-sided read or write finished (net_ops.rma_get, rma_put): called
 * by the transport's poll, outside its own progress, with the argument
 * given. */
typedef void (*net_rma_done_fn)(void *arg);

/* Called for each message received; payload has h->len bytes; ctx is
 * what the caller of poll passed. */
typedef void (*net_deliver_fn)(void *ctx, uint32_t from,
			       const struct wire_hdr *h, const void *payload);

struct net_ops {
	const char *name;
	/* Appends one message for peer; 0, or -EAGAIN when it has no room
	 * now (the caller keeps it and retries). */
	int (*send)(struct net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload);
	/* Optional: as send, but the payload stays valid and unchanged
	 * until the message is on its way (a block move's source), so the
	 * transport may send it from there without a copy. */
	int (*send_ref)(struct net *t, uint32_t peer, const struct wire_hdr *h,
			const void *payload);
	/* Makes sent messages visible and wakes sleeping peers. */
	void (*flush)(struct net *t);
	/* Delivers received messages, at most `budget`; returns how many
	 * (with the one-sided reads whose callbacks it ran: work done). */
	unsigned (*poll)(struct net *t, void *ctx, net_deliver_fn deliver,
			 unsigned budget);
	/* Has anything arrived (for the last look before sleeping)? */
	bool (*pending)(struct net *t);
	/* The futex word this node's SU sleeps on, in memory peers can
	 * reach (they wake it after sending). */
	_Atomic uint32_t *(*su_word)(struct net *t);
	/* Any thread, once the SU ended (the node's thread): closes the
	 * links and frees. Sends nothing through the data path, which is
	 * the SU thread's (end hands on what is held). */
	void (*fini)(struct net *t);
	/* Optional, SU thread, once as the SU ends (su_end_job): the job is
	 * over here, so what the transport holds back (the emulated
	 * network's delays) goes now; the SU's last flushes follow. */
	void (*end)(struct net *t);
	/* Optional, for a transport whose peers cannot wake the SU through
	 * su_word (tcp): the SU blocks here instead of on the futex, until
	 * *word != expected, a wake, or something arrived (spurious returns
	 * are fine); earth_futex_wait calls it for the SU's word. */
	void (*wait)(struct net *t, _Atomic uint32_t *word, uint32_t expected);
	/* Optional: any thread, after it set su_word to running; makes wait
	 * return (earth_su_wake calls it instead of a futex wake). */
	void (*wake)(struct net *t);
	/* Optional, for a single-interrupt node (node/irq.c): from now on
	 * raise signal sig on thread tid of process pid when messages arrive
	 * (tid 0: stop). The node's thread, outside interrupts. */
	void (*irq)(struct net *t, int pid, int tid, int sig);
	/* Optional: re-arm that signal (on) or mute it while the node sleeps
	 * on su_word, where peers wake it anyway (off); with on, fences so
	 * that a poll after it sees what arrived before. Async-signal-safe. */
	void (*irq_arm)(struct net *t, bool on);
	/* Optional: what the transport did with BLK_DATA payloads so far
	 * (struct net_blk_bytes). The SU's thread, or any once it ended. */
	void (*blk_bytes)(struct net *t, struct net_blk_bytes *b);
	/* Optional: a line on how the transport reaches its peers (ucx: the
	 * lanes UCX chose), for --stats. Any thread once the SU ended. */
	void (*describe)(struct net *t, char *buf, size_t len);
	/* Optional, one-sided access to the peers' global memory: the
	 * earth_run thread, once after open on every node, registers
	 * [base, base + len) (this node's global segment; NULL, 0: none)
	 * for the peers to read and write and learns theirs (blocking until
	 * every peer's came). *taken: true when the transport put a mapping of
	 * its own at [base, base + len) in place of the caller's (its fini
	 * unmaps it; the caller must not). NULL, or what went wrong. */
	const char *(*rma_expose)(struct net *t, void *base, uint64_t len,
				  bool *taken);
	/* Optional (with rma_expose), SU thread: starts reading len bytes at
	 * raddr of peer's registered segment into dst; done(arg) once they
	 * are there. 0, or -1 when [raddr, raddr + len) is not in what peer
	 * exposed (nothing started: the caller sends a request instead). */
	int (*rma_get)(struct net *t, uint32_t peer, void *dst, uint64_t raddr,
		       uint64_t len, net_rma_done_fn done, void *arg);
	/* Optional (with rma_expose), SU thread: starts writing len bytes
	 * at src into raddr of peer's registered segment; done(arg) once
	 * they are in peer's memory (remotely complete: whatever this node
	 * sends peer from done on arrives after them). src stays valid and
	 * unchanged until then. 0, or -1 as rma_get. */
	int (*rma_put)(struct net *t, uint32_t peer, const void *src,
		       uint64_t raddr, uint64_t len, net_rma_done_fn done,
		       void *arg);
	/* Optional (with rma_expose), the earth_run thread right after it:
	 * the address at which peer's whole exposed segment is mapped in this
	 * process, so that this node's threads may load from it without the
	 * transport (valid until fini); NULL where it is not (the peer is
	 * not reached through shared memory, or exposed nothing). */
	void *(*rma_ptr)(struct net *t, uint32_t peer);
	/* Optional, one-sided page fetches of shared memory across nodes
	 * (earth_dsm.h): the earth_run thread, once after rma_expose on
	 * every node of a job that uses it, registers [base, base + len)
	 * (this node's copy of the region, readable whatever the pages'
	 * protections: the home copies peers read) and learns the peers'
	 * (blocking until every peer's came). NULL, or what went wrong. */
	const char *(*dsm_expose)(struct net *t, void *base, uint64_t len);
	/* Optional (with dsm_expose), SU thread: starts reading len bytes at
	 * offset off of peer's registered region into dst; done(arg) once
	 * they are there (from poll, as rma_get's). 0, or -1 when it cannot
	 * (no lane that reads peer's memory itself, nothing registered,
	 * outside the region): nothing started, the caller sends a request
	 * instead. */
	int (*dsm_get)(struct net *t, uint32_t peer, void *dst, uint64_t off,
		       uint64_t len, net_rma_done_fn done, void *arg);
};

struct net {
	const struct net_ops *ops;
	uint32_t self, nodes;
	uint32_t max_payload; /* largest payload one BLK_DATA may carry */
	/* Sends in flight whose completion only a poll collects (tcp); a
	 * single-interrupt node, which otherwise polls only when data
	 * arrives, polls at its safe points while this is not zero. The SU's
	 * thread only. */
	uint32_t sends_out;
	/* Optional, set by the layer above after open: where a BLK_DATA
	 * payload may be received straight into, its destination, once that
	 * layer found it in memory peers may write; NULL: the transport
	 * copies it out of its receive buffers. Checked again on delivery. */
	void *(*place)(const struct wire_hdr *h);
};

/* The most payload any other message carries: max_payload, at most
 * WIRE_MAX_PAYLOAD (a quarter of a ring over shm: 16 KiB with rings of
 * 64 KiB). What the receiver accepts: a sender that would send more must
 * cut it, or refuse. */
static inline uint32_t net_msg_max(const struct net *t)
{
	return t->max_payload < WIRE_MAX_PAYLOAD ? t->max_payload
						 : WIRE_MAX_PAYLOAD;
}

/* Transport set up from the environment the launcher left (shm.c).
 * NULL with *err set when it cannot; NULL with *err NULL when the job has
 * a single node. */
struct net *net_shm_open(uint32_t self, uint32_t nodes, const char **err);
/* Transport over TCP (tcp_rendezvous.c, tcp.c): rendezvous at
 * EARTH_RENDEZVOUS (host:port of node 0), every connection authenticated
 * with EARTH_JOB_SECRET. Blocks until every node is connected
 * (EARTH_CONNECT_TIMEOUT, default 60 s). Same contract as net_shm_open. */
struct net *net_tcp_open(uint32_t self, uint32_t nodes, const char **err);
/* Transport over UCX active messages (ucx*.c): worker
 * addresses exchanged through PMIx under a PMIx launcher, else through
 * the tcp rendezvous (earthrun --transport ucx); every peer proves itself
 * with the job secret before anything else it sends is delivered. Same
 * contract as net_shm_open. */
struct net *net_ucx_open(uint32_t self, uint32_t nodes, const char **err);
/* The transport EARTH_TRANSPORT=shm|tcp|ucx names (net.c); without it,
 * shm when EARTH_SHM_FD is set, tcp when EARTH_RENDEZVOUS is, ucx under a
 * PMIx launcher (PMIX_RANK set), else shm (whose error says how to start
 * a job). */
struct net *net_open(uint32_t self, uint32_t nodes, const char **err);

/* Bytes of global memory per node (EARTH_GMEM_MB, default
 * GMEM_DEFAULT_MB): the layout every node of a job must agree on, which
 * the tcp rendezvous checks and global memory maps. NULL, or what is
 * wrong with the variable. */
const char *net_gmem_seg(uint64_t *seg);

#endif /* EARTH_NET_H */
