/* SPDX-License-Identifier: MIT */
/*
 * ucxrogue.c - node 1 of a 2-node ucx job that breaks the proof rules
 * (tests/t_ucx.c), started by earthrun --transport ucx with UCX_TLS=tcp.
 * Node 0 is an ordinary node; node 1 is no runtime: it joins the
 * bootstrap with a card for a UCP worker of its own (ucx_boot.c), opens an
 * endpoint to node 0 and sends it raw active messages, argv[1]:
 *
 *   early      a message (of an unknown type) and a BYE before any proof,
 *              then nothing
 *   malformed  a proof of 8 header bytes, one of the right size with 8
 *              bytes of data, a BYE of 8 header bytes, a proof claiming
 *              to come from node 5, then nothing
 *   twice      its proof, a second one (with a zeroed mac), then a message
 *              of an unknown type
 *
 * Node 0 must drop each, naming node 1, deliver nothing, and end: for
 * early and malformed when the proof does not come in time
 * (EARTH_CONNECT_TIMEOUT), for twice at the unknown message. Node 1 sends,
 * then progresses until node 0 is gone (20 s at most).
 */
#define EARTH_INTERNAL 1
#include <earth.h>

#include "base/settings.h"
#include "net/net.h"
#include "net/ucx.h"
#include "net/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

static bool lost; /* node 0's endpoint failed: it ended */

static void on_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	(void)arg;
	(void)ep;
	(void)st;
	lost = true;
}

/* What node 0 sends (its proof, its memory key): taken, not used. */
static ucs_status_t on_any(void *arg, const void *header, size_t hlen,
			   void *data, size_t len,
			   const ucp_am_recv_param_t *param)
{
	(void)arg, (void)header, (void)hlen, (void)data, (void)len;
	(void)param;
	return UCS_OK;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "ucxrogue: %s\n", what);
	return 1;
}

/* Sends one active message to node 0 and waits until UCX is done with
 * its buffers (5 s at most). */
static void send_am(ucp_worker_h w, ucp_ep_h ep, unsigned id, const void *hdr,
		    size_t hlen, const void *data, size_t len)
{
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	ucs_status_ptr_t sp =
	    ucp_am_send_nbx(ep, id, hdr, hlen, data, len, &rp);
	if (UCS_PTR_IS_ERR(sp)) {
		fprintf(stderr, "ucxrogue: send %u: %s\n", id,
			ucs_status_string(UCS_PTR_STATUS(sp)));
		return;
	}
	double end = now_s() + 5;
	while (sp && ucp_request_check_status(sp) == UCS_INPROGRESS &&
	       now_s() < end)
		ucp_worker_progress(w);
	if (sp)
		ucp_request_free(sp);
}

/* A message of a type no node knows, from node 1 to node 0: a node that
 * looked at it would stop with "rejected: field type". */
static void send_unknown(ucp_worker_h w, ucp_ep_h ep)
{
	struct wire_hdr h;
	memset(&h, 0, sizeof(h));
	h.magic = WIRE_MAGIC;
	h.version = WIRE_VERSION;
	h.type = 0xee;
	h.src = 1;
	send_am(w, ep, AM_MSG, &h, sizeof(h), NULL, 0);
}

static int rogue(const char *how)
{
	if (earth_settings_load())
		return die("bad EARTH_* settings");
	ucp_config_t *cfg;
	ucp_context_h ctx;
	ucp_worker_h w;
	if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
		return die("ucp_config_read");
	ucp_params_t pp;
	memset(&pp, 0, sizeof(pp));
	pp.field_mask = UCP_PARAM_FIELD_FEATURES;
	pp.features = UCP_FEATURE_AM;
	ucs_status_t st = ucp_init(&pp, cfg, &ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		return die("ucp_init");
	ucp_worker_params_t wp;
	memset(&wp, 0, sizeof(wp));
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(ctx, &wp, &w) != UCS_OK)
		return die("ucp_worker_create");
	for (unsigned id = AM_MSG; id <= AM_RKEY; id++) {
		ucp_am_handler_param_t ap;
		memset(&ap, 0, sizeof(ap));
		ap.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
				UCP_AM_HANDLER_PARAM_FIELD_CB;
		ap.id = id;
		ap.cb = on_any;
		if (ucp_worker_set_am_recv_handler(w, &ap) != UCS_OK)
			return die("ucp_worker_set_am_recv_handler");
	}
	ucp_address_t *addr;
	size_t alen;
	if (ucp_worker_get_address(w, &addr, &alen) != UCS_OK ||
	    alen > UCX_ADDR_MAX)
		return die("ucp_worker_get_address");
	struct ucx_card *card = calloc(1, sizeof(*card) + alen);
	if (!card)
		return die("out of memory");
	card->magic = UCX_CARD_MAGIC;
	card->node = 1;
	card->nodes = 2;
	card->addr_len = (uint32_t)alen;
	memcpy(card->addr, addr, alen);
	ucp_worker_release_address(w, addr);
	net_random(card->nonce, NET_NONCE_LEN);
	card->pid = (int32_t)getpid();
	const char *e = net_gmem_seg(&card->gmem_seg);
	struct ucx_boot b;
	memset(&b, 0, sizeof(b));
	if (!e)
		e = ucx_boot_exchange(1, 2, card, sizeof(*card) + alen, &b);
	if (e) {
		ucx_boot_fini(&b, 2);
		free(card);
		return die(e);
	}
	ucp_ep_params_t ep;
	memset(&ep, 0, sizeof(ep));
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
			UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)b.card[0]->addr;
	ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
	ep.err_handler.cb = on_error;
	ucp_ep_h to0;
	if (ucp_ep_create(w, &ep, &to0) != UCS_OK)
		return die("ucp_ep_create");

	struct ucx_proof pr;
	memset(&pr, 0, sizeof(pr));
	pr.magic = UCX_CARD_MAGIC;
	pr.node = 1;
	pr.nodes = 2;
	if (!strcmp(how, "early")) {
		send_unknown(w, to0);
		send_am(w, to0, AM_BYE, &pr, sizeof(pr), NULL, 0);
	} else if (!strcmp(how, "malformed")) {
		uint64_t extra = 0;
		send_am(w, to0, AM_PROOF, &pr, 8, NULL, 0);
		send_am(w, to0, AM_PROOF, &pr, sizeof(pr), &extra, 8);
		send_am(w, to0, AM_BYE, &pr, 8, NULL, 0);
		pr.node = 5;
		send_am(w, to0, AM_PROOF, &pr, sizeof(pr), NULL, 0);
	} else if (!strcmp(how, "twice")) {
		ucx_proof_mac(&b, 2, card->gmem_seg, 1, 0, pr.mac);
		send_am(w, to0, AM_PROOF, &pr, sizeof(pr), NULL, 0);
		memset(pr.mac, 0, sizeof(pr.mac));
		send_am(w, to0, AM_PROOF, &pr, sizeof(pr), NULL, 0);
		send_unknown(w, to0);
	} else {
		fprintf(stderr, "ucxrogue: unknown probe '%s'\n", how);
	}
	double end = now_s() + 20;
	while (!lost && now_s() < end)
		ucp_worker_progress(w);
	printf("ucxrogue: node 1 done (%s)\n",
	       lost ? "node 0 ended" : "timeout");
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	ucs_status_ptr_t sp = ucp_ep_close_nbx(to0, &rp);
	while (UCS_PTR_IS_PTR(sp) &&
	       ucp_request_check_status(sp) == UCS_INPROGRESS)
		ucp_worker_progress(w);
	if (UCS_PTR_IS_PTR(sp))
		ucp_request_free(sp);
	ucx_boot_fini(&b, 2);
	free(card);
	ucp_worker_destroy(w);
	ucp_cleanup(ctx);
	return 0;
}

/* Node 0: never gets here unless node 1 proved itself. */
struct main_frame {
	struct earth_main_args a;
};
static void main_entry(void *frame)
{
	printf("ucxrogue: node 0 ran main\n");
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(rogue_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	const char *node = getenv("EARTH_NODE");
	if (node && !strcmp(node, "1"))
		return rogue(argc > 1 ? argv[1] : "");
	return earth_main(argc, argv, &rogue_main);
}
