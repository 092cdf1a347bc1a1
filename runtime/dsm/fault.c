/* SPDX-License-Identifier: MIT */
/*
 * dsm/fault.c - the SIGSEGV and SIGBUS handler of program threads, the
 * alternate stack it runs on, and the resume path a thread that must wait goes
 * through (dsm/fault.h).
 */
#define _GNU_SOURCE 1
#include "dsm/fault.h"

#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define ALT_SIZE (64u << 10)

/* The calling EU's side: read in the handler, so initial-exec (no
 * allocation on first use). */
static __thread struct dsm_faults *tls_faults
    __attribute__((tls_model("initial-exec")));

/* ---- the crash report: async-signal-safe ---- */

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		b[at++] = *s++;
	return at;
}

static size_t put_hex(char *b, size_t at, size_t cap, uintptr_t v)
{
	char t[2 + 16];
	int k = 0;
	do {
		t[k++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	at = put_str(b, at, cap, "0x");
	while (k && at + 1 < cap)
		b[at++] = t[--k];
	return at;
}

static void report(const struct dsm_faults *f, const char *what,
		   const void *addr, const char *why)
{
	char b[256];
	size_t at = put_str(b, 0, sizeof(b), f ? f->prefix : "earth: ");
	at = put_str(b, at, sizeof(b), what);
	at = put_hex(b, at, sizeof(b), (uintptr_t)addr);
	at = put_str(b, at, sizeof(b), why);
	b[at++] = '\n';
	ssize_t w = write(STDERR_FILENO, b, at);
	(void)w;
}

/* Ends the process as the fault would have without this handler: the
 * default action of sig, once the handler returns and the access runs
 * again. */
static void fall_to_default(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
}

/* ---- the resume path of a thread that waits ---- */

#if !defined(__x86_64__)
#error "dsm/fault.c resumes faulting threads on x86-64 only"
#endif

/* Bytes XSAVE writes for the features the kernel enabled (CPUID leaf 0xd),
 * or 0 where the CPU has no XSAVE (then FXSAVE's 512); and whether it has
 * XSAVEC, which writes only the components in use (not AVX-512's or AMX's
 * registers a program has not touched: 11 KiB of AMX state here, so a
 * tenth of the stores). Set once by dsm_fault_install, read by the resume path.
 */
uint64_t dsm_xsave_size __attribute__((visibility("hidden")));
uint64_t dsm_xsave_compact __attribute__((visibility("hidden")));

_Static_assert(offsetof(struct dsm_fault_save, rip) == 0,
	       "the resume path reads it");
_Static_assert(offsetof(struct dsm_fault_save, rbx) == 8,
	       "the resume path reads it");

/* Entered as the handler returns, in place of the faulting access: every
 * register is the interrupted code's but rip, rsp (the interrupted rsp
 * less its 128-byte red zone and one slot) and rbx (the thread's
 * dsm_fault_save, which holds the other two). It pushes the flags and
 * the fifteen registers (the true rbx in its place, the faulting rip in
 * the slot), XSAVEs the FP/vector state below them, 64-aligned, calls
 * dsm_fault_wait_here, then restores all and returns to the faulting rip
 * with `ret $128`, which also steps over the red zone: rsp is the
 * interrupted one again and no flag changed. */
__asm__(".text\n"
	".globl dsm_fault_resume\n"
	".hidden dsm_fault_resume\n"
	".type dsm_fault_resume,@function\n"
	"dsm_fault_resume:\n"
	"	pushfq\n"
	"	pushq %rax\n"
	"	pushq %rcx\n"
	"	pushq %rdx\n"
	"	pushq %rbx\n"
	"	pushq %rbp\n"
	"	pushq %rsi\n"
	"	pushq %rdi\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	pushq %r10\n"
	"	pushq %r11\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	cld\n" /* as C expects (the flags saved have it as it was) */
	"	movq %rsp, %rbp\n"
	"	movq 8(%rbx), %rax\n" /* the true rbx */
	"	movq %rax, 88(%rsp)\n"
	"	movq 0(%rbx), %rax\n" /* the faulting rip, into the slot */
	"	movq %rax, 128(%rsp)\n"
	"	movq dsm_xsave_size(%rip), %rcx\n"
	"	testq %rcx, %rcx\n"
	"	jz 1f\n"
	"	subq %rcx, %rsp\n"
	"	andq $-64, %rsp\n"
	"	xorl %eax, %eax\n" /* XSAVE leaves the header but XSTATE_BV */
	"	movq %rax, 512(%rsp)\n"
	"	movq %rax, 520(%rsp)\n"
	"	movq %rax, 528(%rsp)\n"
	"	movq %rax, 536(%rsp)\n"
	"	movq %rax, 544(%rsp)\n"
	"	movq %rax, 552(%rsp)\n"
	"	movq %rax, 560(%rsp)\n"
	"	movq %rax, 568(%rsp)\n"
	"	movl $-1, %eax\n"
	"	movl $-1, %edx\n"
	"	cmpq $0, dsm_xsave_compact(%rip)\n"
	"	je 3f\n"
	"	xsavec64 (%rsp)\n" /* XRSTOR reads either form */
	"	jmp 4f\n"
	"3:	xsave64 (%rsp)\n"
	"4:	movq 16(%rbx), %rdi\n"
	"	call dsm_fault_wait_here\n"
	"	movl $-1, %eax\n"
	"	movl $-1, %edx\n"
	"	xrstor64 (%rsp)\n"
	"	jmp 2f\n"
	"1:	subq $512, %rsp\n"
	"	andq $-64, %rsp\n"
	"	fxsave64 (%rsp)\n"
	"	movq 16(%rbx), %rdi\n"
	"	call dsm_fault_wait_here\n"
	"	fxrstor64 (%rsp)\n"
	"2:	movq %rbp, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %r11\n"
	"	popq %r10\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rdi\n"
	"	popq %rsi\n"
	"	popq %rbp\n"
	"	popq %rbx\n"
	"	popq %rdx\n"
	"	popq %rcx\n"
	"	popq %rax\n"
	"	popfq\n"
	"	ret $128\n"
	".size dsm_fault_resume,.-dsm_fault_resume\n");

void dsm_fault_resume(void);
void dsm_fault_wait_here(struct dsm_thread *t)
    __attribute__((visibility("hidden")));

/* The thread waits as any wait does: back to its EU's scheduler, resumed
 * by whichever EU runs it next. */
void dsm_fault_wait_here(struct dsm_thread *t)
{
	struct dsm_faults *f = tls_faults;
	f->waits++;
	f->cur = NULL;
	dsm_switch(&t->ctx, f->sched);
}

static void xsave_size_init(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return; /* FXSAVE */
	__cpuid_count(0xd, 0, a, b, c, d);
	uint64_t size = b;
	__cpuid_count(0xd, 1, a, b, c, d);
	if (a & 2) { /* XSAVEC; b: the compacted size of what is enabled */
		dsm_xsave_compact = 1;
		if (b > size)
			size = b;
	}
	dsm_xsave_size = size + 64; /* and room to align it */
}

/* ---- the handler ---- */

static bool fault_writes(const void *ucv)
{
	const ucontext_t *uc = ucv;
	/* The page-fault error code: bit 1 set for a write. */
	return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
}

/* Whether a signal on the region is a DSM fault: SIGSEGV where its pages
 * are protected, SIGBUS from userfaultfd (BUS_ADRERR) where it keeps
 * them; any other (a machine check, say) is not. */
static bool dsm_signal(const struct dsm_region *r, int sig, int code)
{
	return r->uffd >= 0 ? sig == SIGBUS && code == BUS_ADRERR
			    : sig == SIGSEGV;
}

static void on_fault_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct dsm_faults *f = tls_faults;
	void *addr = si->si_addr;
	long page = f && f->region ? dsm_region_page_of(f->region, addr) : -1;
	if (page >= 0 && !dsm_signal(f->region, sig, si->si_code)) {
		report(f,
		       sig == SIGBUS
			   ? "bus error in shared memory at "
			   : "segmentation fault in shared memory at ",
		       addr, " (not a fault of its protocol)");
		fall_to_default(sig);
		errno = saved_errno;
		return;
	}
	if (page < 0) {
		if (f && f->cur && dsm_thread_guard_of(f->cur, addr))
			report(f, "a program thread's stack overflowed at ",
			       addr,
			       " (its guard page): give threads larger "
			       "stacks (EARTH_DSM_STACK_KB) or recurse less");
		else
			report(f,
			       sig == SIGBUS ? "bus error at "
					     : "segmentation fault at ",
			       addr, " (not in shared memory)");
		fall_to_default(sig);
		errno = saved_errno;
		return;
	}
	f->faults++;
	bool write = fault_writes(ucv);
	switch (f->on_fault(f->arg, (uint32_t)page, write)) {
	case DSM_FAULT_RETRY:
		break;
	case DSM_FAULT_WAIT: {
		struct dsm_thread *t = f->cur;
		if (!t) {
			report(f, "shared memory: a fault at ", addr,
			       " must wait, outside any program thread");
			fall_to_default(sig);
			break;
		}
		/* Out of the handler into the resume path, on the thread's
		 * stack below the red zone, with the way back in t->fault. */
		ucontext_t *uc = ucv;
		greg_t *g = uc->uc_mcontext.gregs;
		t->fault.rip = (uint64_t)g[REG_RIP];
		t->fault.rbx = (uint64_t)g[REG_RBX];
		t->fault.t = t;
		g[REG_RBX] = (greg_t)(uintptr_t)&t->fault;
		g[REG_RSP] -= 128 + 8;
		g[REG_RIP] = (greg_t)(uintptr_t)&dsm_fault_resume;
		break;
	}
	case DSM_FAULT_FIBER:
		report(f, "shared memory: a fiber touched ", addr,
		       ", a page it did not acquire: acquire the range "
		       "first (earth_dsm_acquire_sync, EARTH_DSM_WRITE when "
		       "it writes) and touch it only until its release");
		fall_to_default(sig);
		break;
	case DSM_FAULT_BUG:
	default:
		report(f,
		       "shared memory: an access the program may not make "
		       "at ",
		       addr, "");
		fall_to_default(sig);
		break;
	}
	errno = saved_errno;
}

/* Once for the process, whichever EU comes first (the others wait):
 * 0, or the errno sigaction gave. */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	xsave_size_init();
	install_errno =
	    sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL)
		? errno
		: 0;
}

int dsm_fault_install(void)
{
	pthread_once(&install_once, install);
	if (!install_errno)
		return 0;
	errno = install_errno;
	return -1;
}

int dsm_faults_init(struct dsm_faults *f, struct dsm_region *region,
		    dsm_fault_fn on_fault, void *arg, struct dsm_ctx *sched,
		    const char *prefix)
{
	memset(f, 0, sizeof(*f));
	f->alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (f->alt == MAP_FAILED) {
		f->alt = NULL;
		errno = ENOMEM;
		return -1;
	}
	stack_t ss = {.ss_sp = f->alt, .ss_size = ALT_SIZE, .ss_flags = 0};
	if (sigaltstack(&ss, NULL)) {
		int e = errno;
		munmap(f->alt, ALT_SIZE);
		f->alt = NULL;
		errno = e;
		return -1;
	}
	f->region = region;
	f->on_fault = on_fault;
	f->arg = arg;
	f->sched = sched;
	size_t n = strlen(prefix);
	if (n >= sizeof(f->prefix))
		n = sizeof(f->prefix) - 1;
	memcpy(f->prefix, prefix, n);
	tls_faults = f;
	return 0;
}

void dsm_faults_fini(struct dsm_faults *f)
{
	if (tls_faults == f) {
		stack_t ss = {.ss_flags = SS_DISABLE};
		sigaltstack(&ss, NULL);
	}
	if (f->alt)
		munmap(f->alt, ALT_SIZE);
	if (tls_faults == f)
		tls_faults = NULL;
	memset(f, 0, sizeof(*f));
}

void dsm_faults_run(struct dsm_faults *f, struct dsm_thread *t)
{
	f->cur = t;
	t->back = f->sched; /* where it goes when it ends */
	dsm_switch(f->sched, &t->ctx);
	f->cur = NULL;
}
