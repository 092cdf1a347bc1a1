/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_fault.c - the shared region and its faults (runtime/dsm/region.h,
 * fault.h), on one process with the test playing the node, each test with
 * the pages kept by userfaultfd and by protections: the region is
 * mapped at the address asked for (with a writable view of the same
 * memory) or refused (something there, a bad page
 * size, more pages than vm.max_map_count leaves, each with its message);
 * runs of pages invalidated together, in one system call under
 * userfaultfd;
 * a read of an invalid page and a write of a read-only one reach the
 * node with the right page and kind and run again once it allows them;
 * program threads that fault and must wait give the EU to the others and
 * resume with the page's contents, 48 of them at once, and with every
 * register, the flags and the vector registers as they were at the
 * faulting access, on the same EU or another; a home page claimed by
 * several EUs at once while the SU re-protects it ends with its entry
 * and its protection agreeing; a fault outside the region, and a
 * program thread's stack overflow, end the process by SIGSEGV with a message
 * naming the address (a bus error outside it by SIGBUS); a 1 GiB region
 * of alternating states keeps one mapping under userfaultfd and is
 * refused naming vm.max_map_count under protections; a state change the
 * kernel refuses ends the node naming the page; a child of fork has no
 * view of the region.
 */
#define EARTH_INTERNAL 1
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "dsm/fault.h"

TestSuite(dsm_fault, .timeout = 30);

#if defined(__SANITIZE_THREAD__)
#define AT ((void *)0x559000000000ull) /* in TSan's application memory */
#else
#define AT ((void *)0x6d0000000000ull)
#endif
#define PG 4096u

static struct dsm_region reg;
static struct dsm_faults fs;
static struct dsm_ctx sched;

/* Every test but one runs twice: pages kept by userfaultfd (SIGBUS), and
 * by page protections (SIGSEGV). */
static enum dsm_region_faults hows[] = {DSM_FAULTS_UFFD, DSM_FAULTS_PROTECT};
static enum dsm_region_faults how; /* the one of this run */
#define BOTH_WAYS(name)                                                        \
	ParameterizedTestParameters(dsm_fault, name)                           \
	{                                                                      \
		return cr_make_param_array(enum dsm_region_faults, hows,       \
					   T_NCASES(hows));                    \
	}                                                                      \
	ParameterizedTest(enum dsm_region_faults *way, dsm_fault, name)

/* Maps reg at AT, size bytes of PG-byte pages, the way this run keeps
 * them: skips the test where the kernel refuses userfaultfd. */
static void map_reg(enum dsm_region_faults w, size_t size)
{
	char err[512];
	how = w;
	int rc = dsm_region_map(&reg, AT, size, PG, how, err, sizeof(err));
	if (rc && how == DSM_FAULTS_UFFD && strstr(err, "refuses it"))
		cr_skip_test("%s", err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(reg.uffd >= 0, how == DSM_FAULTS_UFFD, "faults by %s",
		     dsm_region_faults_name(&reg));
}

/* ---- the region ---- */

BOTH_WAYS(region_at_its_address_or_refused)
{
	char err[512];
	map_reg(*way, 10 * PG);
	cr_assert_eq(reg.base, AT);
	cr_assert_eq(reg.pages, 10);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT + 3 * PG + 5), 3);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT + 10 * PG), -1);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT - 1), -1);
	struct dsm_region again;
	cr_assert_eq(dsm_region_map(&again, AT, PG, PG, how, err, sizeof(err)),
		     -1);
	cr_assert(strstr(err, "mapped there already"), "%s", err);
	dsm_region_unmap(&reg);
	cr_assert_eq(
	    dsm_region_map(&again, AT, PG, 3000, how, err, sizeof(err)), -1);
	cr_assert(strstr(err, "power of two"), "%s", err);
}

/* A child of fork has neither view: its write to a page the parent may
 * write ends it (SIGSEGV), and the parent's memory is unchanged. */
BOTH_WAYS(region_not_inherited_by_fork)
{
	map_reg(*way, 4 * PG);
	cr_assert_eq(dsm_region_set(&reg, 1, 1, DSM_PAGE_WRITE), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)((char *)AT + PG) = 7;
		*(volatile int *)dsm_region_alias(&reg, 1) = 7;
		_exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		  "status %#x, want killed by SIGSEGV", st);
	cr_assert_eq(*(volatile int *)((char *)AT + PG), 0);
	dsm_region_unmap(&reg);
}

/* A region of more pages than vm.max_map_count leaves: refused with the
 * limit named where pages are protected; with userfaultfd it maps, and
 * 1 GiB of pages in states that differ from their neighbours' (every
 * 64th read-only, the next writable, the rest invalid) keeps the view one
 * mapping, each page usable as its state says. */
BOTH_WAYS(large_regions_by_state)
{
	char err[512];
	long have, most;
	dsm_map_count(&have, &most);
	cr_assert_gt(most, 0, "vm.max_map_count unreadable");
	size_t big = (size_t)1 << 30;
	if (big / PG < (size_t)most)
		big = (size_t)most * PG;
	how = *way;
	int rc = dsm_region_map(&reg, AT, big, PG, how, err, sizeof(err));
	if (how == DSM_FAULTS_PROTECT) {
		cr_assert_eq(rc, -1);
		cr_assert(strstr(err, "vm.max_map_count"), "%s", err);
		cr_assert(strstr(err, "sysctl -w vm.max_map_count="), "%s",
			  err);
		return;
	}
	if (rc && strstr(err, "refuses it"))
		cr_skip_test("%s", err);
	cr_assert_eq(rc, 0, "%s", err);
	int zero = open("/dev/zero", O_RDONLY);
	cr_assert_geq(zero, 0);
	for (uint32_t p = 0; p + 2 < reg.pages; p += 64) {
		*(uint32_t *)dsm_region_alias(&reg, p) = p;
		cr_assert_eq(dsm_region_set(&reg, p, 1, DSM_PAGE_READ), 0);
		cr_assert_eq(dsm_region_set(&reg, p + 1, 1, DSM_PAGE_WRITE), 0);
	}
	long after;
	dsm_map_count(&after, &most);
	/* Protections would need three per 64 pages (12288); the view and
	 * the alias are two, and a sanitizer's shadow a few more. */
	cr_expect_leq(after, have + 64, "%ld mappings before, %ld after", have,
		      after);
	/* read(2) into a page fails (EFAULT) unless it is writable, and
	 * the program's reads see what the alias wrote. */
	for (uint32_t p = 0; p + 2 < reg.pages; p += 64) {
		char *v = (char *)reg.base + (size_t)p * PG;
		cr_assert_eq(*(volatile uint32_t *)v, p);
		cr_assert_eq(read(zero, v, 1), -1, "page %u writable", p);
		cr_assert_eq(read(zero, v + PG, 1), 1, "page %u not writable",
			     p + 1);
		cr_assert_eq(read(zero, v + 2 * PG, 1), -1, "page %u mapped",
			     p + 2);
	}
	close(zero);
	dsm_region_unmap(&reg);
}

/* Runs of pages invalidated together (dsm_region_invalidate): every page
 * of them unreadable after (write(2) from it to a pipe fails), their
 * neighbours as they were, their bytes still in the memory; under
 * userfaultfd one system call for all where the kernel has
 * process_madvise (Linux 6.13 and later: there it must), else one per
 * stretch of pages still mapped; under protections one a run. */
BOTH_WAYS(runs_invalidated_together)
{
	map_reg(*way, 12 * PG);
	for (uint32_t q = 0; q < 12; q++) {
		*(uint32_t *)dsm_region_alias(&reg, q) = 100 + q;
		cr_assert_eq(
		    dsm_region_set(&reg, q, 1,
				   q % 2 ? DSM_PAGE_WRITE : DSM_PAGE_READ),
		    0);
	}
	cr_assert_eq(dsm_region_set(&reg, 9, 1, DSM_PAGE_INVALID), 0);
	const struct dsm_run runs[] = {{1, 2}, {5, 1}, {8, 3}};
	const bool in[12] = {
	    [1] = 1, [2] = 1, [5] = 1, [8] = 1, [9] = 1, [10] = 1};
	uint64_t before = atomic_load(&reg.changes);
	cr_assert_eq(dsm_region_invalidate(&reg, runs, 3), 0);
	uint64_t made = atomic_load(&reg.changes) - before;
	struct utsname u;
	unsigned major = 0, minor = 0;
	cr_assert_eq(uname(&u), 0);
	sscanf(u.release, "%u.%u", &major, &minor);
	if (how == DSM_FAULTS_PROTECT)
		cr_assert_eq(made, 3);
	else if (major > 6 || (major == 6 && minor >= 13))
		cr_assert_eq(made, 1,
			     "%" PRIu64 " changes on Linux %s (pidfd %d)", made,
			     u.release, reg.pidfd);
	else
		cr_assert_eq(made, reg.pidfd >= 0 ? 1 : 4,
			     "%" PRIu64 " changes (pidfd %d)", made, reg.pidfd);
	int pipe_fd[2]; /* write(2) reads the bytes it puts into a pipe */
	cr_assert_eq(pipe(pipe_fd), 0);
	for (uint32_t q = 0; q < 12; q++) {
		char *v = (char *)reg.base + (size_t)q * PG, c;
		cr_assert_eq(write(pipe_fd[1], v, 1), in[q] ? -1 : 1, "page %u",
			     q);
		cr_assert(in[q] || read(pipe_fd[0], &c, 1) == 1);
		cr_assert_eq(reg.state[q] == DSM_PAGE_INVALID, in[q], "page %u",
			     q);
	}
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	cr_assert_eq(dsm_region_set(&reg, 5, 1, DSM_PAGE_READ), 0);
	cr_assert_eq(*(volatile uint32_t *)((char *)AT + 5 * PG), 105);
	const struct dsm_run outside = {11, 2}, many[DSM_REGION_RUNS + 1] = {0};
	cr_assert_eq(dsm_region_invalidate(&reg, &outside, 1), -1);
	cr_assert_eq(dsm_region_invalidate(&reg, many, DSM_REGION_RUNS + 1),
		     -1);
	dsm_region_unmap(&reg);
}

/* ---- faults the node answers at once ---- */

/* Written by the handler: volatile, or the compiler keeps what the test
 * stored before the access in a register across it. */
static volatile uint32_t last_page;
static volatile bool last_write;
static volatile int calls;

static enum dsm_fault_do allow(void *arg, uint32_t page, bool write)
{
	(void)arg;
	last_page = page;
	last_write = write;
	calls++;
	dsm_region_set(&reg, page, 1, write ? DSM_PAGE_WRITE : DSM_PAGE_READ);
	return DSM_FAULT_RETRY;
}

BOTH_WAYS(read_then_write_reach_the_node)
{
	map_reg(*way, 8 * PG);
	cr_assert_eq(dsm_fault_install(), 0);
	dsm_ctx_self(&sched);
	cr_assert_eq(dsm_faults_init(&fs, &reg, allow, NULL, &sched, "test: "),
		     0);
	volatile uint64_t *p = (uint64_t *)((char *)AT + 5 * PG + 64);
	calls = 0;
	uint64_t v = *p; /* invalid: a read fault */
	cr_assert_eq(v, 0);
	cr_assert_eq(calls, 1, "calls %d page %u", calls, last_page);
	cr_assert_eq(last_page, 5);
	cr_assert(!last_write);
	cr_assert_eq(reg.state[5], DSM_PAGE_READ);
	*p = 42; /* read-only: a write fault */
	cr_assert_eq(calls, 2);
	cr_assert(last_write);
	cr_assert_eq(*p, 42);
	*p = 43; /* writable: no fault */
	cr_assert_eq(calls, 2);
	cr_assert_eq(fs.faults, 2);
	cr_assert_eq(fs.waits, 0);
	dsm_faults_fini(&fs);
	dsm_region_unmap(&reg);
}

/* ---- faults that wait: the EU runs the other threads ---- */

enum { NT = 48 };
static struct dsm_thread th[NT];
static volatile int asked[NT], nasked, ran_while_waiting;
static volatile uint64_t seen[NT];

static enum dsm_fault_do ask(void *arg, uint32_t page, bool write)
{
	(void)arg;
	(void)write;
	asked[nasked++] = (int)page;
	return DSM_FAULT_WAIT;
}

static void reader(void *arg)
{
	int me = (int)(intptr_t)arg;
	volatile uint64_t *p = (uint64_t *)((char *)AT + (size_t)me * PG);
	if (me == NT) /* the one that never faults */
		return;
	ran_while_waiting += nasked; /* how many wait while this one runs */
	seen[me] = *p;
}

BOTH_WAYS(waiting_threads_give_the_eu_to_others)
{
	map_reg(*way, NT * PG);
	cr_assert_eq(dsm_fault_install(), 0);
	dsm_ctx_self(&sched);
	cr_assert_eq(dsm_faults_init(&fs, &reg, ask, NULL, &sched, "test: "),
		     0);
	nasked = ran_while_waiting = 0;
	for (int i = 0; i < NT; i++) {
		cr_assert_eq(dsm_thread_init(&th[i], 0, reader,
					     (void *)(intptr_t)i, &sched),
			     0);
		dsm_faults_run(&fs, &th[i]); /* waits */
		cr_assert(!th[i].finished);
	}
	cr_assert_eq(nasked, NT);
	for (int i = 0; i < NT; i++)
		cr_assert_eq(asked[i], i);
	/* Every thread waits at once: the pages come, last first. */
	for (int i = NT - 1; i >= 0; i--) {
		/* filled through the writable view while still invalid */
		*(uint64_t *)dsm_region_alias(&reg, (uint32_t)i) =
		    1000u + (unsigned)i;
		cr_assert_eq(
		    dsm_region_set(&reg, (uint32_t)i, 1, DSM_PAGE_READ), 0);
		dsm_faults_run(&fs, &th[i]); /* resumes */
		cr_assert(th[i].finished, "thread %d did not finish", i);
		cr_assert_eq(seen[i], 1000u + (unsigned)i);
	}
	cr_assert_eq(fs.waits, NT);
	cr_assert_eq(ran_while_waiting, NT * (NT - 1) / 2);
	for (int i = 0; i < NT; i++)
		dsm_thread_destroy(&th[i]);
	dsm_faults_fini(&fs);
	dsm_region_unmap(&reg);
}

/* ---- a waiting thread keeps every register ---- */

/* Patterns loaded into the general registers (but rsp, rbp and rax, which
 * the faulting load fills), the vector registers (256 bits where the CPU
 * has AVX, else 128) and the carry and direction flags before the access;
 * what they hold after it. */
static uint64_t gpr_in[13], gpr_out[13], vec_in[16][4], vec_out[16][4];
static uint64_t flags_out, loaded;
#define REGS_PAGE 3u
/* Statics all: the asm leaves the compiler no register to address a
 * local with. */
static uint64_t *regs_at;

/* clang-format off: one instruction a line */
#define GPR_LOADS(src)                                                         \
	"movq 0+" src ", %%rcx\n"                                              \
	"movq 8+" src ", %%rdx\n"                                              \
	"movq 16+" src ", %%rbx\n"                                             \
	"movq 24+" src ", %%rsi\n"                                             \
	"movq 32+" src ", %%rdi\n"                                             \
	"movq 40+" src ", %%r8\n"                                              \
	"movq 48+" src ", %%r9\n"                                              \
	"movq 56+" src ", %%r10\n"                                             \
	"movq 64+" src ", %%r11\n"                                             \
	"movq 72+" src ", %%r12\n"                                             \
	"movq 80+" src ", %%r13\n"                                             \
	"movq 88+" src ", %%r14\n"                                             \
	"movq 96+" src ", %%r15\n"
#define GPR_STORES(dst)                                                        \
	"movq %%rcx, 0+" dst "\n"                                              \
	"movq %%rdx, 8+" dst "\n"                                              \
	"movq %%rbx, 16+" dst "\n"                                             \
	"movq %%rsi, 24+" dst "\n"                                             \
	"movq %%rdi, 32+" dst "\n"                                             \
	"movq %%r8, 40+" dst "\n"                                              \
	"movq %%r9, 48+" dst "\n"                                              \
	"movq %%r10, 56+" dst "\n"                                             \
	"movq %%r11, 64+" dst "\n"                                             \
	"movq %%r12, 72+" dst "\n"                                             \
	"movq %%r13, 80+" dst "\n"                                             \
	"movq %%r14, 88+" dst "\n"                                             \
	"movq %%r15, 96+" dst "\n"
#define VEC_LOADS(m)                                                           \
	"vmovdqu 0+" m ", %%ymm0\n"                                            \
	"vmovdqu 32+" m ", %%ymm1\n"                                           \
	"vmovdqu 64+" m ", %%ymm2\n"                                           \
	"vmovdqu 96+" m ", %%ymm3\n"                                           \
	"vmovdqu 128+" m ", %%ymm4\n"                                          \
	"vmovdqu 160+" m ", %%ymm5\n"                                          \
	"vmovdqu 192+" m ", %%ymm6\n"                                          \
	"vmovdqu 224+" m ", %%ymm7\n"                                          \
	"vmovdqu 256+" m ", %%ymm8\n"                                          \
	"vmovdqu 288+" m ", %%ymm9\n"                                          \
	"vmovdqu 320+" m ", %%ymm10\n"                                         \
	"vmovdqu 352+" m ", %%ymm11\n"                                         \
	"vmovdqu 384+" m ", %%ymm12\n"                                         \
	"vmovdqu 416+" m ", %%ymm13\n"                                         \
	"vmovdqu 448+" m ", %%ymm14\n"                                         \
	"vmovdqu 480+" m ", %%ymm15\n"
#define VEC_STORES(m)                                                          \
	"vmovdqu %%ymm0, 0+" m "\n"                                            \
	"vmovdqu %%ymm1, 32+" m "\n"                                           \
	"vmovdqu %%ymm2, 64+" m "\n"                                           \
	"vmovdqu %%ymm3, 96+" m "\n"                                           \
	"vmovdqu %%ymm4, 128+" m "\n"                                          \
	"vmovdqu %%ymm5, 160+" m "\n"                                          \
	"vmovdqu %%ymm6, 192+" m "\n"                                          \
	"vmovdqu %%ymm7, 224+" m "\n"                                          \
	"vmovdqu %%ymm8, 256+" m "\n"                                          \
	"vmovdqu %%ymm9, 288+" m "\n"                                          \
	"vmovdqu %%ymm10, 320+" m "\n"                                         \
	"vmovdqu %%ymm11, 352+" m "\n"                                         \
	"vmovdqu %%ymm12, 384+" m "\n"                                         \
	"vmovdqu %%ymm13, 416+" m "\n"                                         \
	"vmovdqu %%ymm14, 448+" m "\n"                                         \
	"vmovdqu %%ymm15, 480+" m "\n"
#define XMM_LOADS(m)                                                           \
	"movdqu 0+" m ", %%xmm0\n"                                             \
	"movdqu 32+" m ", %%xmm1\n"                                            \
	"movdqu 64+" m ", %%xmm2\n"                                            \
	"movdqu 96+" m ", %%xmm3\n"                                            \
	"movdqu 128+" m ", %%xmm4\n"                                           \
	"movdqu 160+" m ", %%xmm5\n"                                           \
	"movdqu 192+" m ", %%xmm6\n"                                           \
	"movdqu 224+" m ", %%xmm7\n"                                           \
	"movdqu 256+" m ", %%xmm8\n"                                           \
	"movdqu 288+" m ", %%xmm9\n"                                           \
	"movdqu 320+" m ", %%xmm10\n"                                          \
	"movdqu 352+" m ", %%xmm11\n"                                          \
	"movdqu 384+" m ", %%xmm12\n"                                          \
	"movdqu 416+" m ", %%xmm13\n"                                          \
	"movdqu 448+" m ", %%xmm14\n"                                          \
	"movdqu 480+" m ", %%xmm15\n"
#define XMM_STORES(m)                                                          \
	"movdqu %%xmm0, 0+" m "\n"                                             \
	"movdqu %%xmm1, 32+" m "\n"                                            \
	"movdqu %%xmm2, 64+" m "\n"                                            \
	"movdqu %%xmm3, 96+" m "\n"                                            \
	"movdqu %%xmm4, 128+" m "\n"                                           \
	"movdqu %%xmm5, 160+" m "\n"                                           \
	"movdqu %%xmm6, 192+" m "\n"                                           \
	"movdqu %%xmm7, 224+" m "\n"                                           \
	"movdqu %%xmm8, 256+" m "\n"                                           \
	"movdqu %%xmm9, 288+" m "\n"                                           \
	"movdqu %%xmm10, 320+" m "\n"                                          \
	"movdqu %%xmm11, 352+" m "\n"                                          \
	"movdqu %%xmm12, 384+" m "\n"                                          \
	"movdqu %%xmm13, 416+" m "\n"                                          \
	"movdqu %%xmm14, 448+" m "\n"                                          \
	"movdqu %%xmm15, 480+" m "\n"
/* clang-format on */

#define REGS_CLOBBERS                                                          \
	"rax", "rcx", "rdx", "rbx", "rsi", "rdi", "r8", "r9", "r10", "r11",    \
	    "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2", "xmm3",        \
	    "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",  \
	    "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory"

static bool have_avx;

/* Loads the patterns, sets CF and DF, reads the invalid page (a fault
 * that waits), then stores everything back. */
static void regs_thread(void *arg)
{
	(void)arg;
	regs_at = (uint64_t *)((char *)AT + REGS_PAGE * PG);
	if (have_avx)
		__asm__ volatile(
		    VEC_LOADS("%[vi]") GPR_LOADS(
			"%[gi]") "stc\n std\n"
				 "movq %[p], %%rax\n"
				 "movq (%%rax), %%rax\n"
				 "pushfq\n popq %[fl]\n cld\n"
				 "movq %%rax, %[ld]\n" GPR_STORES("%[go]")
				     VEC_STORES("%[vo]") "vzeroupper\n"
		    : [fl] "=m"(flags_out), [ld] "=m"(loaded),
		      [go] "=m"(gpr_out), [vo] "=m"(vec_out)
		    : [gi] "m"(gpr_in), [vi] "m"(vec_in), [p] "m"(regs_at)
		    : REGS_CLOBBERS);
	else
		__asm__ volatile(
		    XMM_LOADS("%[vi]") GPR_LOADS(
			"%[gi]") "stc\n std\n"
				 "movq %[p], %%rax\n"
				 "movq (%%rax), %%rax\n"
				 "pushfq\n popq %[fl]\n cld\n"
				 "movq %%rax, %[ld]\n" GPR_STORES("%[go]")
				     XMM_STORES("%[vo]")
		    : [fl] "=m"(flags_out), [ld] "=m"(loaded),
		      [go] "=m"(gpr_out), [vo] "=m"(vec_out)
		    : [gi] "m"(gpr_in), [vi] "m"(vec_in), [p] "m"(regs_at)
		    : REGS_CLOBBERS);
}

/* Runs while regs_thread waits: other values in every register. */
static void clobber_thread(void *arg)
{
	(void)arg;
	static uint64_t junk[16][4];
	memset(junk, 0x5a, sizeof(junk));
	if (have_avx)
		__asm__ volatile(VEC_LOADS("%[j]") GPR_LOADS(
				     "%[j]") "stc\n"
					     "vzeroupper\n" ::[j] "m"(junk)
				 : REGS_CLOBBERS);
	else
		__asm__ volatile(XMM_LOADS("%[j]")
				     GPR_LOADS("%[j]") "stc\n" ::[j] "m"(junk)
				 : REGS_CLOBBERS);
}

BOTH_WAYS(a_waiting_thread_keeps_every_register)
{
	map_reg(*way, 8 * PG);
	cr_assert_eq(dsm_fault_install(), 0);
	dsm_ctx_self(&sched);
	cr_assert_eq(dsm_faults_init(&fs, &reg, ask, NULL, &sched, "test: "),
		     0);
	have_avx = __builtin_cpu_supports("avx");
	for (unsigned i = 0; i < 13; i++)
		gpr_in[i] = 0x0101010101010101ull * (i + 1) + 0x1000 * i;
	for (unsigned i = 0; i < 16; i++)
		for (unsigned w = 0; w < 4; w++)
			vec_in[i][w] = 0xa000000000000000ull | (i << 8) | w;
	nasked = 0;
	static struct dsm_thread a, b;
	cr_assert_eq(dsm_thread_init(&a, 0, regs_thread, NULL, &sched), 0);
	cr_assert_eq(dsm_thread_init(&b, 0, clobber_thread, NULL, &sched), 0);
	dsm_faults_run(&fs, &a); /* faults and waits */
	cr_assert(!a.finished);
	cr_assert_eq(nasked, 1);
	dsm_faults_run(&fs, &b);
	cr_assert(b.finished);
	*(uint64_t *)dsm_region_alias(&reg, REGS_PAGE) = 0x600dull;
	cr_assert_eq(dsm_region_set(&reg, REGS_PAGE, 1, DSM_PAGE_READ), 0);
	dsm_faults_run(&fs, &a); /* resumes, reads, stores */
	cr_assert(a.finished);
	cr_assert_eq(loaded, 0x600dull);
	const char *const names[13] = {"rcx", "rdx", "rbx", "rsi", "rdi",
				       "r8",  "r9",  "r10", "r11", "r12",
				       "r13", "r14", "r15"};
	for (unsigned i = 0; i < 13; i++)
		cr_expect_eq(gpr_out[i], gpr_in[i], "%s: %#llx, want %#llx",
			     names[i], (unsigned long long)gpr_out[i],
			     (unsigned long long)gpr_in[i]);
	cr_expect(flags_out & 1, "the carry flag was lost");
	cr_expect(flags_out & 0x400, "the direction flag was lost");
	for (unsigned i = 0; i < 16; i++)
		for (unsigned w = 0; w < (have_avx ? 4u : 2u); w++)
			cr_expect_eq(vec_out[i][w], vec_in[i][w],
				     "%smm%u word %u: %#llx, want %#llx",
				     have_avx ? "y" : "x", i, w,
				     (unsigned long long)vec_out[i][w],
				     (unsigned long long)vec_in[i][w]);
	dsm_thread_destroy(&a);
	dsm_thread_destroy(&b);
	dsm_faults_fini(&fs);
	dsm_region_unmap(&reg);
}

/* A thread that waited on one EU resumes on another (a node of several
 * EUs runs a ready thread on any): two kernel threads, each with its own
 * handler state and scheduler context; the registers survive the move. */
struct eu_side {
	struct dsm_faults f;
	struct dsm_ctx sched;
	struct dsm_thread *t;
	uint64_t waits; /* its handler's count, kept past fini */
};

static void *eu_side_run(void *arg)
{
	struct eu_side *e = arg;
	dsm_ctx_self(&e->sched);
	if (dsm_faults_init(&e->f, &reg, ask, NULL, &e->sched, "test: "))
		return (void *)1;
	dsm_faults_run(&e->f, e->t);
	e->waits = e->f.waits;
	dsm_faults_fini(&e->f);
	return NULL;
}

static void on_eu(struct eu_side *e)
{
	pthread_t eu;
	void *r = (void *)1;
	cr_assert_eq(pthread_create(&eu, NULL, eu_side_run, e), 0);
	cr_assert_eq(pthread_join(eu, &r), 0);
	cr_assert_null(r, "the EU could not set up its fault handling");
}

BOTH_WAYS(a_waiting_thread_resumes_on_another_eu)
{
	map_reg(*way, 8 * PG);
	cr_assert_eq(dsm_fault_install(), 0);
	have_avx = __builtin_cpu_supports("avx");
	for (unsigned i = 0; i < 13; i++)
		gpr_in[i] = 0x0202020202020202ull * (i + 1);
	for (unsigned i = 0; i < 16; i++)
		for (unsigned w = 0; w < 4; w++)
			vec_in[i][w] = 0xb000000000000000ull | (i << 8) | w;
	nasked = 0;
	static struct dsm_thread a;
	cr_assert_eq(dsm_thread_init(&a, 0, regs_thread, NULL, NULL), 0);
	static struct eu_side one, two;
	one.t = two.t = &a;
	on_eu(&one); /* faults there and waits */
	cr_assert(!a.finished);
	cr_assert_eq(nasked, 1);
	cr_assert_eq(one.waits, 1);
	*(uint64_t *)dsm_region_alias(&reg, REGS_PAGE) = 0xbeefull;
	cr_assert_eq(dsm_region_set(&reg, REGS_PAGE, 1, DSM_PAGE_READ), 0);
	on_eu(&two); /* resumes there, ends there */
	cr_assert(a.finished, "the thread did not end on the second EU");
	cr_assert_eq(loaded, 0xbeefull);
	for (unsigned i = 0; i < 13; i++)
		cr_expect_eq(gpr_out[i], gpr_in[i], "register %u: %#llx", i,
			     (unsigned long long)gpr_out[i]);
	for (unsigned i = 0; i < 16; i++)
		for (unsigned w = 0; w < (have_avx ? 4u : 2u); w++)
			cr_expect_eq(vec_out[i][w], vec_in[i][w],
				     "vector %u word %u", i, w);
	cr_expect(flags_out & 1, "the carry flag was lost");
	dsm_thread_destroy(&a);
	dsm_region_unmap(&reg);
}

/* The EUs of a node set up their fault handling at their first program
 * thread or fiber, possibly at once: the process's handler is installed
 * once, and no EU sees it half done (TSan). */
static void *install_once(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)dsm_fault_install();
}

Test(dsm_fault, several_eus_install_the_handler_at_once)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, install_once, NULL),
			     0);
	for (int i = 0; i < 4; i++) {
		void *r = (void *)1;
		cr_assert_eq(pthread_join(t[i], &r), 0);
		cr_expect_null(r, "EU %d: dsm_fault_install failed", i);
	}
	struct sigaction now;
	cr_assert_eq(sigaction(SIGSEGV, NULL, &now), 0);
	cr_expect(now.sa_flags & SA_SIGINFO, "the handler is not installed");
	cr_assert_eq(sigaction(SIGBUS, NULL, &now), 0);
	cr_expect(now.sa_flags & SA_SIGINFO, "no handler of SIGBUS");
}

/* ---- a home page claimed by several EUs while the SU re-protects ---- */

/* Whether page p of reg is writable now: read(2) into it fails with
 * EFAULT when it is not, without a fault in this process. */
static bool writable(int zero, uint32_t p)
{
	return read(zero, (char *)reg.base + (size_t)p * PG, 1) == 1;
}

static pthread_barrier_t claim_bar;
static volatile bool claim_stop;
#define CLAIM_PAGES 8u
/* A claim told to the SU (the EU's list of home pages written). */
static atomic_bool claim_noted[CLAIM_PAGES];

/* An EU: each round, claims every home page it sees and tells the SU
 * (as its fault handler does on a first write). */
static void *claimer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (;;) {
		pthread_barrier_wait(&claim_bar);
		if (claim_stop)
			return NULL;
		for (uint32_t i = 0; i < CLAIM_PAGES; i++) {
			uint32_t p = (i + seed) % CLAIM_PAGES;
			if (dsm_region_state(&reg, p) == DSM_PAGE_HOME &&
			    !dsm_region_claim(&reg, p, DSM_PAGE_HOME))
				atomic_store(&claim_noted[p], true);
		}
		pthread_barrier_wait(&claim_bar);
	}
}

BOTH_WAYS(home_claims_and_reprotection_agree)
{
	map_reg(*way, CLAIM_PAGES * PG);
	cr_assert_eq(dsm_region_set(&reg, 0, CLAIM_PAGES, DSM_PAGE_HOME), 0);
	int zero = open("/dev/zero", O_RDONLY);
	cr_assert_geq(zero, 0);
	/* Not a claim: the page must be in the state asked for. */
	cr_assert_eq(dsm_region_claim(&reg, 0, DSM_PAGE_READ), -1);
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(dsm_region_claim(&reg, CLAIM_PAGES, DSM_PAGE_HOME), -1);
	cr_assert_eq(errno, EINVAL);
	enum { EUS = 3, ROUNDS = 20000 };
	pthread_t t[EUS];
	claim_stop = false;
	pthread_barrier_init(&claim_bar, NULL, EUS + 1);
	for (uintptr_t i = 0; i < EUS; i++)
		cr_assert_eq(
		    pthread_create(&t[i], NULL, claimer, (void *)(i * 3)), 0);
	unsigned bad = 0, claimed = 0;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&claim_bar);
		/* The SU's release, while the EUs claim: every page told
		 * of whose entry says WRITE read-only again (proto.c). */
		for (uint32_t p = 0; p < CLAIM_PAGES; p++)
			if (atomic_exchange(&claim_noted[p], false) &&
			    dsm_region_state(&reg, p) == DSM_PAGE_WRITE)
				cr_assert_eq(
				    dsm_region_set(&reg, p, 1, DSM_PAGE_HOME),
				    0);
		pthread_barrier_wait(&claim_bar);
		for (uint32_t p = 0; p < CLAIM_PAGES; p++) {
			enum dsm_page_state st = dsm_region_state(&reg, p);
			claimed += st == DSM_PAGE_WRITE;
			if ((st == DSM_PAGE_WRITE) != writable(zero, p)) {
				bad++;
				/* Both agree again for the next round. */
				dsm_region_set(&reg, p, 1, DSM_PAGE_HOME);
				atomic_store(&claim_noted[p], false);
			}
		}
	}
	claim_stop = true;
	pthread_barrier_wait(&claim_bar);
	for (int i = 0; i < EUS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&claim_bar);
	close(zero);
	dsm_region_unmap(&reg);
	cr_expect_gt(claimed, 0, "no page was ever claimed");
	cr_expect_eq(bad, 0,
		     "%u of %u pages' entries disagreed with their protection",
		     bad, ROUNDS * CLAIM_PAGES);
}

/* ---- a state change the kernel refuses ends the node ---- */

/* A page left in a state other than its entry's would fault forever or
 * let writes go unnoticed: the node ends, naming the page and the error
 * (here the view is gone from under the region). */
BOTH_WAYS(refused_state_change_ends_the_node)
{
	map_reg(*way, 4 * PG);
	cr_assert_eq(dsm_region_set(&reg, 4, 1, DSM_PAGE_READ), -1,
		     "a page past the end");
	cr_assert_eq(errno, EINVAL);
	dsm_region_unmap(&reg);
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* A region of the child's own: a userfaultfd acts on the
		 * memory of the process that opened it. */
		char err[512];
		dup2(pfd[1], 2);
		if (dsm_region_map(&reg, AT, 4 * PG, PG, how, err, sizeof(err)))
			_exit(50);
		munmap(reg.base, reg.size);
		dsm_region_set(&reg, 2, 1, DSM_PAGE_READ);
		_exit(0);
	}
	close(pfd[1]);
	char out[1024];
	size_t n = 0;
	ssize_t r;
	while (n + 1 < sizeof(out) &&
	       (r = read(pfd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(pfd[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == EARTH_EXIT_USAGE,
		  "status %#x: %s", st, out);
	cr_assert(strstr(out, "error: shared memory: the kernel refused to "
			      "make page 2 read-only ("),
		  "%s", out);
}

/* ---- the program's own faults end it, named ---- */

static struct dsm_thread deep_t;

/* Runs what in a child with the handler installed; its stderr into out. */
static int child(int what, char *out, size_t cap)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		char err[512];
		if (dsm_region_map(&reg, AT, 4 * PG, PG, how, err, sizeof(err)))
			_exit(50);
		dsm_fault_install();
		dsm_ctx_self(&sched);
		if (dsm_faults_init(&fs, &reg, allow, NULL, &sched,
				    "earth: node 7: "))
			_exit(51);
		if (what == 0)
			*(volatile int *)(uintptr_t)0x10 = 1;
		if (what == 2) { /* past the end of a file: SIGBUS */
			int fd = memfd_create("t_dsm_fault", 0);
			volatile char *m =
			    mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
			if (fd < 0 || m == MAP_FAILED)
				_exit(54);
			fprintf(stderr, "mapped at %p\n", (void *)m);
			(void)m[1];
		}
		if (dsm_thread_init(&deep_t, 64 << 10, t_overflow_stack, NULL,
				    &sched))
			_exit(52);
		dsm_faults_run(&fs, &deep_t);
		_exit(53);
	}
	close(pfd[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(pfd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(pfd[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return st;
}

BOTH_WAYS(program_faults_end_it_by_name)
{
	char out[1024];
	how = *way;
	int st = child(0, out, sizeof(out));
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		  "status %#x, want killed by SIGSEGV", st);
	cr_assert(strstr(out, "earth: node 7: segmentation fault at 0x10 "
			      "(not in shared memory)"),
		  "stderr: %s", out);
	st = child(1, out, sizeof(out));
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		  "status %#x, want killed by SIGSEGV", st);
	cr_assert(strstr(out, "earth: node 7: a program thread's stack "
			      "overflowed at 0x"),
		  "stderr: %s", out);
	st = child(2, out, sizeof(out));
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS,
		  "status %#x, want killed by SIGBUS", st);
	void *m = NULL;
	cr_assert_eq(sscanf(out, "mapped at %p", &m), 1, "stderr: %s", out);
	char want[96];
	snprintf(want, sizeof(want),
		 "earth: node 7: bus error at %p (not in shared memory)",
		 (void *)((char *)m + 1));
	cr_assert(strstr(out, want), "want %s, stderr: %s", want, out);
}
