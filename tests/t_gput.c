/* SPDX-License-Identifier: MIT */
/*
 * t_gput.c - writes from one node's memory into another node's global
 * memory (tests/progs/gput.c) over ucx, on both kinds of lanes: over
 * shared memory (posix, cma) one-sided (ucp_put_nbx, remotely complete
 * before the slot is signalled: no block data through node 1's SU), over
 * UCX's tcp lanes through node 1's SU; every byte checked by node 1 the
 * moment the SYNC of a BLKMOV_RSYNC (or DATA_RSYNC) fires, so a SYNC that
 * overtook its data shows; sizes from 1 byte to 4 MiB + 5 around the
 * transports' thresholds, up to 64 moves in flight; a write running past
 * the end of the destination's segment refused by the sender; the
 * destination killed while writes pour in, named by the writer within
 * 5 s.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "json.h"

TestSuite(gput, .timeout = 240);

/* UCX_TLS, UCX_NET_DEVICES of the two kinds of lanes. */
static const char *const lanes[][2] = {{"tcp", "lo"}, {"posix,cma", "all"}};

static void use_lanes(size_t i)
{
	setenv("UCX_TLS", lanes[i][0], 1);
	setenv("UCX_NET_DEVICES", lanes[i][1], 1);
}

/* Block payload bytes node 0 sent as messages (from where they lie and
 * copied) in `gput check` over ucx. */
static double check_job(void)
{
	char stats[64], err[256];
	snprintf(stats, sizeof(stats), "/tmp/t_gput.%d.json", (int)getpid());
	struct t_cmd c;
	t_sh(&c, 120, "%s --transport ucx -n 2 --stats=json %s %s/gput check",
	     T_EARTHRUN, stats, T_PROG_DIR);
	struct json *root = json_parse_file(stats, err, sizeof(err));
	unlink(stats);
	cr_assert_eq(c.status, 0, "%s: status %d\n%s%s", getenv("UCX_TLS"),
		     c.status, c.out, c.err);
	cr_assert(strstr(c.out, "gput: 33 steps: all correct"), "%s: %s\n%s",
		  getenv("UCX_TLS"), c.out, c.err);
	cr_assert(root, "%s: %s", stats, err);
	const struct json *arr = json_get(root, "nodes");
	double sent = -1;
	for (size_t i = 0; arr && i < arr->n; i++) {
		if (json_get(&arr->v[i], "node")->num != 0)
			continue;
		const struct json *o = json_get(&arr->v[i], "blk_sent");
		cr_assert(o, "no blk_sent for node 0");
		sent =
		    json_get(o, "referenced")->num + json_get(o, "copied")->num;
	}
	json_free(root);
	cr_assert_geq(sent, 0, "no statistics of node 0");
	return sent;
}

Test(gput, ucx_writes_land_before_their_sync)
{
	for (size_t i = 0; i < T_NCASES(lanes); i++) {
		use_lanes(i);
		double sent = check_job();
		cr_log_info("%s: node 0 sent %.0f bytes of block messages",
			    lanes[i][0], sent);
		if (i)
			/* posix: written one-sided, not one block message */
			cr_assert_lt(sent, 4096,
				     "%s: %.0f bytes went as messages",
				     lanes[i][0], sent);
		else
			/* UCX's tcp lanes have no RMA lane: messages */
			cr_assert_gt(sent, 100e6,
				     "%s: only %.0f bytes as messages",
				     lanes[i][0], sent);
	}
}

Test(gput, write_past_a_segment_refused_by_the_sender)
{
	const char *tr[] = {"ucx", "ucx", "tcp"};
	for (size_t i = 0; i < T_NCASES(tr); i++) {
		use_lanes(i % 2);
		struct t_cmd c;
		t_sh(&c, 60, "%s --transport %s -n 2 %s/gput past", T_EARTHRUN,
		     tr[i], T_PROG_DIR);
		cr_assert_eq(c.status, EARTH_EXIT_USAGE,
			     "%s (%s): status %d\n%s%s", tr[i],
			     getenv("UCX_TLS"), c.status, c.out, c.err);
		cr_assert(strstr(c.err, "earth: node 0: error: BLKMOV_SYNC: ["),
			  "%s: %s", tr[i], c.err);
		cr_assert(strstr(c.err, ", +64) on node 1 is not inside node "
					"1's global memory segment"),
			  "%s: %s", tr[i], c.err);
		cr_assert(!strstr(c.out, "accepted"), "%s", c.out);
	}
}

/* Node 1 killed while node 0 writes 4 MiB blocks into it: node 0 names
 * it within 5 s (earthrun stops the others 3 s after a node died, so a
 * node that names the dead one noticed it itself). */
Test(gput, destination_killed_mid_write_named_within_5s)
{
	for (size_t i = 0; i < T_NCASES(lanes); i++) {
		char out[64], cmd[512], path[80], err[16384];
		use_lanes(i);
		snprintf(out, sizeof(out), "/tmp/t_gput_kill.%d",
			 (int)getpid());
		snprintf(cmd, sizeof(cmd),
			 "%s --transport ucx -n 2 %s/gput kill > %s.o 2> %s.e "
			 "&",
			 T_EARTHRUN, T_PROG_DIR, out, out);
		cr_assert_eq(system(cmd), 0);
		snprintf(path, sizeof(path), "%s.o", out);
		long pid[2];
		bool up = t_node_pids(path, "gput: ", pid, 2, 20000000000ull);
		if (up)
			usleep(300000); /* writes pour in */
		bool end0;
		double s = t_kill_node(up, pid, 2, 1, 5000000000ull, &end0, out,
				       err, sizeof(err));
		cr_assert(up, "%s: the job did not start:\n%s", lanes[i][0],
			  err);
		cr_assert(end0,
			  "%s: node 0 still ran 5 s after node 1 was "
			  "killed:\n%s",
			  lanes[i][0], err);
		cr_assert(
		    strstr(err, "earth: node 0: error: ucx: lost node 1") ||
			strstr(err, "earth: node 0: error: ucx: a "
				    "one-sided write to node 1 failed"),
		    "%s: %s", lanes[i][0], err);
		cr_assert(strstr(err, "earthrun: the job failed: node 1 was "
				      "killed by signal 9"),
			  "%s: %s", lanes[i][0], err);
		cr_log_info("%s: node 0 ended %.2f s after the kill",
			    lanes[i][0], s);
	}
}
