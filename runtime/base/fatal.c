/* SPDX-License-Identifier: MIT */
/*
 * fatal.c - the one way the runtime stops a program on a detected error:
 * a single line on stderr naming the node, then exit(EARTH_EXIT_USAGE), or
 * exit(EARTH_EXIT_PEER_DIED) when the error is another node's end (a peer
 * that died, vanished or left: this node only echoes its failure).
 * Built with -DEARTH_FATAL_HOOK (the libFuzzer targets in tests/fuzz
 * only), earth_fatal_hook, when set, gets the message instead of the exit.
 */
#define EARTH_INTERNAL 1
#include "base/base.h"
#include "earth.h"

#include <stdarg.h>
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

static _Noreturn void vfatal(int status, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
#ifdef EARTH_FATAL_HOOK
	if (earth_fatal_hook)
		earth_fatal_hook(msg);
#endif
	fprintf(stderr, "earth: node %u: error: %s\n", fatal_node, msg);
	fflush(stderr);
	fflush(stdout);
	_exit(status);
}

void earth_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfatal(EARTH_EXIT_USAGE, fmt, ap);
}

void earth_fatal_peer(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfatal(EARTH_EXIT_PEER_DIED, fmt, ap);
}
