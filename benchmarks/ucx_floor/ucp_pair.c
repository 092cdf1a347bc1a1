/* SPDX-License-Identifier: MIT */
/*
 * ucp_pair.c - two processes joined by UCP (see ucp_pair.h).
 */
#define _GNU_SOURCE 1
#include "ucp_pair.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* The most bytes a worker address or a packed rkey may have. */
#define BLOB_MAX 65536u

const char *ucp_pair_tls(const char *medium)
{
	if (!strcmp(medium, "shm"))
		return "posix,cma";
	if (!strcmp(medium, "tcp"))
		return "tcp";
	return NULL;
}

static int say(struct ucp_pair *p, const char *what, ucs_status_t st)
{
	fprintf(stderr, "ucp_floor.%s (%s): %s: %s\n", p->medium,
		p->origin ? "origin" : "target", what, ucs_status_string(st));
	return -1;
}

/* ---- the 8-byte active messages ---- */

static ucs_status_t on_am(void *arg, const void *header, size_t header_len,
			  void *data, size_t len,
			  const ucp_am_recv_param_t *param, int ctl)
{
	struct ucp_pair *p = arg;
	(void)header;
	/* from the peer, but checked all the same: 8 bytes, no header, here
	 * (not announced for a rendezvous) */
	if (header_len != 0 || len != sizeof(uint64_t) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
		fprintf(stderr,
			"ucp_floor.%s: active message of %zu+%zu bytes "
			"refused (8 expected)\n",
			p->medium, header_len, len);
		return UCS_OK;
	}
	uint64_t v;
	memcpy(&v, data, sizeof(v));
	if (ctl) {
		p->ctl = v;
		p->n_ctl++;
	} else {
		p->ping = v;
		p->n_ping++;
	}
	return UCS_OK;
}

static ucs_status_t on_ping(void *arg, const void *header, size_t header_len,
			    void *data, size_t len,
			    const ucp_am_recv_param_t *param)
{
	return on_am(arg, header, header_len, data, len, param, 0);
}

static ucs_status_t on_ctl(void *arg, const void *header, size_t header_len,
			   void *data, size_t len,
			   const ucp_am_recv_param_t *param)
{
	return on_am(arg, header, header_len, data, len, param, 1);
}

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	struct ucp_pair *p = arg;
	(void)ep;
	if (!p->peer_failed)
		say(p, "the peer's endpoint failed", st);
	p->peer_failed = 1;
}

/* ---- the socketpair: length-prefixed blobs ---- */

static int write_all(int fd, const void *buf, size_t n)
{
	const char *b = buf;
	while (n) {
		/* a peer gone is an error returned, not SIGPIPE */
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *b = buf;
	while (n) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int send_blob(int fd, const void *b, size_t n)
{
	uint64_t len = n;
	return write_all(fd, &len, sizeof(len)) || write_all(fd, b, n) ? -1 : 0;
}

/* A blob from the peer, at most BLOB_MAX bytes; malloc'd, NULL on error. */
static void *recv_blob(int fd, size_t *n)
{
	uint64_t len;
	if (read_all(fd, &len, sizeof(len)) || len == 0 || len > BLOB_MAX)
		return NULL;
	void *b = malloc(len);
	if (b && read_all(fd, b, len)) {
		free(b);
		return NULL;
	}
	*n = len;
	return b;
}

/* ---- setting up one side ---- */

static int open_worker(struct ucp_pair *p)
{
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK)
		return say(p, "ucp_config_read", st);
	st = ucp_config_modify(cfg, "TLS", ucp_pair_tls(p->medium));
	if (st == UCS_OK && !strcmp(p->medium, "tcp"))
		st = ucp_config_modify(cfg, "NET_DEVICES", "lo");
	if (st != UCS_OK) {
		ucp_config_release(cfg);
		return say(p, "ucp_config_modify", st);
	}
	ucp_params_t cp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_AM | UCP_FEATURE_RMA};
	st = ucp_init(&cp, cfg, &p->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		return say(p, "ucp_init", st);
	ucp_worker_params_t wp = {.field_mask =
				      UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE};
	st = ucp_worker_create(p->ctx, &wp, &p->worker);
	if (st != UCS_OK)
		return say(p, "ucp_worker_create", st);
	ucp_am_handler_param_t ap = {.field_mask =
					 UCP_AM_HANDLER_PARAM_FIELD_ID |
					 UCP_AM_HANDLER_PARAM_FIELD_CB |
					 UCP_AM_HANDLER_PARAM_FIELD_ARG,
				     .arg = p};
	ap.id = UCP_PAIR_AM_PING;
	ap.cb = on_ping;
	st = ucp_worker_set_am_recv_handler(p->worker, &ap);
	if (st == UCS_OK) {
		ap.id = UCP_PAIR_AM_CTL;
		ap.cb = on_ctl;
		st = ucp_worker_set_am_recv_handler(p->worker, &ap);
	}
	if (st != UCS_OK)
		return say(p, "ucp_worker_set_am_recv_handler", st);
	/* The regions, registered once, as a node's global heap would be:
	 * one allocated by UCX, one mapped by us. */
	ucp_mem_map_params_t mp = {.field_mask =
				       UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
				       UCP_MEM_MAP_PARAM_FIELD_LENGTH |
				       UCP_MEM_MAP_PARAM_FIELD_FLAGS,
				   .address = NULL,
				   .length = p->len,
				   .flags = UCP_MEM_MAP_ALLOCATE};
	struct ucp_pair_region *r = &p->reg[UCP_PAIR_REG_UCX];
	st = ucp_mem_map(p->ctx, &mp, &r->memh);
	if (st != UCS_OK)
		return say(p, "ucp_mem_map (allocate)", st);
	ucp_mem_attr_t at = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS |
					   UCP_MEM_ATTR_FIELD_LENGTH};
	st = ucp_mem_query(r->memh, &at);
	if (st != UCS_OK || at.length < p->len)
		return say(p, "ucp_mem_query",
			   st == UCS_OK ? UCS_ERR_NO_MEMORY : st);
	r->addr = at.address;
	memset(r->addr, 0, p->len);
	r = &p->reg[UCP_PAIR_REG_OWN];
	r->addr = mmap(NULL, p->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->addr == MAP_FAILED) {
		r->addr = NULL;
		perror("ucp_floor: mmap");
		return -1;
	}
	memset(r->addr, 0, p->len);
	mp.address = r->addr;
	mp.flags = 0;
	st = ucp_mem_map(p->ctx, &mp, &r->memh);
	return st == UCS_OK ? 0 : say(p, "ucp_mem_map", st);
}

/* Sends our worker address, then each region's packed rkey and address;
 * receives the peer's, creates the endpoint and unpacks the rkeys. */
static int connect_peer(struct ucp_pair *p)
{
	ucp_address_t *addr;
	size_t addr_len, peer_addr_len;
	ucs_status_t st = ucp_worker_get_address(p->worker, &addr, &addr_len);
	if (st != UCS_OK)
		return say(p, "ucp_worker_get_address", st);
	int bad = send_blob(p->fd, addr, addr_len);
	ucp_worker_release_address(p->worker, addr);
	for (int i = 0; i < UCP_PAIR_REGS && !bad; i++) {
		void *rkey;
		size_t rkey_len;
		st = ucp_rkey_pack(p->ctx, p->reg[i].memh, &rkey, &rkey_len);
		if (st != UCS_OK)
			return say(p, "ucp_rkey_pack", st);
		uint64_t mine = (uint64_t)(uintptr_t)p->reg[i].addr;
		bad = send_blob(p->fd, rkey, rkey_len) ||
		      send_blob(p->fd, &mine, sizeof(mine));
		ucp_rkey_buffer_release(rkey);
	}
	void *peer_addr = bad ? NULL : recv_blob(p->fd, &peer_addr_len);
	void *peer_rkey[UCP_PAIR_REGS] = {NULL};
	for (int i = 0; i < UCP_PAIR_REGS && peer_addr && !bad; i++) {
		size_t len, n = 0;
		peer_rkey[i] = recv_blob(p->fd, &len);
		void *where = peer_rkey[i] ? recv_blob(p->fd, &n) : NULL;
		bad = !where || n != sizeof(uint64_t);
		if (!bad)
			memcpy(&p->reg[i].peer_addr, where, sizeof(uint64_t));
		free(where);
	}
	if (!peer_addr || bad) {
		fprintf(stderr,
			"ucp_floor.%s: the exchange with the peer "
			"failed or was malformed\n",
			p->medium);
		bad = 1;
	}
	/* Peer error handling as a node asks for it, where the medium's
	 * lanes have it: UCX 1.13's posix transport has no peer failure
	 * detection ("no active messages transport ... posix/memory - no
	 * peer failure handler"), so over shm none. */
	ucp_ep_params_t ep = {
	    .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
			  UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			  UCP_EP_PARAM_FIELD_ERR_HANDLER,
	    .address = peer_addr,
	    .err_mode = strcmp(p->medium, "shm") ? UCP_ERR_HANDLING_MODE_PEER
						 : UCP_ERR_HANDLING_MODE_NONE,
	    .err_handler = {.cb = on_ep_error, .arg = p}};
	if (!bad) {
		st = ucp_ep_create(p->worker, &ep, &p->ep);
		p->peer_errors = ep.err_mode == UCP_ERR_HANDLING_MODE_PEER;
		if (st != UCS_OK)
			bad = say(p, "ucp_ep_create", st);
	}
	for (int i = 0; i < UCP_PAIR_REGS && !bad; i++) {
		st = ucp_ep_rkey_unpack(p->ep, peer_rkey[i],
					&p->reg[i].peer_rkey);
		if (st != UCS_OK)
			bad = say(p, "ucp_ep_rkey_unpack", st);
	}
	free(peer_addr);
	for (int i = 0; i < UCP_PAIR_REGS; i++)
		free(peer_rkey[i]);
	return bad ? -1 : 0;
}

int ucp_pair_start(struct ucp_pair *p, const char *medium, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->medium = medium;
	p->len = len;
	if (!ucp_pair_tls(medium)) {
		fprintf(stderr, "ucp_floor: medium '%s' unknown: shm or tcp\n",
			medium);
		return -1;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("ucp_floor: socketpair");
		return -1;
	}
	int eu, su;
	bench_cpus(&eu, &su);
	fflush(NULL);
	pid_t c = fork();
	if (c < 0) {
		perror("ucp_floor: fork");
		return -1;
	}
	p->origin = c != 0;
	p->peer = c;
	p->fd = sv[p->origin ? 0 : 1];
	close(sv[p->origin ? 1 : 0]);
	if (!p->origin)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	p->cpu = p->origin ? eu : su;
	bench_pin(p->cpu);
	int rc = open_worker(p);
	if (!rc)
		rc = connect_peer(p);
	if (rc && !p->origin)
		_exit(1);
	if (rc) {
		kill(p->peer, SIGKILL);
		waitpid(p->peer, NULL, 0);
	}
	return rc;
}

/* ---- running ---- */

int ucp_pair_wait(struct ucp_pair *p, ucs_status_ptr_t req, const char *what)
{
	if (req == NULL)
		return 0;
	if (UCS_PTR_IS_ERR(req))
		return say(p, what, UCS_PTR_STATUS(req));
	ucs_status_t st;
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
		ucp_worker_progress(p->worker);
	ucp_request_free(req);
	return st == UCS_OK ? 0 : say(p, what, st);
}

int ucp_pair_send(struct ucp_pair *p, unsigned id, uint64_t value)
{
	ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_AM_SEND_FLAG_EAGER};
	return ucp_pair_wait(
	    p, ucp_am_send_nbx(p->ep, id, NULL, 0, &value, sizeof(value), &rp),
	    "ucp_am_send_nbx");
}

int ucp_pair_wait_ctl(struct ucp_pair *p, uint64_t count)
{
	while (p->n_ctl < count && !p->peer_failed)
		ucp_worker_progress(p->worker);
	return p->peer_failed ? -1 : 0;
}

void ucp_pair_print_lanes(struct ucp_pair *p)
{
	fflush(stdout);
	ucp_ep_print_info(p->ep, stdout);
	fflush(stdout);
}

int ucp_pair_end(struct ucp_pair *p, int status)
{
	/* Both sides flushed, then told each other over the socketpair, so
	 * that neither closes while the other still needs the endpoint. */
	ucp_request_param_t rp = {.op_attr_mask = 0};
	int rc = p->peer_failed
		     ? -1
		     : ucp_pair_wait(p, ucp_worker_flush_nbx(p->worker, &rp),
				     "ucp_worker_flush_nbx");
	char b = 0;
	if (write_all(p->fd, &b, 1) || read_all(p->fd, &b, 1))
		rc = -1;
	for (int i = 0; i < UCP_PAIR_REGS; i++)
		ucp_rkey_destroy(p->reg[i].peer_rkey);
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	ucs_status_ptr_t req = ucp_ep_close_nbx(p->ep, &rp);
	if (req && !UCS_PTR_IS_ERR(req)) {
		while (ucp_request_check_status(req) == UCS_INPROGRESS)
			ucp_worker_progress(p->worker);
		ucp_request_free(req);
	}
	for (int i = 0; i < UCP_PAIR_REGS; i++)
		ucp_mem_unmap(p->ctx, p->reg[i].memh);
	munmap(p->reg[UCP_PAIR_REG_OWN].addr, p->len);
	ucp_worker_destroy(p->worker);
	ucp_cleanup(p->ctx);
	close(p->fd);
	if (!p->origin)
		_exit(status || rc ? 1 : 0);
	int ws;
	if (waitpid(p->peer, &ws, 0) != p->peer || !WIFEXITED(ws) ||
	    WEXITSTATUS(ws)) {
		fprintf(stderr,
			"ucp_floor.%s: the target process ended badly\n",
			p->medium);
		rc = -1;
	}
	return status || rc ? 1 : 0;
}
