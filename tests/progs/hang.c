/* SPDX-License-Identifier: MIT */
/*
 * hang.c - a job that never ends by itself, for the dead-node tests: every
 * node prints "node K pid P" and then waits on a slot nothing signals.
 *
 *   hang          the stuck-job detection ends it (status 75)
 *   hang idle...  each node also runs a thread of its own that sleeps,
 *                 which could signal: the job is never declared stuck and
 *                 stays idle until it is killed
 */
#include <earth.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct say_frame {
	int dummy;
};
static void say_entry(void *frame)
{
	printf("node %u pid %ld\n", earth_node_id(), (long)getpid());
	fflush(stdout);
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(say, say_entry, struct say_frame, 0);

struct main_frame {
	struct earth_main_args a;
	earth_slot never;
};
static void never_fiber(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->never, 1, 0, never_fiber, m);
	for (uint32_t k = 0; k < earth_num_nodes(); k++)
		earth_invoke(k, &say, NULL, 0);
}
EARTH_THREADED_FUNCTION(hang_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1 && !strncmp(argv[1], "idle", 4) &&
	    pthread_create(&t, NULL, sleeper, NULL)) {
		fprintf(stderr, "hang: pthread_create failed\n");
		return 1;
	}
	return earth_main(argc, argv, &hang_main);
}
