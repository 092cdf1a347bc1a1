/* SPDX-License-Identifier: MIT */
/*
 * t_trace.c - observability: the timeline (EARTH_TRACE, earthrun --trace)
 * is valid Chrome trace-event JSON (required fields, balanced slices,
 * monotonic timestamps per track, every message a flow from its sender's
 * SU to its receiver's SU), one fiber slice per fiber run; a full buffer
 * drops and counts events, never crashes; the time breakdown
 * (EARTH_STATS_JSON, earthrun --stats=json) adds up to the wall time
 * within 2% on every unit; the switch classes add up to the fibers run;
 * bad settings are refused with a message; the renderer draws the trace.
 */
#include <criterion/criterion.h>
#include <dirent.h>

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fib_tf.h"
#include "job.h"
#include "json.h"

#ifndef T_EARTHTRACE
#error "T_EARTHTRACE must be defined"
#endif

TestSuite(trace, .timeout = 120);

static char dir[64];

static void make_dir(void)
{
	t_scratch_dir(dir, sizeof(dir), "t_trace");
}

static void remove_dir(void)
{
	cr_expect_eq(t_remove_dir(dir), 0);
}

/* ---- one node, in a child process ---- */

static int fib_n, fib_result;

struct main_frame {
	int dummy;
	earth_slot done;
};
static void main_done(void *frame)
{
	EARTH_END_FUNCTION(frame);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	earth_slot_init(&m->done, 1, 0, main_done, m);
	fib_tf_start(fib_n, &fib_result, &m->done);
}
EARTH_THREADED_FUNCTION(t_trace_main, main_entry, struct main_frame, 0);

static long fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

/* Fibers fib(n) runs: two per call with children (entry, join), one per
 * leaf, plus main's two. */
static long fib_fibers(int n)
{
	return n < 2 ? 1 : 2 + fib_fibers(n - 1) + fib_fibers(n - 2);
}

static int run_fib(void *arg)
{
	fib_n = *(int *)arg;
	fib_result = -1;
	int rc = t_run(NULL, &t_trace_main);
	if (rc)
		return rc;
	return fib_result == fib_seq(fib_n) ? 0 : 99;
}

/* ---- checking a trace ---- */

struct track_state {
	double pid, tid;
	double last_ts;
	double open_end[64]; /* ends of the enclosing slices */
	int depth;
};

struct trace_facts {
	long fiber_slices, op_slices, flows_s, flows_f;
	/* Flows of the stuck-job detection's PROBE and PROBE_ACK, which the
	 * statistics leave out of msgs_sent/msgs_received. */
	long ctl_s, ctl_f;
	long dropped;
	int pids;
};

static const struct json *need(const struct json *ev, const char *key,
			       enum json_type t, size_t i)
{
	const struct json *v = json_get(ev, key);
	cr_assert(v, "event %zu has no \"%s\"", i, key);
	cr_assert_eq(v->type, t, "event %zu: \"%s\" has the wrong type", i,
		     key);
	return v;
}

/* Validates the trace-event format and returns what it found. */
static void check_trace(const char *path, struct trace_facts *tf)
{
	char err[256];
	struct json *root = json_parse_file(path, err, sizeof(err));
	cr_assert(root, "%s: not JSON: %s", path, err);
	const struct json *evs = json_get(root, "traceEvents");
	cr_assert(evs && evs->type == JSON_ARR, "no traceEvents array");
	cr_assert_gt(evs->n, 4, "only %zu events", evs->n);
	memset(tf, 0, sizeof(*tf));
	struct track_state tracks[64];
	int ntracks = 0;
	double pids[64];
	/* flow ids: start/finish counts */
	size_t nflow = 0, capflow = 1024;
	char **fid = malloc(capflow * sizeof(char *));
	int *fkind = malloc(capflow * sizeof(int));
	double *fpid = malloc(capflow * sizeof(double));
	/* The slice a flow belongs to is the event written just before it. */
	const char *last_slice = "";
	for (size_t i = 0; i < evs->n; i++) {
		const struct json *ev = &evs->v[i];
		cr_assert_eq(ev->type, JSON_OBJ, "event %zu is not an object",
			     i);
		const char *ph = need(ev, "ph", JSON_STR, i)->str;
		double pid = need(ev, "pid", JSON_NUM, i)->num;
		need(ev, "name", JSON_STR, i);
		int p;
		for (p = 0; p < tf->pids && pids[p] != pid; p++)
			;
		if (p == tf->pids) {
			cr_assert_lt(tf->pids, 64);
			pids[tf->pids++] = pid;
		}
		if (!strcmp(ph, "M")) {
			const struct json *a = json_get(ev, "args");
			if (!strcmp(json_get(ev, "name")->str,
				    "earth_trace_dropped")) {
				tf->dropped +=
				    (long)need(a, "eu", JSON_NUM, i)->num +
				    (long)need(a, "su", JSON_NUM, i)->num;
			}
			continue;
		}
		double tid = need(ev, "tid", JSON_NUM, i)->num;
		double ts = need(ev, "ts", JSON_NUM, i)->num;
		cr_assert(isfinite(ts), "event %zu: ts", i);
		int t;
		for (t = 0; t < ntracks &&
			    (tracks[t].pid != pid || tracks[t].tid != tid);
		     t++)
			;
		if (t == ntracks) {
			cr_assert_lt(ntracks, 64);
			tracks[ntracks++] =
			    (struct track_state){pid, tid, -1e300, {0}, 0};
		}
		struct track_state *tr = &tracks[t];
		cr_assert_geq(ts, tr->last_ts - 1e-9,
			      "event %zu: ts %.3f goes back on track %g/%g "
			      "(last %.3f)",
			      i, ts, pid, tid, tr->last_ts);
		tr->last_ts = ts;
		if (!strcmp(ph, "X")) {
			double dur = need(ev, "dur", JSON_NUM, i)->num;
			last_slice = json_get(ev, "name")->str;
			cr_assert_geq(dur, 0, "event %zu: negative dur", i);
			const char *cat = need(ev, "cat", JSON_STR, i)->str;
			/* Balanced: a slice ends before the slice it starts
			 * in ends (1 ns of rounding allowed). */
			while (tr->depth && tr->open_end[tr->depth - 1] <= ts)
				tr->depth--;
			if (tr->depth)
				cr_assert_leq(ts + dur,
					      tr->open_end[tr->depth - 1] +
						  0.002,
					      "event %zu overlaps the slice it "
					      "starts in",
					      i);
			cr_assert_lt(tr->depth, 64);
			tr->open_end[tr->depth++] = ts + dur;
			if (!strcmp(cat, "fiber")) {
				cr_assert_eq(tid, 1, "fiber off the EU track");
				tf->fiber_slices++;
			} else if (!strcmp(cat, "op")) {
				cr_assert_eq(tid, 2,
					     "request off the SU track");
				tf->op_slices++;
			}
		} else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
			const struct json *id = need(ev, "id", JSON_STR, i);
			cr_assert(tr->depth &&
				      tr->open_end[tr->depth - 1] >= ts,
				  "event %zu: flow outside a slice", i);
			if (nflow == capflow) {
				capflow *= 2;
				fid = realloc(fid, capflow * sizeof(char *));
				fkind = realloc(fkind, capflow * sizeof(int));
				fpid = realloc(fpid, capflow * sizeof(double));
			}
			fid[nflow] = id->str;
			fkind[nflow] = ph[0] == 's';
			fpid[nflow] = pid;
			nflow++;
			bool ctl = !strncmp(last_slice, "send PROBE", 10) ||
				   !strncmp(last_slice, "recv PROBE", 10);
			if (ph[0] == 's') {
				tf->flows_s++;
				tf->ctl_s += ctl;
			} else {
				tf->flows_f++;
				tf->ctl_f += ctl;
			}
		} else {
			cr_assert_fail("event %zu: unexpected ph '%s'", i, ph);
		}
	}
	/* Messages between a pair of nodes arrive in order: the starts on
	 * each pair are numbered 0..s-1, the finishes 0..r-1 with r <= s
	 * (messages still in flight when the job ended never finish), each
	 * once, a finish on another node than its start. */
	static long sent[16][16], got[16][16];
	memset(sent, 0, sizeof(sent));
	memset(got, 0, sizeof(got));
	for (size_t i = 0; i < nflow; i++) {
		unsigned a, b;
		unsigned long long q;
		cr_assert_eq(sscanf(fid[i], "%u.%u.%llu", &a, &b, &q), 3,
			     "flow id '%s'", fid[i]);
		cr_assert(a < 16 && b < 16 && a != b, "flow id '%s'", fid[i]);
		cr_assert_eq(fpid[i], fkind[i] ? a : b, "flow %s on node %g",
			     fid[i], fpid[i]);
		long *cnt = fkind[i] ? &sent[a][b] : &got[a][b];
		cr_assert_eq((long)q, *cnt, "flow %s out of order", fid[i]);
		(*cnt)++;
	}
	for (int a = 0; a < 16; a++)
		for (int b = 0; b < 16; b++)
			cr_assert_leq(got[a][b], sent[a][b],
				      "%d->%d: %ld received, %ld sent", a, b,
				      got[a][b], sent[a][b]);
	free(fid);
	free(fkind);
	free(fpid);
	json_free(root);
}

/* The breakdown of every node adds up to its wall time within 2%. */
static const struct json *check_stats(const char *path, struct json **root,
				      int nodes)
{
	char err[256];
	*root = json_parse_file(path, err, sizeof(err));
	cr_assert(*root, "%s: not JSON: %s", path, err);
	const struct json *arr = json_get(*root, "nodes");
	cr_assert(arr && arr->type == JSON_ARR);
	cr_assert_eq(arr->n, (size_t)nodes, "%zu nodes in %s", arr->n, path);
	for (size_t i = 0; i < arr->n; i++) {
		const struct json *nd = &arr->v[i];
		double wall = json_get(nd, "wall_ns")->num;
		const struct json *eu = json_get(nd, "eu"),
				  *su = json_get(nd, "su");
		cr_assert(eu && su);
		double eus = json_get(eu, "fiber_ns")->num +
			     json_get(eu, "runtime_ns")->num +
			     json_get(eu, "idle_ns")->num;
		double sus = json_get(su, "serve_ns")->num +
			     json_get(su, "recv_ns")->num +
			     json_get(su, "send_ns")->num +
			     json_get(su, "idle_ns")->num;
		cr_assert(wall > 0);
		cr_expect(fabs(eus - wall) <= 0.02 * wall,
			  "node %zu: EU parts %.0f ns vs wall %.0f ns", i, eus,
			  wall);
		cr_expect(fabs(sus - wall) <= 0.02 * wall,
			  "node %zu: SU parts %.0f ns vs wall %.0f ns", i, sus,
			  wall);
		const struct json *sw = json_get(nd, "switches");
		double s = 0;
		for (size_t k = 0; k < sw->n; k++)
			s += sw->v[k].num;
		cr_expect_eq(s, json_get(nd, "fibers_run")->num,
			     "node %zu: switch classes %.0f vs fibers run %.0f",
			     i, s, json_get(nd, "fibers_run")->num);
	}
	return arr;
}

/* Calls fib(n) makes: each ends with one DATA_SYNC to its caller's slot
 * and was started by one TOKEN. */
static long fib_calls(int n)
{
	return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2);
}

/* fib(18) traced and counted. The EU signals its own node's slots itself,
 * observed as unobserved: the SU's track shows few requests, the fibers'
 * slices hold their signals. With EARTH_EU_SIGNALS=0 the SU performs every
 * signal and its track shows each. Either way the requests table counts
 * every request exactly once, wherever it was performed. */
Test(trace, one_node_trace_and_breakdown)
{
	make_dir();
	char trace[128], stats[128];
	snprintf(trace, sizeof(trace), "%s/t.json", dir);
	snprintf(stats, sizeof(stats), "%s/s.json", dir);
	int n = 18;
	for (int on_eu = 1; on_eu >= 0; on_eu--) {
		setenv("EARTH_TRACE", trace, 1);
		setenv("EARTH_STATS_JSON", stats, 1);
		setenv("EARTH_EU_SIGNALS", on_eu ? "1" : "0", 1);
		struct t_child c;
		cr_assert_eq(t_run_child(run_fib, &n, &c), 0);
		unsetenv("EARTH_TRACE");
		unsetenv("EARTH_STATS_JSON");
		unsetenv("EARTH_EU_SIGNALS");
		cr_assert(c.exited && c.status == 0, "status %d signal %d:\n%s",
			  c.status, c.signal, c.err);
		/* The part became the file (the second round's replaced
		 * the first's): nothing else is left beside it. */
		DIR *d = opendir(dir);
		cr_assert(d);
		for (struct dirent *de; (de = readdir(d));)
			cr_expect(!strstr(de->d_name, ".part") &&
				      !strstr(de->d_name, ".tmp"),
				  "left in %s: %s", dir, de->d_name);
		closedir(d);
		struct trace_facts tf;
		check_trace(trace, &tf);
		cr_expect_eq(tf.dropped, 0);
		cr_expect_eq(tf.fiber_slices, fib_fibers(n) + 2,
			     "%ld fiber slices, want %ld", tf.fiber_slices,
			     fib_fibers(n) + 2);
		if (on_eu)
			cr_expect_lt(tf.op_slices, fib_calls(n) / 2,
				     "%ld request slices on the SU",
				     tf.op_slices);
		else
			cr_expect_geq(tf.op_slices, fib_calls(n),
				      "%ld request slices on the SU",
				      tf.op_slices);
		cr_expect_eq(tf.flows_s + tf.flows_f, 0);
		struct json *root;
		const struct json *arr = check_stats(stats, &root, 1);
		cr_expect_eq(json_get(&arr->v[0], "fibers_run")->num,
			     (double)(fib_fibers(n) + 2));
		const struct json *ops = json_get(&arr->v[0], "ops");
		const char *kinds[] = {"TOKEN", "DATA_SYNC"};
		for (int k = 0; k < 2; k++) {
			const struct json *o = json_get(ops, kinds[k]);
			cr_expect_eq(json_get(o, "local")->num,
				     (double)fib_calls(n),
				     "%s: %.0f local, want %ld (signals on "
				     "the EU: %d)",
				     kinds[k], json_get(o, "local")->num,
				     fib_calls(n), on_eu);
			cr_expect_eq(json_get(o, "remote")->num, 0);
		}
		json_free(root);
	}
	remove_dir();
}

/* ---- a known workload: K fibers computing S µs each, then 40 ms with
 * nothing to do until another thread signals main's slot ---- */

#define WORK_FIBERS 20
#define WORK_US 1000
#define WAIT_MS 40

struct work_frame {
	int dummy;
	earth_slot spun, woken;
};
static struct work_frame *work_main_frame;

static void spin_fiber(void *frame)
{
	struct work_frame *m = frame;
	uint64_t end = t_now_ns() + WORK_US * 1000ull;
	while (t_now_ns() < end)
		;
	earth_sync(&m->spun);
}

static void *waker(void *arg)
{
	(void)arg;
	struct timespec ts = {0, WAIT_MS * 1000000l};
	nanosleep(&ts, NULL);
	earth_sync_from_thread(earth_slot_global(&work_main_frame->woken));
	return NULL;
}

static void work_woken(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

static void work_spun(void *frame)
{
	struct work_frame *m = frame;
	pthread_t th;
	earth_slot_init(&m->woken, 1, 0, work_woken, m);
	if (pthread_create(&th, NULL, waker, NULL) == 0)
		pthread_detach(th);
}

static void work_entry(void *frame)
{
	struct work_frame *m = frame;
	work_main_frame = m;
	earth_slot_init(&m->spun, WORK_FIBERS, 0, work_spun, m);
	for (int i = 0; i < WORK_FIBERS; i++)
		earth_spawn(spin_fiber, m);
}
EARTH_THREADED_FUNCTION(t_work_main, work_entry, struct work_frame, 0);

static int run_work(void *arg)
{
	(void)arg;
	return t_run(NULL, &t_work_main);
}

Test(trace, breakdown_of_a_known_workload)
{
	make_dir();
	char stats[128];
	snprintf(stats, sizeof(stats), "%s/s.json", dir);
	setenv("EARTH_STATS_JSON", stats, 1);
	struct t_child c;
	cr_assert_eq(t_run_child(run_work, NULL, &c), 0);
	unsetenv("EARTH_STATS_JSON");
	cr_assert(c.exited && c.status == 0, "status %d:\n%s", c.status, c.err);
	struct json *root;
	const struct json *nd = &check_stats(stats, &root, 1)->v[0];
	const struct json *eu = json_get(nd, "eu"), *su = json_get(nd, "su");
	double fiber = json_get(eu, "fiber_ns")->num;
	double idle = json_get(eu, "idle_ns")->num;
	double work = WORK_FIBERS * WORK_US * 1000.0, wait = WAIT_MS * 1e6;
	/* The spinning fibers are the EU's fiber time (the other fibers are
	 * short): at least the work, and no more than the time not idle;
	 * preemption on a loaded machine lengthens fibers and waits, never
	 * shortens them. The wait is idle on both units. */
	double wall = json_get(nd, "wall_ns")->num;
	cr_expect(fiber >= work && fiber <= wall - idle + 1e5,
		  "fiber %.0f ns for %.0f ns of work; wall %.0f, idle %.0f",
		  fiber, work, wall, idle);
	cr_expect(idle >= 0.95 * wait, "EU idle %.0f ns over a %.0f ns wait",
		  idle, wait);
	cr_expect(json_get(su, "idle_ns")->num >= 0.95 * wait,
		  "SU idle %.0f ns, serve %.0f, receive %.0f, send %.0f, wall "
		  "%.0f",
		  json_get(su, "idle_ns")->num, json_get(su, "serve_ns")->num,
		  json_get(su, "recv_ns")->num, json_get(su, "send_ns")->num,
		  wall);
	cr_expect(json_get(su, "serve_ns")->num > 0);
	const struct json *sw = json_get(nd, "switches");
	/* Main's spawn burst and the first spinning fibers find others
	 * ready; the last fiber before the wait finds none. */
	cr_expect_gt(json_get(sw, "ready")->num, WORK_FIBERS / 2);
	cr_expect_geq(json_get(sw, "idle")->num, 1);
	cr_expect_eq(json_get(sw, "remote")->num + json_get(sw, "same")->num +
			 json_get(sw, "tail")->num,
		     0);
	const struct json *spawn = json_get(json_get(nd, "ops"), "SPAWN");
	cr_expect_eq(json_get(spawn, "local")->num, WORK_FIBERS);
	json_free(root);
	remove_dir();
}

/* A burst with no idle moment: main spawns BURST fibers in one go; on a
 * single-poll node (one thread, deterministic) neither unit goes idle until
 * they all ran, so 1024-event buffers must overflow. */
#define BURST 5000

struct burst_frame {
	int dummy;
	earth_slot all;
};

static void burst_fiber(void *frame)
{
	earth_sync(&((struct burst_frame *)frame)->all);
}

static void burst_done(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

static void burst_entry(void *frame)
{
	struct burst_frame *m = frame;
	earth_slot_init(&m->all, BURST, 0, burst_done, m);
	for (int i = 0; i < BURST; i++)
		earth_spawn(burst_fiber, m);
}
EARTH_THREADED_FUNCTION(t_burst_main, burst_entry, struct burst_frame, 0);

static int run_burst(void *arg)
{
	(void)arg;
	return t_run(NULL, &t_burst_main);
}

Test(trace, full_buffer_counts_drops)
{
	make_dir();
	char trace[128];
	snprintf(trace, sizeof(trace), "%s/t.json", dir);
	setenv("EARTH_TRACE", trace, 1);
	setenv("EARTH_TRACE_EVENTS", "1024", 1);
	setenv("EARTH_MODE", "single-poll", 1);
	struct t_child c;
	cr_assert_eq(t_run_child(run_burst, NULL, &c), 0);
	unsetenv("EARTH_TRACE");
	unsetenv("EARTH_TRACE_EVENTS");
	unsetenv("EARTH_MODE");
	cr_assert(c.exited && c.status == 0, "status %d:\n%s", c.status, c.err);
	cr_expect(t_err_has(&c, "events dropped"), "%s", c.err);
	struct trace_facts tf;
	check_trace(trace, &tf);
	/* Each unit kept what fit; the rest is counted. */
	cr_expect_leq(tf.fiber_slices, 1024);
	cr_expect_leq(tf.op_slices, 1024);
	cr_expect_geq(tf.dropped, 2 * (BURST + 2) - 2 * 1024, "%ld dropped",
		      tf.dropped);
	remove_dir();
}

static int run_plain(void *arg)
{
	(void)arg;
	int n = 10;
	return run_fib(&n);
}

Test(trace, bad_settings_are_refused)
{
	setenv("EARTH_TRACE", "/nonexistent-dir/x/t.json", 1);
	t_expect_exit(run_plain, NULL, EARTH_EXIT_USAGE, "cannot create",
		      "/nonexistent-dir/x/t.json", NULL);
	setenv("EARTH_TRACE", "/tmp/earth_t_trace_bad.json", 1);
	setenv("EARTH_TRACE_EVENTS", "12", 1);
	t_expect_exit(run_plain, NULL, EARTH_EXIT_USAGE, "EARTH_TRACE_EVENTS",
		      "from 1024", NULL);
	unsetenv("EARTH_TRACE_EVENTS");
	unsetenv("EARTH_TRACE");
	setenv("EARTH_STATS_JSON", "", 1);
	t_expect_exit(run_plain, NULL, EARTH_EXIT_USAGE, "EARTH_STATS_JSON",
		      NULL);
	unsetenv("EARTH_STATS_JSON");
}

/* ---- several nodes, through earthrun ---- */

static void check_job(const char *transport, int nodes)
{
	make_dir();
	static struct t_cmd c;
	t_sh(&c, 60,
	     "%s -n %d --transport %s --trace %s/t.json --stats=json "
	     "%s/s.json %s/fibnodes 17",
	     T_EARTHRUN, nodes, transport, dir, dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s, %d nodes: status %d\n%s%s", transport,
		     nodes, c.status, c.out, c.err);
	cr_assert(strstr(c.out, "correct"), "%s", c.out);
	char path[128];
	snprintf(path, sizeof(path), "%s/t.json", dir);
	struct trace_facts tf;
	check_trace(path, &tf);
	cr_expect_eq(tf.pids, nodes, "%d nodes in the trace", tf.pids);
	cr_expect_gt(tf.flows_f, 0, "no messages between nodes");
	cr_expect_eq(tf.dropped, 0);
	snprintf(path, sizeof(path), "%s/s.json", dir);
	struct json *root;
	const struct json *arr = check_stats(path, &root, nodes);
	double sent = 0, recv = 0;
	for (size_t i = 0; i < arr->n; i++) {
		sent += json_get(&arr->v[i], "msgs_sent")->num;
		recv += json_get(&arr->v[i], "msgs_received")->num;
	}
	cr_expect_eq((double)(tf.flows_s - tf.ctl_s), sent,
		     "%ld flow starts (%ld of the stuck-job detection), %.0f "
		     "sent",
		     tf.flows_s, tf.ctl_s, sent);
	cr_expect_eq((double)(tf.flows_f - tf.ctl_f), recv,
		     "%ld flow ends (%ld of the stuck-job detection), %.0f "
		     "received",
		     tf.flows_f, tf.ctl_f, recv);
	json_free(root);
	/* The renderer draws a row per unit. */
	t_sh(&c, 60,
	     "%s %s/t.json -o %s/t.svg && grep -c 'busy</text>' %s/t.svg",
	     T_EARTHTRACE, dir, dir, dir);
	cr_expect_eq(c.status, 0, "%s", c.err);
	cr_expect_eq(atoi(c.out), 2 * nodes, "rows: %s", c.out);
	remove_dir();
}

/* Sums switch class `k` (or, with max, the largest reads_in_flight max)
 * over the nodes of a statistics file. */
static double over_nodes(const struct json *arr, const char *k, bool max)
{
	double v = 0;
	for (size_t i = 0; i < arr->n; i++) {
		double x =
		    max ? json_get(json_get(&arr->v[i], "reads_in_flight"),
				   "max")
			      ->num
			: json_get(json_get(&arr->v[i], "switches"), k)->num;
		v = max ? (x > v ? x : v) : v + x;
	}
	return v;
}

/* Fibers that end waiting on a remote GET (multinode: every visit GETs
 * from node 0 through its SU) and on collectives (fibnodes: a barrier and
 * allreduces on every node) are classified so. */
Test(trace, fiber_end_classes_in_jobs)
{
	make_dir();
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 3 --stats=json %s/s.json %s/multinode 100000",
	     T_EARTHRUN, dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	char path[128];
	snprintf(path, sizeof(path), "%s/s.json", dir);
	struct json *root;
	const struct json *arr = check_stats(path, &root, 3);
	cr_expect_geq(over_nodes(arr, "same", false) +
			  over_nodes(arr, "remote", false),
		      1, "no fiber end waited on a remote read");
	cr_expect_geq(over_nodes(arr, NULL, true), 1,
		      "no remote read was in flight at a fiber end");
	json_free(root);
	t_sh(&c, 60, "%s -n 2 --stats=json %s/s.json %s/fibnodes 12",
	     T_EARTHRUN, dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	arr = check_stats(path, &root, 2);
	cr_expect_geq(over_nodes(arr, "tail", false), 1,
		      "no fiber end waited in a collective");
	json_free(root);
	remove_dir();
}

/* node 0's count of kind `op`, `where` ("local" or "remote"), in the
 * statistics file at path. */
static double node0_op(const char *path, const char *op, const char *where)
{
	struct json *root;
	const struct json *arr = check_stats(path, &root, 2);
	const struct json *o = json_get(json_get(&arr->v[0], "ops"), op);
	double v = o ? json_get(o, where)->num : -1;
	json_free(root);
	return v;
}

/* A GET node 0's EU reads from node 1's mapped segment itself (--remote
 * direct) counts as the SU's read of node 1's memory counts (--remote
 * su): remote; those of node 0's own elements local. The gmem program's
 * node 0 GETs 2 x 1000 elements spread over the two nodes, and 1000 more
 * of its own. */
Test(trace, requests_table_counts_reads_where_they_read)
{
	make_dir();
	static struct t_cmd c;
	char path[128];
	snprintf(path, sizeof(path), "%s/s.json", dir);
	double got[2][2];
	const char *how[] = {"direct", "su"};
	for (int h = 0; h < 2; h++) {
		t_sh(&c, 60, "%s -n 2 --remote %s --stats=json %s %s/gmem 64",
		     T_EARTHRUN, how[h], path, T_PROG_DIR);
		cr_assert_eq(c.status, 0, "%s: %s%s", how[h], c.out, c.err);
		got[h][0] = node0_op(path, "GET_SYNC", "local");
		got[h][1] = node0_op(path, "GET_SYNC", "remote");
		cr_expect_gt(got[h][1], 0, "--remote %s: no remote GET",
			     how[h]);
	}
	cr_expect(got[0][0] == got[1][0] && got[0][1] == got[1][1],
		  "GET_SYNC local/remote: direct %.0f/%.0f, su %.0f/%.0f",
		  got[0][0], got[0][1], got[1][0], got[1][1]);
	remove_dir();
}

Test(trace, two_nodes_shm)
{
	check_job("shm", 2);
}

Test(trace, three_nodes_tcp)
{
	check_job("tcp", 3);
}

/* Occurrences of s in the file at path. */
static int count_in(const char *path, const char *s)
{
	static char buf[1 << 20];
	t_slurp(path, buf, sizeof(buf));
	return t_count_of(buf, s);
}

/* A program that never starts its nodes (here /bin/true) leaves an
 * empty timeline: valid JSON, said with a warning, never "written". */
Test(trace, empty_timeline_is_a_warning)
{
	make_dir();
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --trace=%s/e.json /bin/true", T_EARTHRUN, dir);
	cr_expect_eq(c.status, 0, "%s", c.err);
	cr_expect(strstr(c.err, "earthrun: warning: "),
		  "no warning for an empty timeline:\n%s", c.err);
	cr_expect(strstr(c.err, "e.json written empty: no node of the job "
				"recorded anything"),
		  "%s", c.err);
	cr_expect(!strstr(c.err, "e.json written\n"), "%s", c.err);
	char path[128];
	snprintf(path, sizeof(path), "%s/e.json", dir);
	cr_expect_eq(count_in(path, "\"traceEvents\":["), 1, "not JSON");
	/* earthtrace says the same of it. */
	t_sh(&c, 60, "%s %s/e.json -o %s/e.svg", T_EARTHTRACE, dir, dir);
	cr_expect_eq(c.status, 2, "%s", c.err);
	cr_expect(strstr(c.err, "no complete"), "%s", c.err);
	remove_dir();
}

Test(trace, renderer_rejects_foreign_input)
{
	make_dir();
	static struct t_cmd c;
	t_sh(&c, 60, "echo '{}' > %s/x.json && %s %s/x.json -o %s/x.svg", dir,
	     T_EARTHTRACE, dir, dir);
	cr_expect_eq(c.status, 2, "%s", c.err);
	cr_expect(strstr(c.err, "no complete"), "%s", c.err);
	remove_dir();
}

/* Events no runtime writes (times a double cannot span, a node number
 * beyond 32 bits) end earthtrace with the file and the event, never a
 * timeline of "inf ms" and "-nan% busy". */
Test(trace, renderer_rejects_out_of_range_events)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
	    {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1e308,\"dur\":1e308}]",
	     "event 0 ends at no finite time"},
	    {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},"
	     "{\"ph\":\"X\",\"pid\":1e30,\"tid\":1,\"ts\":0,\"dur\":5}]",
	     "event 1 has pid 1e+30"},
	    {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1.5,\"ts\":0,\"dur\":5}]",
	     "event 0 has tid 1.5"},
	    {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":-1e308,\"dur\":1},"
	     "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1e308,\"dur\":0}]",
	     "the events' times span more than a double holds"},
	};
	make_dir();
	static struct t_cmd c;
	char path[128];
	snprintf(path, sizeof(path), "%s/r.json", dir);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		FILE *f = fopen(path, "w");
		cr_assert(f && fputs(bad[k].json, f) >= 0 && !fclose(f));
		t_sh(&c, 60, "%s %s -o %s/r.svg", T_EARTHTRACE, path, dir);
		cr_expect_eq(c.status, 2, "case %zu: %s", k, c.err);
		cr_expect(strstr(c.err, bad[k].says) && strstr(c.err, "r.json"),
			  "case %zu: wanted '%s':\n%s", k, bad[k].says, c.err);
	}
	remove_dir();
}

Test(trace, renderer_help_and_version)
{
	static struct t_cmd c;
	char v[64];
	t_slurp("VERSION", v, sizeof(v));
	v[strcspn(v, "\n")] = 0;
	t_sh(&c, 30, "%s --help", T_EARTHTRACE);
	cr_expect_eq(c.status, 0, "%s", c.err);
	cr_expect(strstr(c.out, "usage: earthtrace"), "%s", c.out);
	t_sh(&c, 30, "%s --version", T_EARTHTRACE);
	cr_expect_eq(c.status, 0, "%s", c.err);
	cr_expect(v[0] && strstr(c.out, v), "%s", c.out);
}

/* A 2-node trace as any JSON tool re-writes it (indented), and as the
 * per-node files of an mpirun job (one node each, as an object and as a
 * bare array), all drawn with an axis of ticks and a legend. */
Test(trace, renderer_reads_any_layout_and_merges_nodes)
{
	make_dir();
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --trace=%s/t.json %s/fibnodes 15", T_EARTHRUN,
	     dir, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	char svg[128];
	snprintf(svg, sizeof(svg), "%s/i.svg", dir);
	t_sh(&c, 60,
	     "python3 -m json.tool %s/t.json > %s/i.json && "
	     "%s --title=indented %s/i.json -o %s",
	     dir, dir, T_EARTHTRACE, dir, svg);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_expect_eq(count_in(svg, "busy</text>"), 4);
	cr_expect_geq(count_in(svg, "class=\"tick\""), 3, "no time ticks");
	cr_expect_eq(count_in(svg, "id=\"legend\""), 1, "no legend");
	cr_expect_eq(count_in(svg, ">EU busy"), 1);
	cr_expect_eq(count_in(svg, ">SU idle"), 1);
	/* One file per node, events shuffled, merged into one timeline. */
	t_sh(&c, 60,
	     "python3 -c 'import json, random, sys\n"
	     "d = sys.argv[1]\n"
	     "ev = json.load(open(d + \"/t.json\"))[\"traceEvents\"]\n"
	     "random.shuffle(ev)\n"
	     "json.dump({\"traceEvents\": [e for e in ev if e.get(\"pid\") "
	     "== 0]}, open(d + \"/n0.json\", \"w\"))\n"
	     "json.dump([e for e in ev if e.get(\"pid\") == 1], "
	     "open(d + \"/n1.json\", \"w\"), indent=1)' %s && "
	     "%s -o %s/m.svg %s/n0.json %s/n1.json",
	     dir, T_EARTHTRACE, dir, dir, dir);
	cr_assert_eq(c.status, 0, "%s", c.err);
	snprintf(svg, sizeof(svg), "%s/m.svg", dir);
	cr_expect_eq(count_in(svg, "busy</text>"), 4);
	cr_expect_eq(count_in(svg, ">node 0 EU<"), 1);
	cr_expect_eq(count_in(svg, ">node 1 SU<"), 1);
	/* The same node in two files: one warning per node, not per row. */
	t_sh(&c, 60, "%s -o %s/d.svg %s/t.json %s/t.json", T_EARTHTRACE, dir,
	     dir, dir);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_expect_eq(t_count_of(c.err, "node 0 is in both"), 1, "%s", c.err);
	cr_expect_eq(t_count_of(c.err, "node 1 is in both"), 1, "%s", c.err);
	cr_expect_eq(t_count_of(c.err, "warning"), 2, "%s", c.err);
	remove_dir();
}
