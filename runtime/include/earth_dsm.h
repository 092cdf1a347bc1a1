/* SPDX-License-Identifier: MIT */
/*
 * earth_dsm.h - shared memory across the nodes of a job: a page DSM whose
 * protocol runs on each node's SU (home-based lazy release consistency),
 * and program threads that the EU switches between when one waits.
 *
 * A program written for shared memory starts with earth_dsm_main() (or the
 * PARMACS macros, `earthcc --showme:parmacs`): node 0 runs its main
 * function as program thread 0; every other node serves. Threads started
 * with EARTH_DSM_CREATE are spread over the nodes (thread t on node
 * t mod N) and each sees the program's globals (.data and .bss) as main
 * had them at its first EARTH_DSM_CREATE; memory from earth_dsm_alloc()
 * is shared and has one address on every node. Memory main took with
 * malloc() stays node 0's.
 *
 * Consistency is release consistency: a write by one thread is seen by
 * another once the writer released (unlock, barrier, flag set, its end)
 * and the reader acquired (lock, barrier, flag wait, wait for end) after
 * it. A data-race-free program sees sequential consistency.
 *
 * Threads: every function below, except earth_dsm_main, is called from a
 * program thread (main or a created thread). Misuse (an unknown lock, an
 * unlock by a thread that does not hold the lock, a barrier whose count
 * differs between threads) ends the job with a message naming it and exit
 * status EARTH_EXIT_USAGE.
 */
#ifndef EARTH_DSM_H
#define EARTH_DSM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the pages of an allocation live (their home node). */
enum earth_dsm_place {
	EARTH_DSM_BLOCK,       /* split in N equal runs, node i the i-th */
	EARTH_DSM_CYCLIC,      /* arg pages to node 0, arg to node 1, ...  */
	EARTH_DSM_NODE,	       /* every page on node arg                  */
	EARTH_DSM_FIRST_TOUCH, /* the node that first writes a page        */
};

/*
 * Shared memory of size bytes (whole pages, zeroed), homed as place says;
 * the same address on every node. NULL with errno ENOMEM when the region
 * (EARTH_DSM_MB) has no run that large, EINVAL for a bad place or arg.
 */
void *earth_dsm_alloc(size_t size, enum earth_dsm_place place, unsigned arg);
/* Frees memory from earth_dsm_alloc (NULL: nothing). */
void earth_dsm_free(void *p);

/* Synchronisation objects: ids, stored anywhere (in shared memory too). */
typedef uint32_t earth_dsm_lock_t;
typedef uint32_t earth_dsm_barrier_t;
typedef uint32_t earth_dsm_flag_t;

/* A new lock, barrier or flag (clear); its manager is the calling node. */
earth_dsm_lock_t earth_dsm_lock_new(void);
earth_dsm_barrier_t earth_dsm_barrier_new(void);
earth_dsm_flag_t earth_dsm_flag_new(void);

/* Acquire (first come, first served) and release. */
void earth_dsm_lock(earth_dsm_lock_t lock);
void earth_dsm_unlock(earth_dsm_lock_t lock);
/* Waits until count threads of the job reached barrier b (a release, then
 * an acquire); every thread at one episode passes the same count. */
void earth_dsm_barrier(earth_dsm_barrier_t b, unsigned count);
/* A flag: set releases, wait acquires once it is set, clear resets it. */
void earth_dsm_flag_set(earth_dsm_flag_t f);
void earth_dsm_flag_wait(earth_dsm_flag_t f);
void earth_dsm_flag_clear(earth_dsm_flag_t f);

/*
 * Starts a program thread running fn() (on node t mod N, t its thread
 * id, 1 for the first one). Only functions named to EARTH_DSM_CREATE may
 * run as threads: the macro lists fn in the program's table of thread
 * functions (a section the linker builds), so a message from another node
 * names a thread's function by its place there. Returns the thread's id.
 */
struct earth_dsm_fn {
	void (*fn)(void);
};
#define EARTH_DSM_CREATE(fn)                                                   \
	__extension__({                                                        \
		static const struct earth_dsm_fn earth_dsm_fn_                 \
		    __attribute__((section("earth_dsm_fns"), used,             \
				   aligned(8))) = {(void (*)(void))(fn)};      \
		earth_dsm_create_(&earth_dsm_fn_);                             \
	})
unsigned earth_dsm_create_(const struct earth_dsm_fn *fn);
/* Waits until n threads created so far have ended (an acquire of what
 * they wrote). */
void earth_dsm_wait_for_end(unsigned n);

/* This program thread's id (main: 0); threads created so far (main
 * included, on node 0; on other nodes the ids seen); this node; nodes. */
unsigned earth_dsm_thread_id(void);
unsigned earth_dsm_node_id(void);
unsigned earth_dsm_nodes(void);

/* Wall-clock microseconds since the node started (CLOCK). */
unsigned long earth_dsm_clock_us(void);

/*
 * Runs the node: options from the environment and --earth-* flags (then
 * removed from argv); node 0 runs main(argc, argv) as program thread 0
 * and the job ends when it returns, with its value as the exit status.
 * Not from a program thread.
 */
int earth_dsm_main(int argc, char **argv, int (*main)(int, char **));

#ifdef __cplusplus
}
#endif

#endif /* EARTH_DSM_H */
