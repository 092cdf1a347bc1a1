/* SPDX-License-Identifier: MIT */
/*
 * proto.h - THREADED prototypes in a header, used by proto.tc before the
 * functions are defined.
 */
#ifndef TC_CORPUS_PROTO_H
#define TC_CORPUS_PROTO_H

#define PROTO_LIMIT 100

THREADED square(int x, int *GLOBAL out, SPTR done);
THREADED sum_squares(int n, int *GLOBAL out, SPTR done);
static inline int proto_expect(int n) { return n * (n + 1) * (2 * n + 1) / 6; }

#endif
