/* SPDX-License-Identifier: MIT */
/*
 * steal.c - tokens between the EUs of one node (k > 1): an EU with
 * nothing ready and no token of its own steals the oldest token of a
 * sibling picked at random, before it counts itself idle and while it
 * spins; the node's idle count (earth_node.eus_idle) says how many EUs
 * wait and how many of them sleep; a token pushed while siblings sleep and
 * none spins wakes one (eu_token_pushed, eu.h), and so does the last
 * spinner leaving idle while tokens wait. docs/architecture.md, "Stealing
 * between EUs". A stolen token moves into a frame of its thief's before
 * it runs, so that every fiber of the frame runs there (unit_frame_eu);
 * the sibling's frame goes back to it (frame.c). None of this runs on a
 * node of one EU.
 */
#define EARTH_INTERNAL 1
#include "eu/eu.h"

/* The next number of EU eu's generator (xorshift64), seeded from its
 * index on first use. */
static uint64_t steal_next(struct earth_node *n, struct eu_state *eu)
{
	uint64_t x = eu->steal_rng
			 ? eu->steal_rng
			 : 0x9e3779b97f4a7c15ull * (eu_index(n, eu) + 1);
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	eu->steal_rng = x;
	return x;
}

void *eu_steal_sibling(struct earth_node *n, struct eu_state *eu)
{
	unsigned k = unit_eus(n), self = eu_index(n, eu);
	if (k < 2)
		return NULL;
	unsigned first = (unsigned)(steal_next(n, eu) % (k - 1));
	for (unsigned j = 0; j < k - 1; j++) {
		unsigned v = (self + 1 + (first + j) % (k - 1)) % k;
		struct deque *d = &n->link[v].tokens;
		if (!deque_size(d))
			continue; /* two plain loads: no CAS on an empty one */
		void *t = deque_steal(d);
		if (t) {
			eu->tokens_taken++;
			return eu_frame_rehome(eu, t);
		}
	}
	return NULL;
}

bool eu_sib_tokens(struct earth_node *n, const struct eu_state *eu)
{
	unsigned k = unit_eus(n), self = eu_index(n, eu);
	for (unsigned v = 0; v < k; v++)
		if (v != self && deque_size(&n->link[v].tokens))
			return true;
	return false;
}

bool eu_steal_into(struct earth_node *n, struct eu_state *eu)
{
	void *t = eu_steal_sibling(n, eu);
	if (!t)
		return false;
	/* The EU's own deque is empty (its loop found it so, and only it
	 * pushes): the push cannot fail. The token is stealable again from
	 * here, as the oldest. */
	if (q_unlikely(!deque_push(eu->tokens, t)))
		earth_fatal("EU %u: no room for a token taken from a sibling "
			    "in its own empty deque",
			    eu_index(n, eu));
	return true;
}

void eu_idle_enter(struct earth_node *n)
{
	atomic_fetch_add_explicit(&n->eus_idle, UNIT_IDLE_ONE,
				  memory_order_seq_cst);
}

bool eu_sleep_begin(struct earth_node *n)
{
	/* Dekker with eu_token_pushed: our count, then the heavy fence, then
	 * the caller's look at the siblings' deques. */
	atomic_fetch_add_explicit(&n->eus_idle, UNIT_IDLE_ASLEEP,
				  memory_order_seq_cst);
	return earth_fence_heavy();
}

void eu_sleep_end(struct earth_node *n)
{
	atomic_fetch_sub_explicit(&n->eus_idle, UNIT_IDLE_ASLEEP,
				  memory_order_seq_cst);
}

void eu_idle_leave(struct earth_node *n, struct eu_state *eu)
{
	uint64_t w = atomic_fetch_sub_explicit(&n->eus_idle, UNIT_IDLE_ONE,
					       memory_order_seq_cst) -
		     UNIT_IDLE_ONE;
	/* The last spinner leaves while siblings sleep: a token a sibling
	 * pushed while it spun (which woke no one) is not left to its owner
	 * alone. */
	if (q_unlikely(unit_idle_asleep(w) &&
		       unit_idle_waiting(w) == unit_idle_asleep(w)) &&
	    eu_sib_tokens(n, eu))
		eu_wake_sibling(n, eu);
}

bool eu_wake_if_asleep(struct earth_node *n, unsigned i)
{
	_Atomic uint32_t *w = &n->link[i].word;
	uint32_t s = UNIT_SLEEPING;
	if (atomic_load_explicit(w, memory_order_relaxed) != UNIT_SLEEPING ||
	    !atomic_compare_exchange_strong_explicit(w, &s, UNIT_RUNNING,
						     memory_order_seq_cst,
						     memory_order_relaxed))
		return false;
	earth_futex_wake(w);
	return true;
}

void eu_wake_sibling(struct earth_node *n, struct eu_state *eu)
{
	unsigned k = unit_eus(n), self = eu_index(n, eu);
	/* Pairs with the sleeper's seq_cst store of its word before it
	 * counted itself asleep. */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned j = 1; j < k; j++)
		if (eu_wake_if_asleep(n, (self + j) % k))
			return;
}
