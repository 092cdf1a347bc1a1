/* SPDX-License-Identifier: MIT */
/*
 * fuzz_node.h - what the fuzz targets that drive a node's SU by hand
 * (fuzz_deliver.c, fuzz_dsm.c) have in place of the node's other files:
 * the node and its SU, EU 0's link, and stand-ins for what is off here: no
 * trace, no global-memory mapping (so no direct path), no local GET
 * (su/handle.c), no SU loop (su/loop.c), no EU thread to wake (unit/unit.c).
 * Included once, by the target's one source file.
 */
#ifndef EARTH_FUZZ_NODE_H
#define EARTH_FUZZ_NODE_H

struct earth_node earth_node_g;
struct su_state su_g;
static struct eu_link link0; /* the node's one EU's (unit.c is off here) */

bool trace_on;
struct trace_buf trace_bufs[TRACE_UNITS_];
uint64_t trace_next_seq_out(uint32_t peer)
{
	(void)peer;
	return 0;
}
uint64_t trace_next_seq_in(uint32_t peer)
{
	(void)peer;
	return 0;
}
struct gmem_state gmem_g;
void su_get_done(struct earth_node *n, const struct su_req *r, const void *src)
{
	(void)n, (void)r, (void)src;
	__builtin_trap();
}
void earth_futex_wake(_Atomic uint32_t *word)
{
	(void)word;
}
void earth_eus_wake(struct earth_node *n)
{
	(void)n;
}
void earth_eu_wake(struct earth_node *n, unsigned i)
{
	(void)n, (void)i;
}
/* The node here has one EU: every frame's fibers run on it. */
unsigned unit_frame_eu(struct reg_cache *c, const void *frame, unsigned k)
{
	(void)c, (void)frame, (void)k;
	return 0;
}
/* Asked by the quiescence waves (su/quiet.c): here the SU has nothing
 * pending between two messages, so a probe is answered. */
bool su_has_pending(struct earth_node *n)
{
	(void)n;
	return false;
}

#endif
