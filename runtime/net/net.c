/* SPDX-License-Identifier: MIT */
/*
 * net.c - choosing the transport between nodes (EARTH_TRANSPORT).
 */
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "net/emu.h"
#include "net/shm_layout.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct net *net_open(uint32_t self, uint32_t nodes, const char **err)
{
	const char *tr = getenv("EARTH_TRANSPORT");
	if (!tr || !*tr)
		tr = getenv("EARTH_SHM_FD")       ? "shm"
		     : getenv("EARTH_RENDEZVOUS") ? "tcp"
						  : "shm";
	/* EARTH_NET_LATENCY_NS / EARTH_NET_BW_MBPS wrap either (emu.c). */
	if (!strcmp(tr, "shm"))
		return net_emu_from_env(net_shm_open(self, nodes, err), err);
	if (!strcmp(tr, "tcp"))
		return net_emu_from_env(net_tcp_open(self, nodes, err), err);
	*err = "EARTH_TRANSPORT must be shm or tcp";
	return NULL;
}

const char *net_gmem_seg(uint64_t *seg)
{
	const char *v = getenv("EARTH_GMEM_MB");
	*seg = (uint64_t)GMEM_DEFAULT_MB << 20;
	if (!v)
		return NULL;
	char *end;
	errno = 0;
	unsigned long long mb = strtoull(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || mb > (GMEM_SPAN >> 20))
		return "EARTH_GMEM_MB must be the MiB of global memory per node "
		       "(0 to 262144)";
	*seg = (uint64_t)mb << 20;
	return NULL;
}
