/* SPDX-License-Identifier: MIT */
/*
 * ucp_floor.c - the raw UCP floors the EARTH figures over ucx are judged
 * against, between two processes on the two CPUs of a node (ucp_pair.h),
 * over one medium: shm (UCX_TLS=posix,cma) or tcp (UCX_TLS=tcp,
 * UCX_NET_DEVICES=lo).
 *
 *   pingpong_rtt.ucx_<m>  8-byte active-message ping-pong, round trip (ns)
 *   ucp_get_lat.ucx_<m>   8-byte ucp_get_nbx from the target's registered
 *                         region, each completed before the next (ns)
 *   ucp_put_bw.ucx_<m>    ucp_put_nbx of blocks of REMOTE_OPS_BLK bytes
 *                         (the block of blkmov_bw) into the target's
 *                         region, each flushed to the target before the
 *                         next (MB/s, 10^6 bytes)
 *   ucp_get_bw.ucx_<m>    ucp_get_nbx of blocks of the same size from
 *                         the target's region, each completed before the
 *                         next (MB/s): the floor of a block move from
 *                         another node's global memory
 *   ucp_get_lat_own.ucx_<m>, ucp_put_bw_own.ucx_<m>,
 *   ucp_get_bw_own.ucx_<m>  the same between
 *                         regions each process mapped itself and
 *                         registered, where the others use regions UCX
 *                         allocated (UCP_MEM_MAP_ALLOCATE): over shm UCX
 *                         reaches the first through cma (a system call
 *                         per access), the second in posix shared memory
 *
 * Each figure is the median over the repetitions (bench_reps), after one
 * repetition not recorded (wire-up, first touches). The target
 * progresses its worker all the time, as a node's SU would. Every value
 * moved is checked: the pongs, each word fetched, every block put (the
 * target compares its whole region); a wrong byte prints WRONG and the
 * program exits 1.
 *
 *   ucp_floor shm|tcp [ROUNDS [BLOCK [BLOCKS]]]
 *
 * ROUNDS: ping-pongs and gets per repetition (QUICK 2000, else 20000);
 * BLOCK: bytes per put or get (REMOTE_OPS_BLK); BLOCKS: puts (gets) per
 * repetition (64 MiB worth with QUICK, else 256 MiB, at least 4).
 */
#define _GNU_SOURCE 1
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "remote_ops/remote_ops.h"
#include "ucp_pair.h"

/* Control messages: command in the top byte, argument below; FILL and
 * VERIFY name the region in the argument's top byte (REG_OF) and the seed
 * below. */
enum { CTL_FILL = 1, CTL_VERIFY, CTL_WHERE, CTL_QUIT, CTL_REPLY };
#define CTL(cmd, arg) ((uint64_t)(cmd) << 56 | ((arg) & ((1ull << 56) - 1)))
#define CTL_CMD(v) ((int)((v) >> 56))
#define CTL_ARG(v) ((v) & ((1ull << 56) - 1))
#define REG_ARG(reg, seed) ((uint64_t)(reg) << 48 | ((seed)&0xffffffffffffull))
#define REG_OF(arg) ((int)((arg) >> 48))
#define SEED_OF(arg) ((arg)&0xffffffffffffull)

/* The word at index i of a region filled with `seed`. */
static uint64_t pattern(uint64_t seed, size_t i)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull ^
		     (i + 1) * 0xff51afd7ed558ccdull;
	return x ^ x >> 29;
}

static void fill(uint64_t *w, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		w[i] = pattern(seed, i);
}

static size_t count_wrong(const uint64_t *w, size_t n, uint64_t seed)
{
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += w[i] != pattern(seed, i);
	return bad;
}

static const char *alarm_msg = "ucp_floor: no end after the time allowed "
			       "(peer stuck or dead?): stopped\n";

static void on_alarm(int sig)
{
	(void)sig;
	ssize_t w = write(2, alarm_msg, strlen(alarm_msg));
	(void)w;
	_exit(1);
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- the target: progresses, answers pings and control messages ---- */

static int target(struct ucp_pair *p)
{
	uint64_t pings = 0, ctls = 0;
	size_t words = p->len / sizeof(uint64_t);
	for (;;) {
		ucp_worker_progress(p->worker);
		if (p->peer_failed)
			return 1;
		if (p->n_ping != pings) {
			pings = p->n_ping;
			if (ucp_pair_send(p, UCP_PAIR_AM_PING, p->ping + 1))
				return 1;
		}
		if (p->n_ctl == ctls)
			continue;
		ctls = p->n_ctl;
		uint64_t v = p->ctl, reply = 0;
		int cmd = CTL_CMD(v), reg = REG_OF(CTL_ARG(v));
		if ((cmd == CTL_FILL || cmd == CTL_VERIFY) &&
		    reg >= UCP_PAIR_REGS)
			cmd = 0; /* unknown */
		switch (cmd) {
		case CTL_FILL:
			fill(p->reg[reg].addr, words, SEED_OF(CTL_ARG(v)));
			break;
		case CTL_VERIFY:
			reply = count_wrong(p->reg[reg].addr, words,
					    SEED_OF(CTL_ARG(v)));
			break;
		case CTL_WHERE: /* the CPU pinned to, the CPU run on */
			reply =
			    (uint64_t)p->cpu << 16 | (uint16_t)sched_getcpu();
			break;
		case CTL_QUIT:
			return 0;
		default:
			fprintf(stderr,
				"ucp_floor: control message %#llx "
				"unknown\n",
				(unsigned long long)v);
			return 1;
		}
		if (ucp_pair_send(p, UCP_PAIR_AM_CTL, CTL(CTL_REPLY, reply)))
			return 1;
	}
}

/* ---- the origin: one control message and its answer ---- */

static int ctl(struct ucp_pair *p, int cmd, uint64_t arg, uint64_t *answer)
{
	uint64_t n = p->n_ctl + 1;
	if (ucp_pair_send(p, UCP_PAIR_AM_CTL, CTL(cmd, arg)) ||
	    ucp_pair_wait_ctl(p, n) || CTL_CMD(p->ctl) != CTL_REPLY)
		return -1;
	*answer = CTL_ARG(p->ctl);
	return 0;
}

/* ---- the figures; each returns ns (or MB/s), -1 on error ---- */

static uint64_t next_ping = 1;

/* One repetition of `rounds` ping-pongs: ns per round trip. */
static double pingpong(struct ucp_pair *p, long rounds, long *wrong)
{
	double t0 = now_ns();
	for (long i = 0; i < rounds; i++) {
		uint64_t v = next_ping, n = p->n_ping + 1;
		next_ping += 2;
		if (ucp_pair_send(p, UCP_PAIR_AM_PING, v))
			return -1;
		while (p->n_ping < n && !p->peer_failed)
			ucp_worker_progress(p->worker);
		if (p->peer_failed)
			return -1;
		*wrong += p->ping != v + 1;
	}
	return (now_ns() - t0) / (double)rounds;
}

/* One repetition of `rounds` 8-byte gets from words spread over the
 * target's region (filled with `seed`): ns per get. */
static double get_lat(struct ucp_pair *p, struct ucp_pair_region *r,
		      long rounds, uint64_t seed, long *wrong)
{
	size_t words = p->len / sizeof(uint64_t);
	ucp_request_param_t rp = {.op_attr_mask = 0};
	double t0 = now_ns();
	for (long i = 0; i < rounds; i++) {
		size_t w = ((size_t)i * 7919u) % words;
		uint64_t v = 0;
		if (ucp_pair_wait(p,
				  ucp_get_nbx(p->ep, &v, sizeof(v),
					      r->peer_addr + w * sizeof(v),
					      r->peer_rkey, &rp),
				  "ucp_get_nbx"))
			return -1;
		*wrong += v != pattern(seed, w);
	}
	return (now_ns() - t0) / (double)rounds;
}

/* One repetition: `blocks` puts of our whole region (filled with `seed`)
 * into the target's, each flushed before the next: MB/s. */
static double put_bw(struct ucp_pair *p, struct ucp_pair_region *r, long blocks)
{
	ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH,
				  .memh = r->memh};
	ucp_request_param_t fp = {.op_attr_mask = 0};
	double t0 = now_ns();
	for (long i = 0; i < blocks; i++)
		if (ucp_pair_wait(p,
				  ucp_put_nbx(p->ep, r->addr, p->len,
					      r->peer_addr, r->peer_rkey, &rp),
				  "ucp_put_nbx") ||
		    ucp_pair_wait(p, ucp_ep_flush_nbx(p->ep, &fp),
				  "ucp_ep_flush_nbx"))
			return -1;
	return (double)p->len * (double)blocks / (now_ns() - t0) * 1e3;
}

/* One repetition: `blocks` gets of the target's whole region (filled with
 * `seed`) into ours, each completed before the next: MB/s; what the last
 * one brought is checked. */
static double get_bw(struct ucp_pair *p, struct ucp_pair_region *r, long blocks,
		     uint64_t seed, long *wrong)
{
	ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH,
				  .memh = r->memh};
	memset(r->addr, 0, p->len);
	double t0 = now_ns();
	for (long i = 0; i < blocks; i++)
		if (ucp_pair_wait(p,
				  ucp_get_nbx(p->ep, r->addr, p->len,
					      r->peer_addr, r->peer_rkey, &rp),
				  "ucp_get_nbx"))
			return -1;
	double bw = (double)p->len * (double)blocks / (now_ns() - t0) * 1e3;
	*wrong += (long)count_wrong(r->addr, p->len / sizeof(uint64_t), seed);
	return bw;
}

/* Runs one figure bench_reps times after one repetition not recorded,
 * prints its median; the data checks add into *wrong. Gets and puts go
 * to and from region `reg` (UCP_PAIR_REG_*) on both sides; the figures of
 * the region we map ourselves are named *_own. */
enum fig { FIG_PINGPONG, FIG_GET, FIG_PUT, FIG_GET_BW };

static int figure(struct ucp_pair *p, enum fig f, int reg, long n, long *wrong)
{
	static const char *const names[] = {"pingpong_rtt", "ucp_get_lat",
					    "ucp_put_bw", "ucp_get_bw"};
	struct ucp_pair_region *rg = &p->reg[reg];
	double v[64];
	int reps = bench_reps < 64 ? bench_reps : 64;
	uint64_t answer;
	for (int r = -1; r < reps; r++) {
		uint64_t seed = (uint64_t)(f * 1000 + reg * 100 + r + 1);
		double x = -1;
		switch (f) {
		case FIG_PINGPONG:
			x = pingpong(p, r < 0 ? n / 10 + 1 : n, wrong);
			break;
		case FIG_GET:
			if (ctl(p, CTL_FILL, REG_ARG(reg, seed), &answer))
				return -1;
			x = get_lat(p, rg, r < 0 ? n / 10 + 1 : n, seed, wrong);
			break;
		case FIG_PUT:
			fill(rg->addr, p->len / sizeof(uint64_t), seed);
			x = put_bw(p, rg, n);
			if (x > 0 &&
			    ctl(p, CTL_VERIFY, REG_ARG(reg, seed), &answer))
				return -1;
			if (x > 0 && answer) {
				printf("ucp_floor.%s: put: %llu WRONG words at "
				       "the target\n",
				       p->medium, (unsigned long long)answer);
				*wrong += (long)answer;
			}
			break;
		case FIG_GET_BW:
			if (ctl(p, CTL_FILL, REG_ARG(reg, seed), &answer))
				return -1;
			x = get_bw(p, rg, n, seed, wrong);
			break;
		}
		if (x <= 0)
			return -1;
		if (r >= 0)
			v[r] = x;
	}
	char name[64];
	snprintf(name, sizeof(name), "%s%s.ucx_%s", names[f],
		 f != FIG_PINGPONG && reg == UCP_PAIR_REG_OWN ? "_own" : "",
		 p->medium);
	bench_metric(name, bench_median(v, reps),
		     f == FIG_PUT || f == FIG_GET_BW ? "MB/s" : "ns");
	return 0;
}

int main(int argc, char **argv)
{
	const char *medium = argc > 1 ? argv[1] : "";
	static char name[64]; /* bench_init keeps it for its end line */
	snprintf(name, sizeof(name), "ucp_floor.%s", medium);
	if (!ucp_pair_tls(medium) || argc > 5) {
		fprintf(stderr,
			"usage: ucp_floor shm|tcp [ROUNDS [BLOCK [BLOCKS]]]\n");
		return 2;
	}
	bench_init(name, 1, argv);
	long rounds = argc > 2 ? atol(argv[2]) : bench_quick ? 2000 : 20000;
	long block = argc > 3 ? atol(argv[3]) : (long)REMOTE_OPS_BLK;
	/* puts per repetition: 64 MiB worth (QUICK), else 256 MiB */
	long blocks = argc > 4 ? atol(argv[4])
			       : ((bench_quick ? 64l : 256l) << 20) /
				     (block > 0 ? block : 1);
	if (argc <= 4 && blocks < 4)
		blocks = 4;
	if (rounds < 1 || block < 4096 || block % 8 || blocks < 1) {
		fprintf(stderr, "ucp_floor: ROUNDS and BLOCKS must be >= 1, "
				"BLOCK a multiple of 8 and >= 4096\n");
		return 2;
	}
	/* a stuck peer must not hang make bench (the target dies with us:
	 * PR_SET_PDEATHSIG) */
	signal(SIGALRM, on_alarm);
	alarm(bench_quick ? 120 : 600);
	struct ucp_pair p;
	if (ucp_pair_start(&p, medium, (size_t)block))
		return 1;
	if (!p.origin)
		return ucp_pair_end(&p, target(&p));
	printf("# %s: UCX_TLS=%s%s, %ld rounds, %ld blocks of %ld bytes, "
	       "reps %d; endpoint error handling: %s\n",
	       name, ucp_pair_tls(medium),
	       strcmp(medium, "tcp") ? "" : " UCX_NET_DEVICES=lo", rounds,
	       blocks, block, bench_reps,
	       p.peer_errors ? "peer"
			     : "none (posix has no peer failure "
			       "detection)");
	long wrong = 0;
	int rc = figure(&p, FIG_PINGPONG, 0, rounds, &wrong);
	if (!rc)
		ucp_pair_print_lanes(&p);
	for (int reg = 0; reg < UCP_PAIR_REGS && !rc; reg++)
		rc = figure(&p, FIG_GET, reg, rounds, &wrong);
	for (int reg = 0; reg < UCP_PAIR_REGS && !rc; reg++)
		rc = figure(&p, FIG_PUT, reg, blocks, &wrong);
	for (int reg = 0; reg < UCP_PAIR_REGS && !rc; reg++)
		rc = figure(&p, FIG_GET_BW, reg, blocks, &wrong);
	uint64_t where = 0;
	if (!rc && ctl(&p, CTL_WHERE, 0, &where))
		rc = -1;
	if (!rc)
		printf("# %s: placement: origin pinned to CPU %d (on %d at "
		       "the end), target pinned to CPU %d (on %d)\n",
		       name, p.cpu, sched_getcpu(), (int)(where >> 16),
		       (int)(where & 0xffff));
	if (wrong)
		printf("%s: %ld WRONG values\n", name, wrong);
	uint64_t quit = CTL(CTL_QUIT, 0);
	if (ucp_pair_send(&p, UCP_PAIR_AM_CTL, quit))
		rc = -1;
	return ucp_pair_end(&p, rc || wrong ? 1 : 0);
}
