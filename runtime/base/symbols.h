/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - the name of a function of the running program from its
 * address (symbols.c), for the trace, the stuck-job report and misuse
 * messages. The table is loaded once, on first use, from any thread;
 * sym_close() only when no other thread of the node is left.
 */
#ifndef EARTH_SYMBOLS_H
#define EARTH_SYMBOLS_H

#ifndef EARTH_INTERNAL
#error "symbols.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stdint.h>

/* The function containing addr, or NULL. */
const char *sym_name(uintptr_t addr);
/* Drops the table (node end). */
void sym_close(void);

#endif /* EARTH_SYMBOLS_H */
