/* SPDX-License-Identifier: MIT */
/*
 * dsm/thread.c - program threads: stacks with a guard page, and the
 * switch between two contexts (dsm/thread.h).
 *
 * The switch is a few instructions of assembly (dsm_switch_raw): push the
 * callee-saved registers and the floating-point control words on the
 * current stack, store the stack pointer, load the other one, pop what it
 * pushed, return into it. A new thread's stack is laid out as if it had
 * switched away at dsm_thread_entry, which calls dsm_thread_run with the
 * thread (held in r12).
 */
#define _GNU_SOURCE 1
#include "dsm/thread.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "dsm/thread.c switches contexts on x86-64 only"
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SAN_ASAN 1
#else
#define SAN_ASAN 0
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SAN_TSAN 1
#else
#define SAN_TSAN 0
#endif

#define MIN_STACK (16u << 10)

/* void dsm_switch_raw(void **save_sp, void *load_sp) */
__asm__(".text\n"
	".globl dsm_switch_raw\n"
	".hidden dsm_switch_raw\n"
	".type dsm_switch_raw,@function\n"
	"dsm_switch_raw:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $16, %rsp\n"
	"	stmxcsr 8(%rsp)\n"
	"	fnstcw (%rsp)\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	fldcw (%rsp)\n"
	"	ldmxcsr 8(%rsp)\n"
	"	addq $16, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size dsm_switch_raw,.-dsm_switch_raw\n"
	/* A new thread's first return lands here, its thread in r12. */
	".globl dsm_thread_entry\n"
	".hidden dsm_thread_entry\n"
	".type dsm_thread_entry,@function\n"
	"dsm_thread_entry:\n"
	"	movq %r12, %rdi\n"
	"	andq $-16, %rsp\n"
	"	call dsm_thread_run\n"
	"	ud2\n"
	".size dsm_thread_entry,.-dsm_thread_entry\n");

void dsm_switch_raw(void **save_sp, void *load_sp);
void dsm_thread_entry(void);
__attribute__((noreturn)) void dsm_thread_run(struct dsm_thread *t);

/* Before leaving `from` for `to` (from NULL: from is never resumed). */
static inline void san_leave(struct dsm_ctx *from, struct dsm_ctx *to,
			     void **fake)
{
	(void)from;
	(void)to;
	(void)fake;
#if SAN_ASAN
	__sanitizer_start_switch_fiber(from ? fake : NULL, to->san_stack,
				       to->san_size);
#endif
#if SAN_TSAN
	__tsan_switch_to_fiber(to->san, 0);
#endif
}

/* Back in a context after a switch. */
static inline void san_arrive(void *fake)
{
	(void)fake;
#if SAN_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void dsm_switch(struct dsm_ctx *from, struct dsm_ctx *to)
{
	void *fake = NULL;
	san_leave(from, to, &fake);
	dsm_switch_raw(&from->sp, to->sp);
	san_arrive(fake);
}

void dsm_thread_run(struct dsm_thread *t)
{
	san_arrive(NULL);
	t->fn(t->arg);
	t->finished = 1;
	san_leave(NULL, t->back, NULL);
	void *dead;
	dsm_switch_raw(&dead, t->back->sp);
	__builtin_unreachable();
}

void dsm_ctx_self(struct dsm_ctx *c)
{
	memset(c, 0, sizeof(*c));
#if SAN_TSAN
	c->san = __tsan_get_current_fiber();
#endif
#if SAN_ASAN
	pthread_attr_t a;
	if (!pthread_getattr_np(pthread_self(), &a)) {
		void *lo;
		size_t sz;
		if (!pthread_attr_getstack(&a, &lo, &sz)) {
			c->san_stack = lo;
			c->san_size = sz;
		}
		pthread_attr_destroy(&a);
	}
#endif
}

int dsm_thread_init(struct dsm_thread *t, size_t stack_size, void (*fn)(void *),
		    void *arg, struct dsm_ctx *back)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	if (stack_size < MIN_STACK)
		stack_size = MIN_STACK;
	stack_size = (stack_size + pg - 1) / pg * pg;
	memset(t, 0, sizeof(*t));
	t->map_size = stack_size + pg;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
		      -1, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		errno = ENOMEM;
		return -1;
	}
	if (mprotect(t->map, pg, PROT_NONE)) {
		int e = errno;
		munmap(t->map, t->map_size);
		t->map = NULL;
		errno = e;
		return -1;
	}
	t->fn = fn;
	t->arg = arg;
	t->back = back;
	uint8_t *top = (uint8_t *)t->map + t->map_size;
	/* As dsm_switch_raw leaves a stack: control words, r15..r12, rbx,
	 * rbp, then the return address. */
	uint64_t *sp = (uint64_t *)top - 10;
	uint32_t mxcsr;
	uint16_t fpucw;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	memset(sp, 0, 10 * sizeof(*sp));
	memcpy(&sp[0], &fpucw, sizeof(fpucw));
	memcpy(&sp[1], &mxcsr, sizeof(mxcsr));
	sp[2] = 0;			/* r15 */
	sp[3] = 0;			/* r14 */
	sp[4] = 0;			/* r13 */
	sp[5] = (uint64_t)(uintptr_t)t; /* r12: the thread */
	sp[6] = 0;			/* rbx */
	sp[7] = 0; /* rbp: the end of frame-pointer chains */
	sp[8] = (uint64_t)(uintptr_t)&dsm_thread_entry;
	t->ctx.sp = sp;
	t->ctx.san_stack = (uint8_t *)t->map + pg;
	t->ctx.san_size = stack_size;
#if SAN_TSAN
	t->ctx.san = __tsan_create_fiber(0);
#endif
	return 0;
}

void dsm_thread_destroy(struct dsm_thread *t)
{
#if SAN_TSAN
	if (t->ctx.san)
		__tsan_destroy_fiber(t->ctx.san);
#endif
	if (t->map)
		munmap(t->map, t->map_size);
	t->map = NULL;
}

int dsm_thread_guard_of(const struct dsm_thread *t, const void *addr)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const uint8_t *a = addr, *m = t->map;
	return m && a >= m && a < m + pg;
}
