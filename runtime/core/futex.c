/* SPDX-License-Identifier: MIT */
/*
 * futex.c - blocking and waking a unit on its 32-bit state word.
 */
#define EARTH_INTERNAL 1
#include "node.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void earth_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
	/* The SU's word under a transport that wakes the SU its own way
	 * (tcp): block in the transport, which also wakes on arrivals. n->net
	 * and su.statep are set before the units start and not changed. */
	struct net *t = earth_node_g.net;
	if (t && t->ops->wait && word == earth_node_g.su.statep) {
		t->ops->wait(t, word, expected);
		return;
	}
	/* Returns at once if *word != expected (EAGAIN), on a wake, or on a
	 * signal (EINTR): callers recheck their condition in every case. */
	/* Shared (not _PRIVATE): the SU's word may live in a mapping that
	 * other nodes' processes wake. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, NULL, NULL,
		0);
}

void earth_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void earth_su_wake(struct earth_node *n)
{
	if (atomic_load_explicit(n->su.statep, memory_order_seq_cst) ==
	    UNIT_SLEEPING) {
		atomic_store_explicit(n->su.statep, UNIT_RUNNING,
				      memory_order_relaxed);
		if (n->net && n->net->ops->wake)
			n->net->ops->wake(n->net);
		else
			earth_futex_wake(n->su.statep);
	}
}
