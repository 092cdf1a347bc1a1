/* SPDX-License-Identifier: MIT */
/*
 * tcp_rendezvous.c - how the nodes of a tcp job find each other (blocking,
 * on the earth_run thread, before the SU starts), ending in handing the
 * connected sockets to the data path (tcp.c, tcp_data_start).
 *
 * Node 0 listens on EARTH_RENDEZVOUS (or on the listener earthrun hands it
 * as EARTH_RENDEZVOUS_FD); node i > 0 opens a listener on an ephemeral
 * port of the interface it reaches node 0 from, connects to node 0 and
 * sends a JOIN hello (its number, its port, a fresh nonce). Every
 * connection is opened by a proof exchange keyed with the job secret,
 * which never travels: the listening node proves first (ACCEPT), the
 * connecting node checks that before trusting anything and proves in turn
 * (PROOF). Once every node joined, node 0 sends each a WELCOME (proved
 * too) and the address table; node i then connects to every node
 * 0 < j < i (MESH hello, the same exchange) and accepts the nodes above
 * it. The connection to node 0 is the rendezvous one. A listener reads
 * the hellos of all its pending connections at once under one deadline
 * (EARTH_CONNECT_TIMEOUT); a connection with a bad hello or proof (wrong
 * secret, node number, node count, a node that already joined, not an
 * EARTH hello, nothing in 5 s) is reported on stderr and dropped; the
 * rendezvous goes on.
 * Details: docs/architecture.md, "Between nodes: tcp".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/settings.h"
#include "net/net.h"
#include "net/proof.h"
#include "net/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HELLO_TIMEOUT_MS 5000 /* for one connection's hello */

static int ms_left(const struct rdv *r)
{
	uint64_t now = tcp_mono_ns();
	if (now >= r->deadline_ns)
		return 0;
	uint64_t ms = (r->deadline_ns - now) / 1000000 + 1;
	return ms > 3600000 ? 3600000 : (int)ms;
}

static const char *parse_secret(struct rdv *r, const char *transport)
{
	const char *e = net_secret_parse(r->secret, &r->secret_len, transport);
	/* Block-distributed arrays are laid out from the segment size:
	 * nodes that disagree on it would compute different addresses. */
	return e ? e : net_gmem_seg(&r->gmem_seg);
}

static void addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
		snprintf(out, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		snprintf(out, len, "[%s]:%u", host, port);
	} else {
		snprintf(out, len, "(unknown address)");
	}
}

int tcp_read_all(int fd, void *buf, size_t len, int timeout_ms)
{
	uint64_t end = tcp_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	size_t got = 0;
	while (got < len) {
		uint64_t now = tcp_mono_ns();
		if (now >= end)
			return -1;
		struct pollfd q = {fd, POLLIN, 0};
		int pr = poll(&q, 1, (int)((end - now) / 1000000 + 1));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return -1;
		ssize_t k =
		    recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

int tcp_write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t k = send(fd, (const char *)buf + done, len - done,
				 MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

void tcp_mac(uint8_t mac[TCP_MAC_LEN], const uint8_t *key, size_t key_len,
	     const char *label, const struct tcp_hello *open,
	     const struct tcp_hello *accept, const void *extra,
	     size_t extra_len)
{
	struct tcp_hello h[2] = {*open, *accept};
	memset(h[0].mac, 0, TCP_MAC_LEN);
	memset(h[1].mac, 0, TCP_MAC_LEN);
	net_proof_mac(mac, key, key_len, label, h, sizeof(h), extra, extra_len);
}

/* True if mac is the proof it should be (constant time). */
static bool mac_ok(const struct rdv *r, const uint8_t *mac, const char *label,
		   const struct tcp_hello *open, const struct tcp_hello *acc,
		   const void *extra, size_t extra_len)
{
	uint8_t want[TCP_MAC_LEN];
	tcp_mac(want, r->secret, r->secret_len, label, open, acc, extra,
		extra_len);
	return net_proof_equal(mac, want);
}

void tcp_make_hello(const struct rdv *r, struct tcp_hello *h, int kind,
		    uint16_t port)
{
	memset(h, 0, sizeof(*h));
	h->magic = TCP_HELLO_MAGIC;
	h->version = TCP_HELLO_VERSION;
	h->kind = (uint16_t)kind;
	h->node = r->self;
	h->nodes = r->nodes;
	h->port = port;
	h->gmem_seg = r->gmem_seg;
	net_random(h->nonce, sizeof(h->nonce));
}

/* Checks the job fields of a hello of `kind` from a node in [lo, hi); NULL
 * or why not. (Its proof is checked apart.) */
static const char *check_hello(const struct rdv *r, const struct tcp_hello *h,
			       int kind, uint32_t lo, uint32_t hi)
{
	if (h->magic != TCP_HELLO_MAGIC || h->version != TCP_HELLO_VERSION)
		return "not an EARTH hello";
	if (h->kind != kind)
		return "unexpected hello kind";
	if (h->nodes != r->nodes)
		return "node count differs from this job's";
	if (h->node < lo || h->node >= hi)
		return "node number out of range";
	if (h->gmem_seg != r->gmem_seg)
		return "global memory per node (EARTH_GMEM_MB) differs from "
		       "this node's: give every node the same";
	return NULL;
}

static int set_nodelay(int fd)
{
	int one = 1;
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int set_blocking(int fd, bool blocking)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	fl = blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl);
}

/* r->err for a failed system call (what) with errno e: running out of
 * descriptors or memory named as such. */
static void sys_err(struct rdv *r, const char *what, int e)
{
	if (e == EMFILE || e == ENFILE) {
		struct rlimit rl = {0, 0};
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: out of file descriptors (%s: %s): "
			 "raise ulimit -n (now %llu; %u nodes need about %u "
			 "per node)",
			 what, strerror(e), (unsigned long long)rl.rlim_cur,
			 r->nodes, r->nodes + 32);
	} else if (e == ENOMEM || e == ENOBUFS) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: out of memory (%s: %s)", what,
			 strerror(e));
	} else {
		snprintf(r->err, sizeof(r->err), "tcp rendezvous: %s: %s", what,
			 strerror(e));
	}
}

/* What the listener keeps of a connection it took: the two hellos its
 * proofs cover (node 0's WELCOME proof covers them too). */
struct transcript {
	struct tcp_hello open, acc;
};

static void drop(struct rdv *r, struct pend *p, const char *why)
{
	fprintf(stderr,
		"earth: node %u: tcp: rejected a connection from %s: %s\n",
		r->self, p->who, why);
	close(p->fd);
	p->fd = -1;
}

int tcp_pend_step(struct rdv *r, struct pend *p, int *fd, int kind, uint32_t lo,
		  uint32_t hi, struct tcp_addr *tab, struct transcript *tr)
{
	ssize_t k = recv(p->fd, (char *)&p->in + p->got, sizeof(p->in) - p->got,
			 MSG_DONTWAIT);
	if (k < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (k <= 0) {
		drop(r, p,
		     p->stage ? "closed before its proof: it refused ours, so "
				"the job secret (EARTH_JOB_SECRET) may differ "
				"between it and this node (its own message "
				"would say it failed the proof)"
			      : "closed before a complete hello");
		return 0;
	}
	p->got += (size_t)k;
	if (p->got < sizeof(p->in))
		return 0;
	p->got = 0;
	const char *why = NULL;
	if (p->stage == 0) {
		p->open = p->in;
		why = check_hello(r, &p->open, kind, lo, hi);
		if (!why && fd[p->open.node] >= 0)
			why = "that node already connected";
		if (why) {
			drop(r, p, why);
			return 0;
		}
		/* We prove first: our nonce, and the MAC over both. */
		tcp_make_hello(r, &p->acc, TCP_HELLO_ACCEPT, 0);
		tcp_mac(p->acc.mac, r->secret, r->secret_len,
			TCP_LABEL_LISTENER, &p->open, &p->acc, NULL, 0);
		if (send(p->fd, &p->acc, sizeof(p->acc),
			 MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(p->acc)) {
			drop(r, p, "closed before our proof");
			return 0;
		}
		p->stage = 1;
		return 0;
	}
	if (p->in.magic != TCP_HELLO_MAGIC ||
	    p->in.version != TCP_HELLO_VERSION || p->in.kind != TCP_HELLO_PROOF)
		why = "not an EARTH proof";
	else if (!mac_ok(r, p->in.mac, TCP_LABEL_JOINER, &p->open, &p->acc,
			 NULL, 0))
		why = "wrong job secret (its proof does not match): its "
		      "EARTH_JOB_SECRET differs from this node's";
	else if (fd[p->open.node] >= 0)
		why = "that node already connected";
	if (why) {
		drop(r, p, why);
		return 0;
	}
	uint32_t n = p->open.node;
	set_blocking(p->fd, true);
	set_nodelay(p->fd);
	fd[n] = p->fd;
	p->fd = -1;
	if (tr) {
		tr[n].open = p->open;
		tr[n].acc = p->acc;
	}
	if (tab) {
		struct tcp_addr *a = &tab[n];
		memset(a, 0, sizeof(*a));
		a->family = p->ss.ss_family;
		a->port = htons(p->open.port);
		if (p->ss.ss_family == AF_INET)
			memcpy(a->addr,
			       &((struct sockaddr_in *)&p->ss)->sin_addr, 4);
		else
			memcpy(a->addr,
			       &((struct sockaddr_in6 *)&p->ss)->sin6_addr, 16);
	}
	return 1;
}

/* Takes what connections lfd (non-blocking) has waiting into *pv. -1 with
 * r->err set when out of descriptors or memory. */
static int accept_some(struct rdv *r, int lfd, struct pend **pv, size_t *np,
		       size_t *cap)
{
	for (int i = 0; i < 64; i++) {
		struct pend p;
		memset(&p, 0, sizeof(p));
		socklen_t sl = sizeof(p.ss);
		p.fd = accept4(lfd, (struct sockaddr *)&p.ss, &sl,
			       SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (p.fd < 0) {
			int e = errno;
			if (e == EMFILE || e == ENFILE || e == ENOMEM ||
			    e == ENOBUFS) {
				sys_err(r, "accept", e);
				return -1;
			}
			return 0; /* EAGAIN, or a connection that went */
		}
		if (*np == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			struct pend *v = realloc(*pv, c * sizeof(*v));
			if (!v) {
				close(p.fd);
				snprintf(r->err, sizeof(r->err),
					 "tcp rendezvous: out of memory");
				return -1;
			}
			*pv = v;
			*cap = c;
		}
		addr_str((struct sockaddr *)&p.ss, p.who, sizeof(p.who));
		p.t0 = tcp_mono_ns();
		(*pv)[(*np)++] = p;
	}
	return 0;
}

/* The nodes [lo, hi) that have not connected (fd[k] < 0). */
struct waiting {
	const int *fd;
	uint32_t lo, hi;
};
static bool not_connected(const void *ctx, uint32_t k)
{
	const struct waiting *w = ctx;
	return k >= w->lo && k < w->hi && w->fd[k] < 0;
}

/* r->err when the deadline passed with nodes of [lo, hi) still missing at
 * listener lfd: who, and what to check. */
static void missing_nodes(struct rdv *r, const int *fd, int lfd, int kind,
			  uint32_t lo, uint32_t hi)
{
	char who[160], at[80] = "?";
	struct waiting w = {fd, lo, hi};
	tcp_name_nodes(who, sizeof(who), r->nodes, not_connected, &w);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (!getsockname(lfd, (struct sockaddr *)&ss, &sl))
		addr_str((struct sockaddr *)&ss, at, sizeof(at));
	bool ucx = r->transport && !strcmp(r->transport, "ucx");
	snprintf(
	    r->err, sizeof(r->err),
	    "tcp rendezvous: %s did not %s within "
	    "EARTH_CONNECT_TIMEOUT: check that each was started (see "
	    "its errors), reaches %s (%s; a firewall?) and has this "
	    "job's EARTH_JOB_SECRET%s",
	    who, kind == TCP_HELLO_JOIN ? "join" : "connect to this node", at,
	    kind == TCP_HELLO_JOIN ? "EARTH_RENDEZVOUS's host and port"
				   : "its address toward node 0",
	    ucx ? ", and that its UCX_NET_DEVICES name a device it has" : "");
}

/*
 * Accepts connections on lfd until every node in [lo, hi) opened one with
 * a good hello of `kind` and proof (fd[k] set); reports and drops the
 * others. All pending connections are read at once, under the one
 * deadline; each has 5 s for its messages. For JOIN, fills tab[k] from the
 * peer address and the hello's port, and tr[k].
 */
static int accept_nodes(struct rdv *r, int *fd, int lfd, int kind, uint32_t lo,
			uint32_t hi, struct tcp_addr *tab,
			struct transcript *tr)
{
	uint32_t want = hi > lo ? hi - lo : 0, got = 0;
	struct pend *pv = NULL;
	struct pollfd *pf = NULL;
	size_t np = 0, cap = 0, pfcap = 0;
	int ret = -1;
	if (want && set_blocking(lfd, false)) {
		sys_err(r, "listener", errno);
		return -1;
	}
	while (got < want) {
		int left = ms_left(r);
		if (!left) {
			missing_nodes(r, fd, lfd, kind, lo, hi);
			goto out;
		}
		if (np + 1 > pfcap) {
			size_t c = 2 * (np + 1);
			struct pollfd *v = realloc(pf, c * sizeof(*v));
			if (!v) {
				snprintf(r->err, sizeof(r->err),
					 "tcp rendezvous: out of memory");
				goto out;
			}
			pf = v;
			pfcap = c;
		}
		uint64_t now = tcp_mono_ns(), first = UINT64_MAX;
		pf[0] = (struct pollfd){lfd, POLLIN, 0};
		for (size_t i = 0; i < np; i++) {
			pf[1 + i] = (struct pollfd){pv[i].fd, POLLIN, 0};
			uint64_t end = pv[i].t0 + HELLO_TIMEOUT_MS * 1000000ull;
			if (end < first)
				first = end;
		}
		if (first != UINT64_MAX) {
			uint64_t ms =
			    first > now ? (first - now) / 1000000 + 1 : 0;
			if (ms < (uint64_t)left)
				left = (int)ms;
		}
		int pr = poll(pf, 1 + np, left);
		if (pr < 0 && errno != EINTR) {
			sys_err(r, "poll", errno);
			goto out;
		}
		now = tcp_mono_ns();
		for (size_t i = 0; pr > 0 && i < np && got < want; i++)
			if (pf[1 + i].revents)
				got += (uint32_t)tcp_pend_step(
				    r, &pv[i], fd, kind, lo, hi, tab, tr);
		for (size_t i = 0; i < np; i++)
			if (pv[i].fd >= 0 &&
			    now - pv[i].t0 >= HELLO_TIMEOUT_MS * 1000000ull)
				drop(r, &pv[i],
				     pv[i].stage
					 ? "no proof within 5 s"
					 : "no complete hello within 5 s");
		size_t keep = 0;
		for (size_t i = 0; i < np; i++)
			if (pv[i].fd >= 0)
				pv[keep++] = pv[i];
		np = keep;
		if (pr > 0 && (pf[0].revents & POLLIN) && got < want &&
		    accept_some(r, lfd, &pv, &np, &cap))
			goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < np; i++)
		close(pv[i].fd);
	free(pv);
	free(pf);
	return ret;
}

/* One connect of fd to sa, not blocking past the deadline (a host that
 * drops SYNs or does not answer ARP would hold a blocking connect for the
 * kernel's retries, minutes). 0 (fd blocking again), or an errno:
 * ETIMEDOUT when the deadline passed first. */
static int connect_by_deadline(struct rdv *r, int fd, const struct sockaddr *sa,
			       socklen_t sl)
{
	if (set_blocking(fd, false))
		return errno;
	if (connect(fd, sa, sl) && errno != EINPROGRESS && errno != EINTR)
		return errno;
	for (;;) {
		int left = ms_left(r);
		if (!left)
			return ETIMEDOUT;
		struct pollfd q = {fd, POLLOUT, 0};
		int pr = poll(&q, 1, left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return errno;
		if (pr == 0)
			continue; /* ms_left says whether time is up */
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el))
			return errno;
		if (e)
			return e;
		return set_blocking(fd, true) ? errno : 0;
	}
}

/* Connects to sa, retrying until the deadline (the listener may not be up
 * yet). Returns the socket or -1. */
static int connect_retry(struct rdv *r, const struct sockaddr *sa, socklen_t sl)
{
	for (;;) {
		int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			sys_err(r, "socket", errno);
			return -1;
		}
		int e = connect_by_deadline(r, fd, sa, sl);
		if (!e) {
			set_nodelay(fd);
			return fd;
		}
		close(fd);
		if ((e != ECONNREFUSED && e != ETIMEDOUT && e != EINTR &&
		     e != ENETUNREACH && e != EHOSTUNREACH && e != EAGAIN) ||
		    !ms_left(r)) {
			char who[80];
			addr_str(sa, who, sizeof(who));
			if (e == EMFILE || e == ENFILE || e == ENOMEM ||
			    e == ENOBUFS)
				sys_err(r, "connect", e);
			else
				snprintf(r->err, sizeof(r->err),
					 "tcp rendezvous: cannot connect to "
					 "%s: %s%s",
					 who, strerror(e),
					 ms_left(r) ? ""
						    : " (EARTH_CONNECT_TIMEOUT "
						      "passed)");
			return -1;
		}
		int nap = ms_left(r);
		usleep(nap < 20 ? (useconds_t)nap * 1000 : 20000);
	}
}

int tcp_prove_to(struct rdv *r, int c, uint32_t peer, int kind, uint16_t port,
		 struct tcp_hello *open, struct tcp_hello *acc)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char who[80] = "?";
	if (!getpeername(c, (struct sockaddr *)&ss, &sl))
		addr_str((struct sockaddr *)&ss, who, sizeof(who));
	tcp_make_hello(r, open, kind, port);
	if (tcp_write_all(c, open, sizeof(*open))) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: node %u closed the connection", peer);
		return -1;
	}
	int left = ms_left(r);
	if (tcp_read_all(c, acc, sizeof(*acc), left ? left : 1)) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: node %u at %s did not answer our "
			 "hello (it rejected it: node number, node count or "
			 "EARTH_GMEM_MB? or it failed: see node %u's errors)",
			 peer, who, peer);
		return -1;
	}
	const char *why = NULL;
	if (acc->magic != TCP_HELLO_MAGIC || acc->version != TCP_HELLO_VERSION)
		why = "is not an EARTH node (not an EARTH hello)";
	else if (!mac_ok(r, acc->mac, TCP_LABEL_LISTENER, open, acc, NULL, 0))
		why = "failed the proof of the job secret: not this job's "
		      "node (something else listening there?) or another "
		      "EARTH_JOB_SECRET";
	else if (acc->kind != TCP_HELLO_ACCEPT || acc->node != peer ||
		 acc->nodes != r->nodes || acc->gmem_seg != r->gmem_seg)
		why = "answered for another node or job";
	if (why) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: node %u at %s %s", peer, who, why);
		return -1;
	}
	struct tcp_hello p;
	tcp_make_hello(r, &p, TCP_HELLO_PROOF, 0);
	tcp_mac(p.mac, r->secret, r->secret_len, TCP_LABEL_JOINER, open, acc,
		NULL, 0);
	if (tcp_write_all(c, &p, sizeof(p))) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: node %u closed the connection", peer);
		return -1;
	}
	return 0;
}

static socklen_t tab_sockaddr(const struct tcp_addr *a,
			      struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (void *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = a->port;
		memcpy(&s4->sin_addr, a->addr, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (void *)ss;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = a->port;
	memcpy(&s6->sin6_addr, a->addr, 16);
	return sizeof(*s6);
}

static int listen_on(const struct sockaddr *sa, socklen_t sl)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, sl) || listen(fd, SOMAXCONN)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Node 0's address from EARTH_RENDEZVOUS (rv: host:port, or [v6
 * address]:port), to listen on (node 0) or connect to; NULL, with r->err
 * set. */
static struct addrinfo *resolve(struct rdv *r, const char *rv)
{
	char host[256];
	const char *colon = strrchr(rv, ':');
	size_t hl = colon ? (size_t)(colon - rv) : 0;
	if (!colon || !hl || hl >= sizeof(host) || !colon[1]) {
		snprintf(r->err, sizeof(r->err),
			 "EARTH_RENDEZVOUS=%.100s: want host:port", rv);
		return NULL;
	}
	memcpy(host, rv, hl);
	host[hl] = 0;
	if (host[0] == '[' && host[hl - 1] == ']') { /* [v6 address] */
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = r->self == 0 ? AI_PASSIVE : 0;
	int g = getaddrinfo(host, colon + 1, &hints, &ai);
	if (g || !ai) {
		snprintf(r->err, sizeof(r->err), "EARTH_RENDEZVOUS=%.100s: %s",
			 rv, gai_strerror(g));
		return NULL;
	}
	return ai;
}

/* Node 0's listener: the one earthrun hands it (EARTH_RENDEZVOUS_FD,
 * listening since before the job started, so no other process can take
 * the port), else a new one on ai (rv). -1 with r->err set. */
static int lead_listener(struct rdv *r, const struct addrinfo *ai,
			 const char *rv)
{
	if (earth_setting_given(EARTH_SET_RENDEZVOUS_FD)) {
		int lfd = (int)earth_setting_u64(EARTH_SET_RENDEZVOUS_FD);
		int acc = 0;
		socklen_t al = sizeof(acc);
		if (getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) ||
		    !acc) {
			snprintf(r->err, sizeof(r->err),
				 "EARTH_RENDEZVOUS_FD=%d is not a listening "
				 "socket (it is set by earthrun, for node 0)",
				 lfd);
			return -1;
		}
		fcntl(lfd, F_SETFD, FD_CLOEXEC);
		return lfd;
	}
	int lfd = listen_on(ai->ai_addr, ai->ai_addrlen);
	if (lfd < 0) {
		int e = errno;
		if (e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS)
			sys_err(r, "listen", e);
		else
			snprintf(r->err, sizeof(r->err),
				 "tcp rendezvous: cannot listen on %.100s: %s",
				 rv, strerror(e));
	}
	return lfd;
}

/* Node 0: listens on ai (rv), accepts every other node's JOIN (filling
 * tab), then sends each the WELCOME, proved over the address table, and
 * the table. The listener in *lfd, for the caller to close. */
static int lead(struct rdv *r, int *fd, const struct addrinfo *ai,
		const char *rv, struct tcp_addr *tab, int *lfd)
{
	*lfd = lead_listener(r, ai, rv);
	if (*lfd < 0)
		return -1;
	struct transcript *tr = calloc(r->nodes, sizeof(*tr));
	if (!tr) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	int ret =
	    accept_nodes(r, fd, *lfd, TCP_HELLO_JOIN, 1, r->nodes, tab, tr);
	struct tcp_hello w;
	tcp_make_hello(r, &w, TCP_HELLO_WELCOME, 0);
	for (uint32_t k = 1; !ret && k < r->nodes; k++) {
		tcp_mac(w.mac, r->secret, r->secret_len, TCP_LABEL_WELCOME,
			&tr[k].open, &tr[k].acc, tab, r->nodes * sizeof(*tab));
		if (tcp_write_all(fd[k], &w, sizeof(w)) ||
		    tcp_write_all(fd[k], tab, r->nodes * sizeof(*tab))) {
			snprintf(r->err, sizeof(r->err),
				 "tcp rendezvous: node %u left during the "
				 "rendezvous",
				 k);
			ret = -1;
		}
	}
	free(tr);
	return ret;
}

/* Node i > 0: a listener for the nodes above it, on an ephemeral port of
 * the interface that reaches node 0 (c0's); its port in *port. The
 * socket, or -1 with r->err set. */
static int mesh_listener(struct rdv *r, int c0, uint16_t *port)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	if (getsockname(c0, (struct sockaddr *)&me, &ml)) {
		sys_err(r, "cannot name the interface that reaches node 0",
			errno);
		return -1;
	}
	if (me.ss_family == AF_INET)
		((struct sockaddr_in *)&me)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&me)->sin6_port = 0;
	int lfd = listen_on((struct sockaddr *)&me, ml);
	ml = sizeof(me);
	if (lfd < 0 || getsockname(lfd, (struct sockaddr *)&me, &ml)) {
		sys_err(r, "cannot listen for the other nodes", errno);
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	*port = ntohs(me.ss_family == AF_INET
			  ? ((struct sockaddr_in *)&me)->sin_port
			  : ((struct sockaddr_in6 *)&me)->sin6_port);
	return lfd;
}

/* Node i > 0, once welcomed: connects to every node 0 < j < i (MESH
 * hello and the proofs), then accepts the nodes above it on lfd. */
static int mesh(struct rdv *r, int *fd, const struct tcp_addr *tab, int lfd)
{
	struct tcp_hello open, acc;
	for (uint32_t j = 1; j < r->self; j++) {
		struct sockaddr_storage ss;
		socklen_t sl = tab_sockaddr(&tab[j], &ss);
		int c = connect_retry(r, (struct sockaddr *)&ss, sl);
		if (c < 0)
			return -1;
		fd[j] = c;
		if (tcp_prove_to(r, c, j, TCP_HELLO_MESH, 0, &open, &acc))
			return -1;
	}
	return accept_nodes(r, fd, lfd, TCP_HELLO_MESH, r->self + 1, r->nodes,
			    NULL, NULL);
}

/* Node i > 0: JOIN at node 0 (ai) and the proofs, its WELCOME and the
 * address table (into tab) back, then the mesh. The mesh listener in
 * *lfd, for the caller to close. */
static int join(struct rdv *r, int *fd, const struct addrinfo *ai,
		struct tcp_addr *tab, int *lfd)
{
	int c0 = connect_retry(r, ai->ai_addr, ai->ai_addrlen);
	if (c0 < 0)
		return -1;
	fd[0] = c0;
	uint16_t port;
	*lfd = mesh_listener(r, c0, &port);
	if (*lfd < 0)
		return -1;
	struct tcp_hello open, acc, w;
	if (tcp_prove_to(r, c0, 0, TCP_HELLO_JOIN, port, &open, &acc))
		return -1;
	int left = ms_left(r);
	const char *why = NULL;
	if (tcp_read_all(c0, &w, sizeof(w), left ? left : 1) ||
	    tcp_read_all(c0, tab, r->nodes * sizeof(*tab), HELLO_TIMEOUT_MS))
		why = !ms_left(r)
			  ? "node 0 sent no welcome within "
			    "EARTH_CONNECT_TIMEOUT: it still waits for other "
			    "nodes (its message names them and what to check)"
			  : "node 0 sent no welcome (it proved it has the job "
			    "secret, then dropped us or failed: see node 0's "
			    "errors)";
	else if (w.magic != TCP_HELLO_MAGIC || w.version != TCP_HELLO_VERSION ||
		 w.kind != TCP_HELLO_WELCOME ||
		 !mac_ok(r, w.mac, TCP_LABEL_WELCOME, &open, &acc, tab,
			 r->nodes * sizeof(*tab)))
		why = "node 0's welcome failed the proof of the job secret";
	if (why) {
		snprintf(r->err, sizeof(r->err), "tcp rendezvous: %s", why);
		return -1;
	}
	return mesh(r, fd, tab, *lfd);
}

/* Connects node r->self to every other: fd[p] (all -1 on entry) for each
 * peer p. 0, or -1 with r->err set (the sockets in fd left to close). */
static int rendezvous(struct rdv *r, int *fd)
{
	const char *rv = earth_setting_str(EARTH_SET_RENDEZVOUS);
	if (!rv || !*rv) {
		snprintf(r->err, sizeof(r->err),
			 "EARTH_RENDEZVOUS is not set: the tcp transport needs "
			 "node 0's host:port");
		return -1;
	}
	struct addrinfo *ai = resolve(r, rv);
	if (!ai)
		return -1;
	struct tcp_addr *tab = calloc(r->nodes, sizeof(*tab));
	int ret = -1, lfd = -1;
	if (!tab)
		snprintf(r->err, sizeof(r->err), "out of memory");
	else if (r->self == 0)
		ret = lead(r, fd, ai, rv, tab, &lfd);
	else
		ret = join(r, fd, ai, tab, &lfd);
	if (lfd >= 0)
		close(lfd);
	free(tab);
	freeaddrinfo(ai);
	return ret;
}

const char *tcp_rendezvous_fds(uint32_t self, uint32_t nodes, int *fd,
			       const char *transport)
{
	static char errbuf[512];
	struct rdv r;
	memset(&r, 0, sizeof(r));
	r.self = self;
	r.nodes = nodes;
	r.transport = transport;
	const char *e = parse_secret(&r, transport);
	if (e)
		return e;
	/* Default and range (0, 86400] s: the settings table. */
	double tmo = earth_setting_real(EARTH_SET_CONNECT_TIMEOUT);
	r.deadline_ns = tcp_mono_ns() + (uint64_t)(tmo * 1e9);
	for (uint32_t p = 0; p < nodes; p++)
		fd[p] = -1;
	int rc = rendezvous(&r, fd);
	net_forget(&r.secret, sizeof(r.secret));
	if (!rc)
		return NULL;
	snprintf(errbuf, sizeof(errbuf), "%s", r.err);
	for (uint32_t p = 0; p < nodes; p++)
		if (fd[p] >= 0) {
			close(fd[p]);
			fd[p] = -1;
		}
	return errbuf;
}

struct net *net_tcp_open(uint32_t self, uint32_t nodes, const char **err)
{
	*err = NULL;
	if (nodes < 2)
		return NULL;
	struct net *nt = tcp_data_new(self, nodes);
	int *fd = nt ? malloc(nodes * sizeof(*fd)) : NULL;
	if (!fd) {
		if (nt)
			nt->ops->fini(nt);
		*err = "out of memory";
		return NULL;
	}
	const char *e = tcp_rendezvous_fds(self, nodes, fd, "tcp");
	if (e) {
		free(fd);
		nt->ops->fini(nt);
		*err = e;
		return NULL;
	}
	tcp_data_start(nt, fd);
	free(fd);
	return nt;
}

uint32_t tcp_name_nodes(char *out, size_t len, uint32_t nodes,
			bool (*missing)(const void *ctx, uint32_t k),
			const void *ctx)
{
	uint32_t n = 0, last = 0;
	for (uint32_t k = 0; k < nodes; k++)
		if (missing(ctx, k)) {
			n++;
			last = k;
		}
	size_t at = (size_t)snprintf(out, len, "node%s", n == 1 ? "" : "s");
	uint32_t said = 0;
	for (uint32_t k = 0; k < nodes && at < len; k++) {
		if (!missing(ctx, k))
			continue;
		if (said == 8) {
			snprintf(out + at, len - at, " and %u others",
				 n - said);
			break;
		}
		const char *sep = !said ? " " : k == last ? " and " : ", ";
		at += (size_t)snprintf(out + at, len - at, "%s%u", sep, k);
		said++;
	}
	return n;
}
