/* SPDX-License-Identifier: MIT */
/*
 * t_runtime_deque.c - the EU's token deque (unit/deque.h): bad sizes,
 * empty and full deques, the order at each end, growth, and an owner
 * pushing and popping while thieves steal, every item taken exactly once
 * and seen with what the owner wrote before pushing it. The concurrent
 * cases make >= 10^7 operations; EARTH_TEST_SCALE=N divides them by N
 * (the TSan run uses 10). A deque without thieves on other threads
 * (shared false: its owner pops with plain loads and stores) does the same
 * with a thief in a signal handler interrupting the owner.
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>

#include "helpers.h"
#include "unit/deque.h"

TestSuite(deque, .timeout = 120);

struct item {
	uint64_t val; /* written by the owner before the push */
	_Atomic uint32_t taken;
};

static uint64_t val_of(uint64_t i)
{
	return qt_mix(i) | 1;
}

Test(deque, bad_sizes_rejected)
{
	struct deque d;
	cr_assert_eq(deque_init(&d, 0, true), -1);
	cr_assert_eq(deque_init(&d, DEQUE_MIN_CAP / 2, false), -1);
	cr_assert_eq(deque_init(&d, DEQUE_MIN_CAP * 3, true), -1);
	cr_assert_eq(deque_init(&d, DEQUE_MIN_CAP, false), 0);
	deque_free(&d);
}

static void empty_pop_and_steal(bool shared)
{
	struct deque d;
	cr_assert_eq(deque_init(&d, DEQUE_MIN_CAP, shared), 0);
	cr_assert_null(deque_pop(&d));
	cr_assert_null(deque_steal(&d));
	cr_assert_eq(deque_size(&d), 0);
	int x;
	cr_assert(deque_push(&d, &x));
	cr_assert_eq(deque_size(&d), 1);
	cr_assert_eq(deque_pop(&d), &x);
	cr_assert_null(deque_pop(&d));
	cr_assert(deque_push(&d, &x));
	cr_assert_eq(deque_steal(&d), &x);
	cr_assert_null(deque_steal(&d));
	cr_assert_null(deque_pop(&d));
	cr_assert_eq(deque_size(&d), 0);
	/* The last item popped, then pushes and steals go on. */
	cr_assert(deque_push(&d, &x));
	cr_assert_eq(deque_pop(&d), &x);
	cr_assert_eq(deque_size(&d), 0);
	cr_assert(deque_push(&d, &x));
	cr_assert(deque_push(&d, &d));
	cr_assert_eq(deque_steal(&d), &x);
	cr_assert_eq(deque_pop(&d), &d);
	cr_assert_null(deque_pop(&d));
	cr_assert_null(deque_steal(&d));
	deque_free(&d);
}

Test(deque, empty_pop_and_steal_return_null)
{
	empty_pop_and_steal(true);
	empty_pop_and_steal(false);
}

/* The owner takes the newest, a thief the oldest; growing keeps both. */
static void both_ends_across_growth(bool shared)
{
	enum { N = DEQUE_MIN_CAP * 8 + 5 };
	static struct item it[N];
	struct deque d;
	cr_assert_eq(deque_init(&d, DEQUE_MIN_CAP * 16, shared), 0);
	for (int round = 0; round < 3; round++) { /* indices wrap */
		for (int i = 0; i < N; i++)
			cr_assert(deque_push(&d, &it[i]));
		cr_assert_eq(deque_size(&d), N);
		int lo = 0, hi = N - 1;
		while (lo <= hi) {
			cr_assert_eq(deque_steal(&d), &it[lo]);
			lo++;
			if (lo <= hi)
				cr_assert_eq(deque_pop(&d), &it[hi--]);
		}
		cr_assert_null(deque_pop(&d));
		cr_assert_null(deque_steal(&d));
	}
	deque_free(&d);
}

Test(deque, newest_at_bottom_oldest_at_top_across_growth)
{
	both_ends_across_growth(true);
	both_ends_across_growth(false);
}

/* A full deque refuses the next push and keeps what it holds. */
static void full_refuses(bool shared)
{
	enum { MAX = DEQUE_MIN_CAP * 4 };
	static struct item it[MAX + 1];
	struct deque d;
	cr_assert_eq(deque_init(&d, MAX, shared), 0);
	for (int i = 0; i < MAX; i++)
		cr_assert(deque_push(&d, &it[i]), "push %d of %d", i, MAX);
	cr_assert_not(deque_push(&d, &it[MAX]));
	cr_assert_eq(deque_size(&d), MAX);
	cr_assert_eq(deque_steal(&d), &it[0]);
	cr_assert(deque_push(&d, &it[MAX]));
	cr_assert_not(deque_push(&d, &it[0]));
	for (int i = MAX; i >= 1; i--)
		cr_assert_eq(deque_pop(&d), &it[i]);
	cr_assert_null(deque_pop(&d));
	deque_free(&d);
}

Test(deque, full_refuses_then_accepts_after_take)
{
	full_refuses(true);
	full_refuses(false);
}

/* ---- an owner and thieves ---- */

struct run {
	struct deque d;
	struct item *it;
	uint64_t n;
	_Atomic bool done;
	_Atomic uint64_t stolen;
	_Atomic uint64_t bad;
};

static void take(struct run *r, struct item *x)
{
	if (x->val != val_of((uint64_t)(x - r->it)))
		atomic_fetch_add_explicit(&r->bad, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&x->taken, 1, memory_order_relaxed);
}

/* Every one of the n items was taken exactly once, by the owner's pops
 * or a thief, with its value; the deque is empty. */
static void all_taken_once(struct run *r, uint64_t n, uint64_t popped,
			   uint64_t stolen)
{
	cr_assert_eq(popped + stolen, n,
		     "popped %" PRIu64 " + stolen %" PRIu64 " != %" PRIu64,
		     popped, stolen, n);
	cr_assert_eq(atomic_load(&r->bad), 0, "items seen without their value");
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(atomic_load(&r->it[i].taken), 1,
			     "item %" PRIu64 " taken %u times", i,
			     atomic_load(&r->it[i].taken));
	cr_assert_eq(deque_size(&r->d), 0);
}

static void *thief(void *arg)
{
	struct run *r = arg;
	uint64_t k = 0;
	for (;;) {
		bool done =
		    atomic_load_explicit(&r->done, memory_order_acquire);
		struct item *x = deque_steal(&r->d);
		if (x) {
			take(r, x);
			k++;
		} else if (done) {
			break;
		}
	}
	atomic_fetch_add_explicit(&r->stolen, k, memory_order_relaxed);
	return NULL;
}

/* The owner pushes n items in bursts of 1..burst, popping one after each
 * push with probability 1/pop_every and a few after each burst; thieves
 * steal throughout. */
static void owner_and_thieves(uint64_t n, int thieves, unsigned burst,
			      unsigned pop_every, size_t max)
{
	struct run *r = calloc(1, sizeof(*r));
	cr_assert_not_null(r);
	r->n = n;
	r->it = calloc(n, sizeof(*r->it));
	cr_assert_not_null(r->it);
	cr_assert_eq(deque_init(&r->d, max, true), 0);
	pthread_t th[4];
	for (int t = 0; t < thieves; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, thief, r), 0);
	uint64_t popped = 0, rng = 12345;
	for (uint64_t i = 0; i < n;) {
		rng = qt_mix(rng);
		unsigned b = 1 + (unsigned)(rng % burst);
		for (unsigned k = 0; k < b && i < n; k++, i++) {
			r->it[i].val = val_of(i);
			/* Refused at max items (thieves starved of CPU on a
			 * busy host): take the newest, then push again. */
			while (!deque_push(&r->d, &r->it[i])) {
				struct item *x = deque_pop(&r->d);
				if (x) {
					take(r, x);
					popped++;
				}
			}
			if ((qt_mix(i) % pop_every) == 0) {
				struct item *x = deque_pop(&r->d);
				if (x) {
					take(r, x);
					popped++;
				}
			}
		}
		for (unsigned k = 0; k < (unsigned)(rng >> 40) % 4; k++) {
			struct item *x = deque_pop(&r->d);
			if (!x)
				break;
			take(r, x);
			popped++;
		}
	}
	struct item *x;
	while ((x = deque_pop(&r->d))) {
		take(r, x);
		popped++;
	}
	atomic_store_explicit(&r->done, true, memory_order_release);
	for (int t = 0; t < thieves; t++)
		pthread_join(th[t], NULL);
	uint64_t stolen = atomic_load(&r->stolen);
	all_taken_once(r, n, popped, stolen);
	cr_log_info("%" PRIu64 " items: %" PRIu64 " popped, %" PRIu64
		    " stolen by %d",
		    n, popped, stolen, thieves);
	if (thieves && t_scale() == 1)
		cr_assert_gt(stolen, 0, "the thieves took nothing");
	deque_free(&r->d);
	free(r->it);
	free(r);
}

/* 5 * 10^6 pushes and as many takes; small bursts, the owner and the
 * thief fight over the last items. */
Test(deque, one_thief_exactly_once)
{
	owner_and_thieves(t_scaled(5000000, 20000), 1, 4, 2, 1u << 20);
}

/* Long bursts: the deque grows while a thief steals from the old array. */
Test(deque, one_thief_while_growing)
{
	owner_and_thieves(t_scaled(5000000, 20000), 1, 60000, 64, 1u << 20);
}

Test(deque, three_thieves_exactly_once)
{
	owner_and_thieves(t_scaled(5000000, 20000), 3, 16, 3, 1u << 20);
}

/* ---- no thief on another thread: one in a signal handler ---- */

static struct run *sig_run;
static uint64_t sig_stolen, sig_ticks;

/* Interrupts the owner between any two of its instructions, as the SU
 * work of a single-interrupt node does. */
static void steal_on_signal(int sig)
{
	(void)sig;
	sig_ticks++;
	struct item *x;
	for (int k = 0; k < 2 && (x = deque_steal(&sig_run->d)); k++) {
		take(sig_run, x);
		sig_stolen++;
	}
}

Test(deque, private_owner_and_signal_thief_exactly_once)
{
	uint64_t n = t_scaled(10000000, 20000);
	struct run *r = calloc(1, sizeof(*r));
	cr_assert_not_null(r);
	r->n = n;
	r->it = calloc(n, sizeof(*r->it));
	cr_assert_not_null(r->it);
	cr_assert_eq(deque_init(&r->d, 1u << 20, false), 0);
	sig_run = r;
	struct sigaction sa = {.sa_handler = steal_on_signal};
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGPROF, &sa, NULL), 0);
	/* Every 20 us of CPU time: thousands of steals in the middle of
	 * pushes and pops. */
	struct itimerval tv = {{0, 20}, {0, 20}};
	cr_assert_eq(setitimer(ITIMER_PROF, &tv, NULL), 0);
	uint64_t popped = 0, rng = 99;
	for (uint64_t i = 0; i < n;) {
		rng = qt_mix(rng);
		unsigned b = 1 + (unsigned)(rng % 3);
		for (unsigned k = 0; k < b && i < n; k++, i++) {
			r->it[i].val = val_of(i);
			cr_assert(deque_push(&r->d, &r->it[i]));
		}
		/* Pop as many as pushed, often down to the last item. */
		for (unsigned k = 0; k < b; k++) {
			struct item *x = deque_pop(&r->d);
			if (!x)
				break;
			take(r, x);
			popped++;
		}
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	cr_assert_eq(setitimer(ITIMER_PROF, &off, NULL), 0);
	signal(SIGPROF, SIG_DFL);
	struct item *x;
	while ((x = deque_pop(&r->d))) {
		take(r, x);
		popped++;
	}
	all_taken_once(r, n, popped, sig_stolen);
	cr_log_info("%" PRIu64 " items: %" PRIu64 " popped, %" PRIu64
		    " stolen in %" PRIu64 " signals",
		    n, popped, sig_stolen, sig_ticks);
	if (t_scale() == 1)
		cr_assert_gt(sig_stolen, 0, "the handler took nothing");
	deque_free(&r->d);
	free(r->it);
	free(r);
}
