/* SPDX-License-Identifier: MIT */
/*
 * earthrun - starts an EARTH job of N nodes on this host.
 *
 *   earthrun -n N [--prefix] [--ring-kb K] [--transport shm|tcp|ucx]
 *            [--gmem-mb M] [--remote su|direct] [--] program [args...]
 *
 * Creates the job's shared mapping (same-host transport: a byte ring per
 * pair of nodes; global memory: one segment of M MiB per node, every node
 * maps them all), starts N processes with EARTH_NODE, EARTH_NODES,
 * EARTH_LOCAL_NODE(S) and EARTH_SHM_FD set (--transport tcp: instead
 * EARTH_TRANSPORT=tcp, EARTH_RENDEZVOUS at a loopback port whose listener
 * node 0 inherits (EARTH_RENDEZVOUS_FD) and a random EARTH_JOB_SECRET from
 * /dev/urandom; --transport ucx: the same with EARTH_TRANSPORT=ucx, the
 * nodes exchanging their UCX worker addresses over that rendezvous),
 * EARTH_GMEM_MB and, if
 * given, EARTH_REMOTE, optionally prefixes their
 * output lines with "[k] ", and waits. Exits with node 0's status. If a
 * node dies (signal or non-zero exit before the job ended) the others are
 * told which one (in the mapping) and stopped with SIGTERM, then SIGKILL
 * after 2 s (tcp: the nodes notice a dead peer themselves; SIGTERM follows
 * only after 3 s); earthrun exits non-zero naming the node. Nodes run without
 * address-space randomisation (EARTH_ASLR=1 keeps it), so a static
 * variable has the same address on every node of the job.
 *
 * The steps live in earthrun_{parse,map,spawn,watch}.c (earthrun.h).
 */
#include "earthrun.h"

#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct er_opts o;
	struct er_job job;
	int rc = er_parse(argc, argv, &o);
	if (rc)
		return rc;
	if ((rc = er_map_job(&o, &job)))
		return rc;
	struct er_child *ch = calloc((size_t)o.nodes, sizeof(*ch));
	if (!ch)
		return 1;
	er_watch_signals();
	if ((rc = er_map_env(&o, &job)) || (rc = er_spawn(&o, &job, ch)))
		return rc;
	if (job.rdv_fd >= 0) /* node 0 has it now */
		close(job.rdv_fd);
	rc = er_watch(&o, &job, ch);
	free(ch);
	return rc;
}
