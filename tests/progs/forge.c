/* SPDX-License-Identifier: MIT */
/*
 * forge.c - node 0, a peer that knows the job's secret, tries to take
 * node 1 over with well-formed messages (tests/t_reject.c); node 1 must
 * stop with status 70 and a message naming the peer and the field, and
 * never run what node 0 chose. argv[1]:
 *   fakeslot FILE   write a forged slot {1, 0, system, "touch FILE"} into
 *                   node 1's static data, then SYNC it
 *   overwrite FILE  overwrite a slot node 1 armed with such a forged one,
 *                   then make node 1 signal it itself (a local signal)
 *   readrt          read the runtime's own state (su_g) on node 1
 *   tfunc           store over node 1's table of threaded functions
 *   relro           an ordinary program's store into a const table of
 *                   pointers (.data.rel.ro, read-only after relocation)
 *   got             a store just below the program's .data (.got.plt)
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A forged slot and the command its frame points to, in static data. */
static struct forged {
	earth_slot s;
	char cmd[256];
} forged;
/* Node 1: a real slot, and one whose fiber signals it locally. */
static earth_slot victim, go;
static const char *const table[] = {"first", "second"};
/* The runtime's own state and the start of the program's .data (both
 * internal: declared here only to aim at them). */
extern char su_g[];
extern char __data_start[];

struct main_frame {
	struct earth_main_args a;
	earth_slot done, step;
	long got;
};
struct arm_args {
	earth_gslot back;
};
struct arm_frame {
	struct arm_args a;
};

/* Leaves node 1 time to act on what it received (a node that rejects it
 * stops the job at once); then the job ends with status 3: the probe was
 * not stopped. */
static void linger_fiber(void *frame)
{
	usleep(5 * 1000 * 1000);
	earth_set_exit_status(3);
	EARTH_END_FUNCTION(frame);
}

static void nothing_fiber(void *frame)
{
	(void)frame;
}
static void go_fiber(void *frame)
{
	(void)frame;
	earth_sync(&victim);
}
static void arm_entry(void *frame)
{
	struct arm_frame *f = frame;
	earth_slot_init(&victim, 1, 0, nothing_fiber, NULL);
	earth_slot_init(&go, 1, 0, go_fiber, NULL);
	earth_rsync(f->a.back);
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(forge_arm, arm_entry, struct arm_frame,
			sizeof(struct arm_args));

static earth_gslot gslot(uint32_t node, earth_slot *s)
{
	return (earth_gslot){earth_gptr_make(node, s).bits};
}

/* fakeslot: the forged slot is there; signal it. */
static void signal_forged(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, linger_fiber, m);
	earth_rsync(gslot(1, &forged.s));
	earth_sync(&m->done);
}
/* overwrite: node 1's victim now holds the forged slot; have node 1
 * signal it from its own fiber. */
static void signal_go(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, linger_fiber, m);
	earth_rsync(gslot(1, &go));
	earth_sync(&m->done);
}
static void overwrite_victim(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->step, 1, 0, signal_go, m);
	earth_blkmov_sync(earth_gptr_make(0, &forged.s),
			  earth_gptr_make(1, &victim), sizeof(victim),
			  &m->step);
}
/* overwrite: node 1 armed its slots; put the command there. */
static void armed_fiber(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->step, 1, 0, overwrite_victim, m);
	earth_blkmov_sync(earth_gptr_make(0, &forged),
			  earth_gptr_make(1, &forged), sizeof(forged),
			  &m->step);
}

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, linger_fiber, m);
	const char *how = m->a.argc > 1 ? m->a.argv[1] : "";
	if (!strcmp(how, "fakeslot") || !strcmp(how, "overwrite")) {
		if (m->a.argc < 3) {
			fprintf(stderr, "forge: %s needs a file\n", how);
			exit(2);
		}
		forged.s = (earth_slot){
		    .count = 1,
		    .fiber = (earth_fiber_fn)(void (*)(void))system,
		    .frame = forged.cmd};
		snprintf(forged.cmd, sizeof(forged.cmd), "touch %s",
			 m->a.argv[2]);
		if (!strcmp(how, "fakeslot")) {
			earth_slot_init(&m->step, 1, 0, signal_forged, m);
			earth_blkmov_sync(earth_gptr_make(0, &forged),
					  earth_gptr_make(1, &forged),
					  sizeof(forged), &m->step);
		} else {
			earth_slot_init(&m->step, 1, 0, armed_fiber, m);
			struct arm_args a = {gslot(0, &m->step)};
			earth_invoke(1, &forge_arm, &a, sizeof(a));
		}
	} else if (!strcmp(how, "readrt")) {
		earth_get_sync_l(earth_gptr_make(1, su_g), &m->got, &m->done);
	} else if (!strcmp(how, "tfunc")) {
		earth_data_sync_l(0, earth_gptr_make(1, &forge_arm.entry),
				  &m->done);
	} else if (!strcmp(how, "relro")) {
		earth_data_sync_l(42, earth_gptr_make(1, &table[0]), &m->done);
	} else if (!strcmp(how, "got")) {
		earth_data_sync_l(0, earth_gptr_make(1, __data_start - 8),
				  &m->done);
	} else {
		fprintf(stderr, "forge: unknown probe '%s'\n", how);
		exit(2);
	}
}
EARTH_THREADED_FUNCTION(forge_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &forge_main);
}
