/* SPDX-License-Identifier: MIT */
/*
 * remote_ops.h - what the remote_ops driver (driver.c) and its in-job
 * program (job.c) share. The benchmark runs itself under earthrun; the
 * environment says which job a node belongs to:
 *
 *   REMOTE_OPS_PART=pair   the figures compared with a floor, one
 *                          "pair NAME VALUE" line each (lib/pairs.h):
 *                          get_remote_rtt.<tr> (ns), blkmov_bw.<tr> (MB/s),
 *                          over shm also get_remote_rtt_su.shm,
 *                          blkmov_bw_su.shm and, with the direct path,
 *                          memcpy_bw
 *   REMOTE_OPS_PART=table  Table 1 and the barrier: METRIC lines, echoed
 *   REMOTE_OPS_PART=ucx    over ucx: get_remote_rtt, get_remote_rtt_su,
 *                          blkmov_bw (from node 1's global memory),
 *                          blkmov_put_bw (into it), invoke_rtt and barrier
 *                          .<ucx_shm|ucx_tcp>
 *                          (by UCX_TLS), METRIC lines, echoed
 *   REMOTE_OPS_APP=fib|nqueens  a TOKEN balancing job: "balance-app ..."
 *                          from node 0, "balance-node ..." from each node
 */
#ifndef EARTH_REMOTE_OPS_H
#define EARTH_REMOTE_OPS_H

/* Bytes per block move (and per memcpy of the same bytes). */
#define REMOTE_OPS_BLK (8u << 20)

/* A node of a REMOTE_OPS_PART job; node 0 prints the figures. */
int remote_ops_job_node(int argc, char **argv);
/* A node of a balancing job: the program, then its own figures. */
int remote_ops_app_node(int argc, char **argv);

#endif /* EARTH_REMOTE_OPS_H */
