/* SPDX-License-Identifier: MIT */
/*
 * t_gmem.c - global memory. In this process: the segment allocator
 * (gheap: lowest and highest fit, taking a given range, merging), then
 * earth_galloc/earth_gfree and block-distributed arrays on one node
 * (alignment, a full segment, bad frees, element placement, threads
 * allocating at once), and a taken address range reported at the first
 * allocation. As jobs (tests/progs/gmem.c under earthrun): every operation
 * on global memory of 1-4 nodes over the direct one-sided path and
 * through the remote SU (told apart by the messages node 0 sent), over
 * tcp, accesses outside a node's segment rejected naming the peer and the
 * field, an array that cannot be symmetric, and option errors.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gas/gheap.h"
#include "job.h"
#include "net/shm_layout.h"

TestSuite(gmem, .timeout = 180);

/* ---- the extent allocator ---- */

Test(gmem, heap_fits_takes_and_merges)
{
	struct gheap h;
	cr_assert_eq(gheap_init(&h, 1000), 0);
	cr_assert_eq(gheap_alloc(&h, 100, false), 0);
	cr_assert_eq(gheap_alloc(&h, 100, true), 900);
	cr_assert_eq(gheap_alloc(&h, 100, false), 100);
	cr_assert_eq(gheap_alloc(&h, 701, false), -1, "only 700 are free");
	cr_assert_eq(gheap_take(&h, 400, 100), 0, "a range in the middle");
	cr_assert_eq(gheap_take(&h, 450, 10), -1, "already taken");
	cr_assert_eq(gheap_take(&h, 850, 100), -1, "runs into a taken one");
	cr_assert_eq(h.nfree, 2); /* [200,400) and [500,900) */
	cr_assert_eq(gheap_alloc(&h, 300, false), 500, "first fit skips 200");
	cr_assert_eq(gheap_put(&h, 400, 100), 0);
	cr_assert_eq(gheap_put(&h, 0, 100), 0);
	cr_assert_eq(gheap_put(&h, 100, 100), 0);
	cr_assert_eq(gheap_put(&h, 500, 300), 0);
	cr_assert_eq(gheap_put(&h, 900, 100), 0);
	cr_assert_eq(h.nfree, 1, "everything merged back");
	cr_assert_eq(h.free[0].off, 0);
	cr_assert_eq(h.free[0].len, 1000);
	cr_assert_eq(gheap_alloc(&h, 0, false), -1);
	gheap_fini(&h);
}

/* ---- one node, in this process ---- */

struct one_frame {
	int dummy;
};
static int one_result;

static void *alloc_loop(void *arg)
{
	long bad = 0;
	for (int i = 0; i < 2000; i++) {
		earth_gptr g = earth_galloc((size_t)(i % 7 + 1) * 100);
		if (!g.bits) {
			bad++;
			continue;
		}
		memset(earth_gptr_addr(g), (int)(uintptr_t)arg, 100);
		if (earth_gfree(g))
			bad++;
	}
	return (void *)bad;
}

static int one_checks(void)
{
	uint64_t seg = (uint64_t)GMEM_DEFAULT_MB << 20;
	earth_gptr a = earth_galloc(1), b = earth_galloc(100);
	if (!a.bits || !b.bits || earth_gptr_node(a) != 0)
		return 1;
	if ((uintptr_t)earth_gptr_addr(a) != GMEM_BASE ||
	    (uintptr_t)earth_gptr_addr(b) != GMEM_BASE + 64)
		return 2; /* lowest fit, 64-byte grain */
	if (earth_galloc(0).bits || earth_galloc(seg + 1).bits)
		return 3;
	if (earth_gfree(earth_gptr_add(b, 8)) != -EINVAL ||
	    earth_gfree(earth_gptr_make(1, earth_gptr_addr(b))) != -EINVAL ||
	    earth_gfree(b) || earth_gfree(b) != -EINVAL)
		return 4;
	earth_gptr c = earth_galloc(64); /* reuses b's place */
	if ((uintptr_t)earth_gptr_addr(c) != GMEM_BASE + 64)
		return 5;
	earth_garray arr;
	if (earth_garray_alloc(&arr, 0, 8, 1) != -EINVAL ||
	    earth_garray_alloc(&arr, 10, 8, 0) != -EINVAL ||
	    earth_garray_alloc(&arr, 1, seg + 1, 1) != -ENOMEM)
		return 6;
	if (earth_garray_alloc(&arr, 100, sizeof(long), 8))
		return 7;
	/* 13 blocks of 8 on one node: the top 832 bytes, in order */
	if (arr.base != GMEM_BASE + seg - 832 || arr.nodes != 1 ||
	    arr.stride != seg)
		return 8;
	for (uint64_t i = 0; i < 100; i++) {
		earth_gptr g = earth_garray_at(&arr, i);
		if (earth_garray_node(&arr, i) != 0 ||
		    (uintptr_t)earth_gptr_addr(g) != arr.base + i * 8)
			return 9;
		*(long *)earth_gptr_addr(g) = (long)i;
	}
	/* threads allocating at once */
	pthread_t t[2];
	void *r0, *r1;
	pthread_create(&t[0], NULL, alloc_loop, (void *)1);
	pthread_create(&t[1], NULL, alloc_loop, (void *)2);
	pthread_join(t[0], &r0);
	pthread_join(t[1], &r1);
	if (r0 || r1)
		return 10;
	earth_garray copy = arr;
	if (earth_garray_free(&arr) || earth_garray_free(&copy) != -EINVAL)
		return 11;
	if (earth_gfree(a) || earth_gfree(c))
		return 12;
	/* everything free again: a whole-segment object fits */
	earth_gptr all = earth_galloc(seg);
	if (!all.bits || earth_gfree(all))
		return 13;
	return 0;
}

static void one_entry(void *frame)
{
	one_result = one_checks();
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(one_main, one_entry, struct one_frame, 0);

Test(gmem, one_node_allocation)
{
	unsetenv("EARTH_GMEM_MB");
	unsetenv("EARTH_REMOTE");
	cr_assert_eq(t_run(NULL, &one_main), 0);
	cr_assert_eq(one_result, 0, "check %d failed", one_result);
	/* A second node in the same process starts from an empty segment. */
	cr_assert_eq(t_run(NULL, &one_main), 0);
	cr_assert_eq(one_result, 0, "second run: check %d failed", one_result);
}

static void galloc_entry(void *frame)
{
	earth_galloc(8);
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(galloc_main, galloc_entry, struct one_frame, 0);

static int run_with_range_taken(void *arg)
{
	(void)arg;
	void *p =
	    mmap((void *)(uintptr_t)GMEM_BASE, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)GMEM_BASE)
		return 99;
	return t_run(NULL, &galloc_main);
}

static int run_without_gmem(void *arg)
{
	(void)arg;
	setenv("EARTH_GMEM_MB", "0", 1);
	return t_run(NULL, &galloc_main);
}

static int run_bad_env(void *arg)
{
	setenv((const char *)arg, "nonsense", 1);
	return t_run(NULL, &galloc_main);
}

Test(gmem, unavailable_memory_is_reported)
{
	t_expect_exit(run_with_range_taken, NULL, EARTH_EXIT_USAGE,
		      "earth_galloc: cannot map global memory at "
		      "[0x560000000000, +64 MiB)",
		      "the range is taken in this process", NULL);
	t_expect_exit(run_without_gmem, NULL, EARTH_EXIT_USAGE,
		      "earth_galloc: this job has no global memory", NULL);
	t_expect_exit(run_bad_env, "EARTH_REMOTE", EARTH_EXIT_USAGE,
		      "EARTH_REMOTE must be su", NULL);
	t_expect_exit(run_bad_env, "EARTH_GMEM_MB", EARTH_EXIT_USAGE,
		      "EARTH_GMEM_MB must be the MiB", NULL);
}

/* ---- jobs ---- */

/* The requests node 0's SU performed in the last gmem_job. */
static long g_handled;

/* Runs the gmem program; returns the messages node 0 sent. */
static long gmem_job(const char *opts, int nodes, long blk)
{
	struct t_cmd c;
	t_sh(&c, 60, "%s %s -n %d %s/gmem %ld", T_EARTHRUN, opts, nodes,
	     T_PROG_DIR, blk);
	cr_assert_eq(c.status, 0, "%s, %d nodes, block %ld: status %d\n%s%s",
		     opts, nodes, blk, c.status, c.out, c.err);
	char want[96];
	snprintf(want, sizeof(want),
		 "gmem: %d nodes, %ld-byte blocks: all "
		 "correct",
		 nodes, blk);
	cr_assert(strstr(c.out, want), "want '%s':\n%s\n%s", want, c.out,
		  c.err);
	const char *p = strstr(c.out, "node 0 sent ");
	const char *h = strstr(c.out, " messages, handled ");
	cr_assert(p && h, "%s", c.out);
	g_handled = atol(h + strlen(" messages, handled "));
	return atol(p + strlen("node 0 sent "));
}

/* The GETs node 0 issues first (1000, from one fiber with nothing
 * posted before) read on its EU where every element is readable there:
 * its SU performs fewer requests than where the other nodes' elements go
 * through it (half of the 1000 on 2 nodes). */
static void expect_eu_reads(long handled_direct, long handled_su,
			    const char *what)
{
	cr_assert_lt(handled_direct + 400, handled_su,
		     "%s: node 0 handled %ld requests with the direct table, "
		     "%ld without: the EU did not read the other node's "
		     "global memory itself",
		     what, handled_direct, handled_su);
}

Test(gmem, direct_path_every_operation)
{
	/* 1000 GETs, 1000 DATAs, 1000 GETs and 3n block moves: one-sided,
	 * node 0 sends only its INVOKEs, SYNCs of remote slots and STEALs. */
	for (int n = 1; n <= 4; n++) {
		long sent = gmem_job("--remote direct", n, 100000);
		cr_assert_lt(sent, 300, "%d nodes: %ld messages", n, sent);
	}
	gmem_job("--remote direct", 2, 64);
	long direct = g_handled;
	gmem_job("--remote su", 2, 64);
	expect_eu_reads(direct, g_handled, "shm");
	gmem_job("", 2, 0);
	gmem_job("", 3, 65537);
}

Test(gmem, su_path_every_operation)
{
	for (int n = 1; n <= 4; n++) {
		long sent = gmem_job("--remote su", n, 100000);
		if (n > 1)
			cr_assert_gt(sent, 1000,
				     "%d nodes: only %ld messages: "
				     "not through the SU",
				     n, sent);
	}
	/* EARTH_REMOTE works as the option does */
	long sent = gmem_job("", 2, 1);
	cr_assert_lt(sent, 300);
	struct t_cmd c;
	t_sh(&c, 60, "env EARTH_REMOTE=su %s -n 2 %s/gmem 1", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert_gt(atol(strstr(c.out, "node 0 sent ") + 12), 1000, "%s",
		     c.out);
	/* An emulated network must see the traffic: no direct path. */
	t_sh(&c, 60, "env EARTH_NET_LATENCY_NS=1000 %s -n 2 %s/gmem 1",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert_gt(atol(strstr(c.out, "node 0 sent ") + 12), 1000, "%s",
		     c.out);
}

Test(gmem, tcp_every_operation)
{
	gmem_job("--transport tcp", 2, 100000);
	gmem_job("--transport tcp", 3, 65536);
}

Test(gmem, ucx_every_operation)
{
	/* Over shared memory lanes the peers' segments are mapped here
	 * (ucp_rkey_ptr): the 2000 GETs and the pulls into node 0 are loads
	 * (the first 1000 GETs on node 0's EU), no BLK_REQ message each,
	 * where tcp sends one (about 1500 messages). Over UCX's tcp lanes
	 * nothing is mapped (the table stays empty) and a read would be
	 * emulated by the peer's worker, slower than its SU: they go as
	 * messages. EARTH_REMOTE=su empties the table too (reads then go
	 * one-sided through cma). */
	const char *tls[][2] = {{"tcp", "lo"}, {"posix,cma", ""}};
	long handled[2];
	for (size_t i = 0; i < T_NCASES(tls); i++) {
		setenv("UCX_TLS", tls[i][0], 1);
		setenv("UCX_NET_DEVICES", *tls[i][1] ? tls[i][1] : "all", 1);
		long sent = gmem_job("--transport ucx", 2, 100000);
		handled[i] = g_handled;
		if (i)
			cr_assert_lt(sent, 700, "%s: %ld messages", tls[i][0],
				     sent);
		else
			cr_assert_gt(sent, 1000, "%s: %ld messages", tls[i][0],
				     sent);
		gmem_job("--transport ucx", 3, 65536);
	}
	expect_eu_reads(handled[1], handled[0], "ucx posix,cma against tcp");
	gmem_job("--transport ucx --remote su", 2, 100000);
	expect_eu_reads(handled[1], g_handled, "ucx posix,cma against su");
	unsetenv("UCX_TLS");
	unsetenv("UCX_NET_DEVICES");
}

/* The bad GET of gmem `mode` stops the job with phrases p1 and p2. */
static void expect_rejected(const char *opts, const char *mode, const char *p1,
			    const char *p2)
{
	struct t_cmd c;
	t_sh(&c, 60, "%s %s -n 3 %s/gmem %s", T_EARTHRUN, opts, T_PROG_DIR,
	     mode);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "%s %s: status %d\n%s%s", opts,
		     mode, c.status, c.out, c.err);
	cr_assert(strstr(c.err, p1), "%s %s: %s", opts, mode, c.err);
	cr_assert(strstr(c.err, p2), "%s %s: %s", opts, mode, c.err);
	cr_assert(!strstr(c.out, "all correct"), "%s", c.out);
}

Test(gmem, outside_a_segment_is_rejected)
{
	const char *opts[] = {"--remote direct", "--remote su",
			      "--transport tcp", "--transport ucx"};
	/* Just past node 1's segment, and inside node 2's segment through
	 * a pointer naming node 1: no node serves them, which node 0's EU
	 * knows from the layout, and says in the fiber's terms. */
	const char *modes[] = {"past", "other"};
	for (size_t m = 0; m < T_NCASES(modes); m++)
		for (size_t o = 0; o < T_NCASES(opts); o++)
			expect_rejected(
			    opts[o], modes[m],
			    "earth: node 0: error: GET_SYNC_l: the "
			    "source names node 1, but its address",
			    "lies in node 2's global memory segment");
	/* Node 1's memory that it never registered: refused by node 1. */
	for (size_t o = 0; o < T_NCASES(opts); o++)
		expect_rejected(opts[o], "heap",
				"earth: node 1: error: message BLK_REQ from "
				"node 0 rejected: field b",
				"outside this node's registered memory");
}

Test(gmem, array_that_cannot_be_symmetric)
{
	struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --gmem-mb 8 %s/gmem local-first", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s", c.status,
		     c.err);
	cr_assert(strstr(c.err, "earth: node 0: error: earth_garray_alloc: "),
		  "%s", c.err);
	cr_assert(strstr(c.err, "cannot be at the same place on every node"),
		  "%s", c.err);
	cr_assert(strstr(c.err, "earth: node 1: stopping: node 0 exited with "
				"status 70"),
		  "%s", c.err);
}

Test(gmem, launcher_options)
{
	struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --remote fast %s/gmem", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "--remote fast: give su or direct"), "%s",
		  c.err);
	t_sh(&c, 60, "%s -n 4 --gmem-mb 100000 %s/gmem", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "exceed the 262144 MiB"), "%s", c.err);
	t_sh(&c, 60, "%s -n 2 --gmem-mb x %s/gmem", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "--gmem-mb x: give MiB from 0 to 262144"), "%s",
		  c.err);
	t_sh(&c, 60, "%s -n 2 --gmem-mb 0 %s/gmem", T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE);
	cr_assert(strstr(c.err, "this job has no global memory"), "%s", c.err);
	/* a small segment works, an odd number of MiB too (the segments
	 * of the job's shared mapping follow one another at any MiB) */
	gmem_job("--gmem-mb 2", 3, 100000);
	gmem_job("--gmem-mb 1", 2, 100000);
	gmem_job("--gmem-mb 3", 3, 100000);
	t_sh(&c, 60, "env EARTH_GMEM_MB=5 %s -n 2 %s/gmem 64", T_EARTHRUN,
	     T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s", c.err);
}
