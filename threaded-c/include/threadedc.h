/* SPDX-License-Identifier: MIT */
/*
 * threadedc.h - the Threaded-C language, as macros over earth.h.
 *
 * A Threaded-C file (prog.tc) is C plus the constructs below; earthcc
 * includes this header first. The file is read twice:
 *
 *  1. Parse mode (EARTH_TC_PARSE defined, by earthcc): Clang and the
 *     earth_tc plugin read the file. Structural constructs (INIT_SYNC,
 *     SPAWN, END_THREAD, END_FUNCTION, INVOKE, TOKEN) expand to marker calls
 *     __tc_*() that the plugin finds, checks and replaces.
 *  2. Generated mode (no EARTH_TC_PARSE): the plugin's output, plain C17
 *     against earth.h, is compiled by any C compiler. The remaining
 *     constructs (SYNC, GET_SYNC_x, ...) are the macros below.
 *
 * The language reference is docs/threaded-c.md.
 */
#ifndef EARTH_THREADEDC_H
#define EARTH_THREADEDC_H

#include <earth.h>
#include <earth_dsm.h>
#include <earth_dsm_fiber.h>
#include <stdint.h>
#include "tc_stats.h"

/* ---- types ---- */
typedef earth_slot SLOT;  /* SLOT SYNC_SLOTS[n]; in a threaded function   */
typedef earth_gslot SPTR; /* global pointer to a sync slot (SLOT_ADR)     */

/*
 * GLOBAL: `int *GLOBAL p` is a global pointer (node, address). It holds the
 * bits of an earth_gptr in a typed C pointer, so C checks the pointee type;
 * never dereference it: read and write through GET_SYNC_x / DATA_SYNC_x /
 * BLKMOV_SYNC (the plugin rejects a dereference, also behind a cast, and
 * turning it into a local pointer; the macros below pass it to the runtime
 * as a plain pointer by design).
 */
#ifdef EARTH_TC_PARSE
#define GLOBAL __attribute__((btf_type_tag("earth_global")))
#else
#define GLOBAL
#endif

static inline earth_gptr tc_gptr(const void *global_ptr)
{
	return (earth_gptr){(uint64_t)(uintptr_t)global_ptr};
}
static inline void *tc_to_global(const void *local_addr)
{
	return (void *)(uintptr_t)earth_to_global(local_addr).bits;
}

static inline void *tc_global_at(int node, const void *addr)
{
	return (void *)(uintptr_t)earth_gptr_make((uint32_t)node, addr).bits;
}
static inline void *tc_from_gptr(earth_gptr g)
{
	return (void *)(uintptr_t)g.bits;
}

/*
 * TO_GLOBAL(&x): the global pointer of this node's memory.
 * GLOBAL_AT(node, addr): the global pointer (node, addr): addr is an address
 *   in node's memory (its static data, its global-memory segment, memory it
 *   registered), e.g. `long *GLOBAL p = GLOBAL_AT(1, &table[0]);`.
 * GPTR_TO(T, gp): the earth_gptr of the global-memory API (earth_galloc,
 *   earth_garray_at, earth_gptr_add) as a `T *GLOBAL`.
 * TO_GPTR(p): a GLOBAL pointer as an earth_gptr, back to that API.
 */
#ifdef EARTH_TC_PARSE
#define TO_GLOBAL(local_addr) ((void *GLOBAL)tc_to_global(local_addr))
#define GLOBAL_AT(node, addr) ((void *GLOBAL)tc_global_at((node), (addr)))
#define GPTR_TO(T, gp) ((T * GLOBAL) tc_from_gptr(gp))
#else
#define TO_GLOBAL(local_addr) tc_to_global(local_addr)
#define GLOBAL_AT(node, addr) tc_global_at((node), (addr))
#define GPTR_TO(T, gp) ((T *)tc_from_gptr(gp))
#endif
#define TO_GPTR(global_ptr) tc_gptr(global_ptr)
#define NODE_ID ((int)earth_node_id())
#define NUM_NODES ((int)earth_num_nodes())
#define SET_EXIT_STATUS(status) tc_set_exit_status(status)
/* earth_set_exit_status, remembered for a SHARED program's main thread. */
void tc_set_exit_status(int status);

/* ---- slots of the current frame ---- */
#ifdef EARTH_TC_PARSE
int __tc_slot_index(int slot);
#define TC_SLOT_(s) (&SYNC_SLOTS[__tc_slot_index(s)])
#else
#define TC_SLOT_(s) (&SYNC_SLOTS[(s)])
#endif

#define SLOT_ADR(s) earth_slot_global(TC_SLOT_(s))
#define SYNC(s) earth_sync(TC_SLOT_(s))
#define RSYNC(sptr) earth_rsync(sptr)
#define INCR_SYNC(s, n) earth_incr_sync(TC_SLOT_(s), (n))
#define INCR_RSYNC(sptr, n) earth_incr_rsync((sptr), (n))

/* ---- typed split-phase operations; suffix = value type ---- */
#define TC_TYPED_(sfx, T)                                                      \
	static inline earth_gptr tc_gptr_##sfx(const T *global_ptr)            \
	{                                                                      \
		return tc_gptr(global_ptr);                                    \
	}
TC_TYPED_(c, char)
TC_TYPED_(s, short)
TC_TYPED_(i, int)
TC_TYPED_(l, long)
TC_TYPED_(f, float)
TC_TYPED_(d, double)
#undef TC_TYPED_
/* _G moves a global pointer value (any GLOBAL pointer type). */
static inline earth_gptr tc_gptr_g(void *const *global_ptr)
{
	return tc_gptr(global_ptr);
}

#define TC_GET_(sfx, src, dst, slot_)                                          \
	earth_get_sync_##sfx(tc_gptr_##sfx(src), (dst), TC_SLOT_(slot_))
#define TC_DATA_(sfx, v, dst, slot_)                                           \
	earth_data_sync_##sfx((v), tc_gptr_##sfx(dst), TC_SLOT_(slot_))
#define TC_DATAR_(sfx, v, dst, sptr)                                           \
	earth_data_rsync_##sfx((v), tc_gptr_##sfx(dst), (sptr))
#define TC_GETR_(sfx, src, dst, sptr)                                          \
	earth_get_rsync_##sfx(tc_gptr_##sfx(src), (dst), (sptr))

/* GET_SYNC_x(src_global, dst_local, slot): *dst = *src, then SYNC(slot). */
#define GET_SYNC_C(src, dst, slot_) TC_GET_(c, src, dst, slot_)
#define GET_SYNC_S(src, dst, slot_) TC_GET_(s, src, dst, slot_)
#define GET_SYNC_I(src, dst, slot_) TC_GET_(i, src, dst, slot_)
#define GET_SYNC_L(src, dst, slot_) TC_GET_(l, src, dst, slot_)
#define GET_SYNC_F(src, dst, slot_) TC_GET_(f, src, dst, slot_)
#define GET_SYNC_D(src, dst, slot_) TC_GET_(d, src, dst, slot_)
#define GET_SYNC_G(src, dst, slot_)                                            \
	earth_get_sync_g(tc_gptr_g((void *const *)(src)),                      \
			 (earth_gptr *)(void *)(dst), TC_SLOT_(slot_))
/* GET_RSYNC_x(src_global, dst_local, sptr): the same, signalling a SPTR. */
#define GET_RSYNC_C(src, dst, sptr) TC_GETR_(c, src, dst, sptr)
#define GET_RSYNC_S(src, dst, sptr) TC_GETR_(s, src, dst, sptr)
#define GET_RSYNC_I(src, dst, sptr) TC_GETR_(i, src, dst, sptr)
#define GET_RSYNC_L(src, dst, sptr) TC_GETR_(l, src, dst, sptr)
#define GET_RSYNC_F(src, dst, sptr) TC_GETR_(f, src, dst, sptr)
#define GET_RSYNC_D(src, dst, sptr) TC_GETR_(d, src, dst, sptr)

/* DATA_SYNC_x(value, dst_global, slot): *dst = value, then SYNC(slot). */
#define DATA_SYNC_C(v, dst, slot_) TC_DATA_(c, v, dst, slot_)
#define DATA_SYNC_S(v, dst, slot_) TC_DATA_(s, v, dst, slot_)
#define DATA_SYNC_I(v, dst, slot_) TC_DATA_(i, v, dst, slot_)
#define DATA_SYNC_L(v, dst, slot_) TC_DATA_(l, v, dst, slot_)
#define DATA_SYNC_F(v, dst, slot_) TC_DATA_(f, v, dst, slot_)
#define DATA_SYNC_D(v, dst, slot_) TC_DATA_(d, v, dst, slot_)
#define DATA_SYNC_G(v, dst, slot_)                                             \
	earth_data_sync_g(tc_gptr(v), tc_gptr_g((void *const *)(dst)),         \
			  TC_SLOT_(slot_))
/* DATA_RSYNC_x(value, dst_global, sptr): *dst = value, then RSYNC(sptr). */
#define DATA_RSYNC_C(v, dst, sptr) TC_DATAR_(c, v, dst, sptr)
#define DATA_RSYNC_S(v, dst, sptr) TC_DATAR_(s, v, dst, sptr)
#define DATA_RSYNC_I(v, dst, sptr) TC_DATAR_(i, v, dst, sptr)
#define DATA_RSYNC_L(v, dst, sptr) TC_DATAR_(l, v, dst, sptr)
#define DATA_RSYNC_F(v, dst, sptr) TC_DATAR_(f, v, dst, sptr)
#define DATA_RSYNC_D(v, dst, sptr) TC_DATAR_(d, v, dst, sptr)
#define DATA_RSYNC_G(v, dst, sptr)                                             \
	earth_data_rsync_g(tc_gptr(v), tc_gptr_g((void *const *)(dst)), (sptr))

/* BLKMOV_SYNC(src_global, dst_global, nbytes, slot); _RSYNC with a SPTR. */
#define BLKMOV_SYNC(src, dst, n, slot_)                                        \
	earth_blkmov_sync(tc_gptr(src), tc_gptr(dst), (n), TC_SLOT_(slot_))
#define BLKMOV_RSYNC(src, dst, n, sptr)                                        \
	earth_blkmov_rsync(tc_gptr(src), tc_gptr(dst), (n), (sptr))

/* ---- shared memory (SHARED): docs/threaded-c.md, "Shared memory" ----
 *
 * `double *SHARED a` points into the job's shared memory (earth_dsm.h):
 * one address on every node, read and written with plain loads and
 * stores, but only inside a range the fiber chain acquired. The plugin
 * checks every access (covered by an acquire of the right mode whose slot
 * enabled this fiber, or an earlier one of the chain with no release in
 * between) and inserts the acquire for loops whose range it can compute.
 * Counts are in elements of the pointee (n * sizeof *p bytes).
 */
#ifdef EARTH_TC_PARSE
/* Two tags: GLOBAL is one (the plugin tells them apart where Clang keeps
 * no macro name, e.g. SHARED written inside another macro). */
#define SHARED                                                                 \
	__attribute__((btf_type_tag("earth_shared")))                          \
	__attribute__((btf_type_tag("earth_shared")))
#else
#define SHARED
#endif
typedef earth_dsm_lock_t DSM_LOCK;
typedef earth_dsm_barrier_t DSM_BARRIER;
typedef earth_dsm_flag_t DSM_FLAG;

#define TC_NBYTES_(p, n) ((size_t)(n) * sizeof(*(p)))
/* ACQUIRE_R_SYNC(p, n, slot): elements [p, p + n) readable, then
 * SYNC(slot); ACQUIRE_W_SYNC for reading and writing. Held until released. */
#define ACQUIRE_R_SYNC(p, n, slot_)                                            \
	earth_dsm_acquire_sync((p), TC_NBYTES_(p, n), EARTH_DSM_READ,          \
			       TC_SLOT_(slot_))
#define ACQUIRE_W_SYNC(p, n, slot_)                                            \
	earth_dsm_acquire_sync((p), TC_NBYTES_(p, n), EARTH_DSM_WRITE,         \
			       TC_SLOT_(slot_))
#define ACQUIRE_R_RSYNC(p, n, sptr)                                            \
	earth_dsm_acquire_rsync((p), TC_NBYTES_(p, n), EARTH_DSM_READ, (sptr))
#define ACQUIRE_W_RSYNC(p, n, sptr)                                            \
	earth_dsm_acquire_rsync((p), TC_NBYTES_(p, n), EARTH_DSM_WRITE, (sptr))
/* RELEASE_SYNC(p, n, slot): lets go of what an acquire of [p, p + n) holds
 * and sends this node's writes home; SYNC(slot) once they are there. */
#define RELEASE_SYNC(p, n, slot_)                                              \
	earth_dsm_release_sync((p), TC_NBYTES_(p, n), TC_SLOT_(slot_))
#define RELEASE_RSYNC(p, n, sptr)                                              \
	earth_dsm_release_rsync((p), TC_NBYTES_(p, n), (sptr))
/* ACQUIRE_R_N_SYNC / ACQUIRE_W_N_SYNC / RELEASE_N_SYNC(p, n, slot): the
 * same, but n may be 0 or less (an empty loop): then the slot is only
 * signalled. What the plugin inserts around a loop (tc_dsm.c). */
void tc_dsm_acquire_n(const void *p, long n, size_t elem,
		      enum earth_dsm_mode mode, earth_slot *slot);
void tc_dsm_release_n(const void *p, long n, size_t elem, earth_slot *slot);
#define ACQUIRE_R_N_SYNC(p, n, slot_)                                          \
	tc_dsm_acquire_n((p), (long)(n), sizeof(*(p)), EARTH_DSM_READ,         \
			 TC_SLOT_(slot_))
#define ACQUIRE_W_N_SYNC(p, n, slot_)                                          \
	tc_dsm_acquire_n((p), (long)(n), sizeof(*(p)), EARTH_DSM_WRITE,        \
			 TC_SLOT_(slot_))
#define RELEASE_N_SYNC(p, n, slot_)                                            \
	tc_dsm_release_n((p), (long)(n), sizeof(*(p)), TC_SLOT_(slot_))
/* SHARED_ARG_R(p, n) / SHARED_ARG_W(p, n): elements [p, p + n) as a plain
 * pointer (to const for _R) for a C function, written only as an argument
 * of a call to a C function (not INVOKE, TOKEN, ...: their work runs
 * later): the plugin checks the range as it checks an access (an acquire
 * of the chain covers it, for writing with _W), and the pointer lives
 * only as long as the call, inside the fiber that holds the range.
 */
#ifdef EARTH_TC_PARSE
const void *tc_shared_arg_r_(const void *SHARED p, long n);
void *tc_shared_arg_w_(void *SHARED p, long n);
#define SHARED_ARG_R(p, n)                                                     \
	((const __typeof__(*(p)) *)tc_shared_arg_r_((p), (long)(n)))
#define SHARED_ARG_W(p, n)                                                     \
	((__typeof__(*(p)) *)tc_shared_arg_w_((p), (long)(n)))
#else
#define SHARED_ARG_R(p, n) ((const __typeof__(*(p)) *)(p))
#define SHARED_ARG_W(p, n) ((__typeof__(*(p)) *)(p))
#endif
/* Locks, barriers, flags: each fires its slot when done. */
#define DSM_LOCK_SYNC(l, slot_) earth_dsm_lock_sync((l), TC_SLOT_(slot_))
#define DSM_LOCK_RSYNC(l, sptr) earth_dsm_lock_rsync((l), (sptr))
#define DSM_UNLOCK_SYNC(l, slot_) earth_dsm_unlock_sync((l), TC_SLOT_(slot_))
#define DSM_BARRIER_SYNC(b, count, slot_)                                      \
	earth_dsm_barrier_sync((b), (unsigned)(count), TC_SLOT_(slot_))
#define DSM_BARRIER_RSYNC(b, count, sptr)                                      \
	earth_dsm_barrier_rsync((b), (unsigned)(count), (sptr))
#define FLAG_SET_SYNC(f, slot_) earth_dsm_flag_set_sync((f), TC_SLOT_(slot_))
#define FLAG_WAIT_SYNC(f, slot_) earth_dsm_flag_wait_sync((f), TC_SLOT_(slot_))
#define FLAG_WAIT_RSYNC(f, sptr) earth_dsm_flag_wait_rsync((f), (sptr))
/* DSM_ALLOC_SYNC(p, n, place, arg, slot): n elements of *p of shared
 * memory homed as place and arg say (as SHARED_ARRAY), their address
 * stored in the SHARED pointer p (NULL when the job's shared memory has no
 * room) before SYNC(slot); acquire them before touching them.
 * DSM_FREE_SYNC(p, slot): gives them back, then SYNC(slot). */
#define DSM_ALLOC_SYNC(p, n, place, arg, slot_)                                \
	earth_dsm_alloc_sync(TC_NBYTES_(p, n), (place), (unsigned)(arg),       \
			     (void **)&(p), TC_SLOT_(slot_))
#define DSM_FREE_SYNC(p, slot_) earth_dsm_free_sync((p), TC_SLOT_(slot_))
/* New lock, barrier, flag (any fiber; managed by its node). */
#define NEW_DSM_LOCK() earth_dsm_lock_new()
#define NEW_DSM_BARRIER() earth_dsm_barrier_new()
#define NEW_DSM_FLAG() earth_dsm_flag_new()

/*
 * SHARED_ARRAY(T, name, count, place, arg); at file scope: `T *SHARED name`,
 * count elements of shared memory homed as place says (EARTH_DSM_BLOCK,
 * _CYCLIC with arg pages per run, _NODE with arg the node, _FIRST_TOUCH),
 * allocated before THREADED main starts, the same on every node. count is
 * evaluated then (a constant, or globals). SHARED_LOCK(name),
 * SHARED_BARRIER(name), SHARED_FLAG(name): a lock, barrier or flag made
 * then, known on every node. A file that uses SHARED runs under
 * earth_dsm_main (earthcc generates its main so).
 */
struct tc_shared_decl {
	void *addr;	       /* the pointer, or the id */
	size_t (*bytes)(void); /* SHARED_ARRAY: its size; else NULL */
	int place; /* SHARED_ARRAY; else -1 lock, -2 barrier, -3 flag */
	unsigned arg;
	const char *name;
	const char *count; /* SHARED_ARRAY: the count as written */
};
#define TC_SHARED_DECL_(name, bytes, place, arg, count)                        \
	static const struct tc_shared_decl tc_shared_##name                    \
	    __attribute__((section("earth_tc_shared"), used, aligned(8))) = {  \
		(void *)&name, bytes, (place), (arg), #name, count}
#define SHARED_ARRAY(T, name, count, place, arg)                               \
	T *SHARED name;                                                        \
	static size_t tc_shared_bytes_##name(void)                             \
	{                                                                      \
		return sizeof(T) * (size_t)(count);                            \
	}                                                                      \
	TC_SHARED_DECL_(name, tc_shared_bytes_##name, place, arg, #count)
#define SHARED_LOCK(name)                                                      \
	DSM_LOCK name;                                                         \
	TC_SHARED_DECL_(name, 0, -1, 0, 0)
#define SHARED_BARRIER(name)                                                   \
	DSM_BARRIER name;                                                      \
	TC_SHARED_DECL_(name, 0, -2, 0, 0)
#define SHARED_FLAG(name)                                                      \
	DSM_FLAG name;                                                         \
	TC_SHARED_DECL_(name, 0, -3, 0, 0)
/* The generated main of a SHARED program (threaded-c/runtime/tc_dsm.c):
 * earth_dsm_main with a program thread that makes the SHARED_ objects,
 * INVOKEs THREADED main on node 0 and returns its exit status when main's
 * END_FUNCTION() ran (tc_dsm_main_ended). */
int tc_dsm_main(int argc, char **argv, const struct earth_tfunc *main_tf);
void tc_dsm_main_ended(void);

/* ---- structural constructs: the plugin replaces these ---- */
#ifdef EARTH_TC_PARSE
#define THREADED __attribute__((annotate("earth_threaded"))) void
void __tc_init_sync(int slot, int count, int reset, const char *fiber);
void __tc_spawn(const char *fiber);
void __tc_end_thread(void) __attribute__((noreturn));
void __tc_end_function(void) __attribute__((noreturn));
void __tc_invoke(int node, ...);
void __tc_token(int unused, ...);
#define INIT_SYNC(s, count, reset, fiber)                                      \
	__tc_init_sync((s), (count), (reset), #fiber)
#define SPAWN(fiber) __tc_spawn(#fiber)
#define END_THREAD() __tc_end_thread()
#define END_FUNCTION() __tc_end_function()
#define INVOKE(node, f, ...) __tc_invoke((node), f, ##__VA_ARGS__)
#define TOKEN(f, ...) __tc_token(0, f, ##__VA_ARGS__)
#else
#define TC_NOT_TRANSLATED_(what)                                               \
	_Static_assert(0, what " outside a THREADED function (or the file "    \
			       "did not go through earthcc)")
#define THREADED                                                               \
	TC_NOT_TRANSLATED_("THREADED");                                        \
	void
#define INIT_SYNC(s, c, r, f) TC_NOT_TRANSLATED_("INIT_SYNC")
#define SPAWN(f) TC_NOT_TRANSLATED_("SPAWN")
#define END_THREAD() TC_NOT_TRANSLATED_("END_THREAD")
#define END_FUNCTION() TC_NOT_TRANSLATED_("END_FUNCTION")
#define INVOKE(...) TC_NOT_TRANSLATED_("INVOKE")
#define TOKEN(...) TC_NOT_TRANSLATED_("TOKEN")
#endif

#endif /* EARTH_THREADEDC_H */
