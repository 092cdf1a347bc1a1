/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - the name of a function of the running program from its
 * address (symbols.c), for the trace. The thread flushing the trace only
 * (not thread-safe: the table is loaded on first use).
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
