/* SPDX-License-Identifier: MIT */
/*
 * net.c - choosing the transport between nodes (EARTH_TRANSPORT).
 */
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "net/emu.h"
#include "base/settings.h"
#include "net/shm_layout.h"
#include "net/ucx.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct net *net_open(uint32_t self, uint32_t nodes, const char **err)
{
	/* EARTH_TRANSPORT "shm|tcp|ucx", validated when the node started. */
	const char *tr = earth_setting_str(EARTH_SET_TRANSPORT);
	if (!tr)
		tr = earth_setting_given(EARTH_SET_SHM_FD)	 ? "shm"
		     : earth_setting_given(EARTH_SET_RENDEZVOUS) ? "tcp"
		     : ucx_boot_under_pmix()			 ? "ucx"
								 : "shm";
	/* EARTH_NET_LATENCY_NS / EARTH_NET_BW_MBPS wrap either (emu.c). */
	if (!strcmp(tr, "tcp"))
		return net_emu_from_env(net_tcp_open(self, nodes, err), err);
	if (!strcmp(tr, "ucx"))
		return net_emu_from_env(net_ucx_open(self, nodes, err), err);
	return net_emu_from_env(net_shm_open(self, nodes, err), err);
}

const char *net_gmem_seg(uint64_t *seg)
{
	/* EARTH_GMEM_MB: 0 to GMEM_SPAN in MiB, default GMEM_DEFAULT_MB,
	 * validated when the node started. */
	_Static_assert(GMEM_SPAN >> 20 == 262144, "EARTH_GMEM_MB's range");
	_Static_assert(GMEM_DEFAULT_MB == 64, "EARTH_GMEM_MB's default");
	*seg = earth_setting_u64(EARTH_SET_GMEM_MB) * GMEM_UNIT;
	return NULL;
}
