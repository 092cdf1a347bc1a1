/* SPDX-License-Identifier: MIT */
/*
 * dsm/thread.h - program threads of a node: user-level threads, one stack
 * each, that the EU runs and switches between (a thread waiting on a page,
 * a lock, a barrier or a flag gives the EU to another). A switch saves
 * only what the C calling convention says a callee keeps (on x86-64:
 * rbx, rbp, r12-r15, the stack pointer, MXCSR and the x87 control word)
 * and never enters the kernel: no signal mask is saved or changed.
 *
 * A thread's stack is mapped with a guard page below it: an overflow
 * faults on the guard (dsm_thread_guard_of names whose it was) instead of
 * writing over another thread's memory.
 *
 * ASan and TSan are told of every switch (their fiber annotations), so
 * the sanitized builds check program threads as they check threads.
 */
#ifndef EARTH_DSM_THREAD_H
#define EARTH_DSM_THREAD_H

#include <stddef.h>
#include <stdint.h>

/* Where a thread stopped: its stack pointer, the saved registers on its
 * stack above it. */
struct dsm_ctx {
	void *sp;
	void *san;	       /* TSan's fiber of this context */
	const void *san_stack; /* ASan: the stack's bottom and size */
	size_t san_size;
};

/* Where a thread that faulted and must wait goes on (dsm/fault.c): the
 * handler keeps the faulting instruction and rbx here, points rbx at this
 * record and resumes the thread in a resume path on its own stack, which saves
 * every register and the whole FP/vector state there, waits, restores
 * them and runs the instruction again. Offsets fixed: the resume path reads
 * them. */
struct dsm_fault_save {
	uint64_t rip, rbx;
	struct dsm_thread *t;
};

struct dsm_thread {
	struct dsm_ctx ctx;
	struct dsm_fault_save fault;
	struct dsm_ctx *back; /* where a thread goes when its function ends */
	void (*fn)(void *);
	void *arg;
	void *map;	   /* the stack's mapping, guard page first */
	size_t map_size;   /* guard + stack */
	unsigned finished; /* its function returned */
};

/* The context of the calling kernel thread (the EU's loop), for threads
 * to switch back to. Call once on that thread before the first switch. */
void dsm_ctx_self(struct dsm_ctx *c);

/* Maps a stack of stack_size bytes (rounded up to pages, at least 16
 * KiB) with a guard page below, and readies t to run fn(arg) on it; when
 * fn returns the thread is finished and switches to back for good (NULL
 * here: whoever runs it sets back first, as dsm_faults_run does).
 * Returns 0, or -1 with errno (ENOMEM: the mapping failed). */
int dsm_thread_init(struct dsm_thread *t, size_t stack_size, void (*fn)(void *),
		    void *arg, struct dsm_ctx *back);

/* Unmaps a thread's stack: a thread that has finished, or never ran. */
void dsm_thread_destroy(struct dsm_thread *t);

/* Saves the caller's context in from and resumes to. */
void dsm_switch(struct dsm_ctx *from, struct dsm_ctx *to);

/* Whether addr is in t's guard page (a fault there is its stack
 * overflowing). */
int dsm_thread_guard_of(const struct dsm_thread *t, const void *addr);

#endif
