/* SPDX-License-Identifier: MIT */
/*
 * badmsg.c - node 0 sends node 1 a write to memory node 1 never
 * registered; node 1 must reject it with an error naming the peer and the
 * field, and the job must stop. Argument "slot": a signal to an address
 * that is not a registered slot instead; "dataslot": a good write (to
 * node 1's static data) whose slot is such an address; "moveslot": a block
 * move from node 1 to node 1 (a third-party move) naming such a slot.
 */
#include <earth.h>
#include <string.h>

static long landing[8]; /* static data: registered on every node */

struct main_frame {
	struct earth_main_args a;
	earth_slot done;
};
static void done_fiber(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, done_fiber, m);
	/* Some address of node 1's that is surely not registered there. */
	earth_gptr bogus = earth_gptr_make(1, (void *)(uintptr_t)0x10000);
	earth_gslot bogus_slot = {bogus.bits};
	const char *how = m->a.argc > 1 ? m->a.argv[1] : "";
	if (!strcmp(how, "slot"))
		earth_rsync(bogus_slot);
	else if (!strcmp(how, "dataslot"))
		earth_data_rsync_l(42, earth_gptr_make(1, &landing[0]),
				   bogus_slot);
	else if (!strcmp(how, "moveslot"))
		earth_blkmov_rsync(earth_gptr_make(1, &landing[0]),
				   earth_gptr_make(1, &landing[4]),
				   4 * sizeof(long), bogus_slot);
	else
		earth_data_sync_l(42, bogus, &m->done);
}
EARTH_THREADED_FUNCTION(bad_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &bad_main);
}
