/* SPDX-License-Identifier: MIT */
/*
 * ucp_pair.h - two processes joined by UCP for the raw floors
 * (ucp_floor.c): the origin (the process that starts) forks the target,
 * each pins itself to one of the two CPUs a node uses (bench_cpus: the
 * origin on the EU's, the target on the SU's, as the floors of
 * benchmarks/lib do), creates its own context and single-threaded worker
 * on the medium asked for, registers two regions of the same length (one
 * allocated by UCX, UCP_MEM_MAP_ALLOCATE, one mapped by us and registered),
 * and the two exchange worker addresses, region addresses and packed rkeys
 * over a socketpair. No PMIx: the floor needs nothing but the two
 * processes.
 *
 * The origin drives; the target progresses its worker all the time (over
 * tcp a get and a put are carried out in software by the target, as they
 * would be by a node's SU) and answers control messages (active message
 * UCP_PAIR_AM_CTL) from the origin.
 */
#ifndef EARTH_BENCH_UCP_PAIR_H
#define EARTH_BENCH_UCP_PAIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucp/api/ucp.h>

/* Active-message ids: the 8-byte ping (and its pong), control. */
#define UCP_PAIR_AM_PING 1u
#define UCP_PAIR_AM_CTL 2u

/* The regions: allocated by UCX (over shm in posix shared memory, which
 * the peer maps and reaches with loads and stores), or mapped by us and
 * registered (over shm reached through cma, a system call per access). */
enum { UCP_PAIR_REG_UCX, UCP_PAIR_REG_OWN, UCP_PAIR_REGS };

struct ucp_pair_region {
	void *addr; /* ours */
	ucp_mem_h memh;
	uint64_t peer_addr; /* the peer's, as the peer sees it */
	ucp_rkey_h peer_rkey;
};

struct ucp_pair {
	int origin;	    /* 1 in the process that started, 0 in the target */
	int cpu;	    /* the CPU this process pinned itself to */
	const char *medium; /* "shm" or "tcp" */
	ucp_context_h ctx;
	ucp_worker_h worker;
	ucp_ep_h ep;
	struct ucp_pair_region reg[UCP_PAIR_REGS];
	size_t len; /* of each region */
	int fd;	    /* the socketpair to the peer */
	pid_t peer; /* origin: the target's pid */
	/* 1: the endpoint has peer error handling (over tcp; UCX 1.13's
	 * posix transport has none) */
	int peer_errors;
	volatile int peer_failed;
	/* the last 8-byte ping or control value received, and how many */
	volatile uint64_t ping, ctl;
	volatile uint64_t n_ping, n_ctl;
};

/* UCX_TLS (and UCX_NET_DEVICES) for a medium: "shm" or "tcp"; NULL for
 * anything else. */
const char *ucp_pair_tls(const char *medium);
/* Starts the pair over `medium` with regions of `len` bytes (zeroed): 0
 * in both processes (p->origin tells which), -1 after a message (in the
 * origin; a target that fails exits non-zero). */
int ucp_pair_start(struct ucp_pair *p, const char *medium, size_t len);
/* Progresses until the request completes and frees it (NULL: done at
 * once): 0, or -1 after a message naming `what`. */
int ucp_pair_wait(struct ucp_pair *p, ucs_status_ptr_t req, const char *what);
/* Sends an 8-byte active message (id UCP_PAIR_AM_*) and waits for it to
 * complete locally: 0 or -1. */
int ucp_pair_send(struct ucp_pair *p, unsigned id, uint64_t value);
/* Progresses until `n_ctl` reaches `count` (the peer's count-th control
 * value): 0, or -1 when the peer failed. */
int ucp_pair_wait_ctl(struct ucp_pair *p, uint64_t count);
/* Closes the endpoint and the worker. Origin: waits for the target and
 * returns 0 when both ended well, else 1; the target _exits with
 * `status`. */
int ucp_pair_end(struct ucp_pair *p, int status);
/* Prints the endpoint's lanes (ucp_ep_print_info), each line starting
 * with '#'. */
void ucp_pair_print_lanes(struct ucp_pair *p);

#endif /* EARTH_BENCH_UCP_PAIR_H */
