/* SPDX-License-Identifier: MIT */
/*
 * t_reject.c - invalid messages between the nodes of a job
 * (tests/progs/badmsg.c) are rejected, naming the sender and the field,
 * and stop the job with status 70: a block written outside the receiver's
 * registered memory (shm; tcp, which checks before the first byte lands),
 * a signal to an address that is not a slot, and data or a move naming a
 * non-slot in field a (over shm and tcp), never dereferenced; earthrun
 * names the refusing node as the cause, not the node that stopped
 * because of it.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

TestSuite(reject, .timeout = 120);

Test(reject, write_outside_registered_memory_is_rejected)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 %s/badmsg", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message BLK_DATA from "
				"node 0 rejected: field b"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "outside this node's registered memory"), "%s",
		  c.err);
	cr_assert(
	    strstr(c.err, "must be registered with earth_register_memory"),
	    "%s", c.err);
	cr_assert(strstr(c.err, "earthrun: node 1 exited with status 70"), "%s",
		  c.err);
}

Test(reject, tcp_write_outside_registered_memory_is_rejected)
{
	/* The tcp receiver writes block payloads straight to their
	 * destination: it must check it before the first byte lands. */
	struct t_cmd c;
	t_sh(&c, 30, "%s --transport tcp -n 2 %s/badmsg", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message from node 0 "
				"rejected: field b (BLK_DATA destination "
				"outside this node's registered memory; "
				"memory from malloc or mmap that other nodes "
				"write must be registered with "
				"earth_register_memory)"),
		  "%s", c.err);
	t_sh(&c, 30, "%s --transport tcp -n 2 %s/badmsg slot", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "message SYNC from node 0 rejected: field a"),
		  "%s", c.err);
}

Test(reject, signal_to_a_non_slot_is_rejected)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s -n 2 %s/badmsg slot", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "message SYNC from node 0 rejected: field a"),
		  "%s", c.err);
}

/* A block of data, or a move landing on node 1, whose slot field names
 * an address that is not a registered slot there: rejected naming field
 * a, never dereferenced. */
static void bad_slot_of_data(const char *transport, const char *how,
			     const char *type)
{
	struct t_cmd c;
	t_sh(&c, 30, "%s --transport %s -n 2 %s/badmsg %s", T_EARTHRUN,
	     transport, T_PROG_DIR, how);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "%s %s: status %d\n%s",
		     transport, how, c.status, c.err);
	char want[128];
	snprintf(want, sizeof(want), "message %s from node 0 rejected: field a",
		 type);
	cr_assert(strstr(c.err, want), "%s %s: want '%s' in:\n%s", transport,
		  how, want, c.err);
	cr_assert(strstr(c.err, "not an aligned slot in this node's registered "
				"memory"),
		  "%s", c.err);
}

Test(reject, data_with_a_non_slot_is_rejected)
{
	bad_slot_of_data("shm", "dataslot", "BLK_DATA");
	bad_slot_of_data("tcp", "dataslot", "BLK_DATA");
	bad_slot_of_data("shm", "moveslot", "BLK_REQ");
	bad_slot_of_data("tcp", "moveslot", "BLK_REQ");
}

/* ---- a peer that knows the job's secret (tests/progs/forge.c) ---- */

/* Runs the forge probe `how` over `transport`; node 1 must stop the job
 * with status 70 and a message naming node 0 and `want`. */
static void forged(struct t_cmd *c, const char *transport, const char *how,
		   const char *want)
{
	t_sh(c, 30, "%s --transport %s -n 2 %s/forge %s", T_EARTHRUN, transport,
	     T_PROG_DIR, how);
	cr_assert_eq(c->status, EARTH_EXIT_USAGE, "%s %s: status %d\n%s",
		     transport, how, c->status, c->err);
	cr_assert(strstr(c->err, want), "%s %s: want '%s' in:\n%s", transport,
		  how, want, c->err);
	/* Node 0 stops because of node 1 (status 71), and may end, and be
	 * reaped, first: earthrun names node 1, the cause, all the same. */
	cr_assert(strstr(c->err, "earthrun: the job failed: node 1 exited with "
				 "status 70: "),
		  "%s %s:\n%s", transport, how, c->err);
}

/* A forged slot {1, 0, system, "touch FILE"} written into node 1's static
 * data and signalled, or written over a slot node 1 armed that node 1
 * then signals itself: the fiber is not one node 1 ever armed a slot
 * with, so it never runs (the file stays absent). */
Test(reject, forged_slot_never_runs)
{
	static const char *const transports[] = {"shm", "tcp"};
	for (int i = 0; i < 2; i++) {
		char file[64], how[128];
		struct t_cmd c;
		snprintf(file, sizeof(file), "/tmp/earth_forge_%d_%s",
			 (int)getpid(), transports[i]);
		unlink(file);
		snprintf(how, sizeof(how), "fakeslot %s", file);
		/* Over tcp node 0 ends, with 71, as node 1 does: the
		 * cause named every time, whichever is reaped first. */
		for (int round = 0; round < (i ? 5 : 1); round++) {
			forged(&c, transports[i], how,
			       "message SYNC from node 0 rejected: field a");
			cr_assert(strstr(c.err, "is not a fiber this node "
						"armed a slot with"),
				  "%s", c.err);
		}
		cr_assert(access(file, F_OK) != 0, "%s: %s was created",
			  transports[i], file);
		snprintf(how, sizeof(how), "overwrite %s", file);
		forged(&c, transports[i], how,
		       "is not a fiber this node armed a slot with");
		cr_assert(access(file, F_OK) != 0, "%s: %s was created",
			  transports[i], file);
	}
}

/* The runtime's own state (su_g) and the table of threaded functions are
 * not memory another node may read or write, although they lie in the
 * program's writable segment. */
Test(reject, runtime_state_is_not_remote_memory)
{
	struct t_cmd c;
	forged(&c, "shm", "readrt",
	       "message BLK_REQ from node 0 rejected: field b");
	forged(&c, "tcp", "readrt",
	       "message BLK_REQ from node 0 rejected: field b");
	forged(&c, "shm", "tfunc",
	       "message BLK_DATA from node 0 rejected: field b");
	forged(&c, "tcp", "tfunc",
	       "message from node 0 rejected: field b (BLK_DATA destination");
}

/* Memory read-only after relocation (a const table of pointers in
 * .data.rel.ro, the GOT) is refused cleanly, not a SIGSEGV. */
Test(reject, store_into_relro_or_got_is_rejected)
{
	struct t_cmd c;
	forged(&c, "shm", "relro",
	       "message BLK_DATA from node 0 rejected: field b");
	cr_assert(strstr(c.err, "outside this node's registered memory"), "%s",
		  c.err);
	forged(&c, "tcp", "relro",
	       "message from node 0 rejected: field b (BLK_DATA destination");
	forged(&c, "shm", "got",
	       "message BLK_DATA from node 0 rejected: field b");
	forged(&c, "tcp", "got",
	       "message from node 0 rejected: field b (BLK_DATA destination");
}

/* A local process that rewrites the shm job header's geometry mid-job
 * (tests/progs/scribble.c: node 1 maps the job area itself and writes
 * nonsense into nodes, ring_bytes, total and the global-memory fields):
 * the nodes read the geometry once when they attached, so the job goes
 * on correctly; never a crash. */
Test(reject, scribbled_shm_header_does_not_crash_the_nodes)
{
	struct t_cmd c;
	t_sh(&c, 60, "%s --transport shm -n 2 %s/scribble", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert(strstr(c.err, "scribble: node 1 rewrote the job header"),
		  "status %d\n%s", c.status, c.err);
	cr_assert(!strstr(c.err, "SEGV") && !strstr(c.err, "signal"),
		  "status %d\n%s", c.status, c.err);
	cr_assert_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_assert(strstr(c.out, "scribble: 100 round trips after the "
				"scribble: correct"),
		  "%s\n%s", c.out, c.err);
}
