/* SPDX-License-Identifier: MIT */
/*
 * job.c - which node this process is: EARTH_NODE/EARTH_NODES (set by
 * earthrun), else the standard launcher variables (Slurm srun, Open MPI or
 * MPICH/Hydra mpirun); a process started alone is node 0 of 1.
 */
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "base/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* 0: unset, 1: *out set, -1: malformed. EARTH_* from the settings table,
 * where a malformed value was refused when the node started. */
static int get_u32(const char *name, uint32_t *out)
{
	static const enum earth_set ours[] = {EARTH_SET_NODE, EARTH_SET_NODES,
					      EARTH_SET_LOCAL_NODE,
					      EARTH_SET_LOCAL_NODES};
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(name, earth_settings[ours[i]].env)) {
			if (!earth_setting_given(ours[i]))
				return 0;
			*out = (uint32_t)earth_setting_u64(ours[i]);
			return 1;
		}
	const char *v = getenv(name); /* the launchers' own variables */
	if (!v)
		return 0;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (!*v || *end || errno || x > EARTH_MAX_NODES || v[0] == '-')
		return -1;
	*out = (uint32_t)x;
	return 1;
}

static const struct {
	const char *rank, *size, *lrank, *lsize;
} sources[] = {
    {"EARTH_NODE", "EARTH_NODES", "EARTH_LOCAL_NODE", "EARTH_LOCAL_NODES"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

const char *earth_job_from_env(struct earth_node *n)
{
	n->id = 0;
	n->num_nodes = 1;
	n->local_rank = 0;
	n->local_size = 1;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		uint32_t rank, size;
		int r = get_u32(sources[i].rank, &rank);
		int s = get_u32(sources[i].size, &size);
		if (r == 0 && s == 0)
			continue;
		if (r < 0 || s < 0 || r == 0 || s == 0 || size < 1 ||
		    rank >= size)
			return "the node number/count variables are malformed "
			       "(want 0 <= rank < size <= 65535)";
		n->id = rank;
		n->num_nodes = size;
		uint32_t lr = rank, ls = size;
		if (get_u32(sources[i].lrank, &lr) < 0 ||
		    get_u32(sources[i].lsize, &ls) < 0 || ls < 1 || lr >= ls)
			return "the local rank variables are malformed";
		n->local_rank = lr;
		n->local_size = ls;
		return NULL;
	}
	return NULL;
}
