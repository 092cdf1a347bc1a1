/* SPDX-License-Identifier: MIT */
/*
 * dsm/fault.c - the SIGSEGV handler of program threads, and the
 * alternate stacks it runs on (dsm/fault.h).
 */
#define _GNU_SOURCE 1
#include "dsm/fault.h"

#include <errno.h>
#include <signal.h>
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
 * default action, once the handler returns and the access runs again. */
static void fall_to_default(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGSEGV, &sa, NULL);
}

/* ---- alternate stacks ---- */

static int alt_register(struct dsm_faults *f, void *s)
{
	stack_t ss = {.ss_sp = s, .ss_size = ALT_SIZE, .ss_flags = 0};
	if (sigaltstack(&ss, NULL))
		return -1;
	f->alt_registered = s;
	return 0;
}

/* ---- the handler ---- */

static bool fault_writes(const void *ucv)
{
	const ucontext_t *uc = ucv;
	/* The page-fault error code: bit 1 set for a write. */
	return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	int saved_errno = errno;
	struct dsm_faults *f = tls_faults;
	void *addr = si->si_addr;
	long page = f && f->region ? dsm_region_page_of(f->region, addr) : -1;
	if (page < 0) {
		if (f && f->cur && dsm_thread_guard_of(f->cur, addr))
			report(f, "a program thread's stack overflowed at ",
			       addr,
			       " (its guard page): give threads larger "
			       "stacks or recurse less");
		else
			report(f, "segmentation fault at ", addr,
			       " (not in shared memory)");
		fall_to_default();
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
		if (!t || !f->nfree) {
			report(f, "shared memory: a fault at ", addr,
			       t ? " must wait, and every alternate signal "
				   "stack of this EU is held by a waiting "
				   "thread"
				 : " must wait, outside any program thread");
			fall_to_default();
			break;
		}
		/* Keep this alternate stack (the handler's frame is on it):
		 * the scheduler registers another (the kernel refuses to
		 * change it while we run on it). */
		void *mine = f->alt_registered;
		f->alt_swap = true;
		f->waits++;
		f->cur = NULL;
		dsm_switch(&t->ctx, f->sched);
		/* Resumed: the one registered now goes back to the pool; the
		 * kernel registers ours again as the handler returns. */
		f->alt_free[f->nfree++] = f->alt_registered;
		f->alt_registered = mine;
		break;
	}
	case DSM_FAULT_FIBER:
		report(f, "shared memory: a fiber touched ", addr,
		       ", a page it did not acquire: acquire the range "
		       "first (earth_dsm_acquire_sync, EARTH_DSM_WRITE when "
		       "it writes) and touch it only until its release");
		fall_to_default();
		break;
	case DSM_FAULT_BUG:
	default:
		report(f,
		       "shared memory: an access the program may not make "
		       "at ",
		       addr, "");
		fall_to_default();
		break;
	}
	errno = saved_errno;
}

int dsm_fault_install(void)
{
	static int done;
	if (done)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	/* NODEFER: a thread that waits leaves the handler by a switch, and
	 * the next thread's fault must not find SIGSEGV blocked. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return -1;
	done = 1;
	return 0;
}

int dsm_faults_init(struct dsm_faults *f, struct dsm_region *region,
		    dsm_fault_fn on_fault, void *arg, struct dsm_ctx *sched,
		    const char *prefix)
{
	memset(f, 0, sizeof(*f));
	f->alt_map = mmap(NULL, (size_t)ALT_SIZE * DSM_ALT_STACKS,
			  PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (f->alt_map == MAP_FAILED) {
		f->alt_map = NULL;
		errno = ENOMEM;
		return -1;
	}
	for (unsigned i = 0; i < DSM_ALT_STACKS; i++)
		f->alt_free[f->nfree++] =
		    (uint8_t *)f->alt_map + (size_t)ALT_SIZE * i;
	if (alt_register(f, f->alt_free[--f->nfree])) {
		int e = errno;
		munmap(f->alt_map, (size_t)ALT_SIZE * DSM_ALT_STACKS);
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
	stack_t ss = {.ss_flags = SS_DISABLE};
	sigaltstack(&ss, NULL);
	if (f->alt_map)
		munmap(f->alt_map, (size_t)ALT_SIZE * DSM_ALT_STACKS);
	if (tls_faults == f)
		tls_faults = NULL;
	memset(f, 0, sizeof(*f));
}

int dsm_faults_run(struct dsm_faults *f, struct dsm_thread *t)
{
	f->cur = t;
	dsm_switch(f->sched, &t->ctx);
	f->cur = NULL;
	if (f->alt_swap) {
		/* t waits in its handler, on the registered stack. */
		f->alt_swap = false;
		return alt_register(f, f->alt_free[--f->nfree]);
	}
	return 0;
}
