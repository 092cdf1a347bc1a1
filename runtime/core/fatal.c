/* SPDX-License-Identifier: MIT */
/*
 * fatal.c - the one way the runtime stops a program on a detected error:
 * a single line on stderr naming the node, then exit(EARTH_EXIT_USAGE).
 */
#define EARTH_INTERNAL 1
#include "node.h"

#include <stdio.h>
#include <unistd.h>

void earth_fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "earth: node %u: error: %s\n", earth_node_g.id, msg);
	fflush(stderr);
	fflush(stdout);
	_exit(EARTH_EXIT_USAGE);
}
