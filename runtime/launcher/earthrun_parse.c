/* SPDX-License-Identifier: MIT */
/*
 * earthrun: the command line (and EARTH_GMEM_MB) into struct er_opts, every
 * value checked. A usage error says what to give and exits 2.
 */
#include "earthrun.h"
#include "base/settings.h"
#include "net/shm_layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parse_option: the program starts here (else 0, or an exit status). */
#define PROGRAM_STARTS (-1)

#ifndef EARTH_VERSION
#error "EARTH_VERSION (the VERSION file) must be defined"
#endif

static void usage(FILE *to)
{
	fprintf(
	    to,
	    "usage: earthrun -n N [options] [--] program [args...]\n"
	    "  -n N, -nN, -np N  number of nodes (1..%d), one process each\n"
	    "  --prefix          prefix every output line with \"[node] \"\n"
	    "  --ring-kb=K       bytes of each node-to-node ring, in KiB "
	    "(power of two, 64..65536; default 1024)\n"
	    "  --transport=T     shm (shared memory, the default), tcp "
	    "(loopback TCP, as between hosts) or ucx (UCX: UCX_TLS picks "
	    "the lanes)\n"
	    "  --gmem-mb=M       global memory per node, in MiB (0..%llu, "
	    "nodes x M <= %llu; default EARTH_GMEM_MB or %d)\n"
	    "  --remote=R        shm: GET/DATA/BLKMOV on global memory "
	    "served direct (one-sided, the default) or su (by the remote "
	    "SU)\n"
	    "  --eus=K           Execution Units of every node: 1..%d, or auto "
	    "(the host's cores split over the nodes, one per node kept for "
	    "its SU); sets EARTH_EUS\n"
	    "  --stats           every node prints its statistics and time "
	    "breakdown at exit\n"
	    "  --stats-json=FILE the statistics of all nodes as one JSON "
	    "file\n"
	    "  --trace=FILE      the job's timeline as Chrome trace-event "
	    "JSON (Perfetto; earthtrace draws it)\n"
	    "  --help, --version this text; earthrun's version\n"
	    "Every option with a value takes it as --opt=VALUE or --opt "
	    "VALUE.\n"
	    "Old spellings kept as aliases: --stats=json FILE (for "
	    "--stats-json).\n",
	    MAX_NODES, GMEM_SPAN >> 20, GMEM_SPAN >> 20, GMEM_DEFAULT_MB,
	    (int)earth_settings[EARTH_SET_EUS].max);
}

static _Noreturn void usage_error(void)
{
	usage(stderr);
	exit(2);
}

/* MiB of global memory per node: 0..GMEM_SPAN in MiB; -1 if malformed. */
static long parse_gmem_mb(const char *v)
{
	char *end;
	errno = 0;
	long mb = strtol(v, &end, 10);
	if (!*v || *end || errno || mb < 0 ||
	    (unsigned long long)mb > (GMEM_SPAN >> 20))
		return -1;
	return mb;
}

static int parse_nodes(const char *v, struct er_opts *o)
{
	char *end;
	o->nodes = strtol(v, &end, 10);
	if (*end || o->nodes < 1 || o->nodes > MAX_NODES) {
		fprintf(stderr, "earthrun: -n %s: give 1..%d nodes\n", v,
			MAX_NODES);
		return 2;
	}
	return 0;
}

static int parse_ring_kb(const char *v, struct er_opts *o)
{
	char *end;
	o->ring_kb = strtol(v, &end, 10);
	if (*end || o->ring_kb < 64 || o->ring_kb > 65536 ||
	    (o->ring_kb & (o->ring_kb - 1))) {
		fprintf(stderr,
			"earthrun: --ring-kb %s: give a power of two "
			"from 64 to 65536\n",
			v);
		return 2;
	}
	return 0;
}

static int parse_transport(const char *v, struct er_opts *o)
{
	if (!strcmp(v, "tcp")) {
		o->tcp = 1;
	} else if (!strcmp(v, "ucx")) {
		o->tcp = o->ucx = 1;
	} else if (strcmp(v, "shm")) {
		fprintf(stderr,
			"earthrun: --transport %s: give shm, tcp or ucx\n", v);
		return 2;
	}
	return 0;
}

static int parse_gmem_opt(const char *v, struct er_opts *o)
{
	o->gmem_mb = parse_gmem_mb(v);
	if (o->gmem_mb < 0) {
		fprintf(stderr,
			"earthrun: --gmem-mb %s: give MiB from 0 to "
			"%llu\n",
			v, GMEM_SPAN >> 20);
		return 2;
	}
	return 0;
}

static int parse_remote(const char *v, struct er_opts *o)
{
	o->remote = v;
	if (strcmp(v, "su") && strcmp(v, "direct")) {
		fprintf(stderr, "earthrun: --remote %s: give su or direct\n",
			v);
		return 2;
	}
	return 0;
}

/* --eus: checked by the node's own table (EARTH_EUS), passed on as is. */
static int parse_eus(const char *v, struct er_opts *o)
{
	char what[160], msg[512];
	struct earth_set_value val;
	snprintf(what, sizeof(what), "--eus %.100s", v);
	if (!*v) {
		fprintf(stderr, "earthrun: --eus: give a number of EUs or "
				"auto\n");
		return 2;
	}
	if (earth_setting_parse(EARTH_SET_EUS, what, v, &val, msg,
				sizeof(msg)) != 0) {
		fprintf(stderr, "earthrun: %s\n", msg);
		return 2;
	}
	o->eus = v;
	return 0;
}

/* The options that take a value, and where it goes. */
enum er_opt {
	OPT_NODES,
	OPT_RING,
	OPT_TRANSPORT,
	OPT_GMEM,
	OPT_REMOTE,
	OPT_EUS,
	OPT_STATS_JSON,
	OPT_TRACE
};

static const struct {
	const char *name;
	enum er_opt id;
} valued[] = {
    {"-n", OPT_NODES},
    {"-np", OPT_NODES},
    {"--nodes", OPT_NODES},
    {"--ring-kb", OPT_RING},
    {"--transport", OPT_TRANSPORT},
    {"--gmem-mb", OPT_GMEM},
    {"--remote", OPT_REMOTE},
    {"--eus", OPT_EUS},
    {"--stats-json", OPT_STATS_JSON},
    {"--stats=json", OPT_STATS_JSON}, /* old spelling, kept */
    {"--trace", OPT_TRACE},
};

static int set_value(enum er_opt id, const char *v, struct er_opts *o)
{
	switch (id) {
	case OPT_NODES:
		return parse_nodes(v, o);
	case OPT_RING:
		return parse_ring_kb(v, o);
	case OPT_TRANSPORT:
		return parse_transport(v, o);
	case OPT_GMEM:
		return parse_gmem_opt(v, o);
	case OPT_REMOTE:
		return parse_remote(v, o);
	case OPT_EUS:
		return parse_eus(v, o);
	case OPT_STATS_JSON:
		if (!*v) {
			fprintf(stderr, "earthrun: --stats-json: give the "
					"file to write\n");
			return 2;
		}
		o->stats_json = v;
		return 0;
	case OPT_TRACE:
		if (!*v) {
			fprintf(stderr,
				"earthrun: --trace: give the file to write\n");
			return 2;
		}
		o->trace = v;
		return 0;
	}
	return 2;
}

/* An option with a value in any of its forms: "--opt=V", "--opt V", and for
 * -n also "-nV". 1 when a[] named one (*rc: its status), else 0. */
static int valued_option(int argc, char **argv, int *i, struct er_opts *o,
			 int *rc)
{
	const char *a = argv[*i];
	for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
		size_t n = strlen(valued[k].name);
		if (strncmp(a, valued[k].name, n))
			continue;
		const char *v;
		if (!a[n]) {
			if (*i + 1 >= argc) {
				fprintf(stderr,
					"earthrun: %s: give its value\n", a);
				*rc = 2;
				return 1;
			}
			v = argv[++*i];
		} else if (a[n] == '=') {
			v = a + n + 1;
		} else if (valued[k].id == OPT_NODES && n == 2 && a[n] >= '0' &&
			   a[n] <= '9') {
			v = a + n; /* -n4 */
		} else {
			continue;
		}
		*rc = set_value(valued[k].id, v, o);
		return 1;
	}
	return 0;
}

/* The option at argv[*i] (and its value, *i moved past it): 0 when taken,
 * PROGRAM_STARTS when the program starts at the new *i, else the status to
 * exit with. */
static int parse_option(int argc, char **argv, int *i, struct er_opts *o)
{
	const char *a = argv[*i];
	int rc;
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		usage(stdout);
		exit(0);
	}
	if (!strcmp(a, "--version")) {
		printf("earthrun (EARTH) %s\n", EARTH_VERSION);
		exit(0);
	}
	if (!strcmp(a, "--prefix")) {
		o->prefix = 1;
		return 0;
	}
	if (!strcmp(a, "--stats")) {
		o->stats = 1;
		return 0;
	}
	if (valued_option(argc, argv, i, o, &rc))
		return rc;
	if (!strncmp(a, "--stats=", 8)) {
		fprintf(stderr,
			"earthrun: %s: give --stats, or --stats-json=FILE\n",
			a);
		return 2;
	}
	if (!strcmp(a, "--")) {
		++*i;
		return PROGRAM_STARTS;
	}
	if (a[0] == '-') {
		fprintf(stderr,
			"earthrun: unknown option '%s' (earthrun --help lists "
			"them)\n",
			a);
		usage_error();
	}
	return PROGRAM_STARTS;
}

int er_parse(int argc, char **argv, struct er_opts *o)
{
	int i = 1, rc = 0;
	*o = (struct er_opts){.ring_kb = 1024, .gmem_mb = GMEM_DEFAULT_MB};
	/* The node's settings earthrun reads too, through the node's table
	 * (base/settings.h): the global memory per node (--gmem-mb wins),
	 * and whether the nodes keep address-space randomisation
	 * (earthrun_spawn.c). */
	static const enum earth_set from_env[] = {EARTH_SET_GMEM_MB,
						  EARTH_SET_ASLR};
	for (size_t k = 0; k < sizeof(from_env) / sizeof(from_env[0]); k++) {
		char msg[512];
		if (earth_setting_load(from_env[k], msg, sizeof(msg)) != 0) {
			fprintf(stderr, "earthrun: %s\n", msg);
			return 2;
		}
	}
	if (earth_setting_given(EARTH_SET_GMEM_MB))
		o->gmem_mb = (long)earth_setting_u64(EARTH_SET_GMEM_MB);
	while (i < argc && (rc = parse_option(argc, argv, &i, o)) == 0)
		i++;
	if (rc > 0)
		return rc;
	if (o->nodes < 1 || i >= argc)
		usage_error();
	o->prog = argv + i;
	if ((unsigned long long)(o->nodes * o->gmem_mb) > (GMEM_SPAN >> 20)) {
		fprintf(stderr,
			"earthrun: %ld nodes x %ld MiB of global memory "
			"exceed the %llu MiB the address range holds: "
			"give a smaller --gmem-mb\n",
			o->nodes, o->gmem_mb, GMEM_SPAN >> 20);
		return 2;
	}
	return 0;
}
