/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_fault.c - the shared region and its faults (runtime/dsm/region.h,
 * fault.h), on one process with the test playing the node: the region is
 * mapped at the address asked for (with a writable view of the same
 * memory) or refused (something there, a bad page
 * size, more pages than vm.max_map_count leaves, each with its message);
 * a read of an invalid page and a write of a read-only one reach the
 * node with the right page and kind and run again once it allows them;
 * program threads that fault and must wait give the EU to the others and
 * resume with the page's contents, 48 of them at once (the alternate
 * stacks going round); a fault outside the region, and a program
 * thread's stack overflow, end the process by SIGSEGV with a message
 * naming the address.
 */
#define EARTH_INTERNAL 1
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "dsm/fault.h"

TestSuite(dsm_fault, .timeout = 30);

#define AT ((void *)0x6d0000000000ull)
#define PG 4096u

static struct dsm_region reg;
static struct dsm_faults fs;
static struct dsm_ctx sched;

/* ---- the region ---- */

Test(dsm_fault, region_at_its_address_or_refused)
{
	char err[512];
	cr_assert_eq(dsm_region_map(&reg, AT, 10 * PG, PG, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(reg.base, AT);
	cr_assert_eq(reg.pages, 10);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT + 3 * PG + 5), 3);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT + 10 * PG), -1);
	cr_assert_eq(dsm_region_page_of(&reg, (char *)AT - 1), -1);
	struct dsm_region again;
	cr_assert_eq(dsm_region_map(&again, AT, PG, PG, err, sizeof(err)), -1);
	cr_assert(strstr(err, "mapped there already"), "%s", err);
	dsm_region_unmap(&reg);
	cr_assert_eq(dsm_region_map(&again, AT, PG, 3000, err, sizeof(err)),
		     -1);
	cr_assert(strstr(err, "power of two"), "%s", err);
	long have, most;
	dsm_map_count(&have, &most);
	cr_assert_gt(most, 0, "vm.max_map_count unreadable");
	cr_assert_eq(
	    dsm_region_map(&again, AT, (size_t)most * PG, PG, err, sizeof(err)),
	    -1);
	cr_assert(strstr(err, "vm.max_map_count"), "%s", err);
	cr_assert(strstr(err, "sysctl -w vm.max_map_count="), "%s", err);
}

/* ---- faults the node answers at once ---- */

static uint32_t last_page;
static bool last_write;
static int calls;

static enum dsm_fault_do allow(void *arg, uint32_t page, bool write)
{
	(void)arg;
	last_page = page;
	last_write = write;
	calls++;
	dsm_region_set(&reg, page, 1, write ? DSM_PAGE_WRITE : DSM_PAGE_READ);
	return DSM_FAULT_RETRY;
}

Test(dsm_fault, read_then_write_reach_the_node)
{
	char err[512];
	cr_assert_eq(dsm_region_map(&reg, AT, 8 * PG, PG, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(dsm_fault_install(), 0);
	dsm_ctx_self(&sched);
	cr_assert_eq(dsm_faults_init(&fs, &reg, allow, NULL, &sched, "test: "),
		     0);
	volatile uint64_t *p = (uint64_t *)((char *)AT + 5 * PG + 64);
	calls = 0;
	uint64_t v = *p; /* invalid: a read fault */
	cr_assert_eq(v, 0);
	cr_assert_eq(calls, 1);
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
static int asked[NT], nasked, ran_while_waiting;
static uint64_t seen[NT];

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

Test(dsm_fault, waiting_threads_give_the_eu_to_others)
{
	char err[512];
	cr_assert_eq(dsm_region_map(&reg, AT, NT * PG, PG, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(dsm_fault_install(), 0);
	dsm_ctx_self(&sched);
	cr_assert_eq(dsm_faults_init(&fs, &reg, ask, NULL, &sched, "test: "),
		     0);
	nasked = ran_while_waiting = 0;
	for (int i = 0; i < NT; i++) {
		cr_assert_eq(dsm_thread_init(&th[i], 0, reader,
					     (void *)(intptr_t)i, &sched),
			     0);
		cr_assert_eq(dsm_faults_run(&fs, &th[i]), 0); /* waits */
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
		cr_assert_eq(dsm_faults_run(&fs, &th[i]), 0); /* resumes */
		cr_assert(th[i].finished, "thread %d did not finish", i);
		cr_assert_eq(seen[i], 1000u + (unsigned)i);
	}
	cr_assert_eq(fs.waits, NT);
	cr_assert_eq(fs.nfree, DSM_ALT_STACKS - 1,
		     "alternate stacks lost: %u free", fs.nfree);
	cr_assert_eq(ran_while_waiting, NT * (NT - 1) / 2);
	for (int i = 0; i < NT; i++)
		dsm_thread_destroy(&th[i]);
	dsm_faults_fini(&fs);
	dsm_region_unmap(&reg);
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
		if (dsm_region_map(&reg, AT, 4 * PG, PG, err, sizeof(err)))
			_exit(50);
		dsm_fault_install();
		dsm_ctx_self(&sched);
		if (dsm_faults_init(&fs, &reg, allow, NULL, &sched,
				    "earth: node 7: "))
			_exit(51);
		if (what == 0)
			*(volatile int *)(uintptr_t)0x10 = 1;
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

Test(dsm_fault, program_faults_end_it_by_name)
{
	char out[1024];
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
}
