/* SPDX-License-Identifier: MIT */
/*
 * net.h - the SU's transports to other nodes. A transport moves whole
 * messages (struct wire_hdr + payload) in order per pair of nodes, never
 * blocks the SU, and delivers what arrived when polled. Only the SU thread
 * uses a transport, except net_wake_all at shutdown.
 */
#ifndef EARTH_NET_H
#define EARTH_NET_H

#ifndef EARTH_INTERNAL
#error "net.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct earth_node;
struct net;

/* Called for each message received; payload has h->len bytes. */
typedef void (*net_deliver_fn)(struct earth_node *n, uint32_t from,
			       const struct wire_hdr *h, const void *payload);

struct net_ops {
	const char *name;
	/* Appends one message for peer; 0, or -EAGAIN when it has no room
	 * now (the caller keeps it and retries). */
	int (*send)(struct net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload);
	/* Makes sent messages visible and wakes sleeping peers. */
	void (*flush)(struct net *t);
	/* Delivers received messages, at most `budget`; returns how many. */
	unsigned (*poll)(struct net *t, struct earth_node *n,
			 net_deliver_fn deliver, unsigned budget);
	/* Has anything arrived (for the last look before sleeping)? */
	bool (*pending)(struct net *t);
	/* The futex word this node's SU sleeps on, in memory peers can
	 * reach (they wake it after sending). */
	_Atomic uint32_t *(*su_word)(struct net *t);
	void (*fini)(struct net *t);
};

struct net {
	const struct net_ops *ops;
	uint32_t self, nodes;
	uint32_t max_payload; /* largest payload one message may carry */
};

/* Transport set up from the environment the launcher left (shm.c).
 * NULL with *err set when it cannot; NULL with *err NULL when the job has
 * a single node. */
struct net *net_shm_open(uint32_t self, uint32_t nodes, const char **err);

#endif /* EARTH_NET_H */
