/* SPDX-License-Identifier: MIT */
/*
 * op.c - names of the split-phase operations (op.h).
 */
#define EARTH_INTERNAL 1
#include "base/op.h"

const char *const su_op_names[SU_OP_COUNT_] = {
    [SU_OP_SYNC] = "SYNC",
    [SU_OP_INCR_SYNC] = "INCR_SYNC",
    [SU_OP_SPAWN] = "SPAWN",
    [SU_OP_GET_SYNC] = "GET_SYNC",
    [SU_OP_DATA_SYNC] = "DATA_SYNC",
    [SU_OP_BLKMOV_SYNC] = "BLKMOV_SYNC",
    [SU_OP_INVOKE] = "INVOKE",
    [SU_OP_TOKEN] = "TOKEN",
    [SU_OP_INVOKE_REMOTE] = "INVOKE",
    [SU_OP_COLL] = "COLLECTIVE",
    [SU_OP_DSM] = "DSM",
};

const char *su_op_name(unsigned op)
{
	return op < SU_OP_COUNT_ && su_op_names[op] ? su_op_names[op] : "?";
}
