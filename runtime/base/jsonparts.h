/* SPDX-License-Identifier: MIT */
/*
 * jsonparts.h - joining per-node "part" files (each a list of JSON values
 * with commas between them, none at the ends) into one JSON document: the trace
 * (earthrun --trace) and the statistics (earthrun --stats=json) of a job. Used
 * by the node (a job nobody merges for) and by earthrun; no runtime state, any
 * thread.
 */
#ifndef EARTH_JSONPARTS_H
#define EARTH_JSONPARTS_H

#include <stddef.h>

/* "<base>.node<k>.part" into buf; returns buf, or NULL if it does not fit. */
char *jsonparts_name(char *buf, size_t size, const char *base, unsigned k);

/*
 * Writes `head`, then parts[0..n) as they are, with ",\n" between two
 * non-empty ones, then
 * `tail`, to `out` (through a temporary file renamed at the end), and
 * removes the parts. A missing part is skipped when `missing_ok`, else an
 * error. Returns 0, or -1 with a message in err.
 */
int jsonparts_join(const char *out, const char *const *parts, unsigned n,
		   const char *head, const char *tail, int missing_ok,
		   char *err, size_t errlen);

#endif /* EARTH_JSONPARTS_H */
