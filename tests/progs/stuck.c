/* SPDX-License-Identifier: MIT */
/*
 * stuck.c - jobs for the stuck-job detection (tests/t_stuck.c):
 *   count      the last node arms a slot with count 3 and signals it twice;
 *              main waits for it (stuck)
 *   endthread  main's fiber ends without ending main or enabling anything
 *              (stuck)
 *   thread     main waits 2 s for a signal from a thread of its own
 *              (earth_sync_from_thread): not stuck, exits 0
 *   threadquits  main waits for a signal from a thread of its own that
 *              ends after 1 s without signalling (stuck once it ended)
 *   compute    the last node computes for 2 s, then signals main: not
 *              stuck, exits 0
 *   slowend    as count, and the last node (not node 0) takes 2 s more to
 *              end after the stuck shutdown, as its report can under TSan
 *              on a loaded machine (stuck, status 75, not killed)
 */
#include <earth.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct waiter_args {
	earth_gslot done;
	int compute; /* 1: compute 2 s; 2: end 2 s late */
};
struct waiter_frame {
	struct waiter_args a;
	earth_slot three;
};
static void waiter_fiber(void *frame)
{
	struct waiter_frame *w = frame;
	earth_rsync(w->a.done);
	EARTH_END_FUNCTION(frame);
}
static void end_slowly(void)
{
	sleep(2);
}

static void waiter_entry(void *frame)
{
	struct waiter_frame *w = frame;
	if (w->a.compute == 2 && earth_node_id() != 0)
		atexit(end_slowly);
	if (w->a.compute == 1) {
		double t0 = now_s();
		volatile unsigned long x = 0;
		while (now_s() - t0 < 2.0)
			x++;
		earth_rsync(w->a.done);
		EARTH_END_FUNCTION(frame);
	}
	earth_slot_init(&w->three, 3, 0, waiter_fiber, w);
	earth_sync(&w->three);
	earth_sync(&w->three);
}
EARTH_THREADED_FUNCTION(stuck_waiter, waiter_entry, struct waiter_frame,
			sizeof(struct waiter_args));

struct main_frame {
	struct earth_main_args a;
	earth_slot done;
};
static void main_done(void *frame)
{
	printf("main done\n");
	EARTH_END_FUNCTION(frame);
}

static void *signaller(void *arg)
{
	earth_gslot *g = arg;
	sleep(2);
	while (earth_sync_from_thread(*g) == -EAGAIN)
		usleep(1000);
	return NULL;
}

static void *quitter(void *arg)
{
	(void)arg;
	sleep(1);
	return NULL;
}

static earth_gslot g_done;

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	const char *what = m->a.argc > 1 ? m->a.argv[1] : "count";
	if (strcmp(what, "endthread") == 0)
		return; /* END_THREAD, nothing enabled */
	earth_slot_init(&m->done, 1, 0, main_done, m);
	if (strcmp(what, "thread") == 0) {
		g_done = earth_slot_global(&m->done);
		pthread_t t;
		pthread_create(&t, NULL, signaller, &g_done);
		pthread_detach(t);
		return;
	}
	if (strcmp(what, "threadquits") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, quitter, NULL);
		pthread_detach(t);
		return;
	}
	struct waiter_args wa = {earth_slot_global(&m->done),
				 strcmp(what, "compute") == 0	? 1
				 : strcmp(what, "slowend") == 0 ? 2
								: 0};
	earth_invoke(earth_num_nodes() - 1, &stuck_waiter, &wa, sizeof(wa));
}
EARTH_THREADED_FUNCTION(stuck_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &stuck_main);
}
