/* SPDX-License-Identifier: MIT */
/*
 * ucx.c - the transport over UCX (UCP active messages): shared memory,
 * TCP, InfiniBand/RoCE, whichever lanes UCX picks (UCX_TLS,
 * UCX_NET_DEVICES pass through). This file opens and closes it: the
 * context and worker, an endpoint to every peer, this node's proofs, the
 * lanes UCX chose, BYE and the endpoints' close at the end. The
 * active-message path is ucx_am.c, one-sided access ucx_rma.c, how the
 * nodes learn each other's worker addresses ucx_boot.c; what they share,
 * ucx.h.
 *
 * Ownership: the context and worker (UCS_THREAD_MODE_SINGLE) are made by
 * net_ucx_open on the earth_run thread before the SU starts; from then on
 * only the SU thread touches them (poll, send, flush, wait), and fini
 * after it ended. Other threads only write the wake eventfd.
 *
 * Faults: endpoints use UCP_ERR_HANDLING_MODE_PEER; a peer on this host
 * reached over lanes without it is watched through a pidfd instead
 * (ucx_am.c stops the node when either says the peer failed).
 * Ending: fini says BYE to every peer, flushes the worker and closes the
 * endpoints.
 * Details: docs/architecture.md, "Between nodes: ucx".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "base/settings.h"
#include "net/tcp.h"
#include "net/ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <ucs/config/global_opts.h>
#include <unistd.h>

#define BLK_CHUNK (1u << 20) /* BLK_DATA payload per message */
#define CLOSE_NS 2000000000ull

/* ---- the end (earth_run thread, after the SU thread ended) ---- */

void ucx_wait_reqs(struct ucx_net *t, void **req, uint32_t n, uint64_t deadline)
{
	for (;;) {
		bool busy = false;
		for (uint32_t i = 0; i < n; i++) {
			if (!req[i])
				continue;
			if (ucp_request_check_status(req[i]) ==
			    UCS_INPROGRESS) {
				busy = true;
				continue;
			}
			ucp_request_free(req[i]);
			req[i] = NULL;
		}
		if (!busy || ucx_mono_ns() > deadline)
			return;
		ucp_worker_progress(t->worker);
	}
}

static void send_byes(struct ucx_net *t, void **req)
{
	struct ucx_proof bye;
	memset(&bye, 0, sizeof(bye));
	bye.magic = UCX_CARD_MAGIC;
	bye.node = t->base.self;
	bye.nodes = t->base.nodes;
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		struct ucx_peer *pp = &t->peer[p];
		req[p] = NULL;
		if (p == t->base.self || !pp->ep || pp->lost)
			continue;
		ucs_status_ptr_t sp = ucp_am_send_nbx(
		    pp->ep, AM_BYE, &bye, sizeof(bye), NULL, 0, &rp);
		if (!UCS_PTR_IS_ERR(sp))
			req[p] = sp;
	}
	ucx_wait_reqs(t, req, t->base.nodes, ucx_mono_ns() + CLOSE_NS);
}

static void close_eps(struct ucx_net *t, void **req)
{
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	/* A node that could not open has nothing worth a flush: its peers
	 * may be the ones that cannot be reached. */
	ucs_status_ptr_t fl =
	    t->open_failed ? NULL : ucp_worker_flush_nbx(t->worker, &rp);
	if (fl && !UCS_PTR_IS_ERR(fl)) {
		void *one[1] = {fl};
		ucx_wait_reqs(t, one, 1, ucx_mono_ns() + CLOSE_NS);
		if (one[0]) {
			ucp_request_cancel(t->worker, one[0]);
			ucp_request_free(one[0]);
		}
	}
	/* Flushed: the data is out; a forced close waits for no peer. */
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		req[p] = NULL;
		if (!t->peer[p].ep)
			continue;
		ucs_status_ptr_t sp = ucp_ep_close_nbx(t->peer[p].ep, &rp);
		t->peer[p].ep = NULL;
		if (sp && !UCS_PTR_IS_ERR(sp))
			req[p] = sp;
	}
	ucx_wait_reqs(t, req, t->base.nodes, ucx_mono_ns() + CLOSE_NS);
	for (uint32_t p = 0; p < t->base.nodes; p++)
		if (req[p])
			ucp_request_free(req[p]);
}

static void ucx_fini(struct net *nt)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	uint32_t nodes = t->base.nodes;
	if (t->worker && t->peer) {
		void **req = calloc(nodes, sizeof(*req));
		for (uint32_t p = 0; p < nodes; p++) {
			if (t->peer[p].rkey) {
				ucp_rkey_destroy(t->peer[p].rkey);
				t->peer[p].rkey = NULL;
			}
			if (t->peer[p].dsm_rkey) {
				ucp_rkey_destroy(t->peer[p].dsm_rkey);
				t->peer[p].dsm_rkey = NULL;
			}
		}
		if (req) {
			if (t->ending)
				send_byes(t, req);
			close_eps(t, req);
			free(req);
		}
		for (uint32_t p = 0; p < nodes; p++) {
			struct ucx_peer *pp = &t->peer[p];
			while (pp->head) {
				struct ucx_msg *m = pp->head;
				pp->head = m->next;
				if (m->req) {
					ucp_request_cancel(t->worker, m->req);
					continue; /* UCX still owns it */
				}
				ucx_msg_free(t, m);
			}
		}
	}
	while (t->free_msgs) {
		struct ucx_msg *m = t->free_msgs;
		t->free_msgs = m->next;
		free(m);
	}
	while (t->done_head) {
		struct ucx_rma *r = t->done_head;
		t->done_head = r->next;
		free(r);
	}
	while (t->free_rma) {
		struct ucx_rma *r = t->free_rma;
		t->free_rma = r->next;
		free(r);
	}
	if (t->worker)
		ucp_worker_destroy(t->worker);
	if (t->memh)
		ucp_mem_unmap(t->ctx, t->memh);
	if (t->dsm_memh)
		ucp_mem_unmap(t->ctx, t->dsm_memh);
	if (t->ctx)
		ucp_cleanup(t->ctx);
	ucx_boot_fini(&t->boot, nodes);
	for (uint32_t p = 0; p < nodes; p++)
		if (t->peer[p].pidfd >= 0)
			close(t->peer[p].pidfd);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->wakefd >= 0)
		close(t->wakefd);
	free(t->mine);
	free(t->peer);
	free(t);
}

/* net_ops.describe: the lanes UCX chose to each peer, from
 * ucp_ep_print_info (the lines naming a lane's transport and device). */
static void ucx_describe(struct net *nt, char *buf, size_t len)
{
	struct ucx_net *t = (struct ucx_net *)nt;
	/* First in plain words which kind of lanes run: UCX picks TCP over
	 * loopback on one host unless told otherwise, since its
	 * shared-memory lanes lack the peer failure detection asked for. */
	bool one_host = true;
	for (uint32_t p = 0; p < t->base.nodes && t->boot.card; p++)
		if (p != t->base.self && t->boot.card[p] &&
		    strncmp(t->boot.card[p]->host, t->mine->host,
			    sizeof(t->mine->host)))
			one_host = false;
	const bool shm =
	    strstr(t->lanes, "posix/") || strstr(t->lanes, "sysv/") ||
	    strstr(t->lanes, "cma/") || strstr(t->lanes, "xpmem/") ||
	    strstr(t->lanes, "knem/");
	const bool tcp = strstr(t->lanes, "tcp/") != NULL;
	const char *kind =
	    shm && tcp ? "shared memory and TCP lanes: "
	    : shm      ? "shared-memory lanes: "
	    : tcp && one_host
		? "TCP loopback lanes, not shared memory (every node on this "
		  "host: UCX_TLS=posix,cma gives shared memory, with peer "
		  "failure watched by process): "
	    : tcp ? "TCP lanes: "
		  : "";
	/* Whose mapping peers read global memory from: UCX's (over shared
	 * memory with loads), or ours registered (through a lane). */
	snprintf(buf, len, "%s%s%s", kind, t->lanes,
		 !t->memh	 ? ""
		 : t->seg_by_ucx ? "; global memory allocated by UCX"
				 : "; global memory registered");
}

const char *ucx_fail(const char *what, ucs_status_t st)
{
	static char buf[300];
	snprintf(buf, sizeof(buf),
		 "ucx transport: %s: %s (check UCX_TLS / UCX_NET_DEVICES; "
		 "ucx_info -d lists what this host has)",
		 what, ucs_status_string(st));
	return buf;
}

static const struct net_ops ucx_ops = {
    .name = "ucx",
    .send = ucx_send,
    .send_ref = ucx_send_ref,
    .flush = ucx_flush,
    .poll = ucx_poll,
    .pending = ucx_pending,
    .su_word = ucx_su_word,
    .fini = ucx_fini,
    .wait = ucx_wait,
    .wake = ucx_wake,
    .blk_bytes = ucx_blk_bytes,
    .describe = ucx_describe,
    .rma_expose = ucx_rma_expose,
    .rma_get = ucx_rma_get,
    .rma_put = ucx_rma_put,
    .rma_ptr = ucx_rma_ptr,
    .dsm_expose = ucx_dsm_expose,
    .dsm_get = ucx_dsm_get,
};

/* ---- opening (earth_run thread) ---- */

/* This host's boot id and this process's pid namespace: processes with
 * the same see each other's pids. */
static void host_id(char *out, size_t len)
{
	char boot[40] = "";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, boot, sizeof(boot) - 1);
		boot[k > 0 ? k : 0] = 0;
		close(fd);
	}
	boot[strcspn(boot, "\n")] = 0;
	struct stat st;
	unsigned long long ns = 0;
	if (!stat("/proc/self/ns/pid", &st))
		ns = (unsigned long long)st.st_ino;
	memset(out, 0, len);
	snprintf(out, len, "%s:%llx", boot, ns);
}

static const char *make_worker(struct ucx_net *t)
{
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK)
		return ucx_fail("reading UCX's configuration", st);
	/* A dead peer is noticed within a second or two over every lane
	 * (UCX_KEEPALIVE_INTERVAL, when given, wins). */
	if (!getenv("UCX_KEEPALIVE_INTERVAL"))
		ucp_config_modify(cfg, "KEEPALIVE_INTERVAL", "1s");
	ucp_params_t pp;
	memset(&pp, 0, sizeof(pp));
	pp.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	pp.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
	pp.name = "earth";
	st = ucp_init(&pp, cfg, &t->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) {
		t->ctx = NULL;
		return ucx_fail("ucp_init", st);
	}
	ucp_worker_params_t wp;
	memset(&wp, 0, sizeof(wp));
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	st = ucp_worker_create(t->ctx, &wp, &t->worker);
	if (st != UCS_OK) {
		t->worker = NULL;
		return ucx_fail("ucp_worker_create", st);
	}
	static const struct {
		unsigned id;
		ucp_am_recv_callback_t cb;
	} h[] = {{AM_MSG, ucx_on_msg},
		 {AM_PROOF, ucx_on_proof},
		 {AM_BYE, ucx_on_bye},
		 {AM_RKEY, ucx_on_rkey}};
	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		ucp_am_handler_param_t ap;
		memset(&ap, 0, sizeof(ap));
		ap.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
				UCP_AM_HANDLER_PARAM_FIELD_CB |
				UCP_AM_HANDLER_PARAM_FIELD_ARG;
		ap.id = h[i].id;
		ap.cb = h[i].cb;
		ap.arg = t;
		st = ucp_worker_set_am_recv_handler(t->worker, &ap);
		if (st != UCS_OK)
			return ucx_fail("setting an active message handler",
					st);
	}
	t->armable = ucp_worker_get_efd(t->worker, &t->efd) == UCS_OK;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->epfd < 0 || t->wakefd < 0)
		return "ucx transport: cannot make the descriptors to sleep on";
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EV_WAKE};
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->wakefd, &ev))
		return "ucx transport: epoll_ctl failed";
	ev.data.u64 = EV_WORKER;
	if (t->armable && epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->efd, &ev))
		t->armable = false;
	ucp_address_t *addr;
	size_t alen;
	st = ucp_worker_get_address(t->worker, &addr, &alen);
	if (st != UCS_OK)
		return ucx_fail("ucp_worker_get_address", st);
	if (alen > UCX_ADDR_MAX) {
		ucp_worker_release_address(t->worker, addr);
		return "ucx transport: the worker's address is too long (limit "
		       "the lanes with UCX_TLS / UCX_NET_DEVICES)";
	}
	t->mine = calloc(1, sizeof(*t->mine) + alen);
	if (!t->mine) {
		ucp_worker_release_address(t->worker, addr);
		return "out of memory";
	}
	t->mine->magic = UCX_CARD_MAGIC;
	t->mine->node = t->base.self;
	t->mine->nodes = t->base.nodes;
	t->mine->addr_len = (uint32_t)alen;
	memcpy(t->mine->addr, addr, alen);
	ucp_worker_release_address(t->worker, addr);
	net_random(t->mine->nonce, NET_NONCE_LEN);
	t->mine->pid = (int32_t)getpid();
	host_id(t->mine->host, sizeof(t->mine->host));
	return net_gmem_seg(&t->mine->gmem_seg);
}

/* The lanes of the endpoint to the first peer, from ucp_ep_print_info. */
/* What ucp_ep_print_info says of ep, malloc'd (NULL when out of memory). */
static char *ep_info(ucp_ep_h ep)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f)
		return NULL;
	ucp_ep_print_info(ep, f);
	fclose(f);
	return text;
}

/* For each peer, whether UCX has a lane that reads its memory itself
 * (cma, verbs: "rma" in the lane list); without one UCX emulates a read
 * with an active message the peer's worker answers, slower than asking
 * its SU: such reads go as messages. */
static void note_rma_lanes(struct ucx_net *t)
{
	for (uint32_t p = 0; p < t->base.nodes; p++) {
		if (p == t->base.self)
			continue;
		char *text = ep_info(t->peer[p].ep);
		bool rma = false;
		for (char *l = text ? strtok(text, "\n") : NULL; l && !rma;
		     l = strtok(NULL, "\n"))
			rma = strstr(l, "lane[") && strstr(l, " rma");
		t->peer[p].rma_lane = rma;
		free(text);
	}
}

static void note_lanes(struct ucx_net *t)
{
	uint32_t p = t->base.self == 0 ? 1 : 0;
	note_rma_lanes(t);
	char *text = ep_info(t->peer[p].ep);
	if (!text)
		return;
	size_t at = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *l = strstr(line, "lane[");
		if (!l || at + 4 >= sizeof(t->lanes))
			continue;
		while (*l && *l != ':')
			l++;
		if (*l)
			l++;
		while (*l == ' ')
			l++;
		int k = snprintf(t->lanes + at, sizeof(t->lanes) - at, "%s%s",
				 at ? "; " : "", l);
		if (k > 0)
			at += (size_t)k;
		if (at >= sizeof(t->lanes))
			at = sizeof(t->lanes) - 1;
	}
	free(text);
	/* One space between words (UCX aligns its columns). */
	size_t w = 0;
	for (size_t r = 0; t->lanes[r]; r++)
		if (t->lanes[r] != ' ' || (w && t->lanes[w - 1] != ' '))
			t->lanes[w++] = t->lanes[r];
	t->lanes[w] = 0;
}

static bool not_proven(const void *ctx, uint32_t p)
{
	const struct ucx_net *t = ctx;
	return p != t->base.self && !t->peer[p].proven;
}

/* Names the nodes whose proof did not come in time, and what to check. */
static const char *unproven(const struct ucx_net *t)
{
	static char msg[512];
	char who[160];
	uint32_t n =
	    tcp_name_nodes(who, sizeof(who), t->base.nodes, not_proven, t);
	snprintf(msg, sizeof(msg),
		 "ucx transport: %s did not prove %s in time "
		 "(EARTH_CONNECT_TIMEOUT; see %s errors): check that %s this "
		 "job's EARTH_JOB_SECRET and that UCX reaches %s over the "
		 "lanes UCX_TLS and UCX_NET_DEVICES choose (a firewall? "
		 "ucx_info -d lists a host's devices)",
		 who, n > 1 ? "themselves" : "itself", n > 1 ? "their" : "its",
		 n > 1 ? "they have" : "it has", n > 1 ? "them" : "it");
	return msg;
}

/*
 * UCX 1.13's tcp lanes connect with a blocking connect() inside
 * ucp_ep_create: to a host that drops the SYNs, for the kernel's two
 * minutes of retries. A timer sends this thread SIGALRM from the connect
 * deadline on, every 50 ms, with a handler without SA_RESTART: the
 * connect returns EINTR, and UCX calls it again. The handler makes every
 * socket still in SYN_SENT non-blocking (at this point only UCX's: the
 * rendezvous' are connected), so that second call fails with EALREADY
 * and ucp_ep_create returns an error by the deadline. The old action and
 * mask come back after, any SIGALRM still pending consumed first.
 */
struct ep_bound {
	timer_t tm;
	struct sigaction old;
	sigset_t old_mask;
	bool armed;
};

static volatile int ep_bound_fds; /* descriptors the handler looks at */

static void ep_bound_tick(int sig)
{
	(void)sig;
	int e = errno;
	for (int fd = 3; fd < ep_bound_fds; fd++) {
		struct tcp_info ti;
		socklen_t l = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) ||
		    ti.tcpi_state != TCP_SYN_SENT)
			continue;
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && !(fl & O_NONBLOCK))
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	}
	errno = e;
}

static void ep_bound_start(struct ep_bound *b, uint64_t deadline_ns)
{
	b->armed = false;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ep_bound_tick;
	sigemptyset(&sa.sa_mask);
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGALRM;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	struct rlimit rl;
	ep_bound_fds = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 65536
			   ? 65536
			   : (int)rl.rlim_cur;
	if (sigaction(SIGALRM, &sa, &b->old))
		return;
	if (timer_create(CLOCK_MONOTONIC, &ev, &b->tm)) {
		sigaction(SIGALRM, &b->old, NULL);
		return;
	}
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
			 .tv_nsec = (long)(deadline_ns % 1000000000u)},
	    .it_interval = {.tv_nsec = 50000000}};
	timer_settime(b->tm, TIMER_ABSTIME, &its, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, &b->old_mask);
	b->armed = true;
}

static void ep_bound_stop(struct ep_bound *b)
{
	if (!b->armed)
		return;
	timer_delete(b->tm);
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&alrm, NULL, &zero) > 0)
		;
	sigaction(SIGALRM, &b->old, NULL);
	pthread_sigmask(SIG_SETMASK, &b->old_mask, NULL);
}

/* The error of an endpoint to node p that could not be made: the
 * deadline's when it passed, else UCX's status. */
static const char *ep_fail(struct ucx_net *t, uint32_t p, ucs_status_t st)
{
	static char msg[240];
	if (ucx_mono_ns() < t->connect_deadline)
		return ucx_fail("ucp_ep_create", st);
	snprintf(msg, sizeof(msg),
		 "ucx transport: connecting to node %u did not finish within "
		 "EARTH_CONNECT_TIMEOUT: UCX's connection to it was not "
		 "answered (a firewall dropping it, or its host is down; "
		 "UCX_NET_DEVICES chooses the interface)",
		 p);
	return msg;
}

/* Creates the endpoints, sends every peer our proof and progresses until
 * every peer proved itself (EARTH_CONNECT_TIMEOUT). */
static const char *connect_all(struct ucx_net *t)
{
	uint32_t self = t->base.self, nodes = t->base.nodes;
	struct ep_bound bound;
	ep_bound_start(&bound, t->connect_deadline);
	const char *fail = NULL;
	for (uint32_t p = 0; p < nodes && !fail; p++) {
		struct ucx_peer *pp = &t->peer[p];
		pp->t = t;
		pp->id = p;
		if (p == self)
			continue;
		ucp_ep_params_t ep;
		memset(&ep, 0, sizeof(ep));
		ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
				UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
				UCP_EP_PARAM_FIELD_ERR_HANDLER;
		ep.address = (const ucp_address_t *)t->boot.card[p]->addr;
		ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
		ep.err_handler.cb = ucx_on_ep_error;
		ep.err_handler.arg = pp;
		ucs_status_t st = ucp_ep_create(t->worker, &ep, &pp->ep);
		const struct ucx_card *c = t->boot.card[p];
		if (st == UCS_ERR_UNREACHABLE &&
		    ucx_mono_ns() < t->connect_deadline && c->host[0] &&
		    !strncmp(c->host, t->mine->host, sizeof(c->host))) {
			/* Lanes without UCX's peer failure detection
			 * (shared memory in UCX 1.13): the peer runs on
			 * this host, watch its process instead. */
			pp->pidfd = pidfd_open((pid_t)c->pid, 0);
			struct epoll_event ev = {.events = EPOLLIN,
						 .data.u64 = EV_PEER + p};
			if (pp->pidfd < 0 ||
			    epoll_ctl(t->epfd, EPOLL_CTL_ADD, pp->pidfd, &ev)) {
				fail = "ucx transport: cannot watch a peer's "
				       "process (pidfd_open: Linux 5.3 or "
				       "later needed)";
				break;
			}
			t->pidfds++;
			ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
			st = ucp_ep_create(t->worker, &ep, &pp->ep);
		}
		if (st != UCS_OK) {
			pp->ep = NULL;
			fail = ep_fail(t, p, st);
		}
	}
	ep_bound_stop(&bound);
	if (fail)
		return fail;
	/* Each proof is sent from its own copy: a header must live until
	 * its send completes. */
	void **req = calloc(nodes, sizeof(*req));
	struct ucx_proof *pr = calloc(nodes, sizeof(*pr));
	if (!req || !pr) {
		free(req);
		free(pr);
		return "out of memory";
	}
	ucp_request_param_t rp;
	memset(&rp, 0, sizeof(rp));
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_AM_SEND_FLAG_REPLY;
	const char *e = NULL;
	for (uint32_t p = 0; p < nodes && !e; p++) {
		if (p == self)
			continue;
		pr[p].magic = UCX_CARD_MAGIC;
		pr[p].node = self;
		pr[p].nodes = nodes;
		ucx_proof_of(t, self, p, pr[p].mac);
		ucs_status_ptr_t sp =
		    ucp_am_send_nbx(t->peer[p].ep, AM_PROOF, &pr[p],
				    sizeof(pr[p]), NULL, 0, &rp);
		if (UCS_PTR_IS_ERR(sp))
			e = ucx_fail("sending our proof", UCS_PTR_STATUS(sp));
		else
			req[p] = sp;
	}
	uint64_t deadline = t->connect_deadline;
	if (!e)
		ucx_wait_reqs(t, req, nodes, deadline);
	for (uint32_t p = 0; p < nodes; p++)
		if (req[p]) {
			ucp_request_cancel(t->worker, req[p]);
			ucp_request_free(req[p]);
			if (!e)
				e = "ucx transport: our proof did not reach "
				    "every node in time "
				    "(EARTH_CONNECT_TIMEOUT)";
		}
	net_forget(pr, nodes * sizeof(*pr));
	free(pr);
	free(req);
	if (e)
		return e;
	while (t->proofs_in < nodes - 1) {
		ucp_worker_progress(t->worker);
		for (uint32_t p = 0; p < nodes; p++)
			if (t->peer[p].lost && !t->peer[p].proven)
				return "ucx transport: a peer failed before "
				       "proving itself (see its errors)";
		if (ucx_mono_ns() > deadline)
			return unproven(t);
	}
	note_lanes(t);
	return NULL;
}

/* connect_all with UCX's own error messages muted (unless UCX_LOG_LEVEL
 * asks for more): endpoints are tried with peer failure detection first,
 * and UCX reports each lane without it (shared memory in UCX 1.13) as an
 * error, here and at the peer, before this node falls back; a real
 * failure is reported by this node. */
static const char *connect_quietly(struct ucx_net *t)
{
	ucs_log_level_t lv = ucs_global_opts.log_component.log_level;
	if (lv <= UCS_LOG_LEVEL_WARN && lv >= UCS_LOG_LEVEL_ERROR)
		ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_FATAL;
	const char *e = connect_all(t);
	ucs_global_opts.log_component.log_level = lv;
	return e;
}

struct net *net_ucx_open(uint32_t self, uint32_t nodes, const char **err)
{
	*err = NULL;
	if (nodes < 2)
		return NULL;
	struct ucx_net *t = calloc(1, sizeof(*t));
	if (t)
		t->peer = calloc(nodes, sizeof(*t->peer));
	if (!t || !t->peer) {
		free(t);
		*err = "out of memory";
		return NULL;
	}
	t->base.ops = &ucx_ops;
	t->base.self = self;
	t->base.nodes = nodes;
	/* Rendezvous BLK_DATA payloads go straight to their destination. */
	t->base.max_payload = BLK_CHUNK;
	t->epfd = t->wakefd = t->efd = -1;
	/* The bootstrap (its tcp rendezvous has the same deadline) and the
	 * proofs over UCX's own connections, all within this one. */
	t->connect_deadline =
	    ucx_mono_ns() +
	    (uint64_t)(earth_setting_real(EARTH_SET_CONNECT_TIMEOUT) * 1e9);
	t->stall_ns =
	    (uint64_t)(earth_setting_real(EARTH_SET_PEER_STALL_S) * 1e9);
	/* A tenth of it, 20 ms to 0.25 s: a lost peer is named within the
	 * limit plus two looks (half a second), an idle SU woken four times
	 * a second at most. */
	t->beat_ns = t->stall_ns / 10;
	t->beat_ns = t->beat_ns < 20000000u    ? 20000000u
		     : t->beat_ns > 250000000u ? 250000000u
					       : t->beat_ns;
	for (uint32_t p = 0; p < nodes; p++)
		t->peer[p].pidfd = -1;
	const char *e = make_worker(t);
	if (!e)
		e = ucx_boot_exchange(self, nodes, t->mine,
				      sizeof(*t->mine) + t->mine->addr_len,
				      &t->boot);
	if (!e)
		e = connect_quietly(t);
	if (e) {
		*err = e;
		t->open_failed = true;
		ucx_fini(&t->base);
		return NULL;
	}
	return &t->base;
}
