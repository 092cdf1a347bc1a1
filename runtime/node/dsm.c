/* SPDX-License-Identifier: MIT */
/*
 * node/dsm.c - shared memory across nodes, as a program sees it
 * (earth_dsm.h): earth_dsm_main brings the node up with the shared region
 * mapped at the same address on every node, node 0's main as program
 * thread 0, the SU's side ready (su/dsm.c) and the EU's fiber that runs
 * program threads (eu/dsm.c); the calls of program threads, each a
 * request to the SU that the thread waits on.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "earth_dsm.h"
#include "earth_dsm_fiber.h"

#include "base/settings.h"
#include "dsm/pt.h"
#include "net/shm_layout.h"
#include "eu/eu.h"
#include "node/node.h"
#include "su/su.h"

#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Where the region lies in every node (the nodes of a job have the same
 * layout, and nothing maps there unasked): above where the executable and
 * its heap lie without randomisation, below the global segments, in the
 * part of the address space that ThreadSanitizer and AddressSanitizer
 * leave to programs too (net/shm_layout.h). */
#define DSM_BASE ((void *)(uintptr_t)DSM_REGION_BASE)
_Static_assert(DSM_REGION_MAX_MB == 458752, "EARTH_DSM_MB's range");
/* Where main's argv lies on every node: globals that point into argv
 * (a file name from the command line) stay good on the nodes that
 * receive them. */
#define DSM_ARGV_BASE ((void *)(uintptr_t)0x558000000000ull)

/* The program's globals (earth_dsm.ld), and the thread table the linker
 * builds from EARTH_DSM_CREATE. */
extern char __data_start[] __attribute__((weak));
extern char _edata[] __attribute__((weak));
extern char __bss_start[] __attribute__((weak));
extern char _end[] __attribute__((weak));
extern char __earth_rt_data_start[] __attribute__((weak));
extern char __earth_rt_bss_start[] __attribute__((weak));
extern char __start_earth_rt_data[] __attribute__((weak));
extern char __start_earth_rt_bss[] __attribute__((weak));
extern char __start_earth_tfunc[] __attribute__((weak));
extern const struct earth_dsm_fn __start_earth_dsm_fns[] __attribute__((weak));
extern const struct earth_dsm_fn __stop_earth_dsm_fns[] __attribute__((weak));

bool node_dsm_wanted;
static int (*dsm_user_main)(int, char **);
static int dsm_argc;
static char **dsm_argv;
/* The globals are known apart from the runtime's (linked with the
 * script, or with the shared library). */
static bool dsm_globals_known;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void main_entry(void *arg)
{
	struct dsm_pt *pt = arg;
	pt->result = dsm_user_main(dsm_argc, dsm_argv);
}

/* Node 0's main fiber: runs main's program thread (eu/dsm.c ends main's
 * frame when the thread returns). */
static void dsm_main_fiber(void *frame)
{
	(void)frame;
	eu_dsm_run(dsm_g.main_pt);
}

static const struct earth_tfunc dsm_main_tf = {"main", dsm_main_fiber, 16, 0};

/* The least of the section starts above `from` (the program's own part
 * ends at the first section of the runtime or the linker's tables). */
static char *first_above(char *from, char *const *cand, size_t n, char *dflt)
{
	char *best = dflt;
	for (size_t i = 0; i < n; i++)
		if (cand[i] && cand[i] > from && cand[i] < best)
			best = cand[i];
	return best;
}

/* The executable's writable segment less its part read-only after
 * relocation (the runtime as a shared library does not see the
 * executable's section symbols): .data and .bss, one range. */
static int exe_writable(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *r = arg;
	uintptr_t lo = 0, hi = 0, relro_end = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t b = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			lo = b;
			hi = b + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_RELRO) {
			relro_end = b + ph->p_memsz;
		}
	}
	if (relro_end > lo && relro_end < hi)
		lo = relro_end;
	r[0] = lo;
	r[1] = hi;
	return 1; /* the first object is the executable */
}

static void globals_find(void)
{
	if (!__data_start || !__bss_start || !_end) {
		uintptr_t r[2] = {0, 0};
		dl_iterate_phdr(exe_writable, r);
		dsm_g.data = (uint8_t *)r[0];
		dsm_g.data_len = r[1] - r[0];
		dsm_g.bss = NULL;
		dsm_g.bss_len = 0;
		const char *me = (const char *)&dsm_g;
		dsm_globals_known = r[1] > r[0] && !(me >= (const char *)r[0] &&
						     me < (const char *)r[1]);
		return;
	}
	/* The Makefile renames libearth.a's .data and .bss (earth_rt_data,
	 * earth_rt_bss, which the linker places after .data and .bss);
	 * earth_dsm.ld moves other static libraries' after them. */
	char *const data_ends[] = {__start_earth_rt_data, __earth_rt_data_start,
				   (char *)__start_earth_dsm_fns,
				   __start_earth_tfunc};
	char *const bss_ends[] = {__start_earth_rt_bss, __earth_rt_bss_start};
	char *data_end = first_above(__data_start, data_ends, 4, _edata);
	char *bss_end = first_above(__bss_start, bss_ends, 2, _end);
	dsm_g.data = (uint8_t *)__data_start;
	dsm_g.data_len = (size_t)(data_end - __data_start);
	dsm_g.bss = (uint8_t *)__bss_start;
	dsm_g.bss_len = (size_t)(bss_end - __bss_start);
	/* The runtime's own state must not be among them: linked in
	 * statically, it is in its sections; linked as a shared library,
	 * it is outside the executable. */
	const char *me = (const char *)&dsm_g;
	dsm_globals_known =
	    !(me >= (const char *)dsm_g.data && me < data_end) &&
	    !(me >= (const char *)dsm_g.bss && me < bss_end);
}

/* earthrun's job mapping, when it holds a region per node (a job on one
 * host): the file, and where node 0's region starts and how far apart
 * they are; -1 when there is none, or it does not fit `bytes`. */
static int shared_regions(uint32_t nodes, size_t bytes, size_t page,
			  uint64_t *off, uint64_t *seg)
{
	if (!earth_setting_given(EARTH_SET_SHM_FD))
		return -1;
	int fd = (int)earth_setting_u64(EARTH_SET_SHM_FD);
	struct shm_job hdr;
	struct stat st;
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    hdr.magic != SHM_MAGIC || hdr.nodes != nodes || !hdr.dsm_seg ||
	    hdr.dsm_seg < bytes || hdr.dsm_seg % page || hdr.dsm_off % page ||
	    fstat(fd, &st) != 0 || st.st_size < 0 ||
	    hdr.dsm_off > (uint64_t)st.st_size ||
	    hdr.dsm_seg > ((uint64_t)st.st_size - hdr.dsm_off) / nodes)
		return -1;
	*off = hdr.dsm_off;
	*seg = hdr.dsm_seg;
	return fd;
}

int node_dsm_open(struct earth_node *n)
{
	size_t page = earth_setting_u64(EARTH_SET_DSM_PAGE);
	size_t bytes = (size_t)earth_setting_u64(EARTH_SET_DSM_MB) << 20;
	char err[512];
	uint64_t off = 0, seg = 0;
	/* (An emulated network, EARTH_NET_LATENCY_NS or EARTH_NET_BW_MBPS,
	 * stands for links between hosts: pages then come as messages.) */
	bool emulated = earth_setting_u64(EARTH_SET_NET_LATENCY_NS) ||
			earth_setting_real(EARTH_SET_NET_BW_MBPS) > 0;
	/* A page goes whole in a message (a fetch's answer). */
	if (n->net && page > net_msg_max(n->net)) {
		fprintf(
		    stderr,
		    "earth: node %u: shared memory: pages of %zu bytes "
		    "(EARTH_DSM_PAGE) do not fit this job's messages of "
		    "%u bytes: give earthrun --ring-kb %zu or more (a "
		    "message takes at most a quarter of a ring), or smaller "
		    "pages\n",
		    n->id, page, net_msg_max(n->net), page * 4 / 1024);
		return -1;
	}
	int fd = n->num_nodes > 1 && !emulated
		     ? shared_regions(n->num_nodes, bytes, page, &off, &seg)
		     : -1;
	if (fd >= 0) {
		/* Every node's region, read-only: pages fetched one-sided. */
		void *all = mmap(NULL, (size_t)seg * n->num_nodes, PROT_READ,
				 MAP_SHARED | MAP_NORESERVE, fd, (off_t)off);
		if (all == MAP_FAILED) {
			fd = -1;
		} else {
			dsm_g.peer_base = all;
			dsm_g.peer_seg = seg;
		}
	}
	if (dsm_region_map_fd(
		&dsm_g.region, DSM_BASE, bytes, page,
		(enum dsm_region_faults)earth_setting_u64(EARTH_SET_DSM_FAULTS),
		fd, off + (uint64_t)n->id * seg, err, sizeof(err))) {
		fprintf(stderr, "earth: node %u: %s\n", n->id, err);
		return -1;
	}
	/* Between hosts, the transport's one-sided reads where it has them
	 * (ucx over a lane that reads a peer's memory itself): every node
	 * registers its copy of the region, through the alias, which is
	 * readable whatever the pages' protections (net_ops.dsm_expose). */
	if (n->net && n->net->ops->dsm_expose) {
		const char *e = n->net->ops->dsm_expose(
		    n->net, dsm_g.region.alias, dsm_g.region.size);
		if (e) {
			fprintf(stderr, "earth: node %u: shared memory: %s\n",
				n->id, e);
			dsm_region_unmap(&dsm_g.region);
			return -1;
		}
	}
	dsm_g.self = n->id;
	dsm_g.nodes = n->num_nodes;
	dsm_g.stack_size = (size_t)earth_setting_u64(EARTH_SET_DSM_STACK_KB)
			   << 10;
	dsm_g.fns = __start_earth_dsm_fns;
	dsm_g.nfns =
	    __start_earth_dsm_fns
		? (uint32_t)(__stop_earth_dsm_fns - __start_earth_dsm_fns)
		: 0;
	dsm_g.created = 1;
	dsm_g.start_ns = now_ns();
	globals_find();
	if (n->id == 0) {
		struct dsm_pt *pt = calloc(1, sizeof(*pt));
		if (!pt || dsm_thread_init(&pt->t, dsm_g.stack_size, main_entry,
					   pt, NULL)) {
			fprintf(stderr,
				"earth: node 0: no stack for main's thread "
				"(%zu bytes)\n",
				dsm_g.stack_size);
			free(pt);
			return -1;
		}
		dsm_g.main_pt = pt;
	}
	node_dsm_fiber_open();
	if (su_dsm_open(n)) {
		fprintf(stderr,
			"earth: node %u: shared memory: out of memory\n",
			n->id);
		return -1;
	}
	n->dsm_fiber = eu_dsm_run;
	n->dsm_on = true;
	return 0;
}

static void node_dsm_close(void)
{
	su_dsm_close();
	eu_dsm_fini();
	if (dsm_g.main_pt && !dsm_g.main_pt->t.finished)
		dsm_thread_destroy(&dsm_g.main_pt->t);
	free(dsm_g.main_pt);
	memset(&earth_dsm_view_, 0, sizeof(earth_dsm_view_));
	dsm_region_unmap(&dsm_g.region);
	if (dsm_g.peer_base)
		munmap((void *)(uintptr_t)dsm_g.peer_base,
		       (size_t)dsm_g.peer_seg * dsm_g.nodes);
	memset(&dsm_g, 0, sizeof(dsm_g));
}

/* argv copied to DSM_ARGV_BASE (every node gets the same arguments from
 * its launcher, so the copies are the same), or NULL with a message. */
static char **argv_fixed(int argc, char **argv, size_t *mapped)
{
	size_t bytes = (size_t)(argc + 1) * sizeof(char *);
	for (int i = 0; i < argc; i++)
		bytes += strlen(argv[i]) + 1;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	bytes = (bytes + ps - 1) / ps * ps;
	void *p =
	    mmap(DSM_ARGV_BASE, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != DSM_ARGV_BASE) {
		fprintf(stderr,
			"earth: earth_dsm_main: cannot place the arguments at "
			"%p (%s): the nodes of a job must have the same "
			"layout\n",
			DSM_ARGV_BASE,
			p == MAP_FAILED ? strerror(errno) : "taken");
		if (p != MAP_FAILED)
			munmap(p, bytes);
		return NULL;
	}
	char **v = p;
	char *s = (char *)(v + argc + 1);
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(s, argv[i], n);
		v[i] = s;
		s += n;
	}
	v[argc] = NULL;
	mprotect(p, bytes, PROT_READ);
	*mapped = bytes;
	return v;
}

int earth_dsm_main(int argc, char **argv, int (*main)(int, char **))
{
	struct earth_options opts;
	earth_options_default(&opts);
	if (earth_options_parse(&opts, &argc, argv) != 0)
		return EARTH_EXIT_USAGE;
	if (!main) {
		fprintf(stderr, "earth: earth_dsm_main: null main function\n");
		return EARTH_EXIT_USAGE;
	}
	size_t argv_len = 0;
	char **fixed = argv_fixed(argc, argv, &argv_len);
	if (!fixed)
		return EARTH_EXIT_USAGE;
	dsm_user_main = main;
	dsm_argc = argc;
	dsm_argv = fixed;
	node_dsm_wanted = true;
	int status = earth_run(&opts, &dsm_main_tf, NULL, 0);
	node_dsm_wanted = false;
	node_dsm_close();
	munmap(fixed, argv_len);
	return status;
}

/* ---- the calls of program threads ---- */

#define CALL(what, req, b, c) eu_dsm_call(what, req, b, c)

bool node_dsm_place_ok(enum earth_dsm_place place, unsigned arg)
{
	return (unsigned)place <= EARTH_DSM_FIRST_TOUCH &&
	       !(place == EARTH_DSM_CYCLIC && arg == 0) &&
	       !(place == EARTH_DSM_NODE && arg >= dsm_g.nodes) &&
	       arg <= 0xffffff;
}

void *earth_dsm_alloc(size_t size, enum earth_dsm_place place, unsigned arg)
{
	const char *what = "earth_dsm_alloc";
	if (!node_dsm_place_ok(place, arg)) {
		errno = EINVAL;
		return NULL;
	}
	size_t ps = dsm_g.region.page_size;
	if (size == 0) { /* larger than the region: node 0 says ENOMEM */
		errno = EINVAL;
		return NULL;
	}
	int64_t r =
	    CALL(what, DSM_R_ALLOC, size, (uint64_t)place | (uint64_t)arg << 8);
	if (r < 0) {
		errno = (int)-r;
		return NULL;
	}
	return dsm_g.region.base + (size_t)r * ps;
}

void earth_dsm_free(void *p)
{
	if (!p)
		return;
	long page = dsm_region_page_of(&dsm_g.region, p);
	if (page < 0 || ((uintptr_t)p & (dsm_g.region.page_size - 1)))
		eu_misuse("earth_dsm_free",
			  "%p is not memory from earth_dsm_alloc", p);
	CALL("earth_dsm_free", DSM_R_FREE, (uint64_t)page, 0);
}

static uint32_t object_new(const char *what, _Atomic uint32_t *made)
{
	uint32_t k = atomic_fetch_add_explicit(made, 1, memory_order_release);
	if (k >= DSM_OBJECTS_PER_NODE)
		eu_misuse(what, "more than %u of them made on node %u",
			  DSM_OBJECTS_PER_NODE, dsm_g.self);
	return dsm_id(dsm_g.self, k);
}

void node_dsm_check_object(const char *op, const char *kind, uint64_t id)
{
	if (q_unlikely(dsm_id_index(id) == UINT32_MAX ||
		       dsm_id_node(id) >= dsm_g.nodes))
		eu_misuse(op,
			  "%s 0x%llx was never made: use what "
			  "earth_dsm_%s_new returned (PARMACS: LOCKINIT, "
			  "ALOCKINIT, BARINIT or PAUSEINIT before its first "
			  "use)",
			  kind, (unsigned long long)id, kind);
}

earth_dsm_lock_t earth_dsm_lock_new(void)
{
	return object_new("earth_dsm_lock_new", &dsm_g.nlocks);
}

earth_dsm_barrier_t earth_dsm_barrier_new(void)
{
	return object_new("earth_dsm_barrier_new", &dsm_g.nbarriers);
}

earth_dsm_flag_t earth_dsm_flag_new(void)
{
	return object_new("earth_dsm_flag_new", &dsm_g.nflags);
}

void earth_dsm_lock(earth_dsm_lock_t lock)
{
	node_dsm_check_object("earth_dsm_lock", "lock", lock);
	CALL("earth_dsm_lock", DSM_R_LOCK, lock, 0);
}

void earth_dsm_unlock(earth_dsm_lock_t lock)
{
	node_dsm_check_object("earth_dsm_unlock", "lock", lock);
	CALL("earth_dsm_unlock", DSM_R_UNLOCK, lock, 0);
}

void earth_dsm_barrier(earth_dsm_barrier_t b, unsigned count)
{
	if (count == 0)
		eu_misuse("earth_dsm_barrier", "a count of 0 threads");
	node_dsm_check_object("earth_dsm_barrier", "barrier", b);
	CALL("earth_dsm_barrier", DSM_R_BARRIER, b, count);
}

void earth_dsm_flag_set(earth_dsm_flag_t f)
{
	node_dsm_check_object("earth_dsm_flag_set", "flag", f);
	CALL("earth_dsm_flag_set", DSM_R_FLAG_SET, f, 0);
}

void earth_dsm_flag_wait(earth_dsm_flag_t f)
{
	node_dsm_check_object("earth_dsm_flag_wait", "flag", f);
	CALL("earth_dsm_flag_wait", DSM_R_FLAG_WAIT, f, 0);
}

void earth_dsm_flag_clear(earth_dsm_flag_t f)
{
	node_dsm_check_object("earth_dsm_flag_clear", "flag", f);
	CALL("earth_dsm_flag_clear", DSM_R_FLAG_CLEAR, f, 0);
}

unsigned earth_dsm_create_(const struct earth_dsm_fn *fn)
{
	const char *what = "EARTH_DSM_CREATE";
	if (dsm_g.self != 0)
		eu_misuse(what, "threads are created by node 0's threads "
				"only");
	if (!__start_earth_dsm_fns || fn < __start_earth_dsm_fns ||
	    fn >= __stop_earth_dsm_fns)
		eu_misuse(what, "not an entry of the thread table: call the "
				"macro, not earth_dsm_create_");
	if (dsm_g.nodes > 1 && !dsm_globals_known)
		eu_misuse(what,
			  "this program's globals lie among the runtime's "
			  "(linked statically without earth_dsm.ld): link "
			  "it with earthcc");
	uint32_t id = dsm_g.created;
	if (id / dsm_g.nodes >= DSM_THREADS_PER_NODE)
		eu_misuse(what,
			  "thread %u would be past the %u program threads a "
			  "node runs (at most %u threads on the job's %u "
			  "node(s)): run on more nodes, or create fewer "
			  "threads",
			  id, DSM_THREADS_PER_NODE,
			  DSM_THREADS_PER_NODE * dsm_g.nodes, dsm_g.nodes);
	dsm_g.created++;
	CALL(what, DSM_R_CREATE, (uint64_t)(fn - __start_earth_dsm_fns), id);
	return id;
}

void earth_dsm_wait_for_end(unsigned n)
{
	if (dsm_g.self != 0)
		eu_misuse("earth_dsm_wait_for_end",
			  "called on node %u: node 0's threads wait for the "
			  "others",
			  dsm_g.self);
	if (n >= dsm_g.created)
		eu_misuse("earth_dsm_wait_for_end",
			  "waits for %u threads, and %u were created", n,
			  dsm_g.created - 1);
	CALL("earth_dsm_wait_for_end", DSM_R_WAIT_END, n, 0);
}

unsigned earth_dsm_thread_id(void)
{
	struct dsm_pt *pt = eu_dsm_self();
	return pt ? pt->id : 0;
}

unsigned earth_dsm_node_id(void)
{
	return dsm_g.self;
}

unsigned earth_dsm_nodes(void)
{
	return dsm_g.nodes;
}

unsigned long earth_dsm_clock_us(void)
{
	return (unsigned long)((now_ns() - dsm_g.start_ns) / 1000u);
}
