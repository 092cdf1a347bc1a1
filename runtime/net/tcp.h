/* SPDX-License-Identifier: MIT */
/*
 * tcp.h - private to the tcp transport: the hello that opens every
 * connection of the rendezvous and the address table node 0 sends
 * (tcp_rendezvous.c; the tests write hellos by hand with these), and what
 * the rendezvous and the data path (tcp.c) say to each other.
 * Details: docs/architecture.md, "Between nodes: tcp".
 */
#ifndef EARTH_TCP_H
#define EARTH_TCP_H

#ifndef EARTH_INTERNAL
#error "tcp.h is internal to the EARTH runtime"
#endif

#include <stdint.h>

struct net;

#define TCP_HELLO_MAGIC 0x48545245u /* "ERTH" */
#define TCP_HELLO_VERSION 2u
#define TCP_SECRET_MIN 16 /* bytes of the job secret */
#define TCP_SECRET_MAX 64

enum { TCP_HELLO_JOIN = 1, TCP_HELLO_WELCOME, TCP_HELLO_MESH };

/* The first bytes on every connection (host byte order: one job runs on
 * one architecture). WELCOME is followed by `nodes` tcp_addr entries. */
struct tcp_hello {
	uint32_t magic;
	uint16_t version, kind;
	uint32_t node, nodes;
	uint32_t secret_len;
	uint8_t secret[TCP_SECRET_MAX];
	uint16_t port; /* JOIN: the sender's mesh listener */
	uint16_t pad;
	uint64_t gmem_seg; /* bytes of global memory per node */
};

struct tcp_addr {
	uint16_t family, port; /* port in network order */
	uint8_t addr[16];
};

/* ---- the data path (tcp.c), for the rendezvous ---- */

/* The transport of node self of nodes, no connection yet (net_tcp_open,
 * before the rendezvous); NULL when out of memory. Until tcp_data_start,
 * only its ops->fini may be called. */
struct net *tcp_data_new(uint32_t self, uint32_t nodes);
/* Hands it the connected sockets: fd[p] for every peer p (fd[self] is
 * -1), which it owns from then on. */
void tcp_data_start(struct net *nt, const int *fd);

#endif
