/* SPDX-License-Identifier: MIT */
/*
 * op.h - the split-phase operations a fiber asks of its SU, by number and
 * name: the vocabulary of the request queue (queues/req.h), of the
 * statistics (base/acct.h) and of the trace.
 */
#ifndef EARTH_OP_H
#define EARTH_OP_H

#ifndef EARTH_INTERNAL
#error "base/op.h is internal to the EARTH runtime"
#endif

enum su_op {
	SU_OP_SYNC = 1,	     /* slot                                   */
	SU_OP_INCR_SYNC,     /* slot, n                                */
	SU_OP_SPAWN,	     /* a = fiber, b = frame                   */
	SU_OP_GET_SYNC,	     /* a = src gptr, b = dst address, size    */
	SU_OP_DATA_SYNC,     /* a = value bits, b = dst gptr, size     */
	SU_OP_BLKMOV_SYNC,   /* a = src gptr, b = dst gptr, c = length */
	SU_OP_INVOKE,	     /* a = tfunc, b = frame (local)           */
	SU_OP_TOKEN,	     /* a = tfunc, b = frame                   */
	SU_OP_INVOKE_REMOTE, /* a = tfunc, b = malloc'd args, c = node;   */
			     /* SU_REQ_INLINE: n = node, the args in    */
			     /* slot, b, c, spare (32 bytes at most)    */
	SU_OP_COLL,	     /* size = type, n = op, a = value, b = result */
	SU_OP_DSM,	     /* n = what (dsm/pt.h), a = thread, b, c  */
	SU_OP_COUNT_
};

/* Name of an operation ("GET_SYNC"; SU_OP_INVOKE_REMOTE is "INVOKE"),
 * "?" if op is none (op.c). Any thread. */
const char *su_op_name(unsigned op) __attribute__((visibility("hidden")));
/* The same table, for a hot path that has checked op < SU_OP_COUNT_. */
extern const char *const su_op_names[SU_OP_COUNT_]
    __attribute__((visibility("hidden")));

#endif /* EARTH_OP_H */
