/* SPDX-License-Identifier: MIT */
/*
 * t_smp.c - nodes of k Execution Units sharing one SU: the setting
 * EARTH_EUS=k|auto (--earth-eus, earthrun --eus). What auto gives for a
 * node's share of the cores (white box: node/topology.c,
 * earth_eus_resolve), a single-core node's one EU (k > 1 there refused as
 * a contradiction), bad values refused before the node starts; k = 1, auto
 * and k = 2, 3 running the programs with exact results on one node and
 * under earthrun over shm and tcp, each node's JSON statistics naming its
 * EUs; one slot signalled from every EU and from another node at once;
 * and each EU's state reached through the thread-local eu_self (white
 * box: eu/eu.h).
 */
#define EARTH_INTERNAL 1
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eu/eu.h"
#include "job.h"
#include "json.h"
#include "node/node.h"

#include <pthread.h>

TestSuite(smp, .timeout = 120);

/* earth_eus_resolve's k, or 0 with its message in msg. */
static char msg[512];
static unsigned resolve(uint64_t asked, unsigned cores, unsigned local,
			bool cpus_given, const char *single)
{
	msg[0] = 0;
	return earth_eus_resolve(asked, cores, local, cpus_given, single, msg,
				 sizeof(msg));
}

Test(smp, auto_takes_the_nodes_share_less_the_su)
{
	/* alone on 1 or 2 cores: one EU (on one the SU shares it) */
	cr_expect_eq(resolve(0, 1, 1, false, NULL), 1);
	cr_expect_eq(resolve(0, 2, 1, false, NULL), 1);
	/* 2 nodes on 4 cores, 8 on 16, more nodes than cores: 1 each */
	cr_expect_eq(resolve(0, 4, 2, false, NULL), 1);
	cr_expect_eq(resolve(0, 16, 8, false, NULL), 1);
	cr_expect_eq(resolve(0, 2, 5, false, NULL), 1);
	/* EARTH_CPUS names one EU's CPU; a single-core node has one EU */
	cr_expect_eq(resolve(0, 64, 1, true, NULL), 1);
	cr_expect_eq(resolve(0, 64, 1, false, "single-poll"), 1);
	cr_expect_eq(resolve(0, 64, 2, false, "single-interrupt"), 1);
	cr_expect_eq(msg[0], 0, "%s", msg);
}

/* EUs 1 .. k-1's CPUs (earth_eu_cpus_place) for EU 0 on CPU 0 and the SU
 * on CPU 1, given the free CPUs; returns whether each had its own. */
static bool place(const int *free, unsigned m, unsigned rank, unsigned local,
		  unsigned k, int *out)
{
	return earth_eu_cpus_place(0, 1, free, m, rank, local, k, out);
}

Test(smp, eu_cpus_of_its_own_then_the_dozing_sus_then_eu_0s)
{
	int out[8], free6[] = {2, 3, 4, 5, 6, 7};
	/* enough: in order, this node's share of the free CPUs */
	cr_expect(place(free6, 6, 0, 1, 4, out));
	cr_expect(out[0] == 2 && out[1] == 3 && out[2] == 4);
	cr_expect(place(free6, 6, 1, 2, 4, out)); /* the second of 2 nodes */
	cr_expect(out[0] == 5 && out[1] == 6 && out[2] == 7);
	/* two CPUs, k = 2: EU 1 shares the dozing SU's CPU, not busy EU 0's */
	cr_expect_not(place(NULL, 0, 0, 1, 2, out));
	cr_expect_eq(out[0], 1);
	/* k = 3 on two CPUs: the SU's, then EU 0's */
	cr_expect_not(place(NULL, 0, 0, 1, 3, out));
	cr_expect(out[0] == 1 && out[1] == 0);
	/* one free CPU, k = 4: it, the SU's, EU 0's */
	int free1[] = {2};
	cr_expect_not(place(free1, 1, 0, 1, 4, out));
	cr_expect(out[0] == 2 && out[1] == 1 && out[2] == 0);
	/* 2 nodes short of CPUs: each wraps over its own share only */
	int free2[] = {4, 5};
	cr_expect_not(place(free2, 2, 1, 2, 4, out));
	cr_expect(out[0] == 5 && out[1] == 1 && out[2] == 0);
	/* EU 0 and the SU on one CPU (EARTH_CPUS 0,0): no CPU twice */
	cr_expect_not(earth_eu_cpus_place(0, 0, NULL, 0, 0, 1, 3, out));
	cr_expect(out[0] == 0 && out[1] == 0);
}

Test(smp, auto_on_larger_hosts_and_numbers_given)
{
	/* auto: 15 EUs for 16 cores alone, 3 for a quarter of them */
	cr_expect_eq(resolve(0, 16, 1, false, NULL), 15);
	cr_expect_eq(resolve(0, 16, 4, false, NULL), 3);
	/* never more than EARTH_EUS_MAX, whatever the host */
	cr_expect_eq(resolve(0, 5000, 1, false, NULL), EARTH_EUS_MAX);
	/* a number: whatever the cores (more EUs than cores share them) */
	for (unsigned k = 2; k <= 3; k++)
		cr_expect_eq(resolve(k, 64, 1, false, NULL), k);
	cr_expect_eq(resolve(1023, 2, 1, false, NULL), 1023);
	cr_expect_eq(msg[0], 0, "%s", msg);
	/* a single-core node: a contradiction, said as such */
	cr_expect_eq(resolve(2, 64, 1, false, "single-poll"), 0);
	cr_expect(strstr(msg, "EARTH_EUS=2 with EARTH_MODE=single-poll: a "
			      "single-core node runs one EU"),
		  "%s", msg);
	/* 1 asked is 1, wherever */
	cr_expect_eq(resolve(1, 64, 1, false, NULL), 1);
	cr_expect_eq(resolve(1, 1, 3, true, "single-poll"), 1);
}

/* Runs `cmd` (after the program's path) on one node: status and stderr. */
static void one_node(struct t_cmd *c, const char *env, const char *args)
{
	t_sh(c, 30, "env %s %s/multinode %s", env, T_PROG_DIR, args);
}

Test(smp, one_node_runs_with_one_eu_and_auto)
{
	static struct t_cmd c;
	const char *envs[] = {"EARTH_EUS=1", "EARTH_EUS=auto",
			      "EARTH_EUS=1 EARTH_MODE=single-poll",
			      "EARTH_EUS=auto EARTH_MODE=single-interrupt"};
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		one_node(&c, envs[i], "10");
		cr_expect_eq(c.status, 0, "%s: status %d\n%s", envs[i],
			     c.status, c.err);
	}
	one_node(&c, "EARTH_EUS=1", "--earth-eus=1 10");
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	/* auto on one CPU: one EU, the SU sharing its CPU (said) */
	int cpu;
	cr_assert_eq(t_first_cpu(&cpu), 0);
	t_sh(&c, 30, "taskset -c %d env EARTH_EUS=auto %s/multinode 10", cpu,
	     T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_expect(strstr(c.err, "the EU and SU share CPU"), "%s", c.err);
}

/* refused at start: status 70, `phrase` said exactly once, the program
 * never ran (multinode prints its result on stdout). */
static void refused(struct t_cmd *c, const char *phrase)
{
	cr_expect_eq(c->status, EARTH_EXIT_USAGE, "status %d\n%s", c->status,
		     c->err);
	const char *at = strstr(c->err, phrase);
	cr_expect(at, "'%s' not in:\n%s", phrase, c->err);
	if (at)
		cr_expect(!strstr(at + 1, phrase), "said twice:\n%s", c->err);
	cr_expect(!strstr(c->out, "multinode:"), "it ran:\n%s", c->out);
}

Test(smp, one_node_refuses_more_eus_before_it_starts)
{
	static struct t_cmd c;
	/* environment, arguments, what is said once */
	const char *cases[][3] = {
	    {"EARTH_EUS=2 EARTH_MODE=single-poll", "10",
	     "EARTH_EUS=2 with EARTH_MODE=single-poll"},
	    {"EARTH_EUS=0", "10",
	     "EARTH_EUS='0': not a whole number from 1 to 1023, nor auto"},
	    {"EARTH_EUS=automatic", "10",
	     "EARTH_EUS='automatic': not a whole number"},
	    {"EARTH_EUS=1", "--earth-eus=1024 10",
	     "--earth-eus=1024: not a whole number from 1 to 1023"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		one_node(&c, cases[i][0], cases[i][1]);
		refused(&c, cases[i][2]);
	}
}

/* A node of k > 1 EUs that cannot start after it chose k (its network,
 * here tcp with no job secret, or its memory) says why and exits with
 * status 70, as a node of one does; its clean-up once freed the siblings'
 * frames before they existed (a segmentation fault). */
Test(smp, a_node_of_several_eus_that_cannot_start_says_why)
{
	static struct t_cmd c;
	for (unsigned k = 1; k <= 3; k++) {
		char env[160];
		snprintf(env, sizeof(env),
			 "EARTH_EUS=%u EARTH_TRANSPORT=tcp EARTH_NODES=2 "
			 "EARTH_NODE=1 EARTH_JOB_SECRET=",
			 k);
		one_node(&c, env, "10");
		refused(&c, "EARTH_JOB_SECRET is not set");
	}
}

Test(smp, earthrun_passes_eus_to_every_node)
{
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --eus=1 %s/multinode 10", T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_expect(strstr(c.out, "multinode: 2 nodes"), "%s", c.out);
	/* auto: the 2 nodes split this host's cores, 1 EU each here */
	t_sh(&c, 60, "%s -n 2 --eus auto %s/fibnodes 18", T_EARTHRUN,
	     T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_expect(strstr(c.out, "fib(18)=2584 correct"), "%s", c.out);
	/* every node of 2 EUs: the same result */
	t_sh(&c, 60, "%s -n 2 --eus=2 %s/fibnodes 18", T_EARTHRUN, T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_expect(strstr(c.out, "fib(18)=2584 correct"), "%s", c.out);
	/* earthrun's own usage errors, exit 2 */
	const char *bad[][2] = {{"--eus=0", "--eus 0: not a whole number "
					    "from 1 to 1023, nor auto"},
				{"--eus=", "--eus: give a number of EUs or "
					   "auto"},
				{"--eus two", "--eus two: not a whole"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t_sh(&c, 30, "%s -n 2 %s %s/multinode 10", T_EARTHRUN,
		     bad[i][0], T_PROG_DIR);
		cr_expect_eq(c.status, 2, "%s: status %d\n%s", bad[i][0],
			     c.status, c.err);
		cr_expect(strstr(c.err, bad[i][1]), "%s: %s", bad[i][0], c.err);
	}
}

/* The statistics JSON at path: `nodes` nodes, each with "eus": k and a
 * "per_eu" record of each EU whose fibers add up to the node's. */
static void eus_in_stats(const char *path, size_t nodes, unsigned k)
{
	char err[256];
	struct json *root = json_parse_file(path, err, sizeof(err));
	cr_assert(root, "%s: %s", path, err);
	const struct json *arr = json_get(root, "nodes");
	cr_assert(arr && arr->type == JSON_ARR && arr->n == nodes, "%s", path);
	for (size_t i = 0; i < arr->n; i++) {
		const struct json *nk = json_get(&arr->v[i], "eus");
		cr_expect(nk && nk->type == JSON_NUM && nk->num == (double)k,
			  "node %zu: no \"eus\":%u in %s", i, k, path);
		const struct json *per = json_get(&arr->v[i], "per_eu");
		cr_assert(per && per->type == JSON_ARR && per->n == k,
			  "node %zu: no per_eu of %u in %s", i, k, path);
		double sum = 0;
		for (size_t e = 0; e < per->n; e++) {
			const struct json *eu = json_get(&per->v[e], "eu");
			const struct json *fr =
			    json_get(&per->v[e], "fibers_run");
			cr_assert(eu && fr && eu->num == (double)e,
				  "node %zu EU %zu in %s", i, e, path);
			cr_expect(json_get(&per->v[e], "fibers_to_siblings"),
				  "node %zu EU %zu in %s", i, e, path);
			const struct json *cpu = json_get(&per->v[e], "cpu");
			cr_expect(cpu && cpu->num >= 0,
				  "node %zu EU %zu: no CPU in %s", i, e, path);
			sum += fr->num;
		}
		const struct json *all = json_get(&arr->v[i], "fibers_run");
		cr_expect(all && all->num == sum,
			  "node %zu: the EUs ran %.0f fibers, the node %.0f", i,
			  sum, all ? all->num : -1.0);
		/* The TOKENs the node's EUs posted (any EU): those run here
		 * (taken from a deque of the node's) and those another node
		 * stole. */
		const struct json *tok =
		    json_get(json_get(&arr->v[i], "ops"), "TOKEN");
		double local = tok ? json_get(tok, "local")->num : 0;
		double remote = tok ? json_get(tok, "remote")->num : 0;
		double ran = json_get(&arr->v[i], "tokens_run")->num;
		double given = json_get(&arr->v[i], "tokens_given")->num;
		cr_expect(local == ran && remote == given,
			  "node %zu: TOKEN local %.0f remote %.0f, tokens run "
			  "%.0f given %.0f in %s",
			  i, local, remote, ran, given, path);
	}
	json_free(root);
}

Test(smp, statistics_name_the_eus)
{
	static struct t_cmd c;
	char dir[64], path[128];
	t_scratch_dir(dir, sizeof(dir), "t_smp");
	snprintf(path, sizeof(path), "%s/one.json", dir);
	t_sh(&c, 30, "env EARTH_EUS=auto %s/multinode --earth-stats-json=%s 10",
	     T_PROG_DIR, path);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	eus_in_stats(path, 1, 1);
	snprintf(path, sizeof(path), "%s/two.json", dir);
	t_sh(&c, 60, "%s -n 2 --eus=1 --stats-json=%s %s/multinode 10",
	     T_EARTHRUN, path, T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	eus_in_stats(path, 2, 1);
	for (unsigned k = 2; k <= 3; k++) {
		snprintf(path, sizeof(path), "%s/k%u.json", dir, k);
		t_sh(&c, 60, "%s -n 2 --eus=%u --stats-json=%s %s/fibnodes 18",
		     T_EARTHRUN, k, path, T_PROG_DIR);
		cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
		eus_in_stats(path, 2, k);
	}
	/* the table: the EUs' sum, then a line per EU */
	t_sh(&c, 60, "%s -n 1 --eus=2 --stats %s/fibnodes 16", T_EARTHRUN,
	     T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	cr_expect(strstr(c.err, "(2 EUs)") && strstr(c.err, "  EU 0 ") &&
		      strstr(c.err, "  EU 1 "),
		  "%s", c.err);
	/* the trace: a track per EU (EU 0, the SU, EU 1), each with slices */
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	t_sh(&c, 60, "%s -n 1 --eus=2 --trace=%s %s/fibnodes 22", T_EARTHRUN,
	     path, T_PROG_DIR);
	cr_expect_eq(c.status, 0, "status %d\n%s", c.status, c.err);
	char err[256];
	struct json *root = json_parse_file(path, err, sizeof(err));
	cr_assert(root, "%s: %s", path, err);
	const struct json *ev = json_get(root, "traceEvents");
	cr_assert(ev && ev->type == JSON_ARR, "%s", path);
	unsigned named = 0, slices[4] = {0};
	for (size_t i = 0; i < ev->n; i++) {
		const struct json *ph = json_get(&ev->v[i], "ph");
		const struct json *tid = json_get(&ev->v[i], "tid");
		const struct json *nm = json_get(&ev->v[i], "name");
		if (!ph || !tid || tid->num < 1 || tid->num > 3)
			continue;
		unsigned t = (unsigned)tid->num;
		if (!strcmp(ph->str, "X"))
			slices[t]++;
		if (!strcmp(ph->str, "M") && nm &&
		    !strcmp(nm->str, "thread_name")) {
			const struct json *a = json_get(&ev->v[i], "args");
			const struct json *n = a ? json_get(a, "name") : NULL;
			const char *want = t == 1   ? "EU 0"
					   : t == 2 ? "SU"
						    : "EU 1";
			cr_expect(n && !strcmp(n->str, want), "track %u: %s", t,
				  n ? n->str : "(none)");
			named++;
		}
	}
	json_free(root);
	cr_expect_eq(named, 3, "%u tracks named", named);
	cr_expect(slices[1] && slices[2] && slices[3],
		  "slices on EU 0 %u, the SU %u, EU 1 %u", slices[1], slices[2],
		  slices[3]);
	cr_expect_eq(t_remove_dir(dir), 0);
}

/* eu_self: EU 0's state on the EU thread and on every other thread; a
 * thread that points it elsewhere (as EU i's thread will) changes only its
 * own. */
static struct eu_state *self_in_fiber, *self_in_other, *self_after;
static struct eu_state self_fake;

static void *self_other(void *arg)
{
	struct eu_state *seen = eu_self;
	eu_self = arg;
	return seen;
}

struct self_frame {
	struct earth_main_args a;
};

static void self_entry(void *f)
{
	self_in_fiber = eu_self;
	pthread_t t;
	void *seen = NULL;
	if (pthread_create(&t, NULL, self_other, &self_fake) == 0 &&
	    pthread_join(t, &seen) == 0)
		self_in_other = seen;
	self_after = eu_self;
	EARTH_END_FUNCTION(f);
}
EARTH_THREADED_FUNCTION(self_main, self_entry, struct self_frame,
			sizeof(struct earth_main_args));

Test(smp, each_eu_thread_reaches_its_own_state)
{
	struct earth_options o;
	earth_options_default(&o);
	struct earth_main_args a = {0, NULL};
	cr_assert_eq(earth_run(&o, &self_main, &a, sizeof(a)), 0);
	cr_expect_eq(self_in_fiber, &eu_first);
	cr_expect_eq(self_in_other, &eu_first);
	cr_expect_eq(self_after, &eu_first);
	cr_expect_eq(eu_self, &eu_first);
	/* the EU counted main's END_FUNCTION in its own state */
	cr_expect_eq(eu_first.ops[EARTH_OP_END_FUNCTION], 1);
	cr_expect_eq(self_fake.ops[EARTH_OP_END_FUNCTION], 0);
}

/* ---- nodes of k EU threads ---- */

Test(smp, k_eus_run_programs_on_one_node)
{
	static struct t_cmd c;
	for (unsigned k = 2; k <= 3; k++) {
		t_sh(&c, 60, "env EARTH_EUS=%u %s/multinode 1000", k,
		     T_PROG_DIR);
		cr_expect_eq(c.status, 0, "k=%u: status %d\n%s", k, c.status,
			     c.err);
		cr_expect(strstr(c.out, "multinode: 1 nodes, 1000-byte "
					"blocks: all correct"),
			  "k=%u: %s", k, c.out);
		t_sh(&c, 60, "env EARTH_EUS=%u %s/fibnodes 20", k, T_PROG_DIR);
		cr_expect_eq(c.status, 0, "k=%u: status %d\n%s", k, c.status,
			     c.err);
		cr_expect(strstr(c.out, "fib(20)=6765 correct, collectives "
					"correct"),
			  "k=%u: %s", k, c.out);
		/* more units than this machine's CPUs: said once */
		if (sysconf(_SC_NPROCESSORS_ONLN) < (long)k + 1) {
			const char *p = "Execution Units and the SU on";
			const char *at = strstr(c.err, p);
			cr_expect(at, "k=%u: %s", k, c.err);
			if (at)
				cr_expect(!strstr(at + 1, p), "%s", c.err);
		}
	}
}

/* A job of 2 nodes of k EUs over transport tr: status 0, `want` said. */
static void two_nodes(struct t_cmd *c, const char *tr, unsigned k,
		      const char *prog, const char *want)
{
	t_sh(c, 90, "%s --transport %s -n 2 --eus=%u %s/%s", T_EARTHRUN, tr, k,
	     T_PROG_DIR, prog);
	cr_expect_eq(c->status, 0, "k=%u %s %s: status %d\n%s", k, tr, prog,
		     c->status, c->err);
	cr_expect(strstr(c->out, want), "k=%u %s: %s", k, tr, c->out);
}

Test(smp, k_eus_in_jobs_of_two_nodes_over_shm_and_tcp)
{
	static struct t_cmd c;
	const char *tr[] = {"shm", "tcp"};
	for (unsigned k = 2; k <= 3; k++)
		for (size_t t = 0; t < 2; t++) {
			two_nodes(&c, tr[t], k, "fibnodes 20",
				  "fib(20)=6765 correct, collectives correct");
			two_nodes(&c, tr[t], k, "multinode 1000",
				  "multinode: 2 nodes, 1000-byte blocks: all "
				  "correct");
		}
}

/* smpslot's line: the work each EU of node 0 ran. */
static unsigned eus_that_worked(const char *out, unsigned k, unsigned long *sum)
{
	const char *p = strstr(out, " on EUs");
	unsigned busy = 0;
	*sum = 0;
	if (!p)
		return 0;
	p += strlen(" on EUs");
	for (unsigned i = 0; i < k; i++) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p)
			return 0;
		*sum += v;
		busy += v != 0;
		p = end;
	}
	return busy;
}

Test(smp, a_slot_signalled_from_every_eu_and_another_node_at_once)
{
	static struct t_cmd c;
	const char *tr[] = {"shm", "tcp"};
	for (unsigned k = 2; k <= 3; k++)
		for (size_t t = 0; t < 2; t++) {
			two_nodes(&c, tr[t], k, "smpslot 3000",
				  "smpslot: 6000 signals, fired 1, work 3000 "
				  "on EUs");
			unsigned long sum;
			unsigned busy = eus_that_worked(c.out, k, &sum);
			cr_expect_eq(sum, 3000, "%s", c.out);
			/* earth_stats_get sums every EU of node 0 */
			cr_expect(strstr(c.out, "smpslot: node 0 ran 3002 "
						"fibers, 3001 frames, 3001 "
						"END_FUNCTIONs"),
				  "k=%u %s: %s", k, tr[t], c.out);
			/* new frames went to the shortest ready ring: more
			 * than one EU ran them */
			cr_expect_geq(busy, 2, "k=%u %s: %s", k, tr[t], c.out);
		}
}

/* A frame's fibers run one at a time: main's join, signalled last from a
 * sibling that stole a child, and a fiber a child SPAWNs on main's frame,
 * wait for main's first fiber to end; a stolen token's frame is its
 * thief's. The EUs signal the join's slot themselves and hand the fiber
 * to main's EU themselves, with no request to the SU, observed or not;
 * with EARTH_EU_SIGNALS=0 the SU performs every signal and routes the
 * fiber by frame. */
Test(smp, a_frames_fibers_never_run_at_once)
{
	static struct t_cmd c;
	char dir[64], path[128];
	t_scratch_dir(dir, sizeof(dir), "t_smp");
	for (unsigned k = 2; k <= 3; k++)
		for (int how = 0; how < 3; how++) {
			/* 0: unobserved; 1: with statistics; 2: every signal
			 * through the SU */
			bool observed = how == 1;
			snprintf(path, sizeof(path), "%s/join%u.json", dir, k);
			t_sh(&c, 60,
			     "env EARTH_EUS=%u EARTH_EU_SIGNALS=%d "
			     "%s/smpjoin %s%s 64",
			     k, how < 2, T_PROG_DIR,
			     observed ? "--earth-stats-json=" : "",
			     observed ? path : "");
			cr_expect_eq(c.status, 0, "k=%u: status %d\n%s%s", k,
				     c.status, c.out, c.err);
			cr_expect(strstr(c.out, "smpjoin: 64 children, on "
						"other EUs "),
				  "k=%u: %s", k, c.out);
			cr_expect(strstr(c.out,
					 "frames of their runner yes, join "
					 "during first fiber no, spawn during "
					 "first fiber no"),
				  "k=%u: %s", k, c.out);
			/* some children were stolen, else nothing was
			 * tested */
			cr_expect(!strstr(c.out, "on other EUs 0,"), "k=%u: %s",
				  k, c.out);
			/* the EUs hand each other the join and the SPAWN
			 * themselves: no request to the SU (one there put the
			 * EU behind the SU for every signal after it), and
			 * statistics do not change that */
			if (how < 2)
				cr_expect(strstr(c.out, "SU requests 0\n"),
					  "k=%u how %d: %s", k, how, c.out);
			else
				cr_expect(!strstr(c.out, "SU requests 0\n"),
					  "k=%u: %s", k, c.out);
			if (observed)
				eus_in_stats(path, 1, k);
		}
}
