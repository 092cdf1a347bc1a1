/* SPDX-License-Identifier: MIT */
/*
 * ucx.h - private to the ucx transport: what its data path (ucx.c) and
 * its bootstrap (ucx_boot.c: earthrun's rendezvous or PMIx) say to each
 * other, and the active messages nodes send (tests/progs/ucxrogue.c sends
 * them raw). Details: docs/architecture.md, "Between nodes: ucx".
 */
#ifndef EARTH_UCX_H
#define EARTH_UCX_H

#ifndef EARTH_INTERNAL
#error "ucx.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/proof.h"

#define UCX_CARD_MAGIC 0x58435545u /* "EUCX" */
#define UCX_ADDR_MAX 8192u	   /* bytes of a worker address */

/* What each node publishes to the others before they connect: its
 * worker's address and a fresh nonce its peers' proofs cover. */
struct ucx_card {
	uint32_t magic, node, nodes, addr_len;
	uint64_t gmem_seg; /* EARTH_GMEM_MB: the same on every node */
	uint8_t nonce[NET_NONCE_LEN];
	/* Where the node runs: its pid and its host's boot id with its pid
	 * namespace; a peer with the same host may watch it through a
	 * pidfd (lanes without UCX peer failure detection: shared memory). */
	int32_t pid, pad;
	char host[48];
	uint8_t addr[]; /* addr_len bytes */
};

/* How the nodes met: the job secret the proofs use, every node's card. */
struct ucx_boot {
	uint8_t secret[NET_SECRET_MAX];
	uint32_t secret_len;
	bool pmix; /* PMIx_Init succeeded: PMIx_Finalize at the end */
	struct ucx_card **card; /* card[p] for every node, malloc'd */
};

/* The active messages between nodes (UCP AM ids). */
enum { AM_MSG = 1, AM_PROOF, AM_BYE, AM_RKEY };

/* AM_PROOF's header, a node's first active message to each peer (the
 * data is empty); AM_BYE's, its last, with no mac. */
struct ucx_proof {
	uint32_t magic, node, nodes, pad;
	uint8_t mac[NET_MAC_LEN];
};

/* The proof node `from` gives node `to` in a job of `nodes` nodes with
 * gmem_seg bytes of global memory per node, after the exchange filled b:
 * an HMAC keyed with the job secret over both numbers and the nonces on
 * both cards. */
void ucx_proof_mac(const struct ucx_boot *b, uint32_t nodes, uint64_t gmem_seg,
		   uint32_t from, uint32_t to, uint8_t mac[NET_MAC_LEN]);

/* Whether a PMIx launcher started this process (PMIX_RANK and
 * PMIX_NAMESPACE in the environment). */
bool ucx_boot_under_pmix(void);

/* Publishes mine (card_len bytes) and collects every node's card into b:
 * through PMIx when started by a PMIx launcher (node 0 makes the job
 * secret unless EARTH_JOB_SECRET is set on every node), else through the tcp
 * rendezvous (earthrun --transport ucx: EARTH_RENDEZVOUS and
 * EARTH_JOB_SECRET), whose connections prove both ends before a card
 * travels. Blocking, earth_run thread. NULL, or what went wrong. */
const char *ucx_boot_exchange(uint32_t self, uint32_t nodes,
			      const struct ucx_card *mine, size_t card_len,
			      struct ucx_boot *b);

/* Frees the cards, forgets the secret, finalizes PMIx if it started. */
void ucx_boot_fini(struct ucx_boot *b, uint32_t nodes);

#endif
