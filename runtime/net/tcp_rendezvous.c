/* SPDX-License-Identifier: MIT */
/*
 * tcp_rendezvous.c - how the nodes of a tcp job find each other (blocking,
 * on the earth_run thread, before the SU starts), ending in handing the
 * connected sockets to the data path (tcp.c, tcp_data_start).
 *
 * Node 0 listens on EARTH_RENDEZVOUS; node i > 0 opens a listener on an
 * ephemeral port of the interface it reaches node 0 from, connects to
 * node 0 and sends a JOIN hello (job secret, its number, its port). Once
 * every node joined, node 0 sends each a WELCOME and the address table;
 * node i then connects to every node 0 < j < i (MESH hello) and accepts
 * the nodes above it. The connection to node 0 is the rendezvous one. A
 * connection with a bad hello (wrong secret, node number, node count, a
 * node that already joined, not an EARTH hello) is reported on stderr and
 * dropped; the rendezvous goes on.
 * Details: docs/architecture.md, "Between nodes: tcp".
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/settings.h"
#include "net/net.h"
#include "net/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HELLO_TIMEOUT_MS 5000 /* for one connection's hello */

struct rdv {
	uint32_t self, nodes;
	uint8_t secret[TCP_SECRET_MAX];
	uint32_t secret_len;
	uint64_t gmem_seg; /* EARTH_GMEM_MB: the same on every node */
	uint64_t deadline_ns;
	char err[256];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ms_left(const struct rdv *r)
{
	uint64_t now = mono_ns();
	if (now >= r->deadline_ns)
		return 0;
	uint64_t ms = (r->deadline_ns - now) / 1000000 + 1;
	return ms > 3600000 ? 3600000 : (int)ms;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char *parse_secret(struct rdv *r)
{
	const char *s = earth_setting_str(EARTH_SET_JOB_SECRET);
	if (!s || !*s)
		return "EARTH_JOB_SECRET is not set: the tcp transport needs a "
		       "random job secret (hex, at least 16 bytes; earthrun "
		       "--transport tcp makes one)";
	size_t n = strlen(s);
	if (n % 2 || n < 2 * TCP_SECRET_MIN || n > 2 * TCP_SECRET_MAX)
		return "EARTH_JOB_SECRET must be 32 to 128 hex digits (16 to "
		       "64 bytes)";
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return "EARTH_JOB_SECRET must be 32 to 128 hex digits "
			       "(16 to 64 bytes)";
		r->secret[i] = (uint8_t)(hi << 4 | lo);
	}
	r->secret_len = (uint32_t)(n / 2);
	/* Block-distributed arrays are laid out from the segment size:
	 * nodes that disagree on it would compute different addresses. */
	return net_gmem_seg(&r->gmem_seg);
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

/* Reads exactly len bytes within timeout_ms; 0, or -1. */
static int read_all(int fd, void *buf, size_t len, int timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	size_t got = 0;
	while (got < len) {
		uint64_t now = mono_ns();
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

static int write_all(int fd, const void *buf, size_t len)
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

static void make_hello(const struct rdv *r, struct tcp_hello *h, int kind,
		       uint16_t port)
{
	memset(h, 0, sizeof(*h));
	h->magic = TCP_HELLO_MAGIC;
	h->version = TCP_HELLO_VERSION;
	h->kind = (uint16_t)kind;
	h->node = r->self;
	h->nodes = r->nodes;
	h->secret_len = r->secret_len;
	memcpy(h->secret, r->secret, r->secret_len);
	h->port = port;
	h->gmem_seg = r->gmem_seg;
}

/* Checks a hello of `kind` from a node in [lo, hi); NULL or why not. */
static const char *check_hello(const struct rdv *r, const struct tcp_hello *h,
			       int kind, uint32_t lo, uint32_t hi)
{
	if (h->magic != TCP_HELLO_MAGIC || h->version != TCP_HELLO_VERSION)
		return "not an EARTH hello";
	unsigned diff = h->secret_len != r->secret_len;
	for (uint32_t i = 0; i < TCP_SECRET_MAX; i++) /* constant time */
		diff |= (unsigned)(h->secret[i] ^
				   (i < r->secret_len ? r->secret[i] : 0));
	if (diff)
		return "wrong job secret";
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

/*
 * Accepts connections on lfd until every node in [lo, hi) presented a good
 * hello of `kind` (fd[k] set); reports and drops the others. For JOIN,
 * fills tab[k] from the peer address and the hello's port.
 */
static int accept_nodes(struct rdv *r, int *fd, int lfd, int kind, uint32_t lo,
			uint32_t hi, struct tcp_addr *tab)
{
	uint32_t want = hi > lo ? hi - lo : 0, got = 0;
	while (got < want) {
		struct pollfd q = {lfd, POLLIN, 0};
		int left = ms_left(r);
		int pr = left ? poll(&q, 1, left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			snprintf(
			    r->err, sizeof(r->err),
			    "tcp rendezvous: only %u of the %u expected "
			    "nodes connected in time (EARTH_CONNECT_TIMEOUT)",
			    got, want);
			return -1;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int c = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		char who[80];
		addr_str((struct sockaddr *)&ss, who, sizeof(who));
		struct tcp_hello h;
		const char *why = NULL;
		if (read_all(c, &h, sizeof(h), HELLO_TIMEOUT_MS))
			why = "no complete hello within 5 s";
		else
			why = check_hello(r, &h, kind, lo, hi);
		if (!why && fd[h.node] >= 0)
			why = "that node already connected";
		if (why) {
			fprintf(stderr,
				"earth: node %u: tcp: rejected a "
				"connection from %s: %s\n",
				r->self, who, why);
			close(c);
			continue;
		}
		set_nodelay(c);
		fd[h.node] = c;
		if (tab) {
			struct tcp_addr *a = &tab[h.node];
			memset(a, 0, sizeof(*a));
			a->family = ss.ss_family;
			a->port = htons(h.port);
			if (ss.ss_family == AF_INET)
				memcpy(a->addr,
				       &((struct sockaddr_in *)&ss)->sin_addr,
				       4);
			else
				memcpy(a->addr,
				       &((struct sockaddr_in6 *)&ss)->sin6_addr,
				       16);
		}
		got++;
	}
	return 0;
}

/* Connects to sa, retrying until the deadline (the listener may not be up
 * yet). Returns the socket or -1. */
static int connect_retry(struct rdv *r, const struct sockaddr *sa, socklen_t sl)
{
	for (;;) {
		int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, sa, sl) == 0) {
			set_nodelay(fd);
			return fd;
		}
		int e = errno;
		close(fd);
		if ((e != ECONNREFUSED && e != ETIMEDOUT && e != EINTR &&
		     e != ENETUNREACH && e != EHOSTUNREACH && e != EAGAIN) ||
		    !ms_left(r)) {
			char who[80];
			addr_str(sa, who, sizeof(who));
			snprintf(r->err, sizeof(r->err),
				 "tcp rendezvous: cannot connect to %s: %s",
				 who, strerror(e));
			return -1;
		}
		usleep(20000);
	}
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

/* Node 0: listens on ai (rv), accepts every other node's JOIN (filling
 * tab), then sends each the WELCOME and the address table. The listener
 * in *lfd, for the caller to close. */
static int lead(struct rdv *r, int *fd, const struct addrinfo *ai,
		const char *rv, struct tcp_addr *tab, int *lfd)
{
	*lfd = listen_on(ai->ai_addr, ai->ai_addrlen);
	if (*lfd < 0) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: cannot listen on %.100s: %s", rv,
			 strerror(errno));
		return -1;
	}
	if (accept_nodes(r, fd, *lfd, TCP_HELLO_JOIN, 1, r->nodes, tab))
		return -1;
	struct tcp_hello w;
	make_hello(r, &w, TCP_HELLO_WELCOME, 0);
	for (uint32_t k = 1; k < r->nodes; k++)
		if (write_all(fd[k], &w, sizeof(w)) ||
		    write_all(fd[k], tab, r->nodes * sizeof(*tab))) {
			snprintf(r->err, sizeof(r->err),
				 "tcp rendezvous: node %u left during the "
				 "rendezvous",
				 k);
			return -1;
		}
	return 0;
}

/* Node i > 0: a listener for the nodes above it, on an ephemeral port of
 * the interface that reaches node 0 (c0's); its port in *port. The
 * socket, or -1 with r->err set. */
static int mesh_listener(struct rdv *r, int c0, uint16_t *port)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	getsockname(c0, (struct sockaddr *)&me, &ml);
	if (me.ss_family == AF_INET)
		((struct sockaddr_in *)&me)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&me)->sin6_port = 0;
	int lfd = listen_on((struct sockaddr *)&me, ml);
	ml = sizeof(me);
	if (lfd < 0 || getsockname(lfd, (struct sockaddr *)&me, &ml)) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: cannot listen for the other nodes: "
			 "%s",
			 strerror(errno));
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
 * hello), then accepts the nodes above it on lfd. */
static int mesh(struct rdv *r, int *fd, const struct tcp_addr *tab, int lfd)
{
	struct tcp_hello h;
	for (uint32_t j = 1; j < r->self; j++) {
		struct sockaddr_storage ss;
		socklen_t sl = tab_sockaddr(&tab[j], &ss);
		int c = connect_retry(r, (struct sockaddr *)&ss, sl);
		if (c < 0)
			return -1;
		fd[j] = c;
		make_hello(r, &h, TCP_HELLO_MESH, 0);
		if (write_all(c, &h, sizeof(h))) {
			snprintf(r->err, sizeof(r->err),
				 "tcp rendezvous: node %u closed the "
				 "connection",
				 j);
			return -1;
		}
	}
	return accept_nodes(r, fd, lfd, TCP_HELLO_MESH, r->self + 1, r->nodes,
			    NULL);
}

/* Node i > 0: JOIN at node 0 (ai), its WELCOME and the address table
 * (into tab) back, then the mesh. The mesh listener in *lfd, for the
 * caller to close. */
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
	struct tcp_hello h;
	make_hello(r, &h, TCP_HELLO_JOIN, port);
	if (write_all(c0, &h, sizeof(h))) {
		snprintf(r->err, sizeof(r->err),
			 "tcp rendezvous: node 0 closed the connection");
		return -1;
	}
	int left = ms_left(r);
	const char *why = NULL;
	if (read_all(c0, &h, sizeof(h), left ? left : 1) ||
	    read_all(c0, tab, r->nodes * sizeof(*tab), HELLO_TIMEOUT_MS))
		why = "node 0 sent no welcome (rejected us: wrong job secret, "
		      "node number or node count? see node 0's errors)";
	else
		why = check_hello(r, &h, TCP_HELLO_WELCOME, 0, 1);
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

struct net *net_tcp_open(uint32_t self, uint32_t nodes, const char **err)
{
	static char errbuf[320];
	*err = NULL;
	if (nodes < 2)
		return NULL;
	struct rdv r;
	memset(&r, 0, sizeof(r));
	r.self = self;
	r.nodes = nodes;
	const char *e = parse_secret(&r);
	if (e) {
		*err = e;
		return NULL;
	}
	/* Default and range (0, 86400] s: the settings table. */
	double tmo = earth_setting_real(EARTH_SET_CONNECT_TIMEOUT);
	r.deadline_ns = mono_ns() + (uint64_t)(tmo * 1e9);
	struct net *nt = tcp_data_new(self, nodes);
	int *fd = nt ? malloc(nodes * sizeof(*fd)) : NULL;
	if (!fd) {
		if (nt)
			nt->ops->fini(nt);
		*err = "out of memory";
		return NULL;
	}
	for (uint32_t p = 0; p < nodes; p++)
		fd[p] = -1;
	if (rendezvous(&r, fd)) {
		snprintf(errbuf, sizeof(errbuf), "%s", r.err);
		for (uint32_t p = 0; p < nodes; p++)
			if (fd[p] >= 0)
				close(fd[p]);
		free(fd);
		nt->ops->fini(nt);
		*err = errbuf;
		return NULL;
	}
	tcp_data_start(nt, fd);
	free(fd);
	return nt;
}
