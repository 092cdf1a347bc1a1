/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_thread.c - program threads (runtime/dsm/thread.h): threads run
 * their functions on their own stacks and switch with each other and with
 * the calling thread, keeping the callee-saved registers, the floating
 * point control words and deep stacks intact; a thread that ends goes
 * back to where it was told; many threads interleave in order; a stack
 * overflow faults on the thread's guard page, which is named as its own.
 */
#define EARTH_INTERNAL 1
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "dsm/thread.h"

TestSuite(dsm_thread, .timeout = 30);

static struct dsm_ctx main_ctx;

/* ---- ping-pong between main and one thread ---- */

static struct dsm_thread pong_t;
static volatile long pong_seen;

static void pong(void *arg)
{
	long n = (long)(intptr_t)arg;
	for (long i = 0; i < n; i++) {
		pong_seen = i;
		dsm_switch(&pong_t.ctx, &main_ctx);
	}
}

Test(dsm_thread, main_and_a_thread_take_turns)
{
	dsm_ctx_self(&main_ctx);
	long n = 10000;
	cr_assert_eq(
	    dsm_thread_init(&pong_t, 0, pong, (void *)(intptr_t)n, &main_ctx),
	    0);
	for (long i = 0; i < n; i++) {
		dsm_switch(&main_ctx, &pong_t.ctx);
		cr_assert_eq(pong_seen, i);
		cr_assert(!pong_t.finished);
	}
	dsm_switch(&main_ctx, &pong_t.ctx); /* its function returns */
	cr_assert(pong_t.finished);
	dsm_thread_destroy(&pong_t);
}

/* ---- many threads round robin, each with locals across switches ---- */

enum { NT = 64, ROUNDS = 200 };
static struct dsm_thread rr[NT];
static int order[NT * ROUNDS], norder;

static void rr_fn(void *arg)
{
	int me = (int)(intptr_t)arg;
	volatile double acc = me; /* kept in this stack's frame */
	char pad[512];
	memset(pad, me, sizeof(pad));
	for (int r = 0; r < ROUNDS; r++) {
		order[norder++] = me;
		acc = acc * 1.0 + 1;
		dsm_switch(&rr[me].ctx, &main_ctx);
		for (size_t i = 0; i < sizeof(pad); i++)
			cr_assert_eq(pad[i], (char)me,
				     "thread %d's stack "
				     "changed",
				     me);
	}
	cr_assert_eq(acc, me + ROUNDS);
}

Test(dsm_thread, many_threads_interleave_in_order)
{
	dsm_ctx_self(&main_ctx);
	for (int i = 0; i < NT; i++)
		cr_assert_eq(dsm_thread_init(&rr[i], 64 << 10, rr_fn,
					     (void *)(intptr_t)i, &main_ctx),
			     0);
	norder = 0;
	for (int r = 0; r <= ROUNDS; r++)
		for (int i = 0; i < NT; i++)
			if (!rr[i].finished)
				dsm_switch(&main_ctx, &rr[i].ctx);
	for (int i = 0; i < NT; i++) {
		cr_assert(rr[i].finished, "thread %d did not end", i);
		dsm_thread_destroy(&rr[i]);
	}
	cr_assert_eq(norder, NT * ROUNDS);
	for (int k = 0; k < norder; k++)
		cr_assert_eq(order[k], k % NT);
}

/* ---- the registers a callee keeps, and the FP control words ---- */

static struct dsm_thread clob_t;

static uint32_t get_mxcsr(void)
{
	uint32_t v;
	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}
static void set_mxcsr(uint32_t v)
{
	__asm__ volatile("ldmxcsr %0" ::"m"(v));
}
static uint16_t get_fpucw(void)
{
	uint16_t v;
	__asm__ volatile("fnstcw %0" : "=m"(v));
	return v;
}
static void set_fpucw(uint16_t v)
{
	__asm__ volatile("fldcw %0" ::"m"(v));
}

static void clobber(void *arg)
{
	(void)arg;
	for (;;) {
		/* Dirty every callee-saved register and both control words,
		 * then switch back with them dirty. */
		set_mxcsr((get_mxcsr() & ~0x6000u) | 0x4000u); /* round up */
		set_fpucw((uint16_t)((get_fpucw() & ~0x0c00u) | 0x0800u));
		__asm__ volatile("movq $1, %%rbx\n\tmovq $2, %%r12\n\t"
				 "movq $3, %%r13\n\tmovq $4, %%r14\n\t"
				 "movq $5, %%r15\n\t" ::
				     : "rbx", "r12", "r13", "r14", "r15");
		dsm_switch(&clob_t.ctx, &main_ctx);
	}
}

/* What the callee-saved registers held after the switch back; the
 * switch is called from assembly so that nothing of the compiler's runs
 * between setting them and reading them. */
uint64_t t_regs_after[5];
struct dsm_ctx *t_from, *t_to;

Test(dsm_thread, switch_keeps_callee_saved_state)
{
	dsm_ctx_self(&main_ctx);
	cr_assert_eq(dsm_thread_init(&clob_t, 0, clobber, NULL, &main_ctx), 0);
	uint32_t mx = get_mxcsr();
	uint16_t cw = get_fpucw();
	t_from = &main_ctx;
	t_to = &clob_t.ctx;
	__asm__ volatile("pushq %%rbp\n\t"
			 "movq %%rsp, %%rbp\n\t"
			 "subq $128, %%rsp\n\t"
			 "andq $-16, %%rsp\n\t"
			 "movq $11, %%rbx\n\tmovq $12, %%r12\n\t"
			 "movq $13, %%r13\n\tmovq $14, %%r14\n\t"
			 "movq $15, %%r15\n\t"
			 "movq t_from(%%rip), %%rdi\n\t"
			 "movq t_to(%%rip), %%rsi\n\t"
			 "call dsm_switch\n\t"
			 "movq %%rbx, t_regs_after(%%rip)\n\t"
			 "movq %%r12, t_regs_after+8(%%rip)\n\t"
			 "movq %%r13, t_regs_after+16(%%rip)\n\t"
			 "movq %%r14, t_regs_after+24(%%rip)\n\t"
			 "movq %%r15, t_regs_after+32(%%rip)\n\t"
			 "movq %%rbp, %%rsp\n\t"
			 "popq %%rbp\n\t" ::
			     : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8",
			       "r9", "r10", "r11", "r12", "r13", "r14", "r15",
			       "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
			       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
			       "xmm12", "xmm13", "xmm14", "xmm15", "memory",
			       "cc");
	for (int i = 0; i < 5; i++)
		cr_assert_eq(t_regs_after[i], (uint64_t)(11 + i),
			     "callee-saved register %d: %lu after the switch, "
			     "want %d",
			     i, (unsigned long)t_regs_after[i], 11 + i);
	cr_assert_eq(get_mxcsr(), mx, "MXCSR %#x after the switch, want %#x",
		     get_mxcsr(), mx);
	cr_assert_eq(get_fpucw(), cw, "x87 control word %#x, want %#x",
		     get_fpucw(), cw);
	dsm_thread_destroy(&clob_t);
}

/* ---- a stack overflow faults on the guard page ---- */

static struct dsm_thread deep_t;
static volatile void *fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	_exit(dsm_thread_guard_of(&deep_t, si->si_addr) ? 42 : 43);
}

Test(dsm_thread, overflow_faults_on_the_guard_page)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static char alt[64 << 10];
		stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)};
		sigaltstack(&ss, NULL);
		struct sigaction sa = {.sa_sigaction = on_segv,
				       .sa_flags = SA_SIGINFO | SA_ONSTACK};
		sigaction(SIGSEGV, &sa, NULL);
		dsm_ctx_self(&main_ctx);
		if (dsm_thread_init(&deep_t, 64 << 10, t_overflow_stack, NULL,
				    &main_ctx))
			_exit(44);
		dsm_switch(&main_ctx, &deep_t.ctx);
		_exit(45); /* the recursion came back: it cannot */
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child died of signal %d",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 42,
		     "status %d: 43 a fault outside the guard page, 44 no "
		     "stack, 45 no fault",
		     WEXITSTATUS(st));
}
