/* SPDX-License-Identifier: MIT */
/*
 * net.c - choosing the transport between nodes (EARTH_TRANSPORT).
 */
#define EARTH_INTERNAL 1
#include "net.h"

#include <stdlib.h>
#include <string.h>

struct net *net_open(uint32_t self, uint32_t nodes, const char **err)
{
	const char *tr = getenv("EARTH_TRANSPORT");
	if (!tr || !*tr)
		tr = getenv("EARTH_SHM_FD")       ? "shm"
		     : getenv("EARTH_RENDEZVOUS") ? "tcp"
						  : "shm";
	if (!strcmp(tr, "shm"))
		return net_shm_open(self, nodes, err);
	if (!strcmp(tr, "tcp"))
		return net_tcp_open(self, nodes, err);
	*err = "EARTH_TRANSPORT must be shm or tcp";
	return NULL;
}
