/* SPDX-License-Identifier: MIT */
/*
 * misuse.c - the message for an operation a fiber issued with bad
 * arguments: the operation, what is wrong, the fiber (or the program
 * thread of shared memory) that did it.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "eu/eu.h"
#include "base/srctab.h"
#include "base/symbols.h"
#include "dsm/pt.h"

#include <stdio.h>

void eu_misuse(const char *op, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char where[256] = "";
	if (eu_cur_fiber &&
	    src_op_where(eu_cur_fiber, op, where, sizeof(where)))
		earth_fatal("%s: %s", where, msg);
	struct dsm_pt *pt = eu_dsm_self();
	if (pt) {
		snprintf(where, sizeof(where), " (in program thread %u)",
			 pt->id);
	} else if (eu_cur_fiber) {
		/* The program's own symbol table names static fibers too
		 * (no -rdynamic needed); a stripped program gives the
		 * address. */
		void *addr = *(void **)&eu_cur_fiber;
		const char *name = sym_name((uintptr_t)addr);
		if (name)
			snprintf(where, sizeof(where), " (in fiber %s)", name);
		else
			snprintf(where, sizeof(where), " (in fiber at %p)",
				 addr);
	}
	earth_fatal("%s: %s%s", op, msg, where);
}
