/* SPDX-License-Identifier: MIT */
/*
 * ucx.h - private to the ucx transport: what its files say to each other
 * (opening and closing: ucx.c; the active-message path: ucx_am.c;
 * one-sided access: ucx_rma.c; the bootstrap: ucx_boot.c, earthrun's
 * rendezvous or PMIx), the transport's state they share (struct ucx_net),
 * and the active messages nodes send (tests/progs/ucxrogue.c sends them
 * raw). Details: docs/architecture.md, "Between nodes: ucx".
 */
#ifndef EARTH_UCX_H
#define EARTH_UCX_H

#ifndef EARTH_INTERNAL
#error "ucx.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <ucp/api/ucp.h>

#include "base/base.h"
#include "net/net.h"
#include "net/proof.h"

#define UCX_CARD_MAGIC 0x58435545u /* "EUCX" */
/* AM_RKEY's magic for the shared-memory region's key (ucx_dsm_expose). */
#define UCX_DSM_MAGIC 0x4d534445u /* "EDSM" */
#define UCX_ADDR_MAX 8192u	  /* bytes of a worker address */

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

/* ---- the transport's state (ucx.c, ucx_am.c, ucx_rma.c) ---- */

/* What an epoll event is: the wake eventfd, the worker, a peer's pidfd. */
#define EV_WAKE 0u
#define EV_WORKER 1u
#define EV_PEER 2u

/* A received message waiting in its peer's FIFO. */
struct ucx_msg {
	struct ucx_msg *next;
	struct wire_hdr h;
	void *data;    /* payload (NULL when placed or empty) */
	void *release; /* UCX's buffer, for ucp_am_data_release */
	void *own;     /* our copy, to free */
	void *req;     /* a rendezvous receive still in flight */
	bool pending;  /* its payload is still arriving */
	struct ucx_net *t;
};

/* What AM_RKEY's header says: the sender's exposed global segment
 * (magic UCX_CARD_MAGIC) or its copy of the shared-memory region
 * (UCX_DSM_MAGIC); the data is its packed rkey (none when len is 0). */
struct ucx_rkey_hdr {
	uint32_t magic, node;
	uint64_t base, len;
};

/* A one-sided read or write in flight, then done (its callback waits for
 * poll). */
struct ucx_rma {
	struct ucx_rma *next;
	struct ucx_net *t;
	net_rma_done_fn done;
	void *arg;
	uint32_t peer;
	bool write;
};

struct ucx_peer {
	ucp_ep_h ep;
	int pidfd; /* watched instead of UCX's peer failure handling */
	bool proven, bye, lost, exited;
	ucs_status_t lost_status;
	uint64_t lost_ns; /* when the error came */
	/* Messages from it and to it so far (any kind), what beat_check
	 * last saw of them, and when it last saw more from it (0: not
	 * looked yet). */
	uint64_t heard, heard_seen, heard_ns, said, said_seen;
	uint64_t out_bytes;
	struct ucx_msg *head, *tail;
	struct ucx_net *t;
	uint32_t id;
	/* Its global segment, readable one-sided (rkey unpacked once). */
	bool rkey_in, rma_lane;
	ucp_rkey_h rkey;
	uint64_t rbase, rlen;
	/* Its copy of the shared-memory region (ucx_dsm_expose): the home
	 * copies of its pages, read one-sided. */
	bool dsm_key_in;
	ucp_rkey_h dsm_rkey;
	uint64_t dsm_rbase, dsm_rlen;
};

struct ucx_net {
	struct net base;
	ucp_context_h ctx;
	ucp_worker_h worker;
	struct ucx_peer *peer;
	struct ucx_boot boot;
	struct ucx_card *mine;
	int epfd, wakefd, efd;
	bool ending;
	bool armable; /* the worker's event fd works */
	uint32_t proofs_in;
	uint64_t bye_deadline;
	uint32_t bye_peer;
	/* Link loss (ucx_am.c, beat_check): a peer heard from for no
	 * longer than stall_ns (EARTH_PEER_STALL_S) is named; every beat_ns
	 * a link quiet since the last look carries a W_BEAT. */
	uint64_t stall_ns, beat_ns, beat_next;
	uint64_t connect_deadline; /* EARTH_CONNECT_TIMEOUT from the open */
	bool open_failed;
	unsigned beat_polls;
	unsigned rr; /* next peer to deliver from */
	uint32_t ready_msgs;
	uint32_t rejected; /* messages dropped before or without a proof */
	uint32_t pidfds;   /* peers watched through a pidfd */
	unsigned polls;
	_Atomic uint32_t su_word;
	uint64_t recv_direct, recv_copied, sent_ref, sent_copied;
	struct ucx_msg *free_msgs;
	char lanes[512];
	/* One-sided reads: this node's segment registered once, the peers'
	 * keys received, the reads done whose callbacks poll runs. */
	ucp_mem_h memh;
	bool seg_by_ucx; /* memh allocated by UCX (map_segment) */
	struct ucx_rkey_hdr rkey_hdr;
	uint32_t rkeys_in;
	/* The shared-memory region registered (ucx_dsm_expose), the peers'
	 * keys received. */
	ucp_mem_h dsm_memh;
	struct ucx_rkey_hdr dsm_hdr;
	uint32_t dsm_keys_in;
	struct ucx_rma *done_head, *done_tail;
	struct ucx_rma *free_rma; /* records of finished reads, reused */
	uint32_t rma_out;	  /* reads and writes UCX has not finished */
	uint64_t rma_reads;
};

static inline uint64_t ucx_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The proof node `from` gives node `to`. */
static inline void ucx_proof_of(const struct ucx_net *t, uint32_t from,
				uint32_t to, uint8_t mac[NET_MAC_LEN])
{
	ucx_proof_mac(&t->boot, t->base.nodes, t->mine->gmem_seg, from, to,
		      mac);
}

/* A one-sided access's record back to the free list. */
static inline void ucx_rma_free(struct ucx_net *t, struct ucx_rma *r)
{
	r->next = t->free_rma;
	t->free_rma = r;
}

/* ---- opening and closing (ucx.c) ---- */

/* What went wrong, for net_ucx_open's caller: what failed and UCX's
 * word for it (a static buffer). */
const char *ucx_fail(const char *what, ucs_status_t st) EARTH_HIDDEN;
/* Progresses until every request in req (n of them) is done or the
 * deadline passed; clears the finished ones. */
void ucx_wait_reqs(struct ucx_net *t, void **req, uint32_t n,
		   uint64_t deadline) EARTH_HIDDEN;

/* ---- the active-message path (ucx_am.c) ---- */

/* The handlers of AM_MSG, AM_PROOF and AM_BYE (arg: the transport). */
ucs_status_t ucx_on_msg(void *arg, const void *header, size_t hlen, void *data,
			size_t len,
			const ucp_am_recv_param_t *param) EARTH_HIDDEN;
ucs_status_t ucx_on_proof(void *arg, const void *header, size_t hlen,
			  void *data, size_t len,
			  const ucp_am_recv_param_t *param) EARTH_HIDDEN;
ucs_status_t ucx_on_bye(void *arg, const void *header, size_t hlen, void *data,
			size_t len,
			const ucp_am_recv_param_t *param) EARTH_HIDDEN;
/* Which peer an active message came from: the node it claims (claim),
 * when the reply endpoint UCX gives is ours to that node; else reports
 * and returns UINT32_MAX. */
uint32_t ucx_sender(struct ucx_net *t, uint32_t claim,
		    const ucp_am_recv_param_t *param,
		    const char *what) EARTH_HIDDEN;
/* An endpoint's error handler (arg: its struct ucx_peer). */
void ucx_on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st) EARTH_HIDDEN;
/* A peer lost without a BYE while the job runs: the node stops. */
void ucx_fault_check(struct ucx_net *t) EARTH_HIDDEN;
/* A received message done with: its buffers released, m reused. */
void ucx_msg_free(struct ucx_net *t, struct ucx_msg *m) EARTH_HIDDEN;
/* The net_ops of the message path. */
int ucx_send(struct net *nt, uint32_t peer, const struct wire_hdr *h,
	     const void *payload) EARTH_HIDDEN;
int ucx_send_ref(struct net *nt, uint32_t peer, const struct wire_hdr *h,
		 const void *payload) EARTH_HIDDEN;
void ucx_flush(struct net *nt) EARTH_HIDDEN;
unsigned ucx_poll(struct net *nt, void *ctx, net_deliver_fn deliver,
		  unsigned budget) EARTH_HIDDEN;
bool ucx_pending(struct net *nt) EARTH_HIDDEN;
_Atomic uint32_t *ucx_su_word(struct net *nt) EARTH_HIDDEN;
void ucx_wait(struct net *nt, _Atomic uint32_t *word,
	      uint32_t expected) EARTH_HIDDEN;
void ucx_wake(struct net *nt) EARTH_HIDDEN;
void ucx_blk_bytes(struct net *nt, struct net_blk_bytes *b) EARTH_HIDDEN;

/* ---- one-sided access (ucx_rma.c) ---- */

/* The handler of AM_RKEY (arg: the transport). */
ucs_status_t ucx_on_rkey(void *arg, const void *header, size_t hlen, void *data,
			 size_t len,
			 const ucp_am_recv_param_t *param) EARTH_HIDDEN;
/* The net_ops of one-sided access. */
const char *ucx_rma_expose(struct net *nt, void *base, uint64_t len,
			   bool *taken) EARTH_HIDDEN;
int ucx_rma_get(struct net *nt, uint32_t peer, void *dst, uint64_t raddr,
		uint64_t len, net_rma_done_fn done, void *arg) EARTH_HIDDEN;
int ucx_rma_put(struct net *nt, uint32_t peer, const void *src, uint64_t raddr,
		uint64_t len, net_rma_done_fn done, void *arg) EARTH_HIDDEN;
void *ucx_rma_ptr(struct net *nt, uint32_t peer) EARTH_HIDDEN;
const char *ucx_dsm_expose(struct net *nt, void *base,
			   uint64_t len) EARTH_HIDDEN;
int ucx_dsm_get(struct net *nt, uint32_t peer, void *dst, uint64_t off,
		uint64_t len, net_rma_done_fn done, void *arg) EARTH_HIDDEN;

#endif
