/* SPDX-License-Identifier: MIT */
/*
 * earthtrace - draws the EU and SU utilisation of every node of one or more
 * traces (earthrun --trace FILE, or EARTH_TRACE=FILE: one per node of an
 * mpirun or srun job) as one SVG timeline.
 *
 *   earthtrace [--bins N] [--title TEXT] -o timeline.svg trace.json...
 *
 * One row per unit (node k EU, node k SU); the darker a column, the more of
 * that stretch of time the unit spent in slices (fibers on the EU; handling
 * requests and messages on the SU); each row ends with its busy share; an
 * axis of time ticks and a legend below. Reads any trace-event JSON
 * (Chrome trace format: an object with "traceEvents", or a bare array of
 * events, in any order and layout) with jansson; draws its complete ("X")
 * events.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EARTH_VERSION
#error "EARTH_VERSION (the VERSION file) must be defined"
#endif

#define MAX_TRACKS 1024

struct slice {
	double t0, t1;
};
struct track {
	unsigned pid, tid;
	int file; /* the input it came from first */
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

static const char usage_text[] =
    "usage: earthtrace [--bins N] [--title TEXT] -o timeline.svg "
    "trace.json...\n"
    "  -o, --output=FILE  the SVG to write\n"
    "  --bins=N           columns of the timeline (10..100000; default "
    "400)\n"
    "  --title=TEXT       the title above it\n"
    "  --help, --version  this text; earthtrace's version\n"
    "Every option with a value takes it as --opt=VALUE or --opt VALUE.\n"
    "Reads trace-event JSON (an object with \"traceEvents\" or an array of "
    "events); several files (the per-node traces of one job) are merged "
    "into one timeline.\n";

static _Noreturn void usage_error(void)
{
	fputs(usage_text, stderr);
	exit(2);
}

static struct track *track_of(unsigned pid, unsigned tid, int file,
			      char **inputs)
{
	for (unsigned i = 0; i < ntracks; i++)
		if (tracks[i].pid == pid && tracks[i].tid == tid) {
			if (tracks[i].file != file) {
				char which[64];
				snprintf(which, sizeof(which), "%u", pid);
				fprintf(stderr,
					"earthtrace: warning: node %s is in "
					"both %s and %s: drawn as one row\n",
					which, inputs[tracks[i].file],
					inputs[file]);
				/* Said once per node: its other rows
				 * from that file move with this one. */
				int was = tracks[i].file;
				for (unsigned k = 0; k < ntracks; k++)
					if (tracks[k].pid == pid &&
					    tracks[k].file == was)
						tracks[k].file = file;
			}
			return &tracks[i];
		}
	if (ntracks == MAX_TRACKS)
		die("more than %s tracks%s", "1024", "");
	tracks[ntracks] = (struct track){.pid = pid, .tid = tid, .file = file};
	return &tracks[ntracks++];
}

/* A number member of event ev, or -1 when missing or not a number. */
static double num(const json_t *ev, const char *key)
{
	const json_t *v = json_object_get(ev, key);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* Dies unless complete event i of `in` is one a runtime could have
 * written: pid and tid whole numbers of 32 bits, an end at a finite time
 * (a row is a node's unit; the timeline's arithmetic needs finite
 * times). */
static void check_event(const char *in, size_t i, double pid, double tid,
			double ts, double dur)
{
	char what[96];
	const char *bad = NULL;
	double v = 0;
	if (pid > 4294967295.0 || pid != floor(pid))
		bad = "pid", v = pid;
	else if (tid > 4294967295.0 || tid != floor(tid))
		bad = "tid", v = tid;
	if (bad)
		snprintf(what, sizeof(what),
			 "event %zu has %s %g, not a whole number of 32 bits",
			 i, bad, v);
	else if (!isfinite(ts + dur))
		snprintf(what, sizeof(what),
			 "event %zu ends at no finite time (ts %g, dur %g)", i,
			 ts, dur);
	else
		return;
	die("%s: %s: is it a trace written by the EARTH runtime?", in, what);
}

/* The complete events of input `file` into the tracks, [*lo, *hi] widened
 * to them. */
static void read_trace(char **inputs, int file, double *lo, double *hi)
{
	const char *in = inputs[file];
	json_error_t err;
	json_t *root = json_load_file(in, JSON_DECODE_ANY, &err);
	if (!root) {
		char where[300];
		snprintf(where, sizeof(where), "line %d: %s", err.line,
			 err.text);
		die("%s is not JSON (%s)", in, where);
	}
	const json_t *events = root;
	if (json_is_object(root))
		events = json_object_get(root, "traceEvents");
	else if (!json_is_array(root))
		die("%s is no trace: give an object with \"traceEvents\" or an "
		    "array of events%s",
		    in, "");
	size_t i;
	const json_t *ev;
	json_array_foreach(events, i, ev)
	{
		const json_t *ph = json_object_get(ev, "ph");
		if (!json_is_string(ph) || strcmp(json_string_value(ph), "X"))
			continue;
		double pid = num(ev, "pid"), tid = num(ev, "tid"),
		       ts = num(ev, "ts"), dur = num(ev, "dur");
		if (pid < 0 || tid < 0 || dur < 0 ||
		    !json_is_number(json_object_get(ev, "ts")))
			continue;
		check_event(in, i, pid, tid, ts, dur);
		struct track *t =
		    track_of((unsigned)pid, (unsigned)tid, file, inputs);
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1024;
			t->s = realloc(t->s, t->cap * sizeof(*t->s));
			if (!t->s)
				die("out of memory%s%s", "", "");
		}
		t->s[t->n++] = (struct slice){ts, ts + dur};
		if (ts < *lo)
			*lo = ts;
		if (ts + dur > *hi)
			*hi = ts + dur;
	}
	json_decref(root);
}

/* The value of option `name` at argv[*i] in the forms "--name=V" and
 * "--name V" (*i moved past it), or NULL when argv[*i] is not it. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc)
		die("%s: give its value%s", a, "");
	return argv[++*i];
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

/* The time axis under the rows: a tick and a label every 1, 2 or 5 x 10^k
 * us, about 5 to 10 of them, and a light line through the rows at each
 * (times from the start of the trace, in us below 1 ms, else in ms). */
static void axis(FILE *o, double left, double plot, double top, double bottom,
		 double lo, double hi)
{
	double span = hi - lo, step = 1e-3;
	static const double mult[3] = {2, 2.5, 2}; /* 1, 2, 5, 10, ... */
	for (int m = 0; span / step > 10; m = (m + 1) % 3)
		step *= mult[m];
	fprintf(o,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"#333\"/>\n",
		left, bottom + 2, left + plot, bottom + 2);
	for (long i = 0; i * step <= span * (1 + 1e-9); i++) {
		double t = i * step, x = left + plot * t / span;
		char label[48];
		if (step >= 1000)
			snprintf(label, sizeof(label), "%g ms", t / 1000);
		else
			snprintf(label, sizeof(label), "%g us", t);
		fprintf(o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#ccc\" stroke-dasharray=\"2,3\"/>\n"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#333\"/>\n"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			"text-anchor=\"middle\">%s</text>\n",
			x, top, x, bottom, x, bottom + 2, x, bottom + 7, x,
			bottom + 20, label);
	}
}

/* What the colours mean. */
static void legend(FILE *o, double left, double y)
{
	static const struct {
		const char *fill, *opacity, *text;
		double width;
	} keys[] = {
	    {"#1f77b4", "1", "EU busy (running fibers)", 190},
	    {"#1f77b4", "0", "EU idle", 90},
	    {"#d62728", "1", "SU busy (requests, messages)", 220},
	    {"#d62728", "0", "SU idle", 90},
	};
	fprintf(o, "<g id=\"legend\">\n");
	double x = left;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		fprintf(o,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" "
			"height=\"12\" fill=\"%s\" fill-opacity=\"%s\" "
			"stroke=\"#999\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			x, y - 10, keys[k].fill, keys[k].opacity, x + 18, y,
			keys[k].text);
		x += keys[k].width;
	}
	fprintf(o,
		"<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\">the darker a "
		"column, the busier the unit in that stretch of time</text>\n"
		"</g>\n",
		left, y + 20);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *title = "EARTH timeline", *v;
	char **inputs = calloc((size_t)argc, sizeof(char *));
	int ninputs = 0, only_inputs = 0;
	long bins = 400;
	if (!inputs)
		die("out of memory%s%s", "", "");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_inputs || a[0] != '-' || !a[1]) {
			inputs[ninputs++] = argv[i];
		} else if (!strcmp(a, "--")) {
			only_inputs = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("earthtrace (EARTH) %s\n", EARTH_VERSION);
			return 0;
		} else if ((v = opt_value(argc, argv, &i, "-o")) ||
			   (v = opt_value(argc, argv, &i, "--output"))) {
			out = v;
		} else if ((v = opt_value(argc, argv, &i, "--bins"))) {
			char *end;
			bins = strtol(v, &end, 10);
			if (!*v || *end || bins < 10 || bins > 100000)
				die("--bins '%s': give a number from 10 to "
				    "100000%s",
				    v, "");
		} else if ((v = opt_value(argc, argv, &i, "--title"))) {
			title = v;
		} else {
			fprintf(stderr, "earthtrace: unknown option '%s'\n", a);
			usage_error();
		}
	}
	if (!ninputs || !out)
		usage_error();
	double lo = 1e300, hi = -1e300;
	for (int k = 0; k < ninputs; k++)
		read_trace(inputs, k, &lo, &hi);
	if (!ntracks)
		die("%s: no complete (\"ph\":\"X\") events: is it a trace "
		    "written by the EARTH runtime?%s",
		    ninputs == 1 ? inputs[0] : "the inputs", "");
	if (!isfinite(hi - lo))
		die("the events' times span more than a double holds (%s): "
		    "give traces written by the EARTH runtime%s",
		    ninputs == 1 ? inputs[0] : "the inputs", "");
	if (hi <= lo)
		hi = lo + 1;
	qsort(tracks, ntracks, sizeof(tracks[0]), by_track);

	const double left = 120, right = 90, row = 26, top = 40;
	const double width = 1000;
	double plot = width - left - right;
	FILE *o = fopen(out, "w");
	if (!o)
		die("cannot create %s: %s", out, strerror(errno));
	double height = top + row * ntracks + 90;
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
	axis(o, left, plot, top, top + row * ntracks, lo, hi);
	legend(o, left, top + row * ntracks + 50);
	fputs("</svg>\n", o);
	free(busy);
	for (unsigned k = 0; k < ntracks; k++)
		free(tracks[k].s);
	if (fclose(o) != 0)
		die("cannot write %s: %s", out, strerror(errno));
	return 0;
}
