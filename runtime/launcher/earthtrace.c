/* SPDX-License-Identifier: MIT */
/*
 * earthtrace - draws the EU and SU utilisation of every node of a trace
 * (earthrun --trace FILE, or EARTH_TRACE=FILE) as an SVG timeline.
 *
 *   earthtrace [--bins N] [--title TEXT] trace.json -o timeline.svg
 *
 * One row per unit (node k EU, node k SU); the darker a column, the more of
 * that stretch of time the unit spent in slices (fibers on the EU; handling
 * requests and messages on the SU); each row ends with its busy share.
 * Reads the one-event-per-line form the runtime writes; other lines are
 * skipped, so a trace that passed through another tool may draw nothing
 * (it then says so).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKS 1024

struct slice {
	double t0, t1;
};
struct track {
	unsigned pid, tid;
	struct slice *s;
	size_t n, cap;
};

static struct track tracks[MAX_TRACKS];
static unsigned ntracks;

static _Noreturn void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "earthtrace: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(2);
}

static int num_after(const char *line, const char *key, double *out)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	char *end;
	errno = 0;
	*out = strtod(p + strlen(key), &end);
	return end == p + strlen(key) || errno ? -1 : 0;
}

static struct track *track_of(unsigned pid, unsigned tid)
{
	for (unsigned i = 0; i < ntracks; i++)
		if (tracks[i].pid == pid && tracks[i].tid == tid)
			return &tracks[i];
	if (ntracks == MAX_TRACKS)
		die("more than %s tracks%s", "1024", "");
	tracks[ntracks] = (struct track){.pid = pid, .tid = tid};
	return &tracks[ntracks++];
}

static int by_start(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int by_track(const void *a, const void *b)
{
	const struct track *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *title = "EARTH timeline";
	long bins = 400;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--bins") && i + 1 < argc) {
			char *end;
			bins = strtol(argv[++i], &end, 10);
			if (*end || bins < 10 || bins > 100000)
				die("--bins '%s': give a number from 10 to "
				    "100000%s",
				    argv[i], "");
		} else if (!strcmp(argv[i], "--title") && i + 1 < argc)
			title = argv[++i];
		else if (argv[i][0] == '-' || in)
			die("usage: earthtrace [--bins N] [--title TEXT] "
			    "trace.json -o timeline.svg%s%s",
			    "", "");
		else
			in = argv[i];
	}
	if (!in || !out)
		die("usage: earthtrace [--bins N] [--title TEXT] trace.json -o "
		    "timeline.svg%s%s",
		    "", "");
	FILE *f = fopen(in, "r");
	if (!f)
		die("cannot read %s: %s", in, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	double lo = 1e300, hi = -1e300;
	while (getline(&line, &cap, f) > 0) {
		if (!strstr(line, "\"ph\":\"X\""))
			continue;
		double pid, tid, ts, dur;
		if (num_after(line, "\"pid\":", &pid) ||
		    num_after(line, "\"tid\":", &tid) ||
		    num_after(line, "\"ts\":", &ts) ||
		    num_after(line, "\"dur\":", &dur) || pid < 0 || tid < 0 ||
		    dur < 0)
			continue;
		struct track *t = track_of((unsigned)pid, (unsigned)tid);
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1024;
			t->s = realloc(t->s, t->cap * sizeof(*t->s));
			if (!t->s)
				die("out of memory%s%s", "", "");
		}
		t->s[t->n++] = (struct slice){ts, ts + dur};
		if (ts < lo)
			lo = ts;
		if (ts + dur > hi)
			hi = ts + dur;
	}
	free(line);
	fclose(f);
	if (!ntracks)
		die("%s has no complete (\"ph\":\"X\") events, one per line: "
		    "is "
		    "it a trace written by the EARTH runtime?%s",
		    in, "");
	if (hi <= lo)
		hi = lo + 1;
	qsort(tracks, ntracks, sizeof(tracks[0]), by_track);

	const double left = 120, right = 90, row = 26, top = 40;
	const double width = 1000;
	double plot = width - left - right;
	FILE *o = fopen(out, "w");
	if (!o)
		die("cannot create %s: %s", out, strerror(errno));
	double height = top + row * ntracks + 40;
	fprintf(o,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%.0f\" y=\"20\" font-size=\"14\">",
		width, height, left);
	for (const char *c = title; *c; c++) {
		if (*c == '<')
			fputs("&lt;", o);
		else if (*c == '&')
			fputs("&amp;", o);
		else
			fputc(*c, o);
	}
	fprintf(o, " (%.3f ms)</text>\n", (hi - lo) / 1000.0);
	double *busy = calloc((size_t)bins, sizeof(double));
	if (!busy)
		die("out of memory%s%s", "", "");
	double bw = (hi - lo) / (double)bins;
	for (unsigned k = 0; k < ntracks; k++) {
		struct track *t = &tracks[k];
		qsort(t->s, t->n, sizeof(*t->s), by_start);
		memset(busy, 0, (size_t)bins * sizeof(double));
		double covered = lo, total = 0;
		for (size_t i = 0; i < t->n; i++) {
			/* Nested slices (a send inside a request) count once.
			 */
			double a = t->s[i].t0 > covered ? t->s[i].t0 : covered;
			double b = t->s[i].t1;
			if (b <= a)
				continue;
			covered = b;
			total += b - a;
			long first = (long)((a - lo) / bw),
			     last = (long)((b - lo) / bw);
			if (last >= bins)
				last = bins - 1;
			for (long j = first; j <= last; j++) {
				double s = lo + j * bw, e = s + bw;
				double x = (a > s ? a : s), y = (b < e ? b : e);
				if (y > x)
					busy[j] += y - x;
			}
		}
		double y = top + row * k;
		const char *unit = t->tid == 1	 ? "EU"
				   : t->tid == 2 ? "SU"
						 : "?";
		const char *color = t->tid == 1 ? "#1f77b4" : "#d62728";
		fprintf(o, "<text x=\"8\" y=\"%.1f\">node %u %s</text>\n",
			y + row * 0.65, t->pid, unit);
		fprintf(o,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" "
			"fill=\"none\" stroke=\"#999\"/>\n",
			left, y + 2, plot, row - 4);
		for (long j = 0; j < bins; j++) {
			double u = busy[j] / bw;
			if (u <= 0.005)
				continue;
			fprintf(o,
				"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				"height=\"%.1f\" fill=\"%s\" "
				"fill-opacity=\"%.2f\"/>\n",
				left + plot * j / bins, y + 2,
				plot / bins + 0.05, row - 4, color,
				u > 1 ? 1.0 : u);
		}
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">%5.1f%% busy</text>\n",
			left + plot + 6, y + row * 0.65,
			100.0 * total / (hi - lo));
	}
	double ay = top + row * ntracks + 16;
	fprintf(
	    o,
	    "<text x=\"%.0f\" y=\"%.1f\">0</text>\n"
	    "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.3f ms</text>\n"
	    "</svg>\n",
	    left, ay, left + plot, ay, (hi - lo) / 1000.0);
	free(busy);
	for (unsigned k = 0; k < ntracks; k++)
		free(tracks[k].s);
	if (fclose(o) != 0)
		die("cannot write %s: %s", out, strerror(errno));
	return 0;
}
