/* SPDX-License-Identifier: MIT */
/*
 * endfail.c - a node that fails while the job ends, for earthrun's
 * watch: node 0's main ends the job at once; node 1 (EARTH_NODE=1) has an
 * atexit handler that runs after its runtime returned, when node 0 has
 * already ended the job.
 *
 *   endfail ok      every node exits 0
 *   endfail exit    node 1 leaves with _exit(3) in its atexit handler
 *   endfail segv    node 1 dies of SIGSEGV in its atexit handler
 *   endfail status  node 0's main sets exit status 5, every node ends well
 */
#include <earth.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode = "ok";

static void at_exit(void)
{
	/* Long enough for node 0 to be reaped first. */
	usleep(200 * 1000);
	if (!strcmp(mode, "exit"))
		_exit(3);
	if (!strcmp(mode, "segv")) {
		signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler */
		raise(SIGSEGV);
	}
}

struct main_frame {
	struct earth_main_args a;
};
static void main_entry(void *f);
EARTH_THREADED_FUNCTION(ef_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	printf("endfail: node 0 ends the job\n");
	if (!strcmp(mode, "status"))
		earth_set_exit_status(5);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	const char *node = getenv("EARTH_NODE");
	if (argc > 1)
		mode = argv[1];
	if (node && atoi(node) == 1)
		atexit(at_exit);
	return earth_main(argc, argv, &ef_main);
}
