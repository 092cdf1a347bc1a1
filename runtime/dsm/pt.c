/* SPDX-License-Identifier: MIT */
/*
 * dsm/pt.c - the node's shared-memory state both units read (dsm/pt.h).
 */
#include "dsm/pt.h"

struct dsm_node dsm_g;

const char *dsm_req_name(unsigned req)
{
	static const char *const names[DSM_R_COUNT_] = {
	    [DSM_R_FAULT] = "DSM FAULT",
	    [DSM_R_LOCK] = "DSM LOCK",
	    [DSM_R_UNLOCK] = "DSM UNLOCK",
	    [DSM_R_BARRIER] = "DSM BARRIER",
	    [DSM_R_FLAG_SET] = "DSM FLAG_SET",
	    [DSM_R_FLAG_WAIT] = "DSM FLAG_WAIT",
	    [DSM_R_FLAG_CLEAR] = "DSM FLAG_CLEAR",
	    [DSM_R_ALLOC] = "DSM ALLOC",
	    [DSM_R_FREE] = "DSM FREE",
	    [DSM_R_CREATE] = "DSM CREATE",
	    [DSM_R_END] = "DSM END",
	    [DSM_R_WAIT_END] = "DSM WAIT_END",
	    [DSM_R_F_ACQUIRE] = "DSM ACQUIRE",
	    [DSM_R_F_RELEASE] = "DSM RELEASE",
	    [DSM_R_F_LOCK] = "DSM LOCK_SYNC",
	    [DSM_R_F_UNLOCK] = "DSM UNLOCK_SYNC",
	    [DSM_R_F_BARRIER] = "DSM BARRIER_SYNC",
	    [DSM_R_F_FLAG_SET] = "DSM FLAG_SET_SYNC",
	    [DSM_R_F_FLAG_WAIT] = "DSM FLAG_WAIT_SYNC",
	    [DSM_R_F_ALLOC] = "DSM ALLOC_SYNC",
	    [DSM_R_F_FREE] = "DSM FREE_SYNC",
	};
	return req < DSM_R_COUNT_ && names[req] ? names[req] : "DSM ?";
}

void dsm_pt_entry(void *arg)
{
	struct dsm_pt *pt = arg;
	pt->fn();
}
