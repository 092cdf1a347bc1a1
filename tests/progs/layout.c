/* SPDX-License-Identifier: MIT */
/*
 * layout.c - where a static variable lies on each node, for the launch
 * tests: every node prints "node K static ADDR" and signals node 0's main,
 * which ends the job once all did. Under a PMIx launcher the runtime turns
 * address-space randomisation off itself (node/aslr.c), so every node
 * prints the same address.
 */
#include <earth.h>

#include <stdio.h>

static long marker = 42;

struct where_args {
	earth_gslot done;
};
struct where_frame {
	struct where_args a;
};
static void where_entry(void *frame)
{
	struct where_frame *f = frame;
	printf("node %u static %p\n", earth_node_id(), (void *)&marker);
	fflush(stdout);
	earth_rsync(f->a.done);
	EARTH_END_FUNCTION(frame);
}
EARTH_THREADED_FUNCTION(where, where_entry, struct where_frame,
			sizeof(struct where_args));

struct main_frame {
	struct earth_main_args a;
	earth_slot all;
};
static void all_fiber(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	uint32_t n = earth_num_nodes();
	earth_slot_init(&m->all, (int32_t)n, 0, all_fiber, m);
	struct where_args wa = {earth_slot_global(&m->all)};
	for (uint32_t k = 0; k < n; k++)
		earth_invoke(k, &where, &wa, sizeof(wa));
}
EARTH_THREADED_FUNCTION(layout_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &layout_main);
}
