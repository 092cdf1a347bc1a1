/* SPDX-License-Identifier: MIT */
/*
 * t_settings.c - the settings table (runtime/base/settings.c): a program's
 * --earth-help prints every EARTH_* variable and --earth-* flag; the
 * "Settings" table of docs/user-guide.md has exactly the same rows
 * (variable, flag, type and range, default, meaning); malformed or
 * out-of-range values of the table-driven variables are refused when the
 * node starts, with a message naming the variable, the value and what is
 * allowed.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#ifndef T_PROG_DIR
#error "T_PROG_DIR (the built tests/progs) must be defined"
#endif
#ifndef T_USER_GUIDE
#error "T_USER_GUIDE (docs/user-guide.md) must be defined"
#endif

TestSuite(settings, .timeout = 30);

#define MAX_ROWS 64
#define NCOLS 5

struct row {
	char col[NCOLS][512];
};

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = 0;
	size_t k = strspn(s, " ");
	memmove(s, s + k, strlen(s + k) + 1);
}

/* "VAR  FLAG  RANGE  DEFAULT  help..." lines after the header. */
static int help_rows(const char *out, struct row *rows)
{
	int n = 0;
	const char *line = strchr(out, '\n'); /* skip the header */
	cr_assert_not_null(line, "no --earth-help output:\n%s", out);
	for (line++; *line && n < MAX_ROWS;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		struct row *r = &rows[n];
		char *p = buf;
		for (int c = 0; c < NCOLS - 1; c++) {
			p += strspn(p, " ");
			size_t w = strcspn(p, " ");
			snprintf(r->col[c], sizeof(r->col[c]), "%.*s", (int)w,
				 p);
			p += w;
		}
		snprintf(r->col[NCOLS - 1], sizeof(r->col[0]), "%s", p);
		trim(r->col[NCOLS - 1]);
		if (r->col[0][0])
			n++;
		if (!end)
			break;
		line = end + 1;
	}
	return n;
}

/* One cell of a Markdown row: backticks dropped, "\|" is "|", "—" is "-". */
static void cell(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < cap; i++) {
		if (s[i] == '`')
			continue;
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == '|')
			continue;
		out[o++] = s[i];
	}
	out[o] = 0;
	trim(out);
	if (!strcmp(out, "—"))
		strcpy(out, "-");
}

/* The rows of the table under "## Settings" that start with `EARTH_. */
static int guide_rows(const char *md, struct row *rows)
{
	const char *sec = strstr(md, "\n## Settings\n");
	cr_assert_not_null(sec, "%s has no \"## Settings\" section",
			   T_USER_GUIDE);
	const char *stop = strstr(sec + 1, "\n## ");
	int n = 0;
	for (const char *line = sec + 1; line && (!stop || line < stop);) {
		const char *end = strchr(line, '\n');
		if (!strncmp(line, "| `EARTH_", 9) && n < MAX_ROWS) {
			struct row *r = &rows[n++];
			const char *p = line + 1;
			for (int c = 0; c < NCOLS; c++) {
				const char *q = p;
				while (q < end && !(*q == '|' && q[-1] != '\\'))
					q++;
				cr_assert(q < end, "short row: %.*s",
					  (int)(end - line), line);
				cell(p, (size_t)(q - p), r->col[c],
				     sizeof(r->col[c]));
				p = q + 1;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

static const char *const col_names[NCOLS] = {"variable", "flag", "range",
					     "default", "meaning"};

static const struct row *find(const struct row *rows, int n, const char *var)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].col[0], var))
			return &rows[i];
	return NULL;
}

Test(settings, user_guide_matches_earth_help)
{
	static struct t_cmd c;
	t_sh(&c, 20, "%s/multinode --earth-help", T_PROG_DIR);
	cr_assert_eq(c.status, 0, "--earth-help exits %d\n%s", c.status, c.err);
	static struct row help[MAX_ROWS], guide[MAX_ROWS];
	int nh = help_rows(c.out, help);
	cr_assert_gt(nh, 20, "%d settings in:\n%s", nh, c.out);
	FILE *f = fopen(T_USER_GUIDE, "r");
	cr_assert_not_null(f, "cannot open %s", T_USER_GUIDE);
	static char md[1 << 18];
	size_t len = fread(md, 1, sizeof(md) - 1, f);
	fclose(f);
	md[len] = 0;
	int ng = guide_rows(md, guide);
	for (int i = 0; i < nh; i++) {
		const struct row *g = find(guide, ng, help[i].col[0]);
		cr_expect_not_null(g, "%s (--earth-help) is not in %s's table",
				   help[i].col[0], T_USER_GUIDE);
		if (!g)
			continue;
		for (int k = 1; k < NCOLS; k++)
			cr_expect_str_eq(g->col[k], help[i].col[k],
					 "%s, %s: the guide says '%s', "
					 "--earth-help '%s'",
					 help[i].col[0], col_names[k],
					 g->col[k], help[i].col[k]);
	}
	for (int i = 0; i < ng; i++)
		cr_expect_not_null(find(help, nh, guide[i].col[0]),
				   "%s is in %s's table but not a setting",
				   guide[i].col[0], T_USER_GUIDE);
	cr_expect_eq(ng, nh, "%d rows in the guide, %d settings", ng, nh);
}

Test(settings, help_lists_every_flag)
{
	static struct t_cmd c;
	t_sh(&c, 20, "%s/multinode --earth-help", T_PROG_DIR);
	cr_assert_eq(c.status, 0);
	const char *flags[] = {"--earth-queue",	      "--earth-hwq-latency",
			       "--earth-queue-slots", "--earth-cpus",
			       "--earth-spin-us",     "--earth-stats",
			       "--earth-mode",	      "--earth-eus"};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		cr_expect(strstr(c.out, flags[i]), "%s missing:\n%s", flags[i],
			  c.out);
}

/* A one-node run of multinode with var=value: refused before it starts,
 * with exit status 70 and a message naming var, the value and each of
 * the phrases. */
static void refused(const char *var, const char *value, const char *phrase)
{
	static struct t_cmd c;
	t_sh(&c, 20, "env %s='%s' %s/multinode 10", var, value, T_PROG_DIR);
	cr_expect_eq(c.status, EARTH_EXIT_USAGE, "%s=%s: status %d\n%s", var,
		     value, c.status, c.err);
	char named[256];
	snprintf(named, sizeof(named), "%s='%s'", var, value);
	cr_expect(strstr(c.err, named), "%s not named in:\n%s", named, c.err);
	cr_expect(strstr(c.err, phrase), "'%s' not in:\n%s", phrase, c.err);
}

Test(settings, malformed_values_are_refused_at_start)
{
	refused("EARTH_TRACE_EVENTS", "lots", "from 1024 to 16777216");
	refused("EARTH_TRACE_EPOCH_NS", "-1", "from 0 to");
	refused("EARTH_TIMING", "maybe", "use 1 or 0");
	refused("EARTH_TRACE_PARTS", "2", "use 1 or 0");
	refused("EARTH_STATS_PARTS", "sometimes", "use 1 or 0");
	refused("EARTH_SHM_FD", "three", "from 0 to 65535");
	refused("EARTH_NODES", "0", "from 1 to 65535");
	refused("EARTH_NODE", "70000", "from 0 to 65535");
	refused("EARTH_GMEM_MB", "300000", "(0 to 262144)");
	refused("EARTH_REMOTE", "sideways", "must be su");
	refused("EARTH_TRANSPORT", "udp", "must be shm, tcp or ucx");
	refused("EARTH_RENDEZVOUS", "nohost", "want host:port");
	refused("EARTH_JOB_SECRET", "xyz", "32 to 128 hex digits");
	refused("EARTH_CONNECT_TIMEOUT", "0", "(0, 86400]");
	refused("EARTH_NET_BW_MBPS", "1e9", "from 0 to 10000000");
	refused("EARTH_QUEUE_SLOTS", "100", "power of two >= 8");
	refused("EARTH_EUS", "0", "from 1 to 1023, nor auto");
	refused("EARTH_EUS", "-1", "from 1 to 1023, nor auto");
}

Test(settings, good_values_run)
{
	static struct t_cmd c;
	t_sh(&c, 20,
	     "env EARTH_TIMING=1 EARTH_TRACE_EVENTS=2048 EARTH_GMEM_MB=16 "
	     "EARTH_REMOTE=su EARTH_CONNECT_TIMEOUT=2.5 EARTH_STATS=yes "
	     "EARTH_EUS=1 "
	     "%s/multinode 10",
	     T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
}
