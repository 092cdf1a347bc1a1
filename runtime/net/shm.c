/* SPDX-License-Identifier: MIT */
/*
 * shm.c - the same-host transport: byte rings per ordered pair of nodes in
 * the mapping earthrun created (shm_layout.h). The writer copies a message
 * in (wrapping), then publishes its tail with release; the reader checks
 * the header before trusting any length, copies out a message that wraps,
 * and returns space by storing its head with release.
 */
#define EARTH_INTERNAL 1
#include "net/net.h"
#include "base/base.h"
#include "base/config.h"
#include "base/settings.h"
#include "net/shm_layout.h"
#include "base/stamp.h"

#include <errno.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct shm_net {
	struct net base;
	struct shm_job *job;
	/* The geometry, read once at attach and checked (net_shm_open):
	 * the header in the mapping is never read for it again. */
	size_t total;
	uint64_t mask;
	struct shm_ring **ring_to;   /* per peer: ring self -> peer */
	struct shm_ring **ring_from; /* per peer: ring peer -> self */
	/* Per peer: our writer position and the reader head seen last. */
	struct shm_out {
		uint64_t tail, head_seen, published;
		bool fresh; /* published by this flush: interrupt the peer */
	} * out;
	/* Per peer: our reader position. */
	uint64_t *in_head;
	unsigned char *scratch; /* a message that wraps, copied out */
	uint32_t next_peer;	/* round-robin start of poll */
};

static inline size_t msg_bytes(uint32_t len)
{
	return sizeof(struct wire_hdr) + (((size_t)len + 7) & ~(size_t)7);
}

static void ring_copy_in(struct shm_net *s, struct shm_ring *r, uint64_t pos,
			 const void *src, size_t n)
{
	size_t off = pos & s->mask, first = s->mask + 1 - off;
	if (first >= n) {
		memcpy(r->data + off, src, n);
	} else {
		memcpy(r->data + off, src, first);
		memcpy(r->data, (const char *)src + first, n - first);
	}
}

static void ring_copy_out(struct shm_net *s, struct shm_ring *r, uint64_t pos,
			  void *dst, size_t n)
{
	size_t off = pos & s->mask, first = s->mask + 1 - off;
	if (first >= n) {
		memcpy(dst, r->data + off, n);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((char *)dst + first, r->data, n - first);
	}
}

static int shm_send(struct net *t, uint32_t peer, const struct wire_hdr *h,
		    const void *payload)
{
	struct shm_net *s = (struct shm_net *)t;
	struct shm_ring *r = s->ring_to[peer];
	struct shm_out *o = &s->out[peer];
	size_t need = msg_bytes(h->len);
	if (o->tail + need - o->head_seen > s->mask + 1) {
		/* Pairs with the reader's release store of head. */
		uint64_t head =
		    atomic_load_explicit(&r->head, memory_order_acquire);
		/* Shared: the reader's head lies between the head seen
		 * last and our tail, or the ring was written by another. */
		if (head - o->head_seen > o->tail - o->head_seen)
			earth_fatal("shm transport: ring to node %u claims "
				    "its reader is at %llu, outside the "
				    "%llu..%llu written (field: head)",
				    peer, (unsigned long long)head,
				    (unsigned long long)o->head_seen,
				    (unsigned long long)o->tail);
		o->head_seen = head;
		if (o->tail + need - o->head_seen > s->mask + 1)
			return -EAGAIN;
	}
	ring_copy_in(s, r, o->tail, h, sizeof(*h));
	if (h->len)
		ring_copy_in(s, r, o->tail + sizeof(*h), payload, h->len);
	o->tail += need;
	return 0;
}

/* After a publish and a fence: a single-interrupt peer that armed its
 * signal gets it (one in flight at most: taking irq_armed disarms it).
 * Dekker with shm_irq_arm (the peer stores armed, fences, reads tails).
 * A full queue of real-time signals falls back to SIGIO, which the peer
 * handles the same way (a full rescan). */
static void shm_interrupt(struct shm_node *pn)
{
	if (!atomic_load_explicit(&pn->irq_armed, memory_order_relaxed) ||
	    !atomic_exchange_explicit(&pn->irq_armed, 0, memory_order_acquire))
		return;
	int pid = atomic_load_explicit(&pn->irq_pid, memory_order_relaxed);
	int tid = atomic_load_explicit(&pn->irq_tid, memory_order_relaxed);
	int sig = atomic_load_explicit(&pn->irq_sig, memory_order_relaxed);
	if (tid <= 0 || pid <= 0)
		return;
	EARTH_STAMP(STAMP_IRQ_RAISE);
	if (syscall(SYS_tgkill, pid, tid, sig) != 0 && errno == EAGAIN)
		syscall(SYS_tgkill, pid, tid, SIGIO);
}

static void shm_flush(struct net *t)
{
	struct shm_net *s = (struct shm_net *)t;
	bool any = false;
	for (uint32_t p = 0; p < t->nodes; p++) {
		struct shm_out *o = &s->out[p];
		if (o->published == o->tail)
			continue;
		o->published = o->tail;
		o->fresh = true;
		/* Pairs with the reader's acquire load of tail. */
		atomic_store_explicit(&s->ring_to[p]->tail, o->tail,
				      memory_order_release);
		any = true;
	}
	if (!any)
		return;
	/* Dekker with the peer's su_try_sleep: tail stored, then look. */
	atomic_thread_fence(memory_order_seq_cst);
	for (uint32_t p = 0; p < t->nodes; p++) {
		if (p == t->self)
			continue;
		_Atomic uint32_t *w = &shm_node_at(s->job, p)->su_state;
		if (s->out[p].fresh) {
			s->out[p].fresh = false;
			shm_interrupt(shm_node_at(s->job, p));
		}
		if (atomic_load_explicit(w, memory_order_relaxed) ==
		    UNIT_SLEEPING) {
			atomic_store_explicit(w, UNIT_RUNNING,
					      memory_order_relaxed);
			syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL,
				NULL, 0);
		}
	}
}

static unsigned shm_poll(struct net *t, void *ctx, net_deliver_fn deliver,
			 unsigned budget)
{
	struct shm_net *s = (struct shm_net *)t;
	unsigned done = 0;
	for (uint32_t k = 0; k < t->nodes && done < budget; k++) {
		uint32_t p = (s->next_peer + k) % t->nodes;
		if (p == t->self)
			continue;
		struct shm_ring *r = s->ring_from[p];
		/* Pairs with the writer's release store of tail. */
		uint64_t tail =
		    atomic_load_explicit(&r->tail, memory_order_acquire);
		uint64_t head = s->in_head[p];
		if (tail - head > s->mask + 1)
			earth_fatal("shm transport: ring from node %u claims "
				    "%llu bytes in a %llu-byte ring (field: "
				    "tail)",
				    p, (unsigned long long)(tail - head),
				    (unsigned long long)(s->mask + 1));
		while (head != tail && done < budget) {
			struct wire_hdr h;
			if (tail - head < sizeof(h))
				earth_fatal("shm transport: truncated header "
					    "from node %u",
					    p);
			ring_copy_out(s, r, head, &h, sizeof(h));
			const char *bad = wire_check(&h, p, t->self, t->nodes);
			if (bad)
				earth_fatal("message from node %u rejected: "
					    "field %s",
					    p, bad);
			if (h.len > t->max_payload)
				earth_fatal("message from node %u rejected: "
					    "field len (%u bytes, more than "
					    "this ring's %u-byte messages)",
					    p, h.len, t->max_payload);
			size_t need = msg_bytes(h.len);
			if (tail - head < need)
				earth_fatal("message from node %u rejected: "
					    "field len (%u bytes, only %llu "
					    "published)",
					    p, h.len,
					    (unsigned long long)(tail - head));
			const void *payload = NULL;
			if (h.len) {
				uint64_t at = head + sizeof(h);
				size_t off = at & s->mask;
				if (off + h.len <= s->mask + 1) {
					payload = r->data + off;
				} else {
					ring_copy_out(s, r, at, s->scratch,
						      h.len);
					payload = s->scratch;
				}
			}
			deliver(ctx, p, &h, payload);
			head += need;
			done++;
		}
		if (head != s->in_head[p]) {
			s->in_head[p] = head;
			/* Pairs with the writer's acquire load of head. */
			atomic_store_explicit(&r->head, head,
					      memory_order_release);
		}
	}
	s->next_peer = (s->next_peer + 1) % t->nodes;
	return done;
}

static bool shm_pending(struct net *t)
{
	struct shm_net *s = (struct shm_net *)t;
	for (uint32_t p = 0; p < t->nodes; p++) {
		if (p == t->self)
			continue;
		struct shm_ring *r = s->ring_from[p];
		if (atomic_load_explicit(&r->tail, memory_order_acquire) !=
		    s->in_head[p])
			return true;
	}
	return false;
}

/* Publishes (or withdraws, tid 0) where this node's interrupts go. The
 * acquire exchange in shm_interrupt pairs with the release store of
 * irq_armed here, so a peer that takes it sees pid, tid and sig. */
static void shm_irq(struct net *t, int pid, int tid, int sig)
{
	struct shm_net *s = (struct shm_net *)t;
	struct shm_node *me = shm_node_at(s->job, t->self);
	if (tid <= 0) {
		atomic_store_explicit(&me->irq_armed, 0, memory_order_seq_cst);
		atomic_store_explicit(&me->irq_tid, 0, memory_order_seq_cst);
		return;
	}
	atomic_store_explicit(&me->irq_pid, pid, memory_order_relaxed);
	atomic_store_explicit(&me->irq_sig, sig, memory_order_relaxed);
	atomic_store_explicit(&me->irq_tid, tid, memory_order_relaxed);
	atomic_store_explicit(&me->irq_armed, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
}

static void shm_irq_arm(struct net *t, bool on)
{
	struct shm_net *s = (struct shm_net *)t;
	struct shm_node *me = shm_node_at(s->job, t->self);
	atomic_store_explicit(&me->irq_armed, on ? 1 : 0, memory_order_release);
	/* Dekker with shm_flush/shm_interrupt: armed stored, then our rings
	 * are read by the poll that follows. */
	atomic_thread_fence(memory_order_seq_cst);
}

static _Atomic uint32_t *shm_su_word(struct net *t)
{
	struct shm_net *s = (struct shm_net *)t;
	return &shm_node_at(s->job, t->self)->su_state;
}

/* ---- a peer died: earthrun wrote which one into the mapping and sent
 * us SIGTERM. Only async-signal-safe calls below. ---- */

static struct shm_job *volatile death_job;
static volatile uint32_t death_self;

static char *put_num(char *p, long v)
{
	char tmp[24];
	int k = 0;
	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	do
		tmp[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 20);
	while (k)
		*p++ = tmp[--k];
	return p;
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static void on_sigterm(int sig)
{
	(void)sig;
	char msg[160], *p = msg;
	struct shm_job *j = death_job;
	int32_t who = j ? atomic_load(&j->dead_node) : -1;
	int32_t how = j ? atomic_load(&j->dead_how) : 0;
	p = put_str(p, "earth: node ");
	p = put_num(p, death_self);
	if (who >= 0) {
		p = put_str(p, ": stopping: node ");
		p = put_num(p, who);
		if (how >= 256) {
			p = put_str(p, " exited with status ");
			p = put_num(p, how - 256);
		} else {
			p = put_str(p, " died (signal ");
			p = put_num(p, how);
			p = put_str(p, ")");
		}
	} else {
		p = put_str(p, ": stopped by SIGTERM");
	}
	p = put_str(p, "\n");
	ssize_t r = write(2, msg, (size_t)(p - msg));
	(void)r;
	_exit(EARTH_EXIT_PEER_DIED);
}

static void shm_fini(struct net *t)
{
	struct shm_net *s = (struct shm_net *)t;
	signal(SIGTERM, SIG_DFL);
	shm_irq(t, 0, 0, 0);
	death_job = NULL;
	munmap(s->job, s->total);
	free(s->ring_to);
	free(s->ring_from);
	free(s->out);
	free(s->in_head);
	free(s->scratch);
	free(s);
}

static const struct net_ops shm_ops = {
    .name = "shm",
    .send = shm_send,
    .flush = shm_flush,
    .poll = shm_poll,
    .pending = shm_pending,
    .su_word = shm_su_word,
    .fini = shm_fini,
    .irq = shm_irq,
    .irq_arm = shm_irq_arm,
};

/* Pages [at, at + len) of the mapping into memory, rounded out to whole
 * pages (the neighbours' bytes are left as they are); 0 or -1. */
static int populate(const void *at, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)at & ~(page - 1);
	uintptr_t hi = ((uintptr_t)at + len + page - 1) & ~(page - 1);
	return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

/* This node's rings to and from every peer, put into memory now
 * (EARTH_SHM_POPULATE_MB): their contents unchanged (other nodes may be
 * sending already), each page allocated once in the job's file and mapped
 * here. Best effort: a kernel without MADV_POPULATE_WRITE (before 5.14),
 * or short of memory, leaves them to come on first use. */
static void shm_populate(struct shm_net *s, uint64_t ring_bytes)
{
	uint32_t peers = s->base.nodes - 1;
	size_t stride = shm_ring_stride(ring_bytes);
	if (!peers || 2 * (uint64_t)peers * ring_bytes >
			  ((uint64_t)EARTH_SHM_POPULATE_MB << 20))
		return;
	for (uint32_t p = 0; p < s->base.nodes; p++)
		if (p != s->base.self && (populate(s->ring_to[p], stride) ||
					  populate(s->ring_from[p], stride)))
			return;
}

struct net *net_shm_open(uint32_t self, uint32_t nodes, const char **err)
{
	*err = NULL;
	/* A malformed EARTH_SHM_FD was refused when the node started. */
	if (!earth_setting_given(EARTH_SET_SHM_FD)) {
		*err = "EARTH_SHM_FD is not set: start multi-node jobs on one "
		       "host with earthrun -n N";
		return NULL;
	}
	int fd = (int)earth_setting_u64(EARTH_SET_SHM_FD);
	/* The geometry, once, into private memory; checked against our node
	 * count and the size of the mapping's file. */
	struct shm_job probe;
	struct stat st;
	if (pread(fd, &probe, sizeof(probe), 0) != sizeof(probe) ||
	    probe.magic != SHM_MAGIC || fstat(fd, &st) != 0) {
		*err = "EARTH_SHM_FD does not name an earthrun job mapping";
		return NULL;
	}
	if (probe.nodes != nodes || nodes > SHM_MAX_NODES ||
	    probe.ring_bytes < 4096 || probe.ring_bytes > SHM_MAX_RING ||
	    (probe.ring_bytes & (probe.ring_bytes - 1)) ||
	    probe.total != shm_total(nodes, probe.ring_bytes) ||
	    st.st_size < 0 || probe.total > (uint64_t)st.st_size) {
		*err = "the job mapping does not match EARTH_NODES (started "
		       "by another earthrun?)";
		return NULL;
	}
	const uint64_t ring_bytes = probe.ring_bytes;
	const size_t total = (size_t)probe.total;
	void *map =
	    mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		*err = "cannot map the job's shared memory";
		return NULL;
	}
	struct shm_net *s = calloc(1, sizeof(*s));
	if (s) {
		s->out = calloc(nodes, sizeof(*s->out));
		s->in_head = calloc(nodes, sizeof(*s->in_head));
		s->ring_to = calloc(nodes, sizeof(*s->ring_to));
		s->ring_from = calloc(nodes, sizeof(*s->ring_from));
		s->scratch = malloc(WIRE_MAX_PAYLOAD);
	}
	if (!s || !s->out || !s->in_head || !s->ring_to || !s->ring_from ||
	    !s->scratch) {
		if (s) {
			free(s->out);
			free(s->in_head);
			free(s->ring_to);
			free(s->ring_from);
			free(s->scratch);
		}
		free(s);
		munmap(map, total);
		*err = "out of memory";
		return NULL;
	}
	s->base.ops = &shm_ops;
	s->base.self = self;
	s->base.nodes = nodes;
	s->job = map;
	s->total = total;
	s->mask = ring_bytes - 1;
	for (uint32_t p = 0; p < nodes; p++) {
		s->ring_to[p] = shm_ring_at(map, nodes, ring_bytes, self, p);
		s->ring_from[p] = shm_ring_at(map, nodes, ring_bytes, p, self);
	}
	shm_populate(s, ring_bytes);
	/* Resume where the rings are (a fresh job: all zero); the indices
	 * are shared, so they are checked like every later read. */
	for (uint32_t p = 0; p < nodes; p++) {
		uint64_t tail = atomic_load(&s->ring_to[p]->tail);
		uint64_t head = atomic_load(&s->ring_to[p]->head);
		if (tail - head > ring_bytes) {
			shm_fini(&s->base);
			*err = "the job mapping's rings are malformed (field: "
			       "head)";
			return NULL;
		}
		s->out[p].tail = s->out[p].published = tail;
		s->out[p].head_seen = head;
		s->in_head[p] = atomic_load(&s->ring_from[p]->head);
	}
	/* A message must fit a ring with room to spare for the next one. */
	uint64_t maxp = ring_bytes / 4;
	s->base.max_payload =
	    maxp < WIRE_MAX_PAYLOAD ? (uint32_t)maxp : WIRE_MAX_PAYLOAD;
	death_self = self;
	death_job = map;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigterm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	return &s->base;
}
