/* SPDX-License-Identifier: MIT */
/*
 * jsonparts.c - see jsonparts.h.
 */
#define _GNU_SOURCE 1
#include "base/jsonparts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *jsonparts_name(char *buf, size_t size, const char *base, unsigned k)
{
	int r = snprintf(buf, size, "%s.node%u.part", base, k);
	return r < 0 || (size_t)r >= size ? NULL : buf;
}

int jsonparts_join(const char *out, const char *const *parts, unsigned n,
		   const char *head, const char *tail, int missing_ok,
		   char *err, size_t errlen)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", out, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", out);
		return -1;
	}
	FILE *o = fopen(tmp, "w");
	if (!o) {
		snprintf(err, errlen, "cannot create %s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	fputs(head, o);
	int first = 1;
	char buf[65536];
	for (unsigned k = 0; k < n; k++) {
		FILE *in = fopen(parts[k], "r");
		if (!in) {
			if (missing_ok && errno == ENOENT)
				continue;
			snprintf(err, errlen, "cannot read %s: %s", parts[k],
				 strerror(errno));
			goto fail;
		}
		size_t r;
		int empty = 1;
		while ((r = fread(buf, 1, sizeof(buf), in)) > 0) {
			if (empty && !first)
				fputs(",\n", o);
			empty = 0;
			fwrite(buf, 1, r, o);
		}
		first &= empty;
		fclose(in);
	}
	fputs(tail, o);
	if (fclose(o) != 0) {
		o = NULL;
		snprintf(err, errlen, "cannot write %s: %s", tmp,
			 strerror(errno));
		goto fail;
	}
	o = NULL;
	if (rename(tmp, out) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, out,
			 strerror(errno));
		goto fail;
	}
	for (unsigned k = 0; k < n; k++)
		unlink(parts[k]);
	return 0;
fail:
	if (o)
		fclose(o);
	unlink(tmp);
	return -1;
}
