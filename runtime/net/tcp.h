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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "base/base.h"
#include "net/proof.h"

struct net;

#define TCP_HELLO_MAGIC 0x48545245u   /* "ERTH" */
#define TCP_HELLO_VERSION 3u	      /* 3: proofs, no secret on the wire */
#define TCP_SECRET_MIN NET_SECRET_MIN /* bytes of the job secret */
#define TCP_SECRET_MAX NET_SECRET_MAX
#define TCP_NONCE_LEN NET_NONCE_LEN
#define TCP_MAC_LEN NET_MAC_LEN /* HMAC-SHA-256 */

/* Opening a connection: the connecting node sends JOIN (to node 0) or MESH
 * (to a node below it) with its nonce; the listening node answers ACCEPT
 * with its nonce and its proof (TCP_LABEL_LISTENER); the connecting node
 * checks it, then sends PROOF (TCP_LABEL_JOINER). Node 0 later sends
 * WELCOME (TCP_LABEL_WELCOME, over the address table too) and the table.
 */
enum {
	TCP_HELLO_JOIN = 1,
	TCP_HELLO_WELCOME,
	TCP_HELLO_MESH,
	TCP_HELLO_ACCEPT,
	TCP_HELLO_PROOF
};

/* Every message of the rendezvous (host byte order: one job runs on one
 * architecture). WELCOME is followed by `nodes` tcp_addr entries. The job
 * secret never travels: it keys the proofs in mac. */
struct tcp_hello {
	uint32_t magic;
	uint16_t version, kind;
	uint32_t node, nodes;
	uint16_t port; /* JOIN: the sender's mesh listener */
	uint16_t pad;
	uint32_t pad2;
	uint64_t gmem_seg; /* bytes of global memory per node */
	uint8_t nonce[TCP_NONCE_LEN];
	uint8_t mac[TCP_MAC_LEN]; /* ACCEPT, PROOF, WELCOME: the proof */
};

#define TCP_LABEL_LISTENER "earth tcp v3 listener"
#define TCP_LABEL_JOINER "earth tcp v3 joiner"
#define TCP_LABEL_WELCOME "earth tcp v3 welcome"

/* A proof: HMAC-SHA-256, keyed with the job secret (key, key_len), over
 * label (with its NUL), the opening hello (JOIN or MESH) and the ACCEPT
 * (each with its mac taken as zeros), then extra_len bytes of extra. Both
 * nonces and every job field are in the two hellos. */
void tcp_mac(uint8_t mac[TCP_MAC_LEN], const uint8_t *key, size_t key_len,
	     const char *label, const struct tcp_hello *open,
	     const struct tcp_hello *accept, const void *extra,
	     size_t extra_len);

struct tcp_addr {
	uint16_t family, port; /* port in network order */
	uint8_t addr[16];
};

/* The rendezvous alone (blocking, earth_run thread): connects node self
 * to every other node of the job, each connection proved both ways;
 * fd[p] for every peer p (fd[self] is -1), the caller's to own. NULL, or
 * what went wrong (every socket closed). transport names the transport
 * asking (for the messages): the ucx transport meets its peers this way
 * under earthrun, then exchanges its worker addresses over the sockets. */
const char *tcp_rendezvous_fds(uint32_t self, uint32_t nodes, int *fd,
			       const char *transport);

/* The nodes k in [0, nodes) for which missing(ctx, k) holds, written as
 * "node 2" or "nodes 2, 3 and 5" (the first 8, then "and N others") into
 * out (len bytes), for the messages of a node still waiting for others (the
 * rendezvous, and ucx.c waiting for the proofs). Returns how many there
 * are. */
uint32_t tcp_name_nodes(char *out, size_t len, uint32_t nodes,
			bool (*missing)(const void *ctx, uint32_t k),
			const void *ctx) EARTH_HIDDEN;

/* On a rendezvous socket (blocking): reads exactly len bytes within
 * timeout_ms, writes all of buf; 0, or -1. */
int tcp_read_all(int fd, void *buf, size_t len, int timeout_ms) EARTH_HIDDEN;
int tcp_write_all(int fd, const void *buf, size_t len) EARTH_HIDDEN;

/* ---- one connection's exchange (tcp_rendezvous.c; also called by
 * tests/fuzz/fuzz_hello.c) ---- */

/* A rendezvous under way: this node, the job, the secret the proofs are
 * keyed with, the one deadline (CLOCK_MONOTONIC, tcp_mono_ns), and what
 * went wrong. */
struct rdv {
	uint32_t self, nodes;
	uint8_t secret[TCP_SECRET_MAX];
	uint32_t secret_len;
	uint64_t gmem_seg; /* EARTH_GMEM_MB: the same on every node */
	uint64_t deadline_ns;
	const char *transport; /* "tcp" or "ucx" (NULL: tcp), for messages */
	char err[512];
};

static inline uint64_t tcp_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A connection accepted by a listener, until its proof is checked. */
struct pend {
	int fd;
	int stage; /* 0: reading its JOIN/MESH, 1: its PROOF */
	size_t got;
	uint64_t t0;
	struct tcp_hello open, acc, in; /* in: the message being read */
	struct sockaddr_storage ss;
	char who[80];
};

/* What the listener keeps of a connection it took (tcp_rendezvous.c). */
struct transcript;

/* A hello of kind from this node (r), with port and a fresh nonce, no
 * mac. */
void tcp_make_hello(const struct rdv *r, struct tcp_hello *h, int kind,
		    uint16_t port) EARTH_HIDDEN;
/* Reads what p's connection has; on a whole message, the next step of the
 * exchange. Returns 1 when p proved itself as a node in [lo, hi) (taken
 * into fd, tab, tr), 0 otherwise (p->fd < 0 when dropped). */
int tcp_pend_step(struct rdv *r, struct pend *p, int *fd, int kind, uint32_t lo,
		  uint32_t hi, struct tcp_addr *tab,
		  struct transcript *tr) EARTH_HIDDEN;
/* The connecting side of the exchange on c, to node peer: our hello of
 * kind (JOIN or MESH, our port), the peer's ACCEPT, whose proof we check
 * before anything else, then our PROOF. open and acc: the two hellos. 0,
 * or -1 with r->err set. */
int tcp_prove_to(struct rdv *r, int c, uint32_t peer, int kind, uint16_t port,
		 struct tcp_hello *open, struct tcp_hello *acc) EARTH_HIDDEN;

/* ---- the data path (tcp.c), for the rendezvous ---- */

/* The transport of node self of nodes, no connection yet (net_tcp_open,
 * before the rendezvous); NULL when out of memory. Until tcp_data_start,
 * only its ops->fini may be called. */
struct net *tcp_data_new(uint32_t self, uint32_t nodes);
/* Hands it the connected sockets: fd[p] for every peer p (fd[self] is
 * -1), which it owns from then on. */
void tcp_data_start(struct net *nt, const int *fd);

#endif
