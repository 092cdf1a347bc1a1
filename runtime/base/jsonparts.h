/* SPDX-License-Identifier: MIT */
/*
 * jsonparts.h - joining per-node "part" files (each a list of JSON values
 * with commas between them, none at the ends) into one JSON document: the trace
 * (earthrun --trace) and the statistics (earthrun --stats=json) of a job. Used
 * by the node (a job nobody merges for) and by earthrun; no runtime state, any
 * thread.
 *
 * Output files: a regular file or a path that does not exist is written to
 * a temporary file next to it and renamed onto it once complete; a device,
 * FIFO or other non-regular file is written in place (never replaced).
 * Every write, close and rename is checked; on an error nothing partial is
 * left (the temporary file and the parts are removed).
 */
#ifndef EARTH_JSONPARTS_H
#define EARTH_JSONPARTS_H

#include <stddef.h>

/* "<base>.<job>.node<k>.part" into buf: job makes the names of two jobs
 * writing the same file differ (earthrun's pid, EARTH_PARTS_ID). Returns
 * buf, or NULL if it does not fit. */
char *jsonparts_name(char *buf, size_t size, const char *base,
		     unsigned long job, unsigned k);

/*
 * Whether `out` can be written at the end of a job, without creating or
 * changing it: 0, or -1 with a message naming it in err.
 */
int jsonparts_check(const char *out, char *err, size_t errlen);

/*
 * Writes `head`, then parts[0..n) as they are, with ",\n" between two
 * non-empty ones, then `tail`, to `out` (as the header says), and removes
 * the parts. A missing part is skipped when `missing_ok`, else an error.
 * Returns 0, or -1 with a message naming `out` and the error in err (the
 * parts are removed then too).
 */
int jsonparts_join(const char *out, const char *const *parts, unsigned n,
		   const char *head, const char *tail, int missing_ok,
		   char *err, size_t errlen);

/* Removes parts[0..n) (those that exist). */
void jsonparts_remove(const char *const *parts, unsigned n);

#endif /* EARTH_JSONPARTS_H */
