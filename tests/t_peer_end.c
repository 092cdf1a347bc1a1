/* SPDX-License-Identifier: MIT */
/*
 * t_peer_end.c - every way a peer can end its connection before the job
 * ended stops the job with a message naming it, within seconds: a BYE
 * record and a FIN mid-job (tests/progs/rogue.c), as well as a FIN or a
 * kill without a BYE (t_launcher.c, t_rendezvous.c); and a peer that asks
 * without reading the answers is named before the answers queued for it
 * outgrow EARTH_PEER_QUEUE_MB, and one that stops reading mid-move within
 * EARTH_PEER_STALL_S.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "job.h"

TestSuite(peer_end, .timeout = 60);

Test(peer_end, bye_before_the_end_stops_the_job)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 30, "%s -n 2 --transport tcp %s/rogue bye", T_EARTHRUN,
	     T_PROG_DIR);
	double s = (double)(t_now_ns() - t0) / 1e9;
	/* Node 0 stopped because of node 1: 71 (earthrun(1), EXIT STATUS,
	 * names node 0's echo when node 1 itself ended well). */
	cr_assert_eq(c.status, EARTH_EXIT_PEER_DIED,
		     "status %d after %.1f s (124: it hung)\n%s", c.status, s,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 0: error: tcp transport: node 1 "
				"ended its connection (BYE) before the job "
				"ended"),
		  "%s", c.err);
	cr_assert_lt(s, 10.0, "the job took %.1f s to end", s);
}

/* Node 1 stops while a child floods requests (`how`: STEAL, or BLK_REQ of
 * 64 MiB) on its connection to node 0 and never reads the answers. */
static void flood_is_named(const char *how)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 30,
	     "env EARTH_PEER_QUEUE_MB=4 %s -n 2 --transport tcp %s/rogue %s",
	     T_EARTHRUN, T_PROG_DIR, how);
	double s = (double)(t_now_ns() - t0) / 1e9;
	cr_assert_eq(c.status, EARTH_EXIT_USAGE,
		     "%s: status %d after %.1f s (124: it never ended)\n%s",
		     how, c.status, s, c.err);
	cr_assert(strstr(c.err, "earth: node 0: error: node 1 does not read "
				"its answers: 4 MiB of them are queued here "
				"for it (EARTH_PEER_QUEUE_MB allows 4)"),
		  "%s: %s", how, c.err);
	cr_assert_lt(s, 15.0, "%s: the job took %.1f s to end", how, s);
}

Test(peer_end, a_peer_that_does_not_read_its_answers_is_named)
{
	flood_is_named("steal");
	flood_is_named("blkreq");
}

Test(peer_end, a_peer_that_stops_reading_is_named)
{
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 30, "%s -n 2 --transport tcp %s/rogue stall", T_EARTHRUN,
	     T_PROG_DIR);
	double s = (double)(t_now_ns() - t0) / 1e9;
	cr_assert_eq(c.status, EARTH_EXIT_PEER_DIED,
		     "status %d after %.1f s (124: it never ended)\n%s",
		     c.status, s, c.err);
	cr_assert(strstr(c.err, "earth: node 0: error: tcp transport: node 1 "
				"has not read what this node sends it for"),
		  "%s", c.err);
	cr_assert_lt(s, 12.0, "the job took %.1f s to end", s);
}
