/* SPDX-License-Identifier: MIT */
/*
 * stuck.c - what the stuck-job detection (su/quiet.c) asks of the node:
 * may another thread still signal a slot here, and the report of the
 * slots that wait (docs/architecture.md, "Stuck jobs").
 *
 * Other threads. earth_sync_from_thread may come from any thread of the
 * process, at any time: a node is never declared idle for good while a
 * thread is inside it, or while the process has a thread that is not the
 * node's own (the EU and SU, or the one thread of a single-core node), not
 * the one waiting in earth_run, not one the transport started while it
 * opened (UCX's, PMIx's), not one that existed when the process
 * started (the sanitizers' helpers) and not an io_uring worker ("iou-*").
 * A program with a thread of its own is never declared stuck while that
 * thread lives.
 *
 * The report. No table of armed slots is kept (it would cost on every
 * INIT_SYNC): when the job is stuck the units are asleep, and the report
 * looks where a slot can lie for slots that wait. A live frame of a
 * threaded function the program's source table knows (Threaded-C,
 * base/srctab.h) holds its slots at the offset the table gives: those are
 * read, and named by slot number, fiber, function and the line of the
 * INIT_SYNC that armed them. Other frames and the rest of the registered
 * memory (static data, memory the program registered, the global segment)
 * are searched 8 bytes apart. A slot that waits is one whose fiber is in
 * the set of fibers this node armed slots with (gas/registry.h) and whose
 * count is above 0. When none waits, the report names the last fiber that
 * ran here (the EU's eu_cur_fiber, already kept for error messages): it
 * ended without enabling another here.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "su/su.h"
#include "base/srctab.h"
#include "base/symbols.h"
#include "gas/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KNOWN_MAX 64
static _Atomic int known_tids[KNOWN_MAX];
static _Atomic unsigned nknown, nstart;
/* Threads alive when earth_run started (the program's among them). */
static _Atomic int before_tids[KNOWN_MAX];
static _Atomic unsigned nbefore;

void node_tids_reset(void)
{
	atomic_store(&nknown, atomic_load(&nstart));
	atomic_store(&nbefore, 0);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);
		unsigned i = atomic_load(&nbefore);
		if (tid > 0 && i < KNOWN_MAX) {
			atomic_store(&before_tids[i], tid);
			atomic_store(&nbefore, i + 1);
		}
	}
	closedir(d);
}

void node_tid_known(void)
{
	int tid = (int)syscall(SYS_gettid);
	unsigned i = atomic_fetch_add(&nknown, 1);
	if (i < KNOWN_MAX)
		atomic_store(&known_tids[i], tid);
}

/* Is tid among the first *n of tids? */
static bool tid_in(_Atomic int *tids, _Atomic unsigned *n, int tid)
{
	unsigned k = atomic_load(n);
	for (unsigned i = 0; i < k && i < KNOWN_MAX; i++)
		if (atomic_load(&tids[i]) == tid)
			return true;
	return false;
}

static bool tid_known(int tid)
{
	return tid_in(known_tids, &nknown, tid);
}

static void add_all_threads(bool new_only);

static bool tid_before(int tid)
{
	return tid_in(before_tids, &nbefore, tid);
}

/* The units have started. TSan starts its helper thread with the first
 * pthread_create (ours): a thread that appeared since earth_run started
 * and before the units look is taken as the runtime's (TSan only). */
void node_tids_started(void)
{
#if defined(__SANITIZE_THREAD__)
	add_all_threads(true);
#endif
}

/* The transport is open: the threads it started meanwhile (UCX's async
 * thread, PMIx's progress thread), new since earth_run started while that
 * thread was busy opening it, are the runtime's. */
void node_tids_transport(void)
{
	add_all_threads(true);
}

/* The threads of the process when it started: the main thread and the
 * sanitizers' own. */
__attribute__((constructor)) static void node_threads_at_start(void)
{
	add_all_threads(false);
	atomic_store(&nstart, atomic_load(&nknown));
}

static void add_all_threads(bool new_only)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid > 0 && !tid_known(tid) &&
		    !(new_only && tid_before(tid))) {
			unsigned i = atomic_fetch_add(&nknown, 1);
			if (i < KNOWN_MAX)
				atomic_store(&known_tids[i], tid);
		}
	}
	closedir(d);
}

bool node_may_signal(struct earth_node *n, _Atomic uint32_t *inbox_users)
{
	(void)n;
	if (atomic_load_explicit(inbox_users, memory_order_seq_cst))
		return true;
	if (atomic_load(&nknown) > KNOWN_MAX)
		return true; /* cannot tell */
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return true;
	bool other = false;
	struct dirent *e;
	while (!other && (e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || tid_known(tid))
			continue;
		char path[64], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		} else {
			continue; /* ended meanwhile */
		}
		other = strncmp(comm, "iou-", 4) != 0;
	}
	closedir(d);
	return other;
}

/* ---- the report ---- */

/* The registered threaded function whose entry fiber is fn, or NULL. */
static const struct earth_tfunc *tfunc_of_entry(earth_fiber_fn fn)
{
	const struct earth_tfunc *f;
	for (int32_t id = 0; (f = reg_tfunc_at(id)); id++)
		if (f->entry == fn)
			return f;
	return NULL;
}

/* fn by its symbol, else as module+offset, else its address. */
static const char *fiber_symbol(earth_fiber_fn fn, char *buf, size_t room)
{
	const char *sym = sym_name((uintptr_t)fn);
	if (sym)
		return sym;
	Dl_info di;
	if (dladdr((void *)(uintptr_t)fn, &di) && di.dli_fname) {
		const char *m = strrchr(di.dli_fname, '/');
		snprintf(
		    buf, room, "%s+0x%lx", m ? m + 1 : di.dli_fname,
		    (unsigned long)((uintptr_t)fn - (uintptr_t)di.dli_fbase));
	} else {
		snprintf(buf, room, "0x%lx", (unsigned long)(uintptr_t)fn);
	}
	return buf;
}

static const char *fiber_name(earth_fiber_fn fn, char *buf, size_t room)
{
	const struct earth_tfunc *f = tfunc_of_entry(fn);
	return f ? f->name : fiber_symbol(fn, buf, room);
}

static bool readable(uintptr_t p, size_t len)
{
#if defined(__SANITIZE_ADDRESS__)
	return !__asan_region_is_poisoned((void *)p, len);
#else
	(void)p;
	(void)len;
	return true;
#endif
}

/* Slots that wait in [lo, hi); fn: the function whose frame it is, or
 * NULL; step: 8 (a search), or sizeof(earth_slot) over a frame's
 * SYNC_SLOTS (the source table's offset; slots named by number). Returns
 * how many. */
static unsigned scan(struct earth_node *n, uintptr_t lo, uintptr_t hi,
		     const struct earth_tfunc *fn, size_t step)
{
	unsigned found = 0;
	uintptr_t first = lo;
	lo = (lo + 7) & ~(uintptr_t)7;
	for (uintptr_t p = lo; p + sizeof(earth_slot) <= hi; p += step) {
		if (!readable(p, sizeof(earth_slot)) ||
		    src_overlaps(p, sizeof(earth_slot)))
			continue;
		const earth_slot *s = (const earth_slot *)p;
		if (s->count <= 0 || s->reset < 0 || !s->fiber ||
		    !reg_fiber_known(s->fiber))
			continue;
		char buf[96], where[320];
		const struct earth_src_row *fr =
		    fn ? src_fiber(fn->entry) : NULL;
		if (step == sizeof(earth_slot) && fr && fr->func &&
		    src_fiber_where(s->fiber, where, sizeof(where)))
			fprintf(stderr,
				"earth: node %u: stuck: slot %zu of a frame of "
				"%s: count %d, reset %d: %s waits for %d more "
				"signal%s\n",
				n->id, (size_t)(p - first) / sizeof(earth_slot),
				fr->func, s->count, s->reset, where, s->count,
				s->count == 1 ? "" : "s");
		else
			fprintf(stderr,
				"earth: node %u: stuck: slot %p in %s%s: count "
				"%d, reset %d: fiber %s waits for %d more "
				"signal%s\n",
				n->id, (const void *)s, fn ? "a frame of " : "",
				fn ? fn->name : "static or registered memory",
				s->count, s->reset,
				fiber_name(s->fiber, buf, sizeof(buf)),
				s->count, s->count == 1 ? "" : "s");
		found++;
		if (step == 8)
			p += sizeof(earth_slot) - 8;
	}
	return found;
}

/* A live frame's body: its SYNC_SLOTS where the source table gives them,
 * else searched. */
static unsigned scan_frame(struct earth_node *n, uintptr_t body,
			   const struct earth_tfunc *fn)
{
	uint32_t at, k;
	if (src_slots(fn->entry, fn->frame_size, &at, &k))
		return scan(n, body + at, body + at + k * sizeof(earth_slot),
			    fn, sizeof(earth_slot));
	return scan(n, body, body + fn->frame_size, fn, 8);
}

static bool is_chunk(uintptr_t b)
{
	for (unsigned i = 0; i < earth_node_g.eus; i++)
		for (struct frame_chunk *c = eu_at(i)->chunks; c; c = c->next)
			if ((uintptr_t)c == b)
				return true;
	return false;
}

/* A segment of frames, a large frame, or other memory. */
static unsigned scan_segment(struct earth_node *n, uintptr_t b, uintptr_t e,
			     uint64_t *skipped)
{
	size_t len = e - b;
	const size_t chunk_head = sizeof(struct frame_chunk) + 64;
	if (is_chunk(b) && len > chunk_head) {
		size_t sz = (len - chunk_head) / EARTH_FRAME_CHUNK;
		unsigned found = 0;
		for (size_t i = 0; i < EARTH_FRAME_CHUNK; i++) {
			struct frame_hdr *h =
			    (struct frame_hdr *)(b + 64 + i * sz);
			if (h->magic != FRAME_LIVE || !h->fn)
				continue;
			uintptr_t body = (uintptr_t)(h + 1);
			found += scan_frame(n, body, h->fn);
		}
		return found;
	}
	/* A large frame: [link, 32 bytes][header][body]. */
	const size_t large_head = 32 + sizeof(struct frame_hdr);
	if (len > large_head && readable(b + 32, sizeof(struct frame_hdr))) {
		const struct frame_hdr *h = (const struct frame_hdr *)(b + 32);
		if ((h->cls & FRAME_CLASS_MASK) == FRAME_CLASS_LARGE &&
		    (h->magic == FRAME_LIVE || h->magic == FRAME_FREE) &&
		    reg_tfunc_id(h->fn) >= 0 &&
		    len == large_head + h->fn->frame_size) {
			if (h->magic == FRAME_FREE)
				return 0;
			return scan_frame(n, b + large_head, h->fn);
		}
	}
	if (len > ((size_t)256 << 20)) {
		*skipped += len;
		return 0;
	}
	return scan(n, b, e, NULL, 8);
}

/* No slot waits and no fiber is ready: the last fiber that ran here ended
 * without enabling another here (one it enabled here would have run
 * after it). Named by the source table ("fiber THREAD_1 of main (f.tc:20;
 * INIT_SYNC at f.tc:16)"), else by its function or symbol. The EU sleeps:
 * what it last stored in eu_cur_fiber is visible (the caller's acquire
 * load of its sleep word, su/quiet.c). */
static void report_no_slot(struct earth_node *n)
{
#define NO_SLOT                                                                \
	"earth: node %u: stuck: no slot waits here (no fiber is ready, and "   \
	"none armed"
	earth_fiber_fn fn = eu_cur_fiber_at ? *eu_cur_fiber_at : NULL;
	if (!fn) {
		fprintf(stderr, NO_SLOT "; no fiber ran here)\n", n->id);
		return;
	}
	if (fn == n->token_gone_fiber || fn == n->invoke_fiber) {
		/* The runtime's own: a token's frame freed after it left. */
		fprintf(stderr,
			NO_SLOT ": a fiber ended without enabling another)\n",
			n->id);
		return;
	}
	char what[320], sym[96];
	const struct earth_tfunc *f = tfunc_of_entry(fn);
	bool tc = src_fiber_where(fn, what, sizeof(what));
	if (!tc && f)
		snprintf(what, sizeof(what), "the entry fiber of %s", f->name);
	else if (!tc)
		snprintf(what, sizeof(what), "fiber %s",
			 fiber_symbol(fn, sym, sizeof(sym)));
	fprintf(stderr,
		NO_SLOT "): the last fiber that ran here, %s, ended without "
			"enabling another here; fix: %s\n",
		n->id, what,
		tc ? "if the work goes on from it, enable the next fiber "
		     "before it ends (SYNC a slot INIT_SYNC attached to that "
		     "fiber, SPAWN, INVOKE or TOKEN); the job ends when main "
		     "runs END_FUNCTION()"
		   : "if the work goes on from it, enable the next fiber "
		     "before it returns (earth_sync of a slot armed for that "
		     "fiber, earth_spawn, earth_invoke or earth_token); the "
		     "job ends when main's frame ends (earth_end_function)");
#undef NO_SLOT
}

void node_stuck_report(struct earth_node *n)
{
	if (n->id == 0)
		fprintf(stderr,
			"earth: node 0: stuck: every node is idle and nothing "
			"is in flight, but main has not ended: the job stops "
			"(status %d)\n",
			EARTH_EXIT_STUCK);
	size_t cap = 4096;
	uint64_t(*segs)[2] = malloc(cap * sizeof(*segs));
	unsigned found = 0;
	uint64_t skipped = 0;
	if (segs) {
		size_t k = reg_mem_list(segs, cap);
		for (size_t i = 0; i < k && i < cap; i++)
			found += scan_segment(n, (uintptr_t)segs[i][0],
					      (uintptr_t)segs[i][1], &skipped);
		free(segs);
	}
	if (skipped)
		fprintf(stderr,
			"earth: node %u: stuck: %llu bytes of large "
			"registered memory not searched for slots\n",
			n->id, (unsigned long long)skipped);
	/* Program threads of shared memory wait on locks, barriers and
	 * flags, not slots: the report names them instead. */
	if (n->dsm_on)
		su_dsm_stuck_report(stderr);
	if (found)
		fprintf(stderr, "earth: node %u: stuck: %u slot%s waiting\n",
			n->id, found, found == 1 ? "" : "s");
	else if (!n->dsm_on)
		report_no_slot(n);
	fflush(stderr);
}
