/* SPDX-License-Identifier: MIT */
/*
 * unit.c - the node both units share, and how one unit wakes the other
 * and blocks (unit.h).
 */
#define EARTH_INTERNAL 1
#include "unit/unit.h"

struct earth_node earth_node_g;

void earth_unit_wait(struct earth_node *n, _Atomic uint32_t *word,
		     uint32_t expected)
{
	/* n->net and su_wordp are set before the units start and not
	 * changed. */
	struct net *t = n->net;
	if (t && t->ops->wait && word == n->su_wordp) {
		t->ops->wait(t, word, expected);
		return;
	}
	earth_futex_wait(word, expected);
}

void earth_su_wake(struct earth_node *n)
{
	if (atomic_load_explicit(n->su_wordp, memory_order_seq_cst) ==
	    UNIT_SLEEPING) {
		atomic_store_explicit(n->su_wordp, UNIT_RUNNING,
				      memory_order_relaxed);
		if (n->net && n->net->ops->wake)
			n->net->ops->wake(n->net);
		else
			earth_futex_wake(n->su_wordp);
	}
}
