/* SPDX-License-Identifier: MIT */
/*
 * earth.h - the public C API of the EARTH node runtime.
 *
 * A program is a set of *threaded functions*. Each invocation of one owns a
 * heap *frame*; its code is cut into *fibers*, short non-blocking C functions
 * `void fiber(void *frame)` that run to completion on the node's Execution
 * Unit (EU). Long-latency work is *split-phase*: a fiber posts a request to
 * the node's Synchronization Unit (SU) and ends; the SU performs it and
 * *signals* a sync slot; when a slot's count reaches zero its fiber becomes
 * *ready* and the EU runs it.
 *
 * Threads: unless a function says otherwise it may be called only from a
 * fiber, i.e. on the EU thread of a running node ("EU only"). Misuse that can
 * be detected (null slot, zero count, unknown node, ...) stops the program with
 * a message on stderr naming the operation and the fix, and exit status
 * EARTH_EXIT_USAGE.
 *
 * Threaded-C (threaded-c/, docs/threaded-c.md) is compiled to this API.
 */
#ifndef EARTH_H
#define EARTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EARTH_VERSION_MAJOR 0
#define EARTH_VERSION_MINOR 2

/* Exit status of a program stopped by a detected runtime or usage error. */
#define EARTH_EXIT_USAGE 70
/* Exit status of a node stopped because another node of its job died,
 * vanished (cannot be reached) or left it early: it only echoes that node's
 * failure, and earthrun names that node instead (earthrun(1)). */
#define EARTH_EXIT_PEER_DIED 71
/* Exit status of a node (and of earthrun) whose statistics or trace file
 * could not be written (EARTH_STATS_JSON, EARTH_TRACE, --stats=json,
 * --trace): the message on stderr names the file and the error. */
#define EARTH_EXIT_OUTPUT 74
/* Exit status of a job that can make no more progress: every node idle,
 * nothing in flight, main not ended (node 0; earthrun returns it). The
 * report on stderr names each slot still waiting: node, function, fiber,
 * count and reset (docs/architecture.md, "Stuck jobs"). */
#define EARTH_EXIT_STUCK 75

/* ------------------------------------------------------------------ */
/* Fibers, frames, sync slots                                          */
/* ------------------------------------------------------------------ */

/* A fiber: runs to completion; returning from it is END_THREAD. */
typedef void (*earth_fiber_fn)(void *frame);

/*
 * A sync slot {count, reset, fiber, frame}. It lives in a frame (or any
 * memory that outlives its signals). After earth_slot_init() on the EU,
 * only the runtime reads or writes it (atomically: both units signal it):
 * do not touch its fields from a fiber.
 */
typedef struct earth_slot {
	int32_t count; /* signals still expected before the fiber fires */
	int32_t reset; /* count reloaded after firing; 0 = one-shot      */
	earth_fiber_fn fiber; /* fiber made ready when count reaches zero */
	void *frame; /* frame that fiber runs on                       */
} earth_slot;

/*
 * A threaded function: its entry fiber (fiber 0) and frame layout. The frame
 * starts with the argument block (args_size bytes) copied from INVOKE/TOKEN.
 * Define one with EARTH_THREADED_FUNCTION so every node of a job numbers it
 * the same way (remote INVOKE carries that number, never a code pointer).
 */
struct earth_tfunc {
	const char *name;
	earth_fiber_fn entry;
	uint32_t frame_size; /* bytes, >= args_size */
	uint32_t args_size;
} __attribute__((aligned(32)));

#define EARTH_THREADED_FUNCTION(var, entry_fn, frame_type, args_bytes)         \
	__attribute__((used, section("earth_tfunc")))                          \
	const struct earth_tfunc var = {#var, (entry_fn), sizeof(frame_type),  \
					(args_bytes)}

/*
 * The source table of a Threaded-C program: earthcc writes one array of
 * rows per translation unit into the earth_src section (EARTH_SRC_ROWS).
 * The runtime only reads it to name, in its messages, the threaded
 * function, fiber, operation as written and file:line of a fiber, a slot
 * or an operation; programs without one get the runtime's own words.
 * Rows: a fiber's start (op NULL), each operation a fiber issues, each
 * INIT_SYNC / SPAWN (target: the fiber it names).
 */
struct earth_src_row {
	/* The fiber the row is in. */
	earth_fiber_fn fiber;
	/* INIT_SYNC, SPAWN: the fiber it names; else NULL. */
	earth_fiber_fn target;
	const char *func;	/* threaded function, as written */
	const char *fiber_name; /* "0", "THREAD_1" or the label's name */
	/* The operation as written ("DATA_RSYNC_I"); NULL: fiber start. */
	const char *op;
	const char *file; /* as given to earthcc */
	uint32_t line;
	/* INIT_SYNC: its slot; the start of fiber 0: the number of SYNC_SLOTS
	 * (-1 without); else -1. */
	int32_t slot;
	/* The start of fiber 0: offset of SYNC_SLOTS in the frame. */
	uint32_t slots_at;
} __attribute__((aligned(64)));

#define EARTH_SRC_ROWS __attribute__((used, section("earth_src")))

/*
 * INIT_SYNC: slot fires `fiber` on `frame` after `count` signals (count >= 1),
 * then reloads `reset` (reset >= 1 to fire again, 0 for a one-shot slot: one
 * more signal is then an error). EU only; must happen before any signal to
 * the slot is posted.
 */
void earth_slot_init(earth_slot *slot, int32_t count, int32_t reset,
		     earth_fiber_fn fiber, void *frame);

/* ------------------------------------------------------------------ */
/* Global pointers: (node, address) in 64 bits                          */
/* ------------------------------------------------------------------ */

typedef struct earth_gptr {
	uint64_t bits;
} earth_gptr;
typedef struct earth_gslot {
	uint64_t bits;
} earth_gslot;

#define EARTH_GPTR_ADDR_BITS 48
#define EARTH_MAX_NODES 65535u
#define EARTH_GPTR_NULL ((earth_gptr){0})

/* Any thread. */
static inline earth_gptr earth_gptr_make(uint32_t node, const void *addr)
{
	return (earth_gptr){
	    ((uint64_t)node << EARTH_GPTR_ADDR_BITS) |
	    ((uintptr_t)addr & ((1ull << EARTH_GPTR_ADDR_BITS) - 1))};
}
static inline uint32_t earth_gptr_node(earth_gptr g)
{
	return (uint32_t)(g.bits >> EARTH_GPTR_ADDR_BITS);
}
static inline void *earth_gptr_addr(earth_gptr g)
{
	return (void *)(uintptr_t)(g.bits &
				   ((1ull << EARTH_GPTR_ADDR_BITS) - 1));
}
static inline earth_gptr earth_gptr_add(earth_gptr g, ptrdiff_t bytes)
{
	return earth_gptr_make(earth_gptr_node(g),
			       (char *)earth_gptr_addr(g) + bytes);
}
static inline uint32_t earth_gslot_node(earth_gslot s)
{
	return (uint32_t)(s.bits >> EARTH_GPTR_ADDR_BITS);
}
static inline earth_slot *earth_gslot_addr(earth_gslot s)
{
	return (earth_slot *)(uintptr_t)(s.bits &
					 ((1ull << EARTH_GPTR_ADDR_BITS) - 1));
}

/* TO_GLOBAL / SLOT_ADR: a global pointer to local memory. Running node only. */
earth_gptr earth_to_global(const void *addr);
earth_gslot earth_slot_global(earth_slot *slot);

/*
 * Memory other nodes may read and write through global pointers: frames
 * and the program's static data (its writable segments, less what is
 * read-only after relocation and the runtime's own state) always are; add
 * heap or mmap'd memory with earth_register_memory before handing out
 * global pointers to it. The node itself holds its own operations to the
 * same rule: a GET/DATA/BLKMOV or global slot naming this node's memory
 * outside registered memory stops the job, on any node count. Unregister
 * before freeing. Returns 0, -EINVAL (null or empty), -EEXIST
 * (overlaps a registered range), -ENOENT (unregister: not registered).
 * Any thread of a running node.
 */
int earth_register_memory(void *addr, size_t len);
int earth_unregister_memory(void *addr);

/*
 * Global memory: every node has one segment (EARTH_GMEM_MB MiB, earthrun
 * --gmem-mb; default 64), registered memory at the same address range in
 * every process of the job, so a global pointer into it means the same on
 * every node. Under earthrun's shared memory every node maps every
 * segment and GET/DATA/BLKMOV on it are served one-sided by the
 * requesting node's own SU (EARTH_REMOTE=direct, the default; su: by the
 * owner's SU, as over tcp). Docs: docs/user-guide.md, "Global memory".
 *
 * earth_galloc: `size` bytes (64-byte aligned) in this node's segment;
 * EARTH_GPTR_NULL when size is 0 or the segment has no room. earth_gfree:
 * 0, or -EINVAL when p is not a live earth_galloc object of this node.
 * Any thread of a running node. A job without global memory (size 0, or
 * its range could not be mapped) stops at the first allocation with the
 * reason.
 */
earth_gptr earth_galloc(size_t size);
int earth_gfree(earth_gptr p);

/*
 * A block-distributed array of `count` elements of `elem_size` bytes:
 * block b (elements b*block_elems ...) lives on node b % nodes. Allocation
 * is symmetric (as in SHMEM): EVERY node calls earth_garray_alloc with the
 * same arguments, in the same order relative to its other array calls,
 * and gets the same descriptor, which it may then pass around by value.
 * Returns 0, -EINVAL (a zero or null argument), -ENOMEM (no room; the
 * same answer on every node). If this node's own earth_galloc objects
 * occupy the place the array must take, the program stops with a message
 * (allocate arrays first, or give more global memory). earth_garray_free:
 * symmetric as well; 0 or -EINVAL. Any thread of a running node.
 */
typedef struct earth_garray {
	uint64_t base;	 /* address of the array's part on node 0          */
	uint64_t stride; /* bytes from one node's part to the next's       */
	uint64_t count, elem_size, block_elems;
	uint32_t nodes;
} earth_garray;
int earth_garray_alloc(earth_garray *a, size_t count, size_t elem_size,
		       size_t block_elems);
int earth_garray_free(earth_garray *a);

/* Node holding element i, and a global pointer to it (i < count, a filled
 * by a successful earth_garray_alloc). Any thread. */
static inline uint32_t earth_garray_node(const earth_garray *a, uint64_t i)
{
	return (uint32_t)((i / a->block_elems) % a->nodes);
}
static inline earth_gptr earth_garray_at(const earth_garray *a, uint64_t i)
{
	uint64_t b = i / a->block_elems, node = b % a->nodes;
	uint64_t local = (b / a->nodes) * a->block_elems + i % a->block_elems;
	return earth_gptr_make((uint32_t)node,
			       (void *)(uintptr_t)(a->base + node * a->stride +
						   local * a->elem_size));
}

/* NODE_ID, NUM_NODES. Any thread of a running node. */
uint32_t earth_node_id(void);
uint32_t earth_num_nodes(void);

/* ------------------------------------------------------------------ */
/* Split-phase operations (EU only). None waits: each posts a request   */
/* to the SU and returns. Data written by GET/DATA/BLKMOV is visible to  */
/* the fiber that the signalled slot makes ready.                        */
/* ------------------------------------------------------------------ */

void earth_sync(earth_slot *slot);		   /* SYNC      */
void earth_rsync(earth_gslot slot);		   /* RSYNC     */
void earth_incr_sync(earth_slot *slot, int32_t n); /* INCR_SYNC */
void earth_incr_rsync(earth_gslot slot, int32_t n);
void earth_spawn(earth_fiber_fn fiber, void *frame); /* SPAWN     */

/* BLKMOV_SYNC: copy n bytes src -> dst, then signal. */
void earth_blkmov_sync(earth_gptr src, earth_gptr dst, size_t n,
		       earth_slot *slot);
void earth_blkmov_rsync(earth_gptr src, earth_gptr dst, size_t n,
			earth_gslot slot);

/*
 * GET_SYNC_x(src, dst, slot): read a T at global src into local *dst, then
 * signal. DATA_SYNC_x(value, dst, slot): write value to global dst, then
 * signal. Suffixes: c short int long f d g (char, short, int, long, float,
 * double, earth_gptr).
 */
#define EARTH_TYPED_OPS(sfx, T)                                                \
	void earth_get_sync_##sfx(earth_gptr src, T *dst, earth_slot *slot);   \
	void earth_get_rsync_##sfx(earth_gptr src, T *dst, earth_gslot slot);  \
	void earth_data_sync_##sfx(T value, earth_gptr dst, earth_slot *slot); \
	void earth_data_rsync_##sfx(T value, earth_gptr dst, earth_gslot slot);
EARTH_TYPED_OPS(c, char)
EARTH_TYPED_OPS(s, short)
EARTH_TYPED_OPS(i, int)
EARTH_TYPED_OPS(l, long)
EARTH_TYPED_OPS(f, float)
EARTH_TYPED_OPS(d, double)
EARTH_TYPED_OPS(g, earth_gptr)
#undef EARTH_TYPED_OPS

/*
 * INVOKE(node, f, args): start threaded function f on `node` with a fresh
 * frame whose first args_size bytes are copied from `args` (size must equal
 * f->args_size). TOKEN(f, args): the same on a node the runtime chooses
 * (load balancing); never migrates once started.
 */
void earth_invoke(uint32_t node, const struct earth_tfunc *f, const void *args,
		  size_t size);
void earth_token(const struct earth_tfunc *f, const void *args, size_t size);

/*
 * Collectives over all nodes of the job, split-phase like every operation:
 * each node's fiber posts one, and `done` is signalled on every node once
 * all nodes have posted theirs. Every node must post the same collectives
 * in the same order (a mismatch stops the job with an error). Latency
 * grows with log2 of the node count (a binary tree rooted at node 0).
 *
 * earth_barrier: no data. earth_allreduce_x: *result (local) receives the
 * reduction of every node's value, before `done` is signalled.
 */
enum earth_reduce_op { EARTH_SUM = 1, EARTH_MIN, EARTH_MAX };
void earth_barrier(earth_slot *done);
void earth_allreduce_i(int value, enum earth_reduce_op op, int *result,
		       earth_slot *done);
void earth_allreduce_l(long value, enum earth_reduce_op op, long *result,
		       earth_slot *done);
void earth_allreduce_d(double value, enum earth_reduce_op op, double *result,
		       earth_slot *done);

/* END_THREAD: return from the fiber. */
#define EARTH_END_THREAD() return
/*
 * END_FUNCTION: frees the frame; return from the fiber right after. No
 * signal or data may target the frame afterwards. Ending the frame of the
 * program's main function ends the program.
 */
void earth_end_function(void *frame);
#define EARTH_END_FUNCTION(frame)                                              \
	do {                                                                   \
		earth_end_function(frame);                                     \
		return;                                                        \
	} while (0)

/* The exit status of the program when main's frame ends (default 0). */
void earth_set_exit_status(int status);

/*
 * Signal a slot of this node from a thread that is not the EU (an I/O or
 * timer thread of the program): the request goes through the SU's
 * multi-producer inbox. Returns 0, -EAGAIN when the inbox is full (retry),
 * -EINVAL for a null slot or another node's slot, -ESRCH when no node runs.
 * Any thread while the node runs.
 */
int earth_sync_from_thread(earth_gslot slot);

/* ------------------------------------------------------------------ */
/* Running a node                                                       */
/* ------------------------------------------------------------------ */

enum earth_queue_mode {
	/* Rings with shared indices (EARTH-MANNA). */
	EARTH_QUEUE_SW = 0,
	/* Default: hardware-FIFO emulation, per-slot sequence, credits,
	 * optional delivery latency. */
	EARTH_QUEUE_HWQ = 1,
};

/* What runs a node (docs/user-guide.md, "Node modes"). */
enum earth_node_mode {
	EARTH_MODE_DUAL = 0,   /* default: an EU core and an SU core          */
	EARTH_MODE_SINGLE_IRQ, /* one core; network arrivals interrupt it     */
	EARTH_MODE_SINGLE_POLL, /* one core; SU work at fiber ends and idle */
};

struct earth_options {
	enum earth_queue_mode queue_mode; /* EARTH_QUEUE        */
	uint32_t hwq_latency_ns;	  /* EARTH_HWQ_LATENCY_NS */
	uint32_t queue_slots;		  /* EARTH_QUEUE_SLOTS, power of 2 */
	int eu_cpu, su_cpu;		  /* EARTH_CPUS=eu,su; -1 = choose */
	uint32_t spin_us;		  /* EARTH_SPIN_US: spin before sleep */
	int print_stats;		  /* EARTH_STATS=1      */
	enum earth_node_mode
	    node_mode; /* EARTH_MODE=dual|single-interrupt|single-poll */
};

/* Defaults, then the EARTH_* environment variables. Any thread. */
void earth_options_default(struct earth_options *opts);

/*
 * Parse and remove --earth-* flags from argv (--earth-queue=sw|hwq,
 * --earth-hwq-latency=NS, --earth-queue-slots=N, --earth-cpus=EU,SU,
 * --earth-spin-us=US, --earth-stats,
 * --earth-mode=dual|single-interrupt|single-poll). --earth-help prints
 * every setting (variable, flag, range, default, meaning) to stdout and
 * exits 0. Returns 0, or -EINVAL after printing what was wrong. Any
 * thread.
 */
int earth_options_parse(struct earth_options *opts, int *argc, char **argv);

/*
 * Runs one node until `main_fn`'s frame ends; returns the exit status set
 * with earth_set_exit_status(). Not from a fiber; one node per process at a
 * time.
 */
int earth_run(const struct earth_options *opts,
	      const struct earth_tfunc *main_fn, const void *args, size_t size);

/* Arguments given to a main function started by earth_main(). */
struct earth_main_args {
	int argc;
	char **argv;
};

/* Options from the environment and argv, then earth_run(main_fn, {argc, argv}).
 */
int earth_main(int argc, char **argv, const struct earth_tfunc *main_fn);

/* ------------------------------------------------------------------ */
/* Statistics                                                           */
/* ------------------------------------------------------------------ */

enum earth_op {
	EARTH_OP_SYNC,
	EARTH_OP_INCR_SYNC,
	EARTH_OP_SPAWN,
	EARTH_OP_GET_SYNC,
	EARTH_OP_DATA_SYNC,
	EARTH_OP_BLKMOV_SYNC,
	EARTH_OP_INVOKE,
	EARTH_OP_TOKEN,
	EARTH_OP_END_FUNCTION,
	EARTH_OP_COLLECTIVE,
	EARTH_OP_RSYNC, /* a SYNC of a global slot (earth_rsync) */
	EARTH_OP_COUNT_
};

/* Name of an operation, e.g. "GET_SYNC". Any thread. */
const char *earth_op_name(enum earth_op op);

struct earth_stats {
	uint64_t ops[EARTH_OP_COUNT_]; /* posted by the EU                    */
	uint64_t su_handled;	       /* requests handled by the SU          */
	uint64_t fibers_run;	       /* fibers the EU ran                   */
	uint64_t fibers_ready;	       /* fibers slots and SPAWN made ready   */
	uint64_t slot_signals;	       /* slot signals (SU and EU)            */
	uint64_t req_overflow;	   /* request messages spilled: queue full */
	uint64_t ready_overflow;   /* ready fibers spilled: ready queue full */
	uint64_t frames_allocated; /* frames taken from the free lists    */
	uint64_t msgs_sent, msgs_received; /* to and from other nodes      */
	uint64_t tokens_stolen;	 /* tokens this node took from others   */
	uint64_t tokens_given;	 /* tokens other nodes took from here   */
	uint64_t steal_requests; /* STEALs this node sent when idle     */
	uint64_t eu_busy_ns, eu_idle_ns;
	uint64_t su_busy_ns, su_idle_ns;
	uint64_t eu_sleeps, su_sleeps; /* times each unit blocked when idle   */
	uint64_t wall_ns;
	/* Single-interrupt nodes: interrupts taken, those that did the SU's
	 * work inside a fiber, messages they left for a safe point. */
	uint64_t irq_signals, irq_in_fiber, irq_deferred_msgs;
	/* Tokens the EU took from its own deque and ran (the others posted
	 * here ran on nodes that stole them: tokens_given). */
	uint64_t tokens_run;
};

/*
 * A snapshot of this node's counters. EU only while a node runs (SU counters
 * are read as they last were published); any thread after earth_run returns.
 */
void earth_stats_get(struct earth_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* EARTH_H */
