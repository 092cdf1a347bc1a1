/* SPDX-License-Identifier: MIT */
/*
 * tc_dsm.c - the main of a Threaded-C program that uses SHARED memory
 * (threadedc.h, docs/threaded-c.md "Shared memory (SHARED)"), and the exit
 * status SET_EXIT_STATUS sets.
 *
 * tc_dsm_main runs the node under earth_dsm_main. Node 0's program thread
 * (program) makes what the file-scope SHARED_ARRAY / SHARED_LOCK /
 * SHARED_BARRIER / SHARED_FLAG declarations name (section earth_tc_shared),
 * gives every other node the program's globals (one thread created and
 * waited for: earth_dsm.h copies node 0's globals at the first CREATE), then
 * INVOKEs THREADED main on node 0 and waits on a flag that main's
 * END_FUNCTION() sets (tc_dsm_main_ended); it returns the status
 * SET_EXIT_STATUS gave, which ends the job. Also the acquire and release
 * of a count that may be empty, which the plugin inserts around loops.
 */
#include "threadedc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

extern const struct tc_shared_decl __start_earth_tc_shared[]
    __attribute__((weak));
extern const struct tc_shared_decl __stop_earth_tc_shared[]
    __attribute__((weak));

static int exit_status;
static const struct earth_tfunc *main_tf;
static DSM_FLAG main_done;
static earth_slot done_slot;

void tc_set_exit_status(int status)
{
	exit_status = status;
	earth_set_exit_status(status);
}

static void nothing(void) {}

static void done_fiber(void *frame)
{
	(void)frame;
}

/* Makes the file's SHARED_ objects; 0, or 70 with a message. */
static int make_shared(void)
{
	for (const struct tc_shared_decl *d = __start_earth_tc_shared;
	     d && d < __stop_earth_tc_shared; d++) {
		if (d->place == -1) {
			*(DSM_LOCK *)d->addr = earth_dsm_lock_new();
		} else if (d->place == -2) {
			*(DSM_BARRIER *)d->addr = earth_dsm_barrier_new();
		} else if (d->place == -3) {
			*(DSM_FLAG *)d->addr = earth_dsm_flag_new();
		} else {
			size_t n = d->bytes();
			if (!n) {
				fprintf(
				    stderr,
				    "earth: SHARED_ARRAY %s: a count of 0 "
				    "elements (%s, evaluated before THREADED "
				    "main runs, so a global that main sets "
				    "is still 0 then); fix: a count of 1 or "
				    "more (a constant, or globals set where "
				    "they are defined), or DSM_ALLOC_SYNC in "
				    "main for a count main computes\n",
				    d->name, d->count);
				return 70;
			}
			void *p = earth_dsm_alloc(
			    n, (enum earth_dsm_place)d->place, d->arg);
			if (!p) {
				fprintf(stderr,
					"earth: SHARED_ARRAY %s: cannot "
					"allocate %zu bytes of shared memory "
					"(%s); fix: a smaller count, or more "
					"shared memory (EARTH_DSM_MB)\n",
					d->name, n, strerror(errno));
				return 70;
			}
			*(void **)d->addr = p;
		}
	}
	return 0;
}

static int program(int argc, char **argv)
{
	int rc = make_shared();
	if (rc)
		return rc;
	main_done = earth_dsm_flag_new();
	if (earth_dsm_nodes() > 1) {
		/* Every node gets node 0's globals (the SHARED_ objects). */
		EARTH_DSM_CREATE(nothing);
		earth_dsm_wait_for_end(1);
	}
	struct {
		int argc;
		char **argv;
	} args = {argc, argv};
	earth_invoke(0, main_tf, &args, sizeof(args));
	earth_dsm_flag_wait(main_done);
	return exit_status;
}

int tc_dsm_main(int argc, char **argv, const struct earth_tfunc *tf)
{
	main_tf = tf;
	return earth_dsm_main(argc, argv, program);
}

void tc_dsm_main_ended(void)
{
	earth_slot_init(&done_slot, 1, 0, done_fiber, NULL);
	earth_dsm_flag_set_sync(main_done, &done_slot);
}

void tc_dsm_acquire_n(const void *p, long n, size_t elem,
		      enum earth_dsm_mode mode, earth_slot *slot)
{
	if (n <= 0)
		earth_sync(slot);
	else
		earth_dsm_acquire_sync(p, (size_t)n * elem, mode, slot);
}

void tc_dsm_release_n(const void *p, long n, size_t elem, earth_slot *slot)
{
	if (n <= 0)
		earth_sync(slot);
	else
		earth_dsm_release_sync(p, (size_t)n * elem, slot);
}
