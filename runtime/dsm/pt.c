/* SPDX-License-Identifier: MIT */
/*
 * dsm/pt.c - the node's shared-memory state both units read (dsm/pt.h).
 */
#include "dsm/pt.h"

struct dsm_node dsm_g;

void dsm_pt_entry(void *arg)
{
	struct dsm_pt *pt = arg;
	pt->fn();
}
