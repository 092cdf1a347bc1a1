/* SPDX-License-Identifier: MIT */
/*
 * net.c - choosing the transport between nodes (EARTH_TRANSPORT).
 */
#define EARTH_INTERNAL 1
#include "net.h"
#include "emu.h"

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
