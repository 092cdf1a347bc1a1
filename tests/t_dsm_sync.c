/* SPDX-License-Identifier: MIT */
/*
 * t_dsm_sync.c - the DSM's lock, barrier and flag managers
 * (runtime/dsm/sync.h): a lock goes to its waiters first come, first
 * served, with the vector time each sent; a barrier lets all go when the
 * last arrives and can be used again at once; a flag lets its waiters go
 * when set and later waiters pass until it is cleared; requests that
 * break a rule (no such node, thread or object, a thread that waits
 * already, a release by another thread, a barrier count that differs)
 * are refused with a reason and change nothing.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <string.h>

#include "dsm/sync.h"

TestSuite(dsm_sync, .timeout = 10);

static struct {
	enum dsm_sync_kind kind;
	uint32_t id, node, thread, vt0;
} gone[64];
static int ngone;

static void on_go(void *ctx, enum dsm_sync_kind kind, uint32_t id,
		  uint32_t node, uint32_t thread, const uint32_t *vt)
{
	(void)ctx;
	cr_assert_lt(ngone, 64);
	gone[ngone].kind = kind;
	gone[ngone].id = id;
	gone[ngone].node = node;
	gone[ngone].thread = thread;
	gone[ngone].vt0 = vt[0];
	ngone++;
}

static struct dsm_sync s;

static void start(void)
{
	ngone = 0;
	cr_assert_eq(dsm_sync_init(&s, 3, 2, 2, 1, 1, on_go, NULL), 0);
}

Test(dsm_sync, lock_first_come_first_served)
{
	start();
	const char *why;
	uint32_t vt[3][3] = {{10, 0, 0}, {11, 0, 0}, {12, 0, 0}};
	cr_assert_eq(dsm_sync_lock(&s, 1, 0, 1, vt[0], &why), 0);
	cr_assert_eq(ngone, 1); /* free: granted at once */
	cr_assert_eq(dsm_sync_lock(&s, 1, 2, 0, vt[2], &why), 0);
	cr_assert_eq(dsm_sync_lock(&s, 1, 1, 1, vt[1], &why), 0);
	cr_assert_eq(ngone, 1);
	cr_assert_eq(dsm_sync_waiting(&s, DSM_SYNC_LOCK, 1), 2);
	cr_assert_eq(dsm_sync_unlock(&s, 1, 0, 1, &why), 0);
	cr_assert_eq(ngone, 2);
	cr_assert_eq(gone[1].node, 2); /* the first waiter */
	cr_assert_eq(gone[1].vt0, 12); /* with the time it sent */
	cr_assert_eq(dsm_sync_unlock(&s, 1, 2, 0, &why), 0);
	cr_assert_eq(gone[2].node, 1);
	cr_assert_eq(gone[2].thread, 1);
	cr_assert_eq(dsm_sync_unlock(&s, 1, 1, 1, &why), 0);
	cr_assert_eq(dsm_sync_holder(&s, 1), -1);
	cr_assert_eq(s.handoffs, 2);
	dsm_sync_fini(&s);
}

Test(dsm_sync, barrier_lets_all_go_and_again)
{
	start();
	const char *why;
	uint32_t vt[3] = {0};
	for (int round = 0; round < 2; round++) {
		ngone = 0;
		cr_assert_eq(dsm_sync_barrier(&s, 0, 3, 0, 0, vt, &why), 0);
		cr_assert_eq(dsm_sync_barrier(&s, 0, 3, 1, 0, vt, &why), 0);
		cr_assert_eq(ngone, 0);
		cr_assert_eq(dsm_sync_waiting(&s, DSM_SYNC_BARRIER, 0), 2);
		cr_assert_eq(dsm_sync_barrier(&s, 0, 3, 2, 1, vt, &why), 0);
		cr_assert_eq(ngone, 3);
	}
	cr_assert_eq(s.barriers_done, 2);
	dsm_sync_fini(&s);
}

Test(dsm_sync, flag_set_wait_clear)
{
	start();
	const char *why;
	uint32_t vt[3] = {0};
	cr_assert_eq(dsm_sync_flag_wait(&s, 0, 1, 0, vt, &why), 0);
	cr_assert_eq(ngone, 0);
	cr_assert_eq(dsm_sync_flag_set(&s, 0, &why), 0);
	cr_assert_eq(ngone, 1);
	cr_assert_eq(dsm_sync_flag_wait(&s, 0, 2, 0, vt, &why), 0);
	cr_assert_eq(ngone, 2); /* set: passes */
	cr_assert_eq(dsm_sync_flag_clear(&s, 0, &why), 0);
	cr_assert_eq(dsm_sync_flag_wait(&s, 0, 2, 0, vt, &why), 0);
	cr_assert_eq(ngone, 2);
	dsm_sync_fini(&s);
}

static void refused(int r, const char *why, const char *want)
{
	cr_assert_eq(r, -1, "accepted, want refusal for '%s'", want);
	cr_assert(why && strstr(why, want), "'%s', want '%s'",
		  why ? why : "(none)", want);
}

/* The call first, then its reason (argument order is unspecified). */
#define REFUSED(call, want)                                                    \
	do {                                                                   \
		int r_ = (call);                                               \
		refused(r_, why, want);                                        \
	} while (0)

Test(dsm_sync, broken_rules_refused)
{
	start();
	const char *why;
	uint32_t vt[3] = {0};
	REFUSED(dsm_sync_lock(&s, 0, 3, 0, vt, &why), "node the job");
	REFUSED(dsm_sync_lock(&s, 0, 0, 2, vt, &why), "thread its node");
	REFUSED(dsm_sync_lock(&s, 2, 0, 0, vt, &why), "lock that does");
	REFUSED(dsm_sync_unlock(&s, 0, 0, 0, &why), "does not hold");
	cr_assert_eq(dsm_sync_lock(&s, 0, 0, 0, vt, &why), 0);
	REFUSED(dsm_sync_lock(&s, 0, 0, 0, vt, &why), "that holds it");
	REFUSED(dsm_sync_unlock(&s, 0, 1, 0, &why), "does not hold");
	cr_assert_eq(dsm_sync_lock(&s, 0, 1, 0, vt, &why), 0); /* waits */
	REFUSED(dsm_sync_barrier(&s, 0, 3, 1, 0, vt, &why),
		"waits for something");
	cr_assert_eq(dsm_sync_barrier(&s, 0, 3, 2, 0, vt, &why), 0);
	REFUSED(dsm_sync_barrier(&s, 0, 2, 2, 1, vt, &why), "count unlike");
	REFUSED(dsm_sync_barrier(&s, 0, 7, 2, 1, vt, &why),
		"more than the job's threads");
	REFUSED(dsm_sync_barrier(&s, 1, 3, 2, 1, vt, &why),
		"barrier that does");
	REFUSED(dsm_sync_flag_set(&s, 1, &why), "flag that does");
	cr_assert_eq(ngone, 1);
	dsm_sync_fini(&s);
}
