/* SPDX-License-Identifier: MIT */
/*
 * fatal.c - the one way the runtime stops a program on a detected error:
 * a single line on stderr naming the node, then exit(EARTH_EXIT_USAGE).
 * Built with -DEARTH_FATAL_HOOK (the libFuzzer targets in tests/fuzz
 * only), earth_fatal_hook, when set, gets the message instead of the exit.
 */
#define EARTH_INTERNAL 1
#include "base/base.h"
#include "earth.h"

#include <stdio.h>
#include <unistd.h>

static uint32_t fatal_node;

void earth_fatal_set_node(uint32_t id)
{
	fatal_node = id;
}

#ifdef EARTH_FATAL_HOOK
void (*earth_fatal_hook)(const char *msg);
#endif

void earth_fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
#ifdef EARTH_FATAL_HOOK
	if (earth_fatal_hook)
		earth_fatal_hook(msg);
#endif
	fprintf(stderr, "earth: node %u: error: %s\n", fatal_node, msg);
	fflush(stderr);
	fflush(stdout);
	_exit(EARTH_EXIT_USAGE);
}
