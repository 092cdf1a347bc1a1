/* SPDX-License-Identifier: MIT */
/*
 * t_blkmove.c - large block moves (tests/progs/blkmove.c): over tcp, moves
 * up to 64 MiB pulled, pushed and between two other nodes, checked byte
 * for byte, sent from where they lie and received mostly straight into
 * their destination (blk_sent, blk_recv in the statistics), back to back
 * with small messages, refused outside registered memory, their sender
 * killed midway; over shm, the chunks of a move that find the ring full
 * wait in the SU's queue as references, not copies (queued).
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "json.h"

TestSuite(blkmove, .timeout = 120);

/* Block payload bytes each node received directly and copied, sent from
 * where they lie and copied; payload bytes its SU queued while the
 * transport had no room, by reference and copied. */
struct blk_recv {
	double direct[3], copied[3];
	double sent_ref[3], sent_copied[3];
	double queued_ref[3], queued_copied[3];
};

/* Runs `blkmove ARGS` on `nodes` nodes over `transport`, checks that every
 * byte arrived where it should, and reads each node's statistics into *r. */
static void blkmove_job_over(const char *transport, int nodes, const char *args,
			     struct blk_recv *r)
{
	char stats[64], err[256];
	snprintf(stats, sizeof(stats), "/tmp/t_mn_blk.%d.json", (int)getpid());
	struct t_cmd c;
	uint64_t t0 = t_now_ns();
	t_sh(&c, 60, "%s --transport %s -n %d --stats=json %s %s/blkmove %s",
	     T_EARTHRUN, transport, nodes, stats, T_PROG_DIR, args);
	struct json *root = json_parse_file(stats, err, sizeof(err));
	unlink(stats);
	cr_assert_eq(c.status, 0, "blkmove %s, %d nodes: status %d\n%s%s", args,
		     nodes, c.status, c.out, c.err);
	cr_assert(strstr(c.out, "all correct"), "blkmove %s: %s\n%s", args,
		  c.out, c.err);
	cr_assert(root, "%s: %s", stats, err);
	const struct json *arr = json_get(root, "nodes");
	cr_assert(arr && arr->n == (size_t)nodes);
	for (size_t i = 0; i < arr->n; i++) {
		int k = (int)json_get(&arr->v[i], "node")->num;
		const struct json *b = json_get(&arr->v[i], "blk_recv");
		const struct json *o = json_get(&arr->v[i], "blk_sent");
		const struct json *q = json_get(&arr->v[i], "queued");
		cr_assert(b && o && q && k >= 0 && k < nodes,
			  "no blk_recv, blk_sent or queued for node %d", k);
		r->direct[k] = json_get(b, "direct")->num;
		r->copied[k] = json_get(b, "copied")->num;
		r->sent_ref[k] = json_get(o, "referenced")->num;
		r->sent_copied[k] = json_get(o, "copied")->num;
		r->queued_ref[k] = json_get(q, "referenced")->num;
		r->queued_copied[k] = json_get(q, "copied")->num;
		cr_log_info("blkmove %s: node %d received %.0f bytes directly, "
			    "%.0f copied; sent %.0f from where they lie, %.0f "
			    "copied",
			    args, k, r->direct[k], r->copied[k], r->sent_ref[k],
			    r->sent_copied[k]);
	}
	json_free(root);
	cr_log_info("blkmove %s: %.2f s", args, (t_now_ns() - t0) / 1e9);
}

static void blkmove_job(int nodes, const char *args, struct blk_recv *r)
{
	blkmove_job_over("tcp", nodes, args, r);
}

/* Over shm a pair's ring holds 1 MiB: the chunks of a larger move that
 * find it full wait in the SU's queue as references to where they lie
 * (queue copies of 64 KiB chunks made such moves 10-30 times slower). */
Test(blkmove, shm_block_chunks_wait_as_references)
{
	const char *args[] = {"pull 67108864 1", "push 8388608 2"};
	int sender[] = {1, 0};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job_over("shm", 2, args[i], &r);
		int k = sender[i];
		cr_expect_gt(r.queued_ref[k], 1 << 20,
			     "blkmove %s: node %d queued %.0f bytes by "
			     "reference: the ring never filled?",
			     args[i], k, r.queued_ref[k]);
		cr_expect_leq(r.queued_copied[k], 4096,
			      "blkmove %s: node %d copied %.0f bytes of "
			      "payloads into its queue",
			      args[i], k, r.queued_copied[k]);
	}
}

/* Node k received `bytes` of block payloads, and at most `more` besides
 * (replies of the set-up), each counted once. */
static void expect_received(const struct blk_recv *r, int k, double bytes,
			    double more, const char *args)
{
	double got = r->direct[k] + r->copied[k];
	cr_assert(got >= bytes && got <= bytes + more,
		  "blkmove %s: node %d counted %.0f bytes, want %.0f", args, k,
		  got, bytes);
}

/* Node k sent the `reps` moves of `bytes` from where they lie, all but
 * their last chunks under 4 KiB (and the replies of the set-up). */
static void expect_sent_in_place(const struct blk_recv *r, int k, long bytes,
				 long reps, const char *args)
{
	cr_assert(r->sent_ref[k] + r->sent_copied[k] >= (double)(bytes * reps),
		  "blkmove %s: node %d sent %.0f + %.0f bytes", args, k,
		  r->sent_ref[k], r->sent_copied[k]);
	cr_assert_leq(r->sent_copied[k], reps * 4096.0 + 64,
		      "blkmove %s: node %d copied %.0f bytes of payloads into "
		      "its send buffers",
		      args, k, r->sent_copied[k]);
}

Test(blkmove, tcp_large_blocks_pulled_and_pushed)
{
	/* whole chunks, odd sizes, 64 MiB (not when scaled down: under
	 * TSan, which checks each byte copied); odd offsets on both sides */
	long sizes[] = {1l << 20, (3l << 20) + 5, 8l << 20, 64l << 20};
	long reps[] = {3, 2, 2, 1};
	size_t cases = T_NCASES(sizes) - (t_scale() > 1);
	for (size_t i = 0; i < cases; i++) {
		for (int push = 0; push < 2; push++) {
			char args[64];
			struct blk_recv r;
			snprintf(args, sizeof(args), "%s %ld %ld",
				 push ? "push" : "pull", sizes[i], reps[i]);
			blkmove_job(2, args, &r);
			/* pull: node 0 also got node 1's two addresses */
			expect_received(&r, push ? 1 : 0,
					(double)(sizes[i] * reps[i]),
					push ? 0 : 16, args);
			expect_sent_in_place(&r, push ? 0 : 1, sizes[i],
					     reps[i], args);
		}
	}
}

Test(blkmove, tcp_large_blocks_between_two_other_nodes)
{
	const char *args[] = {"third 8388608 2", "third 3145733 1"};
	double bytes[] = {2 * 8388608.0, 3145733.0};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job(3, args[i], &r);
		expect_received(&r, 2, bytes[i], 0, args[i]);
	}
}

/* A large move's bytes: 64 MiB, or 16 MiB when scaled down (under TSan,
 * which checks each byte copied). */
static long big_move(void)
{
	return t_scale() > 1 ? 16l << 20 : 64l << 20;
}

Test(blkmove, tcp_large_block_lands_in_place)
{
	/* Most of a large move skips the receive buffers. What still goes
	 * through them: what one io_uring_enter read before the receiver
	 * saw the move's first header. */
	struct blk_recv r;
	char args[64];
	snprintf(args, sizeof(args), "pull %ld 2", big_move());
	blkmove_job(2, args, &r);
	double total = 2.0 * (double)big_move();
	expect_received(&r, 0, total, 16, args);
	cr_assert_gt(r.direct[0], total / 2,
		     "only %.0f of %.0f bytes received straight into place "
		     "(%.0f copied)",
		     r.direct[0], total, r.copied[0]);
}

/* Over ucx a 1 MiB chunk goes as a rendezvous active message, received
 * with ucp_am_recv_data_nbx straight into its destination: all of it but
 * the program's few small messages skips a copy, over both kinds of
 * lanes. */
Test(blkmove, ucx_large_block_lands_in_place)
{
	const char *tls[] = {"tcp", "posix,cma"};
	for (size_t i = 0; i < T_NCASES(tls); i++) {
		setenv("UCX_TLS", tls[i], 1);
		struct blk_recv r;
		char args[64];
		snprintf(args, sizeof(args), "pull %ld 2", big_move());
		blkmove_job_over("ucx", 2, args, &r);
		double total = 2.0 * (double)big_move();
		expect_received(&r, 0, total, 16, args);
		cr_assert_leq(r.copied[0], 16,
			      "%s: %.0f of %.0f bytes copied (%.0f in place)",
			      tls[i], r.copied[0], total, r.direct[0]);
	}
}

Test(blkmove, tcp_block_moves_between_small_messages)
{
	/* Pulls and pushes all in flight, a GET, an INVOKE and a SYNC
	 * beside each: the stream goes on right after each placed payload.
	 * 20011 bytes: payloads on both sides of the direct threshold. */
	const char *args[] = {"mix 1000003 40", "mix 20011 200",
			      "mix 300007 100"};
	for (size_t i = 0; i < T_NCASES(args); i++) {
		struct blk_recv r;
		blkmove_job(2, args[i], &r);
	}
}

Test(blkmove, tcp_large_block_outside_registered_memory_is_rejected)
{
	/* A good 8 MiB move, then one to memory node 1 never registered
	 * (nor mapped: a byte landing there would crash it instead). */
	struct t_cmd c;
	t_sh(&c, 60, "%s --transport tcp -n 2 %s/blkmove bad 8388608",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, EARTH_EXIT_USAGE, "status %d\n%s%s", c.status,
		     c.out, c.err);
	cr_assert(strstr(c.err, "earth: node 1: error: message from node 0 "
				"rejected: field b (BLK_DATA destination "
				"outside this node's registered memory; "
				"memory from malloc or mmap that other nodes "
				"write must be registered with "
				"earth_register_memory)"),
		  "%s", c.err);
}

Test(blkmove, tcp_sender_killed_mid_block)
{
	char path[2][64], buf[4096], prog[256];
	pid_t pid[2];
	int port = t_tcp_free_port();
	snprintf(prog, sizeof(prog), "%s/blkmove", T_PROG_DIR);
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "/tmp/t_mn_blkk.%d.%d",
			 (int)getpid(), k);
		pid[k] = t_tcp_spawn(prog,
				     (const char *[]){"kill", "67108864", NULL},
				     k, 2, port, path[k]);
	}
	/* Node 1 pushes 64 MiB blocks to node 0, one after another. */
	uint64_t t0 = t_now_ns();
	while (!t_file_has(path[1], "blkmove: node 1 pid", buf, sizeof(buf)) &&
	       t_now_ns() - t0 < 20000000000ull)
		usleep(10000);
	cr_assert(strstr(buf, "blkmove: node 1 pid"), "node 1: %s", buf);
	usleep(300000);
	uint64_t t_kill = t_now_ns();
	cr_assert_eq(kill(pid[1], SIGKILL), 0);
	cr_assert_eq(t_wait_pid(pid[1], 5000000000ull), 128 + SIGKILL);
	int st = t_wait_pid(pid[0], 6000000000ull);
	uint64_t took = t_now_ns() - t_kill;
	t_slurp(path[0], buf, sizeof(buf));
	for (int k = 0; k < 2; k++)
		unlink(path[k]);
	cr_assert_neq(st, -1, "node 0 still running %.1f s after the kill: %s",
		      took / 1e9, buf);
	cr_assert_lt(took, 5000000000ull, "node 0 took %.1f s", took / 1e9);
	cr_assert_eq(st, EARTH_EXIT_PEER_DIED, "node 0: status %d: %s", st,
		     buf);
	cr_assert(strstr(buf, "earth: node 0: error: tcp transport: lost the "
			      "connection to node 1"),
		  "%s", buf);
}
