/* SPDX-License-Identifier: MIT */
/*
 * balance.c - TOKEN load balancing between nodes. An idle node (no token,
 * nothing ready, EUs drained, and with k > 1 EUs every EU idle) asks
 * randomly chosen peers for work with STEAL; a peer with tokens steals the
 * oldest from an EU's deque (the EUs round robin; the largest piece of a
 * divide-and-conquer tree) and sends it, else answers STEAL_NONE and
 * remembers the asker as hungry, so the next token an EU pushes goes
 * there. After every peer said no, a node stays quiet until it gets work
 * again, so an idle job sends no messages and can sleep. A token that
 * leaves carries its function number and arguments; its frame here goes
 * back to its EU's free list. A token that arrives goes to the EU with the
 * shortest ready ring. INVOKEd work never moves.
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"
#include "gas/registry.h"
#include "su/su.h"

#include <stdlib.h>
#include <string.h>

static uint32_t random_peer(struct earth_node *n)
{
	struct su_state *su = &su_g;
	uint64_t x = su->rng ? su->rng : 0x9e3779b97f4a7c15ull ^ n->id;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	su->rng = x;
	return (n->id + 1 + (uint32_t)(x % (n->num_nodes - 1))) % n->num_nodes;
}

/* The oldest token of some EU's deque: the EUs round robin from the one
 * after the last given, so that no EU's tokens alone feed the peers. Sets
 * *eu to the EU whose deque it was (whose frame it is: only EU i pushes on
 * deque i). NULL when each looked empty. */
static void *take_oldest(struct earth_node *n, struct su_state *su,
			 unsigned *eu)
{
	unsigned k = su->neus;
	for (unsigned j = 0; j < k; j++) {
		unsigned i = (su->give_next + j) % k;
		void *frame = deque_steal(&n->link[i].tokens);
		if (frame) {
			su->give_next = (i + 1) % k;
			*eu = i;
			return frame;
		}
	}
	return NULL;
}

/* Steals an EU's oldest token and sends it to `to`; its frame goes back
 * to that EU's free list. False when every deque was empty. */
static bool give_oldest(struct earth_node *n, uint32_t to)
{
	struct su_state *su = &su_g;
	unsigned i;
	void *frame;
	const struct earth_tfunc *f;
	struct su_eu *was = su->eu;
	for (;;) {
		frame = take_oldest(n, su, &i);
		if (!frame)
			return false;
		f = ((const struct frame_hdr *)frame - 1)->fn;
		if (f->args_size <= net_msg_max(n->net))
			break;
		/* Its arguments fit no message: it runs where it was made,
		 * on the EU whose deque held it. */
		su->eu = &su->eus[i];
		su_ready_push(su, f->entry, frame);
		su->eu = was;
	}
	struct wire_hdr h = {
	    .type = W_TOKEN, .n = reg_tfunc_id(f), .len = f->args_size};
	su_net_send(n, to, &h, frame);
	su->eu = &su->eus[i];
	su_ready_push(su, n->token_gone_fiber, frame);
	su->eu = was;
	su->tokens_given++;
	if (acct_on) /* a TOKEN posted here that runs on another node */
		acct_su.remote[SU_OP_TOKEN]++;
	return true;
}

void su_balance_token_added(struct earth_node *n)
{
	struct su_state *su = &su_g;
	for (uint32_t p = 0; su->nhungry && p < n->num_nodes; p++) {
		if (!su->hungry[p])
			continue;
		if (!give_oldest(n, p))
			return;
		su->hungry[p] = false;
		su->nhungry--;
	}
}

void su_balance_idle(struct earth_node *n, bool at_once)
{
	struct su_state *su = &su_g;
	if (su->steal_out || su->steal_quiet)
		return;
	if (su_ready_held(su)) {
		su->dry_since = 0; /* the EU has work */
		return;
	}
	/* The EU's lines (its deque's bottom, the ready ring's returned
	 * head) and the TSC every 8 idle polls: each a miss while the EU
	 * runs tokens, the TSC 10-20 ns a read in a VM. */
	if (!at_once && (++su->dry_polls & 7) != 0)
		return;
	/* A node of k > 1 EUs asks only when every EU waits in its idle
	 * loop (unit_eus_all_idle; one running a fiber may make tokens for
	 * the others), read last: a line the EUs write on their way into and
	 * out of idle. */
	if (unit_tokens_any(n) || su_ready_unconsumed(su) ||
	    !unit_eus_all_idle(n)) {
		su->dry_since = 0; /* an EU has work */
		return;
	}
	if (!at_once) {
		uint64_t now = q_tsc();
		if (!su->dry_since) {
			su->dry_since = now;
			return;
		}
		if (now - su->dry_since < n->steal_ticks)
			return;
	}
	struct wire_hdr h = {.type = W_STEAL};
	su_net_send(n, random_peer(n), &h, NULL);
	su->steal_out = true;
	su->steal_requests++;
}

void su_balance_busy(void)
{
	su_g.steal_quiet = false;
	su_g.steal_tries = 0;
	su_g.dry_since = 0;
}

void su_balance_receive(struct earth_node *n, uint32_t from,
			const struct wire_hdr *h, const void *payload)
{
	struct su_state *su = &su_g;
	switch (h->type) {
	case W_STEAL:
		if (!give_oldest(n, from)) {
			struct wire_hdr no = {.type = W_STEAL_NONE};
			su_net_send(n, from, &no, NULL);
			if (!su->hungry[from]) {
				su->hungry[from] = true;
				su->nhungry++;
			}
		}
		return;
	case W_STEAL_NONE:
		su->steal_out = false;
		if (++su->steal_tries >= 2 * (n->num_nodes - 1))
			su->steal_quiet = true;
		return;
	case W_TOKEN: {
		const struct earth_tfunc *f = reg_tfunc_at(h->n);
		if (!f || !f->entry || h->len != f->args_size ||
		    f->args_size > f->frame_size)
			earth_fatal(
			    "message TOKEN from node %u rejected: field "
			    "n/len (function %d with %u bytes of "
			    "arguments is not in this program's table)",
			    from, h->n, h->len);
		struct eu_invoke_buf *b = malloc(sizeof(*b) + h->len);
		if (!b)
			earth_fatal("out of memory for a TOKEN from node %u",
				    from);
		b->fn = f;
		if (h->len)
			memcpy(b->args, payload, h->len);
		su_ready_push_new(su, n->invoke_fiber, b);
		su->steal_out = false;
		su->steal_tries = 0;
		su->steal_quiet = false;
		su->tokens_stolen++;
		return;
	}
	}
}
