/* SPDX-License-Identifier: MIT */
/*
 * su/dsm_job.c - what the SU's shared memory does for the job as a whole
 * (su/dsm_int.h): on node 0, the region's allocator (an allocation's
 * homes placed on every node before its address is handed out), the
 * homes of first-touch pages, and the count of ended threads; on every
 * node, the program's globals from node 0 and the threads it creates
 * here. Every field of these messages is checked as su/dsm.c checks the
 * protocol's.
 */
#define EARTH_INTERNAL 1
#include "dsm/alloc.h"
#include "dsm/proto.h"
#include "dsm/pt.h"
#include "dsm/thread.h"
#include "su/dsm_fiber.h"
#include "su/dsm_int.h"
#include "su/dsm_msg.h"
#include "su/su.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the program's globals, byte by byte and unseen by the
 * sanitizers: a sanitized program's globals have red zones between
 * them, which memcpy would call overflows (the loop is volatile, so
 * that the compiler does not make it a memcpy). */
__attribute__((no_sanitize("address", "thread"))) static void
globals_copy(void *dst, const void *src, size_t n)
{
	volatile uint8_t *d = dst;
	const volatile uint8_t *s = src;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

/* The globals of node 0's program, to every other node (the first
 * CREATE). */
void su_dsm_send_globals(void)
{
	su_dsm_g.globals_sent = true;
	const uint8_t *part[2] = {dsm_g.data, dsm_g.bss};
	size_t len[2] = {dsm_g.data_len, dsm_g.bss_len};
	for (uint32_t k = 1; k < su_dsm_g.n->num_nodes; k++)
		for (unsigned r = 0; r < 2; r++)
			for (size_t off = 0; off < len[r];
			     off += su_dsm_g.cap) {
				size_t m = len[r] - off < su_dsm_g.cap
					       ? len[r] - off
					       : su_dsm_g.cap;
				globals_copy(su_dsm_g.buf, part[r] + off, m);
				su_dsm_send(k, M_GLOBALS, off, r, 0,
					    su_dsm_g.buf, m);
			}
}

static void placed(const struct wire_hdr *h, uint32_t from, const void *pl_,
		   size_t len)
{
	struct dsm_placement pl;
	if (len != sizeof(pl))
		su_dsm_bad(h, from, "len", "not a placement");
	memcpy(&pl, pl_, sizeof(pl));
	if (pl.tail == 0 || pl.tail > dsm_g.region.page_size)
		su_dsm_bad(
		    h, from, "payload",
		    "a placement's bytes in its last page are not 1 to a "
		    "page");
	uint16_t *home = malloc((size_t)dsm_g.region.pages * sizeof(*home));
	if (!home)
		earth_fatal("shared memory: out of memory");
	const char *why;
	if (dsm_place_apply(&pl, home, dsm_g.region.pages,
			    su_dsm_g.n->num_nodes, &why)) {
		free(home);
		su_dsm_bad(h, from, "payload", why);
	}
	for (uint32_t k = pl.first; k < pl.first + pl.pages; k++) {
		if (home[k] == DSM_HOME_NONE && su_dsm_g.n->num_nodes == 1)
			home[k] = 0; /* first touch on one node: this one */
		if (home[k] == su_dsm_g.n->id)
			memset(dsm_region_alias(&dsm_g.region, k), 0,
			       dsm_g.region.page_size);
		if (dsm_proto_set_home(&su_dsm_g.p, k, 1, home[k]))
			earth_fatal("shared memory: setting a page's home: %m");
	}
	/* One node notices nothing (dsm_proto_release): its pages are
	 * writable from the start, so their first writes take no fault. */
	if (su_dsm_g.n->num_nodes == 1 &&
	    dsm_region_set(&dsm_g.region, pl.first, pl.pages, DSM_PAGE_WRITE))
		earth_fatal("shared memory: making pages writable: %m");
	free(home);
	su_dsm_fiber_placed(pl.first, pl.pages, pl.tail);
	if (!su_dsm_g.p.claims_out &&
	    (su_dsm_g.nparked || su_dsm_g.after_claims.n))
		su_dsm_claims_done();
}

static void create_here(const struct wire_hdr *h, uint32_t from)
{
	uint32_t nodes = su_dsm_g.n->num_nodes;
	if (h->a >= dsm_g.nfns)
		su_dsm_bad(h, from, "a",
			   "no function of the program's thread table");
	if (h->b % nodes != su_dsm_g.n->id ||
	    h->b / nodes >= DSM_THREADS_PER_NODE ||
	    su_dsm_g.by_slot[h->b / nodes])
		su_dsm_bad(
		    h, from, "b",
		    "a thread id that is not this node's, is too large, or "
		    "runs already");
	struct dsm_pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		earth_fatal("shared memory: out of memory");
	pt->id = (uint32_t)h->b;
	pt->slot = (uint32_t)(h->b / nodes);
	const void *const *fns = dsm_g.fns;
	pt->fn = (void (*)(void))fns[h->a];
	if (dsm_thread_init(&pt->t, dsm_g.stack_size, dsm_pt_entry, pt, NULL))
		earth_fatal("shared memory: no stack for thread %u (%zu "
			    "bytes): %m",
			    pt->id, dsm_g.stack_size);
	su_dsm_g.by_slot[pt->slot] = pt;
	su_dsm_threads_counted();
	su_dsm_resume(pt, 0);
}

void su_dsm_job_receive(uint32_t from, const struct wire_hdr *h,
			const void *payload)
{
	uint32_t nodes = su_dsm_g.n->num_nodes;
	const char *why = NULL;
	uint32_t page = (uint32_t)h->a;
	switch ((enum dsm_msg)h->n) {
	case M_ALLOC: {
		if (su_dsm_g.n->id != 0)
			su_dsm_bad(h, from, "n", "only node 0 allocates");
		/* a: bytes; the run's pages hold them, its last page
		 * `tail` of them. */
		struct dsm_placement pl;
		uint64_t first = ~0ull, err = 0;
		size_t ps = dsm_g.region.page_size;
		uint64_t pages = h->a / ps + (h->a % ps != 0);
		if (h->a == 0 || h->a > dsm_g.region.size) {
			err = ENOMEM;
		} else if (dsm_alloc_take(&su_dsm_g.alloc, (uint32_t)pages,
					  (enum dsm_place)(h->b & 0xff),
					  (uint32_t)(h->b >> 8), &pl, &why)) {
			err = ENOMEM; /* the caller checked place and arg */
		} else {
			pl.tail = (uint32_t)(h->a - (pages - 1) * ps);
			/* Every node learns the homes, and says so, before the
			 * memory is handed out: a node may fetch a page from
			 * its home as soon as it has the address. */
			struct placing *w = malloc(sizeof(*w));
			uint8_t *acked = calloc(nodes, 1);
			if (!w || !acked)
				earth_fatal("shared memory: out of memory");
			*w = (struct placing){.next = su_dsm_g.placing,
					      .id = ++su_dsm_g.place_seq,
					      .first = pl.first,
					      .from = from,
					      .slot = h->c,
					      .acked = acked};
			su_dsm_g.placing = w;
			for (uint32_t k = 0; k < nodes; k++)
				su_dsm_send(k, M_PLACED, 0, w->id, 0, &pl,
					    sizeof(pl));
			return;
		}
		if (!su_dsm_g.said_no_room) {
			su_dsm_g.said_no_room = true;
			fprintf(stderr,
				"earth: node 0: shared memory: an allocation "
				"of %llu bytes on node %u gets NULL: the "
				"shared region of %zu MiB (%u pages of %zu "
				"bytes, %u in use: an allocation takes whole "
				"pages) has no free run that long; a larger "
				"EARTH_DSM_MB makes room (said once)\n",
				(unsigned long long)h->a, from,
				dsm_g.region.size >> 20, dsm_g.region.pages, ps,
				su_dsm_g.alloc.used_pages);
		}
		su_dsm_send(from, M_ALLOCATED, first, err, h->c, NULL, 0);
		return;
	}
	case M_PLACED:
		if (from != 0)
			su_dsm_bad(h, from, "src", "only node 0 places pages");
		placed(h, from, payload, h->len);
		su_dsm_send(0, M_PLACED_ACK, h->b, 0, 0, NULL, 0);
		return;
	case M_PLACED_ACK: {
		struct placing **at = &su_dsm_g.placing;
		while (*at && (*at)->id != h->a)
			at = &(*at)->next;
		if (su_dsm_g.n->id != 0 || !*at || (*at)->acked[from])
			su_dsm_bad(h, from, "a",
				   "no placement waits for that node's word");
		struct placing *w = *at;
		w->acked[from] = 1;
		if (++w->acks == nodes) {
			*at = w->next;
			su_dsm_send(w->from, M_ALLOCATED, w->first, 0, w->slot,
				    NULL, 0);
			free(w->acked);
			free(w);
		}
		return;
	}
	case M_ALLOCATED: {
		/* From the allocator: a page of the region, or an errno. */
		if (from != 0 ||
		    (h->a == ~0ull ? h->b > 4095 : h->a >= dsm_g.region.pages))
			su_dsm_bad(
			    h, from, "a",
			    "an allocation not from node 0, past the end of "
			    "the region, or with no errno");
		struct dsm_pt *pt =
		    su_dsm_waiting(h, from, "c", h->c, M_ALLOCATED);
		su_dsm_resume(pt, h->a == ~0ull
				      ? -(int64_t)(h->b ? h->b : ENOMEM)
				      : (int64_t)h->a);
		return;
	}
	case M_FREE:
		/* To node 0: a node freed; from node 0: one did, and every
		 * other node learns that the pages are of no allocation. */
		if (su_dsm_g.n->id != 0) {
			if (from != 0 || su_dsm_fiber_unplace(h->a))
				su_dsm_bad(
				    h, from, "a",
				    "no allocation starts there, or not from "
				    "node 0");
			return;
		}
		if (h->a >= dsm_g.region.pages ||
		    dsm_alloc_free(&su_dsm_g.alloc, page, &why) ||
		    (from != 0 && su_dsm_fiber_unplace(h->a)))
			su_dsm_bad(
			    h, from, "a",
			    why ? why : "no allocation of node 0 starts there");
		for (uint32_t k = 1; k < nodes; k++)
			if (k != from)
				su_dsm_send(k, M_FREE, h->a, 0, 0, NULL, 0);
		return;
	case M_GLOBALS: {
		uint8_t *part = h->b == 0 ? dsm_g.data : dsm_g.bss;
		size_t len = h->b == 0 ? dsm_g.data_len : dsm_g.bss_len;
		if (from != 0 || h->b > 1 || h->a > len || h->len > len - h->a)
			su_dsm_bad(
			    h, from, "a",
			    "outside the program's globals (do all nodes run "
			    "the same binary?)");
		globals_copy(part + h->a, payload, h->len);
		return;
	}
	case M_CREATE:
		if (from != 0)
			su_dsm_bad(h, from, "src",
				   "only node 0 creates threads");
		su_dsm_learn(h, from, payload, h->len);
		create_here(h, from);
		return;
	case M_DONE:
		if (su_dsm_g.n->id != 0)
			su_dsm_bad(h, from, "n",
				   "only node 0 counts ended threads");
		if (h->b == 0 ||
		    h->b >= (uint64_t)nodes * DSM_THREADS_PER_NODE ||
		    h->b % nodes != from || su_dsm_g.done[h->b])
			su_dsm_bad(
			    h, from, "b",
			    "not a thread of that node, or one that ended "
			    "already");
		su_dsm_g.done[h->b] = 1;
		su_dsm_learn(h, from, payload, h->len);
		su_dsm_g.ended++;
		if (su_dsm_g.end_waiter &&
		    su_dsm_g.ended >= su_dsm_g.end_want) {
			struct dsm_pt *w = su_dsm_g.end_waiter;
			su_dsm_g.end_waiter = NULL;
			w->wait_req = 0;
			su_dsm_resume(w, 0);
		}
		return;
	case M_CLAIM:
		if (su_dsm_g.n->id != 0 || h->a >= dsm_g.region.pages ||
		    h->b > 1)
			su_dsm_bad(h, from, "a",
				   "a claim of no page, or not to node 0");
		if (su_dsm_g.p.home[page] != DSM_HOME_NONE) {
			su_dsm_send(from, M_HOME, page, su_dsm_g.p.home[page],
				    0, NULL, 0);
		} else if (h->b) {
			/* The first writer: every node hears of its home. */
			for (uint32_t k = 0; k < nodes; k++)
				su_dsm_send(k, M_HOME, page, from, 0, NULL, 0);
		} else {
			su_dsm_send(from, M_HOME, page, DSM_HOME_NONE, 0, NULL,
				    0);
		}
		return;
	case M_HOME: {
		if (from != 0 || h->a >= dsm_g.region.pages ||
		    h->b > UINT16_MAX)
			su_dsm_bad(h, from, "a",
				   "a home not from node 0, or of no page");
		if (dsm_proto_homed(&su_dsm_g.p, page, (uint32_t)h->b, &why) <
		    0)
			su_dsm_bad(h, from, "b", why);
		su_dsm_page_came(page);
		/* What came before the word, now that the home is known. */
		struct kept *m = su_dsm_g.early[page].head;
		su_dsm_g.early[page] = (struct kept_list){0};
		while (m) {
			struct kept *nx = m->next;
			su_dsm_handle(m->from, &m->h, m->payload);
			free(m);
			m = nx;
		}
		if (!su_dsm_g.p.claims_out)
			su_dsm_claims_done();
		return;
	}
	default:
		break;
	}
	su_dsm_bad(h, from, "n", "unknown kind");
}
