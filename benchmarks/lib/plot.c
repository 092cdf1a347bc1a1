/* SPDX-License-Identifier: MIT */
/*
 * plot.c - gnuplot scripts (see plot.h).
 */
#define _GNU_SOURCE 1
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int bench_have_gnuplot(void)
{
	return system("command -v gnuplot > /dev/null 2>&1") == 0;
}

int bench_gnuplot(const char *who, const char *script, const char *vars,
		  const char *out)
{
	unlink(out);
	char *cmd = NULL;
	if (asprintf(&cmd,
		     "gnuplot -e \"%s\" %s 2>&1 | grep -v 'no valid points' "
		     "|| true",
		     vars, script) < 0)
		return 1;
	fflush(NULL);
	int st = system(cmd);
	free(cmd);
	if (st || access(out, R_OK)) {
		printf("# %s: gnuplot did not draw %s (script %s)\n", who, out,
		       script);
		return 1;
	}
	return 0;
}
