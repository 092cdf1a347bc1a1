/* SPDX-License-Identifier: MIT */
/*
 * ucx_boot.c - how the nodes of a ucx job learn each other's worker
 * addresses (ucx.h), blocking, on the earth_run thread before the SU
 * starts, and the proofs keyed with the secret and the nonces they
 * exchanged.
 *
 * Under a PMIx launcher (mpirun, srun --mpi=pmix): PMIx_Init, each node
 * PMIx_Put's its card, node 0 also a job secret it made (unless
 * EARTH_JOB_SECRET is given: then every node uses its own, and the proofs
 * show whether they agree), PMIx_Commit, PMIx_Fence collecting the data,
 * PMIx_Get of every other card. PMIx is the launcher's channel to
 * its own processes: it is trusted with the secret (docs/architecture.md,
 * "Threat model").
 * Under earthrun (--transport ucx): the tcp rendezvous connects every pair
 * of nodes, each connection proved both ways with EARTH_JOB_SECRET; each
 * node writes its card to every other over them, reads theirs, and closes
 * the sockets.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/ucx.h"
#include "base/settings.h"
#include "net/net.h"
#include "net/tcp.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CARD_KEY "earth.ucx.card"
#define SECRET_KEY "earth.ucx.secret"
#define CARD_WAIT_MS 10000 /* for a peer's card once connected */
#define PROOF_LABEL "earth ucx v1 proof"

static char errbuf[400];

bool ucx_boot_under_pmix(void)
{
	return getenv("PMIX_RANK") && getenv("PMIX_NAMESPACE");
}

/* Checks node p's card of len bytes (untrusted until then). */
static const char *card_check(const struct ucx_card *c, size_t len, uint32_t p,
			      uint32_t nodes, uint64_t gmem_seg)
{
	if (len < sizeof(*c) || c->magic != UCX_CARD_MAGIC)
		return "not an EARTH ucx card";
	if (c->addr_len > UCX_ADDR_MAX || len != sizeof(*c) + c->addr_len)
		return "malformed (length)";
	if (c->node != p || c->nodes != nodes)
		return "node number or count differs from this job's";
	if (c->gmem_seg != gmem_seg)
		return "global memory per node (EARTH_GMEM_MB) differs from "
		       "this node's: give every node the same";
	return NULL;
}

/* earthrun: cards over the proved connections of the tcp rendezvous. */
static const char *by_rendezvous(uint32_t self, uint32_t nodes,
				 const struct ucx_card *mine, size_t card_len,
				 struct ucx_boot *b)
{
	const char *e = net_secret_parse(b->secret, &b->secret_len, "ucx");
	if (e)
		return e;
	int *fd = malloc(nodes * sizeof(*fd));
	if (!fd)
		return "out of memory";
	e = tcp_rendezvous_fds(self, nodes, fd, "ucx");
	if (e) {
		free(fd);
		return e;
	}
	uint32_t len = (uint32_t)card_len;
	for (uint32_t p = 0; p < nodes && !e; p++)
		if (p != self && (tcp_write_all(fd[p], &len, sizeof(len)) ||
				  tcp_write_all(fd[p], mine, card_len))) {
			snprintf(errbuf, sizeof(errbuf),
				 "ucx bootstrap: node %u closed its connection "
				 "before taking our worker address",
				 p);
			e = errbuf;
		}
	for (uint32_t p = 0; p < nodes && !e; p++) {
		if (p == self)
			continue;
		uint32_t plen = 0;
		struct ucx_card *c = NULL;
		const char *why = NULL;
		if (tcp_read_all(fd[p], &plen, sizeof(plen), CARD_WAIT_MS))
			why = "sent no worker address";
		else if (plen < sizeof(*c) || plen > sizeof(*c) + UCX_ADDR_MAX)
			why = "sent a worker address of a bad length";
		else if (!(c = malloc(plen)))
			why = "out of memory";
		else if (tcp_read_all(fd[p], c, plen, CARD_WAIT_MS))
			why = "sent no worker address";
		else
			why = card_check(c, plen, p, nodes, mine->gmem_seg);
		if (why) {
			free(c);
			snprintf(errbuf, sizeof(errbuf),
				 "ucx bootstrap: node %u %s", p, why);
			e = errbuf;
			break;
		}
		b->card[p] = c;
	}
	for (uint32_t p = 0; p < nodes; p++)
		if (fd[p] >= 0)
			close(fd[p]);
	free(fd);
	return e;
}

static const char *pmix_fail(const char *what, pmix_status_t rc)
{
	snprintf(errbuf, sizeof(errbuf), "ucx bootstrap: %s: %s", what,
		 PMIx_Error_string(rc));
	return errbuf;
}

/* Node 0's job secret for PMIx when EARTH_JOB_SECRET is not given:
 * fresh random bytes. */
static void lead_secret(struct ucx_boot *b)
{
	b->secret_len = 32;
	net_random(b->secret, b->secret_len);
}

static const char *put_bytes(const char *key, const void *p, size_t len)
{
	pmix_value_t v;
	memset(&v, 0, sizeof(v));
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)p;
	v.data.bo.size = len;
	pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	return rc == PMIX_SUCCESS ? NULL : pmix_fail("PMIx_Put", rc);
}

/* Node p's value for key, a byte object of at most max bytes, malloc'd
 * into *out (its length in *len). */
static const char *get_bytes(const char *nspace, uint32_t p, const char *key,
			     size_t max, void **out, size_t *len)
{
	pmix_proc_t who;
	PMIX_LOAD_PROCID(&who, nspace, p);
	pmix_value_t *v = NULL;
	pmix_status_t rc = PMIx_Get(&who, key, NULL, 0, &v);
	if (rc != PMIX_SUCCESS)
		return pmix_fail("PMIx_Get of a peer's worker address", rc);
	const char *e = NULL;
	if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size > max)
		e = "ucx bootstrap: a peer's PMIx value has a bad type or size";
	else if (!(*out = malloc(v->data.bo.size ? v->data.bo.size : 1)))
		e = "out of memory";
	else {
		memcpy(*out, v->data.bo.bytes, v->data.bo.size);
		*len = v->data.bo.size;
	}
	PMIX_VALUE_RELEASE(v);
	return e;
}

static const char *by_pmix(uint32_t self, uint32_t nodes,
			   const struct ucx_card *mine, size_t card_len,
			   struct ucx_boot *b)
{
	pmix_proc_t me;
	pmix_status_t rc = PMIx_Init(&me, NULL, 0);
	if (rc != PMIX_SUCCESS)
		return pmix_fail("PMIx_Init (started by a PMIx launcher?)", rc);
	b->pmix = true;
	pmix_proc_t all;
	PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
	pmix_value_t *v = NULL;
	uint32_t size = 0;
	if (PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
		if (v->type == PMIX_UINT32)
			size = v->data.uint32;
		PMIX_VALUE_RELEASE(v);
	}
	if (me.rank != self || size != nodes) {
		snprintf(errbuf, sizeof(errbuf),
			 "ucx bootstrap: PMIx says this is rank %u of %u, the "
			 "launcher's variables node %u of %u",
			 (unsigned)me.rank, size, self, nodes);
		return errbuf;
	}
	/* EARTH_JOB_SECRET given: every node uses its own (they must
	 * agree: the proofs check it); else node 0 makes one for all. */
	bool given = earth_setting_given(EARTH_SET_JOB_SECRET);
	const char *e =
	    given ? net_secret_parse(b->secret, &b->secret_len, "ucx") : NULL;
	if (!given && self == 0) {
		lead_secret(b);
		e = put_bytes(SECRET_KEY, b->secret, b->secret_len);
	}
	if (!e)
		e = put_bytes(CARD_KEY, mine, card_len);
	if (e)
		return e;
	if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
		return pmix_fail("PMIx_Commit", rc);
	pmix_info_t info;
	bool collect = true;
	PMIX_INFO_CONSTRUCT(&info);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(&all, 1, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS)
		return pmix_fail("PMIx_Fence", rc);
	if (self != 0 && !given) {
		void *s = NULL;
		size_t sl = 0;
		e = get_bytes(me.nspace, 0, SECRET_KEY, NET_SECRET_MAX, &s,
			      &sl);
		if (!e && sl < NET_SECRET_MIN)
			e = "ucx bootstrap: node 0's job secret is too short";
		if (!e) {
			memcpy(b->secret, s, sl);
			b->secret_len = (uint32_t)sl;
		}
		if (s)
			net_forget(s, sl);
		free(s);
		if (e)
			return e;
	}
	for (uint32_t p = 0; p < nodes; p++) {
		if (p == self)
			continue;
		void *c = NULL;
		size_t cl = 0;
		e = get_bytes(me.nspace, p, CARD_KEY,
			      sizeof(struct ucx_card) + UCX_ADDR_MAX, &c, &cl);
		const char *why =
		    e ? NULL : card_check(c, cl, p, nodes, mine->gmem_seg);
		if (why) {
			snprintf(errbuf, sizeof(errbuf),
				 "ucx bootstrap: node %u's card: %s", p, why);
			e = errbuf;
		}
		if (e) {
			free(c);
			return e;
		}
		b->card[p] = c;
	}
	return NULL;
}

const char *ucx_boot_exchange(uint32_t self, uint32_t nodes,
			      const struct ucx_card *mine, size_t card_len,
			      struct ucx_boot *b)
{
	b->card = calloc(nodes, sizeof(*b->card));
	if (!b->card || !(b->card[self] = malloc(card_len)))
		return "out of memory";
	memcpy(b->card[self], mine, card_len);
	if (ucx_boot_under_pmix())
		return by_pmix(self, nodes, mine, card_len, b);
	return by_rendezvous(self, nodes, mine, card_len, b);
}

void ucx_proof_mac(const struct ucx_boot *b, uint32_t nodes, uint64_t gmem_seg,
		   uint32_t from, uint32_t to, uint8_t mac[NET_MAC_LEN])
{
	struct {
		uint32_t from, to, nodes, pad;
		uint64_t gmem_seg;
		uint8_t nf[NET_NONCE_LEN], nt[NET_NONCE_LEN];
	} m;
	memset(&m, 0, sizeof(m));
	m.from = from;
	m.to = to;
	m.nodes = nodes;
	m.gmem_seg = gmem_seg;
	memcpy(m.nf, b->card[from]->nonce, NET_NONCE_LEN);
	memcpy(m.nt, b->card[to]->nonce, NET_NONCE_LEN);
	net_proof_mac(mac, b->secret, b->secret_len, PROOF_LABEL, &m, sizeof(m),
		      NULL, 0);
}

void ucx_boot_fini(struct ucx_boot *b, uint32_t nodes)
{
	if (b->card)
		for (uint32_t p = 0; p < nodes; p++)
			free(b->card[p]);
	free(b->card);
	b->card = NULL;
	net_forget(b->secret, sizeof(b->secret));
	if (b->pmix)
		PMIx_Finalize(NULL, 0);
	b->pmix = false;
}
