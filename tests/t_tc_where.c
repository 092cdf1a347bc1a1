/* SPDX-License-Identifier: MIT */
/*
 * t_tc_where.c - the runtime's messages about a Threaded-C program name
 * its source (the table earthcc writes): a misused operation by file:line,
 * function, fiber and the operation as written; the stuck-job report by
 * slot number, function, fiber and the INIT_SYNC's line, or, when no slot
 * waits, the last fiber that ran with its line; main ending while
 * a slot of its frame still waits fails the job naming both lines (on one
 * node and on two, with earthrun); the trace names fibers fib and
 * fib:THREAD_1; a one-shot slot signalled again by its number and
 * INIT_SYNC line, and the sending line when another node sent it; an
 * operation another node refuses (a BLKMOV, DATA or
 * GET on its unregistered malloc memory) is named by the sender's line
 * in the refusing node's message, over shm, tcp and ucx; the same
 * operations on the node's own unregistered memory stop the job at their
 * line on one node and on two, and registering, then unregistering, a
 * buffer lets them through, then refuses them again; shared memory
 * misused from fibers (an ACQUIRE past the end of its allocation, by
 * one element, into the allocation beside it, also one the plugin
 * inserted before a loop; an ACQUIRE of freed memory; a free twice; a
 * negative count; a barrier of 0; a lock never made; a lock unlocked
 * twice, a range released twice) ends the job at the operation's line; a
 * SHARED_ARRAY of 0 elements or past the region names the array. Skipped,
 * with a message, when clang-14 or the plugin is missing.
 */
#include "tc/tc_run.h"

TestSuite(tc_where, .timeout = 240);

static char out[65536];

/* Builds tests/tc/where/NAME.tc, runs it on 1 node and on 2; each run
 * exits with status and prints every line of want, a format given (node
 * count + 2, node count, "s" for 2, the last node's number). */
static void where(const char *name, int status, const char *const *want)
{
	char dir[64], src[128];
	tc_require();
	tc_tmpdir(dir);
	snprintf(src, sizeof src, "tests/tc/where/%s.tc", name);
	tc_build(dir, src, "");
	for (int nodes = 1; nodes <= 2; nodes++) {
		int rc = nodes == 1
			     ? tc_exec(out, sizeof out, dir, "", "")
			     : tc_sh(out, sizeof out,
				     "timeout 60 %s/rel/bin/earthrun -n 2 "
				     "%s/prog",
				     tc_build_dir(), dir);
		cr_expect_eq(rc, status, "%s on %d node(s): status %d:\n%s",
			     name, nodes, rc, out);
		for (const char *const *w = want; *w; w++) {
			char line[1024];
			snprintf(line, sizeof line, *w, nodes == 1 ? 3 : 4,
				 nodes, nodes == 1 ? "" : "s", nodes - 1);
			cr_expect(strstr(out, line),
				  "%s on %d node(s): missing\n  %s\nin:\n%s",
				  name, nodes, line, out);
		}
	}
	tc_cleanup(dir);
}

Test(tc_where, misuse_names_line_function_fiber_op)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/misuse.tc:17 in main, "
	    "fiber THREAD_1: INVOKE: the target names node %d, but the job "
	    "has %d node%s (nodes are 0..%d)\n",
	    NULL};
	where("misuse", 70, want);
}

Test(tc_where, misused_operation_named_as_written)
{
	/* put runs on the last node: node 0 of 1, node 1 of 2. */
	static const char *const want[] = {
	    "earth: node %4$d: error: tests/tc/where/misuse_op.tc:11 in put, "
	    "fiber THREAD_1: DATA_RSYNC_I: null global slot pointer: make one "
	    "with earth_slot_global (SLOT_ADR)\n",
	    NULL};
	where("misuse_op", 70, want);
}

Test(tc_where, stuck_report_names_slot_fiber_init_sync)
{
	static const char *const want[] = {
	    "earth: node 0: stuck: slot 1 of a frame of main: count 1, reset "
	    "0: fiber THREAD_1 of main (tests/tc/where/stuck.tc:20; "
	    "INIT_SYNC at tests/tc/where/stuck.tc:16) waits for 1 more "
	    "signal\n",
	    "earth: node 0: stuck: 1 slot waiting\n", NULL};
	where("stuck", 75, want);
	/* The table itself holds fiber addresses: it is not taken for
	 * slots. */
	cr_expect(!strstr(out, "static or registered memory"), "%s", out);
}

Test(tc_where, stuck_report_names_the_fiber_that_enabled_nothing)
{
	static const char *const want[] = {
	    "earth: node 0: stuck: no slot waits here (no fiber is ready, and "
	    "none armed): the last fiber that ran here, fiber THREAD_1 of main "
	    "(tests/tc/where/dead_end.tc:19; INIT_SYNC at "
	    "tests/tc/where/dead_end.tc:16), ended without enabling another "
	    "here; fix: if the work goes on from it, ",
	    NULL};
	where("dead_end", 75, want);
	/* The last run, on 2 nodes: node 1 last ran ping. */
	cr_expect(strstr(out, "earth: node 1: stuck: no slot waits here (no "
			      "fiber is ready, and none armed): the last fiber "
			      "that ran here, fiber 0 of ping "
			      "(tests/tc/where/dead_end.tc:7), ended without "
			      "enabling another here; "),
		  "%s", out);
}

Test(tc_where, main_ending_before_an_answer_fails)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/main_end.tc:18 in main, "
	    "fiber 0: END_FUNCTION: main ends while slot 0 still waits for 1 "
	    "signal (INIT_SYNC at tests/tc/where/main_end.tc:16, fiber "
	    "THREAD_1): the answers it waits for would be lost; fix: end "
	    "this fiber with END_THREAD() and end main in the fiber the slot "
	    "enables\n",
	    NULL};
	where("main_end", 70, want);
}

Test(tc_where, one_shot_slot_signalled_twice_names_slot_and_sender)
{
	static const char *const want[] = {
	    "slot 0 of a frame of main (INIT_SYNC at "
	    "tests/tc/where/oneshot.tc:15, fiber THREAD_1) signalled after it "
	    "fired as a one-shot slot (reset 0): give it reset >= 1 to re-arm "
	    "it, or send one signal fewer\n",
	    NULL};
	where("oneshot", 70, want);
	/* The last run, on 2 nodes: the extra signal came from node 1. */
	cr_expect(strstr(out, "earth: node 0: error: DATA_RSYNC_I from node 1 "
			      "(tests/tc/where/oneshot.tc:7 in sq, fiber 0): "
			      "slot 0 of a frame of main"),
		  "%s", out);
}

Test(tc_where, trace_names_fibers_by_function_and_label)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, "threaded-c/examples/fib.tc", "");
	char env[128];
	snprintf(env, sizeof env, "EARTH_TRACE=%s/trace.json", dir);
	int rc = tc_exec(out, sizeof out, dir, env, "8");
	cr_assert_eq(rc, 0, "%s", out);
	rc = tc_sh(out, sizeof out,
		   "grep -o '\"name\":\"[a-zA-Z_:0-9]*\"' %s/trace.json | "
		   "sort -u",
		   dir);
	cr_expect(strstr(out, "\"name\":\"fib\"\n"), "%s", out);
	cr_expect(strstr(out, "\"name\":\"fib:THREAD_1\"\n"), "%s", out);
	cr_expect(strstr(out, "\"name\":\"main:THREAD_1\"\n"), "%s", out);
	cr_expect(!strstr(out, "tc_fiber_"), "%s", out);
	tc_cleanup(dir);
}

/* One run of where/remote_reject.tc in mode `mode` on `nodes` nodes over
 * transport tr (with address randomisation on: aslr): the last node
 * refuses node 0's operation; its message must start with want_head, the
 * text before the address, and hold want_tail after it; the job fails. */
static void refused(const char *dir, int mode, int nodes, const char *tr,
		    bool aslr, const char *want_head, const char *want_tail)
{
	int rc = tc_sh(out, sizeof out,
		       "%stimeout 60 %s/rel/bin/earthrun -n %d --transport "
		       "%s %s/prog %d",
		       aslr ? "EARTH_ASLR=1 " : "", tc_build_dir(), nodes, tr,
		       dir, mode);
	cr_expect_eq(rc, 70, "mode %d over %s: status %d:\n%s", mode, tr, rc,
		     out);
	const char *at = strstr(out, want_head);
	cr_expect(at, "mode %d over %s: missing\n  %s\nin:\n%s", mode, tr,
		  want_head, out);
	cr_expect(at && strstr(at, want_tail),
		  "mode %d over %s: missing\n  %s\nin:\n%s", mode, tr,
		  want_tail, out);
}

#define REJ_HEAD(node, op, line)                                               \
	"earth: node " #node ": error: refused " op " from node 0 "            \
	"(tests/tc/where/remote_reject.tc:" #line " in main, fiber "           \
	"THREAD_1): "
#define REJ_MEM(msg)                                                           \
	") is outside this node's registered memory; memory from malloc or "   \
	"mmap that other nodes read or write must be registered with "         \
	"earth_register_memory (message " msg ", field b)\n"

/* An operation another node refuses names the sender's line, function,
 * fiber and operation as written (not the wire message): a BLKMOV, a
 * DATA and a GET on the last node's unregistered malloc buffer, an RSYNC
 * to it, over shm, tcp and ucx, with and without address randomisation;
 * on 3 nodes a BLKMOV_RSYNC node 1 serves into node 2's buffer (the
 * message names the relaying node). */
Test(tc_where, refusal_by_another_node_names_the_senders_line)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, "tests/tc/where/remote_reject.tc", "");
	static const char *const trs[] = {"shm", "tcp", "ucx"};
	for (int t = 0; t < 3; t++) {
		const char *tr = trs[t];
		refused(dir, 0, 2, tr, t == 1,
			REJ_HEAD(1, "BLKMOV_SYNC", 32) "the destination [0x",
			REJ_MEM("BLK_DATA"));
		refused(dir, 1, 2, tr, t == 2,
			REJ_HEAD(1, "DATA_SYNC_L", 35) "the destination [0x",
			REJ_MEM("BLK_DATA"));
		refused(dir, 2, 2, tr, t == 0,
			REJ_HEAD(1, "GET_SYNC_L", 37) "the source [0x",
			REJ_MEM("BLK_REQ"));
		refused(dir, 3, 2, tr, t == 1,
			REJ_HEAD(1, "RSYNC", 40) "slot 0x1",
			" is not an aligned slot in this node's registered "
			"memory (message SYNC, field a)\n");
		/* (Not randomised: node 0 names node 1's static block
		 * by its own address.) */
		refused(dir, 4, 3, tr, false,
			REJ_HEAD(2, "BLKMOV_RSYNC", 42) "the destination [0x",
			REJ_MEM("BLK_DATA from node 1"));
	}
	tc_cleanup(dir);
}

#define UNREG_HEAD(line, fiber, op)                                            \
	"earth: node 0: error: tests/tc/where/unregistered.tc:" #line          \
	" in main, fiber " fiber ": " op ": "
#define UNREG_MEM                                                              \
	") is not registered memory: memory that a global pointer names "      \
	"must be registered on every node count (other nodes refuse the "      \
	"rest): register a buffer from malloc or mmap with "                   \
	"earth_register_memory (and unregister it before freeing it), or use " \
	"global memory (earth_galloc) or a frame field; a C function's local " \
	"variable never qualifies\n"

/* A job on `nodes` nodes (over transport tr) running
 * where/unregistered.tc in `mode`: it fails (70) with a message that
 * starts with head, then the address, then tail. */
static void unreg_over(const char *dir, int nodes, const char *tr, int mode,
		       const char *head, const char *tail)
{
	int rc = nodes == 1 ? tc_sh(out, sizeof out, "timeout 60 %s/prog %d",
				    dir, mode)
			    : tc_sh(out, sizeof out,
				    "timeout 60 %s/rel/bin/earthrun -n %d "
				    "--transport %s %s/prog %d",
				    tc_build_dir(), nodes, tr, dir, mode);
	cr_expect_eq(rc, 70, "mode %d on %d node(s) over %s: status %d:\n%s",
		     mode, nodes, tr, rc, out);
	const char *at = strstr(out, head);
	cr_expect(at, "mode %d on %d node(s) over %s: missing\n  %s\nin:\n%s",
		  mode, nodes, tr, head, out);
	cr_expect(at && strstr(at, tail),
		  "mode %d on %d node(s) over %s: missing\n  %s\nin:\n%s", mode,
		  nodes, tr, tail, out);
	cr_expect(!strstr(out, "took the access"), "%s", out);
}

static void unreg(const char *dir, int nodes, int mode, const char *head,
		  const char *tail)
{
	unreg_over(dir, nodes, "shm", mode, head, tail);
}

/* On one node as on two: a BLKMOV_SYNC into a malloc'ed buffer, a
 * DATA_SYNC_L into one, a GET_SYNC_L from a C helper's local variable
 * made global, a GET_SYNC_L into a malloc'ed buffer, and a DATA_SYNC_L into a
 * buffer registered (a BLKMOV and a DATA_SYNC into it work) then unregistered,
 * each on the node's own memory, stop the job naming their line. On two nodes,
 * another node's buffer registered, written, unregistered, is refused again by
 * its node (whose SU keeps its own cache of segments), over shm, tcp and ucx.
 */
Test(tc_where, unregistered_memory_of_this_node_is_refused_at_its_line)
{
	char dir[64];
	tc_require();
	tc_tmpdir(dir);
	tc_build(dir, "tests/tc/where/unregistered.tc", "");
	for (int nodes = 1; nodes <= 2; nodes++) {
		unreg(dir, nodes, 0,
		      UNREG_HEAD(52, "0", "BLKMOV_SYNC") "the destination [0x",
		      UNREG_MEM);
		unreg(dir, nodes, 1,
		      UNREG_HEAD(54, "0", "DATA_SYNC_L") "the destination [0x",
		      ", +8" UNREG_MEM);
		unreg(dir, nodes, 2,
		      UNREG_HEAD(56, "0", "GET_SYNC_L") "the source [0x",
		      ", +8" UNREG_MEM);
		unreg(dir, nodes, 5,
		      UNREG_HEAD(100, "THREAD_9",
				 "GET_SYNC_L") "the destination [0x",
		      ", +8) is not registered memory: a GET writes it when "
		      "the value arrives, which may be after this fiber "
		      "ended, and another node's answer into it is refused: "
		      "use a frame field, static data, global memory "
		      "(earth_galloc) or a buffer registered with "
		      "earth_register_memory; a C function's local variable "
		      "never qualifies\n");
		unreg(dir, nodes, 3,
		      UNREG_HEAD(79, "THREAD_3",
				 "DATA_SYNC_L") "the destination [0x",
		      ", +8" UNREG_MEM);
	}
	static const char *const trs[] = {"shm", "tcp", "ucx"};
	for (int t = 0; t < 3; t++)
		unreg_over(dir, 2, trs[t], 4,
			   "earth: node 1: error: refused DATA_SYNC_L from "
			   "node 0 (tests/tc/where/unregistered.tc:94 in main, "
			   "fiber THREAD_7): the destination [0x",
			   ", +8) is outside this node's registered memory; "
			   "memory from malloc or mmap that other nodes read "
			   "or write must be registered with "
			   "earth_register_memory (message BLK_DATA, field "
			   "b)\n");
	tc_cleanup(dir);
}

/* Shared memory (SHARED) misused at run time: the operation's line. */
Test(tc_where, dsm_acquire_past_the_allocation)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_range.tc:12 in main, "
	    "fiber 0: ACQUIRE_R_SYNC: the range [0x",
	    ", +800000) runs 799920 bytes past the end of its allocation "
	    "([0x",
	    ", +80)): acquire only inside one allocation\n", NULL};
	where("dsm_range", 70, want);
}

/* One element past the end, inside the allocation's last page. */
Test(tc_where, dsm_acquire_one_element_past_the_end)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_tail.tc:13 in main, "
	    "fiber 0: ACQUIRE_R_SYNC: the range [0x",
	    ", +88) runs 8 bytes past the end of its allocation ([0x",
	    ", +80)): acquire only inside one allocation\n", NULL};
	where("dsm_tail", 70, want);
}

/* Past the end of one allocation into the next, which lies beside it. */
Test(tc_where, dsm_acquire_over_two_allocations)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_span.tc:14 in main, "
	    "fiber 0: ACQUIRE_W_SYNC: the range [0x",
	    ", +8192) runs 4096 bytes past the end of its allocation ([0x",
	    ", +4096)): acquire only inside one allocation\n", NULL};
	where("dsm_span", 70, want);
}

/* Memory the last node freed, acquired on node 0 (on one node, by the
 * node that freed it; on two, node 0 learnt of node 1's free). */
Test(tc_where, dsm_acquire_after_free)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_freed.tc:31 in main, "
	    "fiber dropped: ACQUIRE_W_SYNC: the range [0x",
	    ", +800) starts in page ",
	    "which no allocation holds (never given by earth_dsm_alloc, or "
	    "freed): acquire only inside an allocation\n",
	    NULL};
	where("dsm_freed", 70, want);
}

Test(tc_where, dsm_freed_twice)
{
	static const char *const want[] = {
	    "earth: node %4$d: error: tests/tc/where/dsm_free2.tc:14 in drop, "
	    "fiber freed: DSM_FREE_SYNC: 0x",
	    ": no allocation starts there (freed twice, or an address "
	    "earth_dsm_alloc did not give): free once what an allocation "
	    "gave\n",
	    NULL};
	where("dsm_free2", 70, want);
}

Test(tc_where, dsm_lock_never_made)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_lock0.tc:13 in main, "
	    "fiber 0: DSM_LOCK_SYNC: lock 0x0 was never made: use what "
	    "earth_dsm_lock_new returned (PARMACS: LOCKINIT, ALOCKINIT, "
	    "BARINIT or PAUSEINIT before its first use)\n",
	    NULL};
	where("dsm_lock0", 70, want);
}

/* SHARED_ARRAY counts: 0 (a global main sets later), past the region. */
Test(tc_where, dsm_shared_array_counts)
{
	static const char *const zero[] = {
	    "earth: SHARED_ARRAY a: a count of 0 elements (n_items, evaluated "
	    "before THREADED main runs, so a global that main sets is still 0 "
	    "then); fix: a count of 1 or more (a constant, or globals set "
	    "where they are defined), or DSM_ALLOC_SYNC in main for a count "
	    "main computes\n",
	    NULL};
	where("dsm_count0", 70, zero);
	static const char *const big[] = {
	    "earth: SHARED_ARRAY big: cannot allocate 800000000 bytes of "
	    "shared memory (Cannot allocate memory); fix: a smaller count, or "
	    "more shared memory (EARTH_DSM_MB)\n",
	    "earth: node 0: shared memory: an allocation of 800000000 bytes on "
	    "node 0 gets NULL: the shared region of 64 MiB (16384 pages of "
	    "4096 bytes, ",
	    NULL};
	where("dsm_toolarge", 70, big);
}

/* Arguments the EU refuses before posting anything. */
Test(tc_where, dsm_bad_arguments_name_the_line)
{
	static const char *const neg[] = {
	    "earth: node 0: error: tests/tc/where/dsm_neg.tc:14 in main, "
	    "fiber 0: ACQUIRE_R_SYNC: a negative length (-8 bytes): acquire "
	    "a count of 1 element or more\n",
	    NULL};
	where("dsm_neg", 70, neg);
	static const char *const bar0[] = {
	    "earth: node 0: error: tests/tc/where/dsm_bar0.tc:12 in main, "
	    "fiber 0: DSM_BARRIER_SYNC: a barrier count of 0 (1 to ",
	    NULL};
	where("dsm_bar0", 70, bar0);
}

Test(tc_where, dsm_lock_unlocked_twice)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_unlock2.tc:18 in main, "
	    "fiber unlocked: DSM_UNLOCK_SYNC: lock 0x1 is not held by this "
	    "node's fibers (unlocked twice, or never locked by a fiber): "
	    "unlock once what earth_dsm_lock_sync granted\n",
	    NULL};
	where("dsm_unlock2", 70, want);
}

Test(tc_where, dsm_range_released_twice)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_release2.tc:19 in main, "
	    "fiber released: RELEASE_SYNC: page 0 of the range [0x",
	    ", +4096) is not held by any acquisition of this node's fibers "
	    "(released twice, or never acquired)",
	    NULL};
	where("dsm_release2", 70, want);
}

/* The acquire the plugin inserted before a loop past the end of its array
 * is named by the loop's line. */
Test(tc_where, dsm_inserted_acquire_past_the_allocation)
{
	static const char *const want[] = {
	    "earth: node 0: error: tests/tc/where/dsm_insert_range.tc:12 in "
	    "main, fiber 0: ACQUIRE_R_N_SYNC: the range [0x",
	    ", +800000) runs 799920 bytes past the end of its allocation "
	    "([0x",
	    NULL};
	where("dsm_insert_range", 70, want);
}
