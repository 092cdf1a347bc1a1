/* SPDX-License-Identifier: MIT */
/*
 * settings.c - the table of every EARTH_* variable and --earth-* flag
 * (settings.h), parsing and validating them, the values the node keeps.
 * docs/user-guide.md's "Settings" table must match earth_settings_help()
 * row for row (tests/t_settings.c).
 */
#define EARTH_INTERNAL 1
#include "base/settings.h"
#include "base/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

#define OPT EARTH_SET_OPTION

const struct earth_setting earth_settings[EARTH_SET_COUNT_] = {
    [EARTH_SET_QUEUE] =
	{.env = "EARTH_QUEUE",
	 .flag = "queue",
	 .type = EARTH_SET_T_ENUM,
	 .flags = OPT,
	 .choices = "sw|hwq",
	 .dflt = "hwq",
	 .want = "unknown queue mode '%s' (use sw or hwq)",
	 .help = "EU<->SU queue protocol: hardware-queue emulation, or "
		 "software rings with shared indices (EARTH-MANNA)"},
    [EARTH_SET_HWQ_LATENCY_NS] =
	{.env = "EARTH_HWQ_LATENCY_NS",
	 .flag = "hwq-latency",
	 .type = EARTH_SET_T_UINT,
	 .flags = OPT,
	 .max = 100000000,
	 .dflt = "0",
	 .help = "hwq only: a message becomes visible this many ns after it "
		 "was sent (0: as fast as the machine)"},
    [EARTH_SET_QUEUE_SLOTS] =
	{.env = "EARTH_QUEUE_SLOTS",
	 .flag = "queue-slots",
	 .type = EARTH_SET_T_POW2,
	 .flags = OPT,
	 .min = 8,
	 .max = 1u << 24,
	 .dflt = STR(EARTH_QUEUE_SLOTS_DEFAULT),
	 .help = "capacity of each EU<->SU ring in 64-byte messages"},
    [EARTH_SET_CPUS] =
	{.env = "EARTH_CPUS",
	 .flag = "cpus",
	 .type = EARTH_SET_T_CPUS,
	 .flags = OPT,
	 .max = 4095,
	 .dflt = NULL,
	 .want = "'%s': give two CPUs, EU,SU (e.g. 0,1), each 0 to 4095",
	 .help = "CPUs of the EU and the SU (unset: two of the affinity set "
		 "that share the last-level cache, not SMT siblings)"},
    [EARTH_SET_SPIN_US] =
	{.env = "EARTH_SPIN_US",
	 .flag = "spin-us",
	 .type = EARTH_SET_T_UINT,
	 .flags = OPT,
	 .max = 10000000,
	 .dflt = STR(EARTH_SPIN_US_DEFAULT),
	 .help = "how long an idle unit spins, in us, before it blocks"},
    [EARTH_SET_STATS] =
	{.env = "EARTH_STATS",
	 .flag = "stats",
	 .type = EARTH_SET_T_BOOL,
	 .flags = OPT,
	 .dflt = "0",
	 .help = "print the node's statistics at exit (also turns on "
		 "busy/idle timing)"},
    [EARTH_SET_MODE] =
	{.env = "EARTH_MODE",
	 .flag = "mode",
	 .type = EARTH_SET_T_ENUM,
	 .flags = OPT,
	 .choices = "dual|single-interrupt|single-poll",
	 .dflt = "dual",
	 .want = "unknown node mode '%s' (use dual, single-interrupt or "
		 "single-poll)",
	 .help = "what runs the node: an EU core and an SU core, or one core "
		 "that also does the SU's work on interrupts or by polling"},
    [EARTH_SET_EUS] =
	{.env = "EARTH_EUS",
	 .flag = "eus",
	 .type = EARTH_SET_T_COUNT,
	 .min = 1,
	 .max = EARTH_EUS_MAX,
	 .dflt = "1",
	 .help = "Execution Units of the node, all served by its one SU "
		 "(auto: the cores of the node's share of the affinity set "
		 "less one)"},
    [EARTH_SET_TIMING] =
	{.env = "EARTH_TIMING",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "0",
	 .help = "busy/idle timing without printing (for earth_stats_get)"},
    [EARTH_SET_EU_SIGNALS] =
	{.env = "EARTH_EU_SIGNALS",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "1",
	 .help = "the EU signals slots of its own node, SPAWNs and INVOKEs on "
		 "it and copies its small block moves itself (dual node); 0 "
		 "sends them all through the SU"},
    [EARTH_SET_SU_DOZE] =
	{.env = "EARTH_SU_DOZE",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "1",
	 .help = "an SU with nothing to do for EARTH_SPIN_US sleeps while the "
		 "EU computes, until the EU posts (one node, dual mode); 0 "
		 "keeps it polling"},
    [EARTH_SET_SHARED_SPIN_US] =
	{.env = "EARTH_SHARED_SPIN_US",
	 .type = EARTH_SET_T_UINT,
	 .max = 10000000,
	 .dflt = STR(EARTH_SHARED_SPIN_US_DEFAULT),
	 .help = "a dozing SU that measures itself slower than alone (its "
		 "core shared with a busy thread: an SMT sibling) sleeps after "
		 "this many us; at least EARTH_SPIN_US: it never measures"},
    [EARTH_SET_TRACE] =
	{.env = "EARTH_TRACE",
	 .flag = "trace",
	 .type = EARTH_SET_T_FILE,
	 .dflt = NULL,
	 .help = "write a timeline of the units to this file (Chrome "
		 "trace-event JSON)"},
    [EARTH_SET_TRACE_EVENTS] =
	{.env = "EARTH_TRACE_EVENTS",
	 .type = EARTH_SET_T_UINT,
	 .min = 1024,
	 .max = 1u << 24,
	 .dflt = "1048576",
	 .help = "events each unit's trace buffer holds (32 bytes each)"},
    [EARTH_SET_TRACE_EPOCH_NS] =
	{.env = "EARTH_TRACE_EPOCH_NS",
	 .type = EARTH_SET_T_UINT,
	 .max = INT64_MAX,
	 .dflt = "0",
	 .help = "the job's common time zero for traces, CLOCK_REALTIME ns "
		 "(set by earthrun)"},
    [EARTH_SET_TRACE_PARTS] =
	{.env = "EARTH_TRACE_PARTS",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "0",
	 .help = "leave the trace in one part per node for earthrun to join "
		 "(set by earthrun)"},
    [EARTH_SET_STATS_JSON] =
	{.env = "EARTH_STATS_JSON",
	 .flag = "stats-json",
	 .type = EARTH_SET_T_FILE,
	 .flags = EARTH_SET_NONEMPTY,
	 .dflt = NULL,
	 .want = "empty: give the file to write the statistics to",
	 .help = "write the statistics and time breakdown as JSON to this "
		 "file"},
    [EARTH_SET_STATS_PARTS] =
	{.env = "EARTH_STATS_PARTS",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "0",
	 .help = "leave the JSON statistics in one part per node for earthrun "
		 "to join (set by earthrun)"},
    [EARTH_SET_PARTS_ID] =
	{.env = "EARTH_PARTS_ID",
	 .type = EARTH_SET_T_UINT,
	 .max = UINT32_MAX,
	 .dflt = NULL,
	 .help = "the job's number in its part files' names, "
		 "FILE.ID.nodeK.part (set by earthrun: its pid; unset: the "
		 "node's pid)"},
    [EARTH_SET_NODE] =
	{.env = "EARTH_NODE",
	 .type = EARTH_SET_T_UINT,
	 .max = 65535,
	 .dflt = NULL,
	 .help = "this node's number, below EARTH_NODES (set by earthrun; "
		 "else from Slurm, Open MPI or Hydra)"},
    [EARTH_SET_NODES] = {.env = "EARTH_NODES",
			 .type = EARTH_SET_T_UINT,
			 .min = 1,
			 .max = 65535,
			 .dflt = NULL,
			 .help = "the number of nodes in the job"},
    [EARTH_SET_LOCAL_NODE] = {.env = "EARTH_LOCAL_NODE",
			      .type = EARTH_SET_T_UINT,
			      .max = 65535,
			      .dflt = NULL,
			      .help =
				  "this node's number among those on its host"},
    [EARTH_SET_LOCAL_NODES] = {.env = "EARTH_LOCAL_NODES",
			       .type = EARTH_SET_T_UINT,
			       .min = 1,
			       .max = 65535,
			       .dflt = NULL,
			       .help = "the number of nodes on this host"},
    [EARTH_SET_TRANSPORT] =
	{.env = "EARTH_TRANSPORT",
	 .type = EARTH_SET_T_ENUM,
	 .choices = "shm|tcp|ucx",
	 .dflt = NULL,
	 .want = "EARTH_TRANSPORT must be shm, tcp or ucx",
	 .help = "transport between nodes (unset: tcp when EARTH_RENDEZVOUS "
		 "is set and EARTH_SHM_FD is not, ucx under a PMIx launcher, "
		 "else shm)"},
    [EARTH_SET_SHM_FD] =
	{.env = "EARTH_SHM_FD",
	 .type = EARTH_SET_T_UINT,
	 .max = 65535,
	 .dflt = NULL,
	 .help = "descriptor of earthrun's shared job mapping (set by "
		 "earthrun)"},
    [EARTH_SET_RENDEZVOUS] =
	{.env = "EARTH_RENDEZVOUS",
	 .type = EARTH_SET_T_HOSTPORT,
	 .dflt = NULL,
	 .help = "tcp: where node 0 listens, host:port or [v6addr]:port"},
    [EARTH_SET_RENDEZVOUS_FD] =
	{.env = "EARTH_RENDEZVOUS_FD",
	 .type = EARTH_SET_T_UINT,
	 .max = 65535,
	 .dflt = NULL,
	 .help = "tcp: node 0's rendezvous listener, a descriptor inherited "
		 "from earthrun (set by earthrun)"},
    [EARTH_SET_JOB_SECRET] =
	{.env = "EARTH_JOB_SECRET",
	 .type = EARTH_SET_T_HEX,
	 .min = 32,
	 .max = 128,
	 .dflt = NULL,
	 .want = "EARTH_JOB_SECRET must be 32 to 128 hex digits (16 to 64 "
		 "bytes)",
	 .help = "tcp, ucx: random secret of the job, the same on every "
		 "node (under PMIx node 0 makes one when unset)"},
    [EARTH_SET_CONNECT_TIMEOUT] =
	{.env = "EARTH_CONNECT_TIMEOUT",
	 .type = EARTH_SET_T_REAL,
	 .flags = EARTH_SET_MIN_EXCL,
	 .dmin = 0,
	 .dmax = 86400,
	 .dflt = "60",
	 .want = "EARTH_CONNECT_TIMEOUT must be seconds in (0, 86400]",
	 .help = "tcp: seconds nodes wait for each other at start"},
    [EARTH_SET_GMEM_MB] =
	{.env = "EARTH_GMEM_MB",
	 .type = EARTH_SET_T_UINT,
	 .max = 262144,
	 .dflt = "64",
	 .want = "EARTH_GMEM_MB must be the MiB of global memory per node "
		 "(0 to 262144)",
	 .help = "global memory per node in MiB, the same on every node"},
    [EARTH_SET_REMOTE] =
	{.env = "EARTH_REMOTE",
	 .type = EARTH_SET_T_ENUM,
	 .choices = "su|direct",
	 .dflt = "direct",
	 .want = "EARTH_REMOTE must be su (through the remote SU) or direct "
		 "(one-sided over the shared mapping)",
	 .help = "remote global memory on one host: one-sided (direct) or "
		 "through the remote SU"},
    [EARTH_SET_NET_LATENCY_NS] =
	{.env = "EARTH_NET_LATENCY_NS",
	 .type = EARTH_SET_T_UINT,
	 .max = 10000000000ull,
	 .dflt = "0",
	 .help = "emulated network: one-way delay in ns added to every "
		 "message (0: none)"},
    [EARTH_SET_NET_BW_MBPS] =
	{.env = "EARTH_NET_BW_MBPS",
	 .type = EARTH_SET_T_REAL,
	 .dmin = 0,
	 .dmax = 1e7,
	 .dflt = "0",
	 .help = "emulated network: bandwidth of each link in MB/s (10^6 "
		 "bytes/s; 0: no limit)"},
    [EARTH_SET_PEER_QUEUE_MB] =
	{.env = "EARTH_PEER_QUEUE_MB",
	 .type = EARTH_SET_T_UINT,
	 .min = 1,
	 .max = 1048576,
	 .dflt = "256",
	 .help = "MiB of answers a node may hold for one peer that does not "
		 "read them; beyond it the peer is named and the job stops"},
    [EARTH_SET_PEER_STALL_S] =
	{.env = "EARTH_PEER_STALL_S",
	 .type = EARTH_SET_T_REAL,
	 .flags = EARTH_SET_MIN_EXCL,
	 .dmin = 0,
	 .dmax = 86400,
	 .dflt = "5",
	 .help = "seconds a peer may leave what is sent to it unread, or "
		 "stay unreachable (its host or the link to it down; tcp and "
		 "ucx), before it is named and the job stops"},
    [EARTH_SET_ASLR] =
	{.env = "EARTH_ASLR",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "0",
	 .help = "keep address-space randomisation: earthrun starts its nodes "
		 "without it, a node under a PMIx launcher starts itself again "
		 "without it (read first thing in earth_run)"},
    [EARTH_SET_TC_STATS] =
	{.env = "EARTH_TC_STATS",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "0",
	 .help = "Threaded-C programs: print the Table 3 counters (fiber "
		 "starts, variables restored and saved) on stderr at exit"},
    [EARTH_SET_DSM_MB] =
	{.env = "EARTH_DSM_MB",
	 .type = EARTH_SET_T_UINT,
	 .min = 1,
	 .max = 458752, /* below the global segments (net/shm_layout.h) */
	 .dflt = "64",
	 .want = "EARTH_DSM_MB must be the MiB of shared memory (1 to "
		 "458752)",
	 .help = "shared memory across nodes (earth_dsm.h): the region's "
		 "MiB, the same on every node"},
    [EARTH_SET_DSM_PAGE] =
	{.env = "EARTH_DSM_PAGE",
	 .type = EARTH_SET_T_POW2,
	 .min = 4096,
	 .max = 65536,
	 .dflt = "4096",
	 .help = "shared memory: bytes of a page, the unit of fetches and "
		 "write notices, the same on every node"},
    [EARTH_SET_DSM_STACK_KB] =
	{.env = "EARTH_DSM_STACK_KB",
	 .type = EARTH_SET_T_UINT,
	 .min = 16,
	 .max = 1048576,
	 .dflt = "1024",
	 .want = "EARTH_DSM_STACK_KB must be the KiB of a program thread's "
		 "stack (16 to 1048576)",
	 .help = "shared memory: KiB of each program thread's stack"},
    [EARTH_SET_DSM_REFRESH] =
	{.env = "EARTH_DSM_REFRESH",
	 .type = EARTH_SET_T_UINT,
	 .min = 0,
	 .max = 4096,
	 .dflt = "16",
	 .want = "EARTH_DSM_REFRESH must be the pages an acquire may "
		 "refresh (0 to 4096)",
	 .help = "shared memory: pages an acquire copies in place from "
		 "their homes on one host instead of invalidating them (pages "
		 "this node read; 0: none, every such page faults again)"},
    [EARTH_SET_DSM_HOME_KEEP] =
	{.env = "EARTH_DSM_HOME_KEEP",
	 .type = EARTH_SET_T_UINT,
	 .min = 0,
	 .max = 255,
	 .dflt = "32",
	 .want = "EARTH_DSM_HOME_KEEP must be a count of intervals (0 to "
		 "255)",
	 .help = "shared memory: a home page written again within this many "
		 "rounds of releases (a round: as many releases as the node "
		 "has program threads) stays writable through as many rounds, "
		 "each release naming it in a write notice, and twice as many "
		 "each time it is written again right after, up to 8 times as "
		 "many (255 at most) (0: protected at every release, noticed "
		 "only when written)"},
    [EARTH_SET_DSM_GRANT_PAGES] =
	{.env = "EARTH_DSM_GRANT_PAGES",
	 .type = EARTH_SET_T_UINT,
	 .min = 0,
	 .max = 8,
	 .dflt = "2",
	 .want = "EARTH_DSM_GRANT_PAGES must be a count of pages (0 to 8)",
	 .help = "shared memory between hosts: pages homed at a lock's "
		 "manager that its grant carries along with the notices "
		 "naming them, so that the grantee's copy it read before is "
		 "current again without a fetch (0: none)"},
    [EARTH_SET_DSM_LOCK_PRETWIN] =
	{.env = "EARTH_DSM_LOCK_PRETWIN",
	 .type = EARTH_SET_T_UINT,
	 .min = 0,
	 .max = 8,
	 .dflt = "4",
	 .want = "EARTH_DSM_LOCK_PRETWIN must be a count of pages (0 to 8)",
	 .help = "shared memory: pages the last critical section of a lock "
		 "wrote on this node (copies of other nodes' pages) that the "
		 "lock's next grant here twins and makes writable, so that "
		 "the next critical section's writes take no fault (0: none)"},
    [EARTH_SET_DSM_CLAIM_AHEAD] =
	{.env = "EARTH_DSM_CLAIM_AHEAD",
	 .type = EARTH_SET_T_BOOL,
	 .dflt = "1",
	 .help = "shared memory: a program thread's first write to a "
		 "first-touch page that has no home yet goes on at once while "
		 "node 0 decides the home (the thread's next synchronisation "
		 "waits for the answers); 0: the write waits"},
    [EARTH_SET_DSM_FAULTS] =
	{.env = "EARTH_DSM_FAULTS",
	 .type = EARTH_SET_T_ENUM,
	 .choices = "auto|userfaultfd|protections",
	 .dflt = "auto",
	 .want = "unknown EARTH_DSM_FAULTS '%s' (use auto, userfaultfd or "
		 "protections)",
	 .help = "shared memory: how a page the node may not touch yet "
		 "faults: userfaultfd (one kernel mapping whatever the pages' "
		 "states), page protections (a mapping per run of equal "
		 "pages, at most vm.max_map_count), or auto: userfaultfd "
		 "where the kernel has it"},
};

static struct earth_set_value values[EARTH_SET_COUNT_];
static char *texts[EARTH_SET_COUNT_]; /* copies values[i].s points to */
static bool loaded[EARTH_SET_COUNT_];
static bool by_flag[EARTH_SET_COUNT_]; /* given as --earth-<flag> */

static int bad(enum earth_set id, const char *what, const char *v, char *msg,
	       size_t len)
{
	const struct earth_setting *s = &earth_settings[id];
	char want[200];
	if (s->want) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(want, sizeof(want), s->want, v);
#pragma GCC diagnostic pop
	} else {
		char range[96];
		earth_setting_range(id, range, sizeof(range));
		switch (s->type) {
		case EARTH_SET_T_UINT:
		case EARTH_SET_T_COUNT: /* or auto */
			snprintf(want, sizeof(want),
				 "not a whole number from %" PRIu64
				 " to %" PRIu64 "%s",
				 s->min, s->max,
				 s->type == EARTH_SET_T_COUNT ? ", nor auto"
							      : "");
			break;
		case EARTH_SET_T_POW2:
			snprintf(want, sizeof(want),
				 "use a power of two >= %" PRIu64
				 " (at most %" PRIu64 ")",
				 s->min, s->max);
			break;
		case EARTH_SET_T_REAL:
			snprintf(want, sizeof(want),
				 "not a number from %.15g to %.15g", s->dmin,
				 s->dmax);
			break;
		case EARTH_SET_T_BOOL:
			snprintf(want, sizeof(want), "use 1 or 0");
			break;
		case EARTH_SET_T_ENUM:
			snprintf(want, sizeof(want), "use one of %s", range);
			break;
		case EARTH_SET_T_HOSTPORT:
			snprintf(want, sizeof(want),
				 "want host:port, the port 1 to 65535");
			break;
		default:
			snprintf(want, sizeof(want), "want %s", range);
			break;
		}
	}
	snprintf(msg, len, "%s: %s", what, want);
	return -EINVAL;
}

/* All digits, at most max: 0; else -1. */
static int whole(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!*v)
		return -1;
	for (const char *p = v; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	errno = 0;
	unsigned long long x = strtoull(v, NULL, 10);
	if (errno || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

static int choice(const char *choices, const char *v, uint64_t *out)
{
	size_t vl = strlen(v);
	uint64_t i = 0;
	for (const char *c = choices;; i++) {
		const char *bar = strchr(c, '|');
		size_t cl = bar ? (size_t)(bar - c) : strlen(c);
		if (cl == vl && !strncmp(c, v, vl)) {
			*out = i;
			return 0;
		}
		if (!bar)
			return -1;
		c = bar + 1;
	}
}

int earth_setting_parse(enum earth_set id, const char *what, const char *v,
			struct earth_set_value *out, char *msg, size_t len)
{
	const struct earth_setting *s = &earth_settings[id];
	memset(out, 0, sizeof(*out));
	out->eu = out->su = -1;
	if (v && !*v && (s->flags & EARTH_SET_NONEMPTY))
		return bad(id, what, v, msg, len);
	out->given = v && *v;
	if (!out->given) {
		v = s->dflt;
		if (!v)
			return 0;
	}
	switch (s->type) {
	case EARTH_SET_T_BOOL:
		if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on"))
			out->u = 1;
		else if (!strcmp(v, "0") || !strcmp(v, "no") ||
			 !strcmp(v, "off"))
			out->u = 0;
		else
			return bad(id, what, v, msg, len);
		return 0;
	case EARTH_SET_T_UINT:
		if (whole(v, s->min, s->max, &out->u))
			return bad(id, what, v, msg, len);
		return 0;
	case EARTH_SET_T_COUNT:
		if (!strcmp(v, "auto"))
			out->u = 0;
		else if (whole(v, s->min, s->max, &out->u))
			return bad(id, what, v, msg, len);
		return 0;
	case EARTH_SET_T_POW2:
		if (whole(v, s->min, s->max, &out->u) ||
		    (out->u & (out->u - 1)))
			return bad(id, what, v, msg, len);
		return 0;
	case EARTH_SET_T_REAL: {
		char *end;
		errno = 0;
		double d = strtod(v, &end);
		if (end == v || *end || errno || !isfinite(d) || d > s->dmax ||
		    d < s->dmin ||
		    ((s->flags & EARTH_SET_MIN_EXCL) && d <= s->dmin) ||
		    isspace((unsigned char)*v))
			return bad(id, what, v, msg, len);
		out->d = d;
		return 0;
	}
	case EARTH_SET_T_ENUM:
		if (choice(s->choices, v, &out->u))
			return bad(id, what, v, msg, len);
		return 0;
	case EARTH_SET_T_FILE:
		out->s = v;
		return 0;
	case EARTH_SET_T_CPUS: {
		const char *comma = strchr(v, ',');
		char a[24];
		uint64_t eu, su;
		if (!comma || (size_t)(comma - v) >= sizeof(a))
			return bad(id, what, v, msg, len);
		memcpy(a, v, (size_t)(comma - v));
		a[comma - v] = 0;
		if (whole(a, 0, s->max, &eu) ||
		    whole(comma + 1, 0, s->max, &su))
			return bad(id, what, v, msg, len);
		out->eu = (int)eu;
		out->su = (int)su;
		return 0;
	}
	case EARTH_SET_T_HOSTPORT: {
		const char *colon = strrchr(v, ':');
		uint64_t port;
		if (!colon || colon == v || !colon[1] ||
		    whole(colon + 1, 1, 65535, &port))
			return bad(id, what, v, msg, len);
		out->s = v;
		return 0;
	}
	case EARTH_SET_T_HEX: {
		size_t n = strlen(v);
		if (n % 2 || n < s->min || n > s->max)
			return bad(id, what, v, msg, len);
		for (size_t i = 0; i < n; i++)
			if (!isxdigit((unsigned char)v[i]))
				return bad(id, what, v, msg, len);
		out->s = v;
		return 0;
	}
	}
	return bad(id, what, v, msg, len);
}

void earth_setting_store(enum earth_set id, const struct earth_set_value *v)
{
	char *copy = v->s ? strdup(v->s) : NULL;
	free(texts[id]);
	texts[id] = copy;
	values[id] = *v;
	values[id].s = copy;
	loaded[id] = true;
}

int earth_setting_load(enum earth_set id, char *msg, size_t len)
{
	const char *env = earth_settings[id].env;
	const char *v = getenv(env);
	char what[160];
	snprintf(what, sizeof(what), "%s='%.100s'", env, v ? v : "");
	struct earth_set_value val;
	int r = earth_setting_parse(id, what, v, &val, msg, len);
	if (r) {
		/* Refused: the default stays. */
		char ignore[8];
		earth_setting_parse(id, what, NULL, &val, ignore,
				    sizeof(ignore));
	}
	earth_setting_store(id, &val);
	return r;
}

void earth_setting_store_flag(enum earth_set id,
			      const struct earth_set_value *v)
{
	earth_setting_store(id, v);
	by_flag[id] = true;
}

int earth_settings_load(void)
{
	int status = 0;
	for (int i = 0; i < EARTH_SET_COUNT_; i++) {
		/* Flags win over the environment. */
		if ((earth_settings[i].flags & EARTH_SET_OPTION) || by_flag[i])
			continue;
		char msg[512];
		if (earth_setting_load((enum earth_set)i, msg, sizeof(msg))) {
			fprintf(stderr, "earth: %s\n", msg);
			status = -EINVAL;
		}
	}
	return status;
}

const struct earth_set_value *earth_setting(enum earth_set id)
{
	if (!loaded[id]) {
		struct earth_set_value v;
		char ignore[8];
		earth_setting_parse(id, "", NULL, &v, ignore, sizeof(ignore));
		earth_setting_store(id, &v);
	}
	return &values[id];
}

const char *earth_setting_str(enum earth_set id)
{
	const struct earth_setting *s = &earth_settings[id];
	const struct earth_set_value *v = earth_setting(id);
	if (s->type != EARTH_SET_T_ENUM)
		return v->s;
	if (!v->given && !s->dflt)
		return NULL;
	static __thread char name[64];
	const char *c = s->choices;
	for (uint64_t i = 0; i < v->u; i++)
		c = strchr(c, '|') + 1;
	size_t n = strcspn(c, "|");
	snprintf(name, sizeof(name), "%.*s", (int)n, c);
	return name;
}

int earth_setting_by_flag(const char *key, size_t len)
{
	for (int i = 0; i < EARTH_SET_COUNT_; i++) {
		const char *f = earth_settings[i].flag;
		if (f && strlen(f) == len && !strncmp(f, key, len))
			return i;
	}
	return -1;
}

void earth_setting_range(enum earth_set id, char *buf, size_t len)
{
	const struct earth_setting *s = &earth_settings[id];
	switch (s->type) {
	case EARTH_SET_T_BOOL:
		snprintf(buf, len, "bool");
		break;
	case EARTH_SET_T_UINT:
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64, s->min, s->max);
		break;
	case EARTH_SET_T_COUNT:
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64 "|auto", s->min,
			 s->max);
		break;
	case EARTH_SET_T_POW2:
		snprintf(buf, len, "pow2:%" PRIu64 "..%" PRIu64, s->min,
			 s->max);
		break;
	case EARTH_SET_T_REAL:
		snprintf(buf, len, "real:%s%.15g..%.15g]",
			 (s->flags & EARTH_SET_MIN_EXCL) ? "(" : "[", s->dmin,
			 s->dmax);
		break;
	case EARTH_SET_T_ENUM:
		snprintf(buf, len, "%s", s->choices);
		break;
	case EARTH_SET_T_FILE:
		snprintf(buf, len, "file");
		break;
	case EARTH_SET_T_CPUS:
		snprintf(buf, len, "EU,SU:0..%" PRIu64, s->max);
		break;
	case EARTH_SET_T_HOSTPORT:
		snprintf(buf, len, "host:port");
		break;
	case EARTH_SET_T_HEX:
		snprintf(buf, len, "hex:%" PRIu64 "..%" PRIu64, s->min, s->max);
		break;
	}
}

void earth_settings_help(FILE *f)
{
	fprintf(f, "EARTH settings: environment variable, flag, type:range, "
		   "default (- for none), meaning\n");
	for (int i = 0; i < EARTH_SET_COUNT_; i++) {
		const struct earth_setting *s = &earth_settings[i];
		char flag[64], range[96];
		if (s->flag)
			snprintf(flag, sizeof(flag), "--earth-%s", s->flag);
		else
			snprintf(flag, sizeof(flag), "-");
		earth_setting_range((enum earth_set)i, range, sizeof(range));
		fprintf(f, "%-22s %-19s %-34s %-8s %s\n", s->env, flag, range,
			s->dflt ? s->dflt : "-", s->help);
	}
}

void earth_settings_flags(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < EARTH_SET_COUNT_ && at < len; i++) {
		const struct earth_setting *s = &earth_settings[i];
		if (!s->flag)
			continue;
		char range[96];
		earth_setting_range((enum earth_set)i, range, sizeof(range));
		int w = snprintf(buf + at, len - at, "%s--earth-%s%s%s",
				 at ? ", " : "", s->flag,
				 s->type == EARTH_SET_T_BOOL ? "" : "=",
				 s->type == EARTH_SET_T_BOOL ? "" : range);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	if (at < len)
		snprintf(buf + at, len - at, ", --earth-help, --earth-version");
}
