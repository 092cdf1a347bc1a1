/* SPDX-License-Identifier: MIT */
/*
 * job.h - what a test that starts jobs through earthrun needs besides
 * helpers.h: where the built test programs are (T_PROG_DIR) and which
 * earthrun to use (T_EARTHRUN), both defined by the Makefile for the tests
 * it lists in JOB_TESTS.
 */
#ifndef T_JOB_H
#define T_JOB_H

#include "helpers.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif
#ifndef T_EARTHRUN
#error "T_EARTHRUN must be defined"
#endif

#endif /* T_JOB_H */
