/* SPDX-License-Identifier: MIT */
/*
 * emu.h - an emulated network in front of any transport: every message
 * leaving this node waits for a per-peer link of limited bandwidth, then
 * for an added one-way latency, before the real transport sends it
 * (EARTH_NET_LATENCY_NS, EARTH_NET_BW_MBPS). Never blocks the SU, keeps
 * the order per peer, loses nothing.
 */
#ifndef EARTH_NET_EMU_H
#define EARTH_NET_EMU_H

#ifndef EARTH_INTERNAL
#error "emu.h is internal to the EARTH runtime"
#endif

#include <stdint.h>

#include "net/net.h"

/* Largest accepted settings: 10 s of latency, 10^7 MB/s. */
#define EMU_MAX_LATENCY_NS 10000000000ull
#define EMU_MAX_BW_MBPS 10000000.0

/*
 * Reads EARTH_NET_LATENCY_NS (whole ns, one-way, added per message) and
 * EARTH_NET_BW_MBPS (MB/s = 10^6 bytes/s of header + payload per peer
 * link; 0 or unset = unlimited). Returns 0 with *lat_ns and *bw_mbps set
 * (both 0: no emulation), or -1 with *err naming the variable, the value
 * and what is accepted. Any thread.
 */
int net_emu_config(uint64_t *lat_ns, double *bw_mbps, const char **err);

/*
 * Wraps `inner` in the emulation. Returns the wrapper, which owns inner
 * (its fini ends inner), or NULL when out of memory (inner untouched).
 * Same threads as the transport it wraps (net.h).
 */
struct net *net_emu_wrap(struct net *inner, uint64_t lat_ns, double bw_mbps);

/*
 * net_open's hook: inner unchanged when no emulation is asked for, the
 * wrapper when it is, NULL with *err set (inner ended) when a setting is
 * bad or memory is short. The earth_run thread, like net_open.
 */
struct net *net_emu_from_env(struct net *inner, const char **err);

#endif /* EARTH_NET_EMU_H */
