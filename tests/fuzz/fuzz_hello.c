/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hello.c - libFuzzer target for the checking side of the tcp hello
 * and proof exchange (runtime/net/tcp_rendezvous.c, linked; its steps
 * are declared in runtime/net/tcp.h): fuzzed bytes are the peer's side of
 * a connection (a socketpair, closed for writing after them so that
 * nothing waits for more), read by
 *
 *   the listener (pend_step): the opening JOIN or MESH, then the PROOF
 *   answering the ACCEPT it sent;
 *   the joiner (prove_to): the ACCEPT answering its hello.
 *
 * randombytes_buf is the harness's (deterministic nonces), so half of the
 * inputs start from a valid exchange the harness computes with the job
 * secret, then flip the bytes the input names. Each side must accept
 * exactly when the harness's own verdict says so (job fields, kind, node
 * range, a node not yet connected, and the proof HMAC-SHA-256 over both
 * hellos), must never block past the short deadline, and must not crash.
 *
 *   make fuzz-hello  (tests/fuzz/module.mk; part of make test with clang-14)
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/settings.h"
#include "net/net.h"
#include "net/tcp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* What net_tcp_open would bring from the settings and tcp.c: not used by
 * the functions fuzzed here. */
struct net *tcp_data_new(uint32_t self, uint32_t nodes)
{
	(void)self, (void)nodes;
	return NULL;
}
void tcp_data_start(struct net *nt, const int *fd)
{
	(void)nt, (void)fd;
}
const char *earth_setting_str(enum earth_set id)
{
	(void)id;
	return NULL;
}
const char *net_gmem_seg(uint64_t *seg)
{
	*seg = 0;
	return NULL;
}
const struct earth_set_value *earth_setting(enum earth_set id)
{
	static const struct earth_set_value none;
	(void)id;
	return &none;
}

static uint64_t rng_state;
void randombytes_buf(void *const buf, const size_t size)
{
	unsigned char *b = buf;
	for (size_t i = 0; i < size; i++) {
		rng_state =
		    rng_state * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (unsigned char)(rng_state >> 56);
	}
}

static const uint8_t secret[32] = "fuzz-hello job secret, 32 bytes";

static void flip(uint8_t *msg, size_t base, const uint8_t *m, size_t nm)
{
	for (size_t i = 0; i + 1 < nm; i += 2)
		if (m[i] >= base && m[i] < base + sizeof(struct tcp_hello))
			msg[m[i] - base] ^= m[i + 1] ? m[i + 1] : 1;
}

/* The listener's verdict on an opening hello, as the harness sees it. */
static bool open_ok(const struct rdv *r, const struct tcp_hello *h, int kind,
		    uint32_t lo, uint32_t hi, const int *fd)
{
	return h->magic == TCP_HELLO_MAGIC && h->version == TCP_HELLO_VERSION &&
	       h->kind == kind && h->nodes == r->nodes && h->node >= lo &&
	       h->node < hi && h->gmem_seg == r->gmem_seg && fd[h->node] < 0;
}

static bool proof_ok(const struct rdv *r, const struct tcp_hello *p,
		     const char *label, const struct tcp_hello *open,
		     const struct tcp_hello *acc)
{
	uint8_t want[TCP_MAC_LEN];
	tcp_mac(want, r->secret, r->secret_len, label, open, acc, NULL, 0);
	return memcmp(want, p->mac, TCP_MAC_LEN) == 0;
}

static void listener(struct rdv *r, bool valid, const uint8_t *d, size_t n)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	int fd[8];
	for (int i = 0; i < 8; i++)
		fd[i] = -1;
	bool mesh = d[0] & 1;
	int kind = mesh ? TCP_HELLO_MESH : TCP_HELLO_JOIN;
	r->self = mesh ? d[1] % (r->nodes - 1) : 0;
	uint32_t lo = mesh ? r->self + 1 : 1, hi = r->nodes;
	if (d[0] & 2 && hi > lo)
		fd[lo] = 99; /* that node already connected */
	struct pend p;
	memset(&p, 0, sizeof(p));
	p.fd = sv[0];
	strcpy(p.who, "fuzz");
	struct tcp_hello open, proof;
	if (valid) {
		struct rdv peer = *r;
		peer.self = lo + d[1] % (hi - lo + 1);
		tcp_make_hello(&peer, &open, kind, 1234);
		flip((uint8_t *)&open, 0, d + 2, n - 2);
	} else {
		memset(&open, 0, sizeof(open));
		memcpy(&open, d + 2,
		       n - 2 < sizeof(open) ? n - 2 : sizeof(open));
	}
	if (write(sv[1], &open, sizeof(open)) != sizeof(open))
		abort();
	int got = tcp_pend_step(r, &p, fd, kind, lo, hi, NULL, NULL);
	bool ok = open_ok(r, &open, kind, lo, hi, fd);
	if (got || (p.fd >= 0) != ok)
		__builtin_trap();
	if (!ok) {
		close(sv[1]);
		return;
	}
	/* The ACCEPT: a proof of the secret over both hellos. */
	struct tcp_hello acc;
	if (read(sv[1], &acc, sizeof(acc)) != sizeof(acc) ||
	    acc.kind != TCP_HELLO_ACCEPT ||
	    !proof_ok(r, &acc, TCP_LABEL_LISTENER, &open, &acc))
		__builtin_trap();
	size_t off = n - 2 < sizeof(open) ? n - 2 : sizeof(open);
	if (valid) {
		tcp_make_hello(r, &proof, TCP_HELLO_PROOF, 0);
		tcp_mac(proof.mac, r->secret, r->secret_len, TCP_LABEL_JOINER,
			&open, &acc, NULL, 0);
		flip((uint8_t *)&proof, sizeof(open), d + 2, n - 2);
		if (write(sv[1], &proof, sizeof(proof)) != sizeof(proof))
			abort();
	} else {
		size_t k = n - 2 - off;
		memset(&proof, 0, sizeof(proof));
		memcpy(&proof, d + 2 + off,
		       k < sizeof(proof) ? k : sizeof(proof));
		if (write(sv[1], d + 2 + off, k) != (ssize_t)k)
			abort();
	}
	shutdown(sv[1], SHUT_WR);
	got = 0;
	for (int i = 0; i < 4 && p.fd >= 0 && !got; i++)
		got = tcp_pend_step(r, &p, fd, kind, lo, hi, NULL, NULL);
	ok = proof.magic == TCP_HELLO_MAGIC &&
	     proof.version == TCP_HELLO_VERSION &&
	     proof.kind == TCP_HELLO_PROOF &&
	     proof_ok(r, &proof, TCP_LABEL_JOINER, &open, &acc);
	if (got != ok)
		__builtin_trap();
	if (got)
		close(fd[open.node]);
	else if (p.fd >= 0)
		close(p.fd);
	close(sv[1]);
}

static void joiner(struct rdv *r, bool valid, const uint8_t *d, size_t n)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	uint32_t peer = d[1] % r->nodes;
	int kind = d[0] & 1 ? TCP_HELLO_MESH : TCP_HELLO_JOIN;
	/* The hello prove_to will make, with the same nonce. */
	uint64_t saved = rng_state;
	struct tcp_hello open, acc;
	tcp_make_hello(r, &open, kind, 4321);
	if (valid) {
		struct rdv lst = *r;
		lst.self = peer;
		tcp_make_hello(&lst, &acc, TCP_HELLO_ACCEPT, 0);
		tcp_mac(acc.mac, r->secret, r->secret_len, TCP_LABEL_LISTENER,
			&open, &acc, NULL, 0);
		flip((uint8_t *)&acc, 0, d + 2, n - 2);
		if (write(sv[1], &acc, sizeof(acc)) != sizeof(acc))
			abort();
	} else {
		memset(&acc, 0, sizeof(acc));
		memcpy(&acc, d + 2, n - 2 < sizeof(acc) ? n - 2 : sizeof(acc));
		if (write(sv[1], d + 2, n - 2) != (ssize_t)(n - 2))
			abort();
	}
	shutdown(sv[1], SHUT_WR);
	rng_state = saved;
	r->deadline_ns = tcp_mono_ns() + 50 * 1000000ull;
	struct tcp_hello o2, a2;
	int rc = tcp_prove_to(r, sv[0], peer, kind, 4321, &o2, &a2);
	bool whole = valid || n - 2 >= sizeof(acc);
	bool ok = whole && acc.magic == TCP_HELLO_MAGIC &&
		  acc.version == TCP_HELLO_VERSION &&
		  acc.kind == TCP_HELLO_ACCEPT && acc.node == peer &&
		  acc.nodes == r->nodes && acc.gmem_seg == r->gmem_seg &&
		  proof_ok(r, &acc, TCP_LABEL_LISTENER, &open, &acc);
	if (memcmp(&o2, &open, sizeof(open)) || (rc == 0) != ok ||
	    tcp_mono_ns() > r->deadline_ns + 1000000000ull)
		__builtin_trap();
	close(sv[0]);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3 || size > 2 + 2 * sizeof(struct tcp_hello) + 64)
		return 0;
	struct rdv r;
	memset(&r, 0, sizeof(r));
	r.nodes = 2 + (data[0] >> 4) % 6;
	r.self = (data[0] >> 2) & 1 ? 0 : (uint32_t)data[1] % r.nodes;
	memcpy(r.secret, secret, sizeof(secret));
	r.secret_len = sizeof(secret);
	r.gmem_seg = 1u << 26;
	r.deadline_ns = tcp_mono_ns() + 50 * 1000000ull;
	rng_state = data[1];
	bool valid = data[0] & 8;
	if (data[0] & 4)
		joiner(&r, valid, data, size);
	else
		listener(&r, valid, data, size);
	return 0;
}
