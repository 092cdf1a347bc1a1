/* SPDX-License-Identifier: MIT */
/*
 * fib.h - Fibonacci, shared by fib.tc and fib_seq.c: the doubly recursive
 * kernel both time, and an independent iterative check.
 */
#ifndef APPS_FIB_H
#define APPS_FIB_H

#include "apps.h"

#define FIB_MAX 50

/* The doubly recursive kernel: fib(n) = fib(n-1) + fib(n-2). */
static inline long fib_rec(int n)
{
	return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2);
}

/* The check: fib(n) by iteration. */
static inline long fib_iter(int n)
{
	long a = 0, b = 1;
	for (int i = 0; i < n; i++) {
		long t = a + b;
		a = b;
		b = t;
	}
	return a;
}

#endif /* APPS_FIB_H */
