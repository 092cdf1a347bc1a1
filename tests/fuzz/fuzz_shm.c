/* SPDX-License-Identifier: MIT */
/*
 * fuzz_shm.c - libFuzzer target for the receiving side of the shm
 * transport (runtime/net/shm.c): a job mapping laid out as earthrun makes
 * it (a memfd, the job header, 3 nodes, 4 KiB rings), opened by
 * net_shm_open as node `self`, whose rings from the other nodes hold what
 * a hostile local process wrote: fuzzed head and tail indices (as found at
 * open, then as the poll sees them) and fuzzed bytes, half of the time
 * with valid messages laid in first. The node polls them. Every message
 * delivered must pass wire_check and carry h->len readable bytes within
 * the ring or the transport's scratch; anything else must be a clean
 * rejection (earth_fatal, built with -DEARTH_FATAL_HOOK, longjmps back).
 *
 *   make fuzz-shm  (tests/fuzz/module.mk; part of make test with clang-14)
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/base.h"
#include "base/settings.h"
#include "net/net.h"
#include "net/shm_layout.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NODES 3
#define RING 4096u

static int map_fd = -1;
static jmp_buf fatal_jmp;

const struct earth_set_value *earth_setting(enum earth_set id)
{
	static struct earth_set_value fd_value = {.given = true};
	static const struct earth_set_value none;
	if (id != EARTH_SET_SHM_FD)
		return &none;
	fd_value.u = (uint64_t)map_fd;
	return &fd_value;
}

static void on_fatal(const char *msg)
{
	(void)msg;
	longjmp(fatal_jmp, 1);
}

static unsigned delivered;

static void on_msg(void *ctx, uint32_t from, const struct wire_hdr *h,
		   const void *payload)
{
	struct net *t = ctx;
	if (wire_check(h, from, t->self, t->nodes) || from == t->self ||
	    h->len > t->max_payload || (h->len && !payload))
		__builtin_trap();
	volatile unsigned char sink = 0;
	for (uint32_t i = 0; i < h->len; i++)
		sink ^= ((const unsigned char *)payload)[i];
	(void)sink;
	delivered++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t total = shm_total(NODES, RING);
	if (map_fd < 0) {
		earth_fatal_hook = on_fatal;
		map_fd = memfd_create("fuzz_shm", MFD_CLOEXEC);
		if (map_fd < 0 || ftruncate(map_fd, (off_t)total))
			abort();
	}
	if (size < 2 + 2 * 16)
		return 0;
	struct shm_job *j =
	    mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (j == MAP_FAILED)
		abort();
	memset(j, 0, total);
	j->magic = SHM_MAGIC;
	j->nodes = NODES;
	j->ring_bytes = RING;
	j->total = total;
	uint32_t self = data[0] % NODES;
	bool lay = data[0] & 0x80;
	const uint8_t *idx = data + 2;
	data += 2 + 2 * 16;
	size -= 2 + 2 * 16;
	/* The two rings into self: indices, then bytes. */
	for (uint32_t k = 0, p = 0; p < NODES; p++) {
		if (p == self)
			continue;
		struct shm_ring *r = shm_ring_at(j, NODES, RING, p, self);
		uint64_t head, tail;
		memcpy(&head, idx + 16 * k, 8);
		memcpy(&tail, idx + 16 * k + 8, 8);
		if (idx[16 * k] & 1) { /* mostly near each other */
			head &= 0xffff;
			tail = head + (tail & 0x1fff);
		}
		size_t n = size / 2 < RING ? size / 2 : RING;
		const uint8_t *bytes = data + k * n;
		for (size_t i = 0; i < RING; i++)
			r->data[(head + i) & (RING - 1)] = n ? bytes[i % n] : 0;
		if (lay) { /* valid messages first, then the fuzzed bytes */
			uint64_t at = head;
			for (unsigned m = 0; m < 4 && m < n; m++) {
				struct wire_hdr h = {.magic = WIRE_MAGIC,
						     .version = WIRE_VERSION,
						     .type = W_SYNC,
						     .src = (uint16_t)p,
						     .n = 1};
				if (bytes[m] & 1) {
					h.type = W_BLK_DATA;
					h.len = bytes[m] & 0x7f;
				}
				for (size_t i = 0; i < sizeof(h); i++)
					r->data[(at + i) & (RING - 1)] =
					    ((unsigned char *)&h)[i];
				at += sizeof(h) + ((h.len + 7) & ~7u);
			}
		}
		atomic_store(&r->head, head);
		atomic_store(&r->tail, tail);
		k++;
	}
	static struct net *t;
	t = NULL;
	delivered = 0;
	if (setjmp(fatal_jmp) == 0) {
		const char *err = NULL;
		t = net_shm_open(self, NODES, &err);
		if (t) {
			/* A writer moving tail after the open. */
			for (unsigned round = 0; round < 4; round++) {
				if (round == 2 && size) {
					struct shm_ring *r = shm_ring_at(
					    j, NODES, RING, (self + 1) % NODES,
					    self);
					atomic_fetch_add(&r->tail,
							 (uint64_t)data[0] * 8);
				}
				t->ops->poll(t, t, on_msg, 64);
			}
		}
	}
	if (t)
		t->ops->fini(t);
	munmap(j, total);
	return 0;
}
