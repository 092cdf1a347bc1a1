/* SPDX-License-Identifier: MIT */
/*
 * options.c - run-time settings: defaults, EARTH_* environment variables,
 * --earth-* command-line flags (docs/user-guide.md lists them all).
 */
#define EARTH_INTERNAL 1
#include "node/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_u32(const char *what, const char *s, uint32_t max,
		     uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > max || s[0] == '-') {
		fprintf(stderr,
			"earth: %s: '%s' is not a whole number from 0 to %u\n",
			what, s, max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int set_queue(struct earth_options *o, const char *what, const char *v)
{
	if (!strcmp(v, "sw"))
		o->queue_mode = EARTH_QUEUE_SW;
	else if (!strcmp(v, "hwq"))
		o->queue_mode = EARTH_QUEUE_HWQ;
	else {
		fprintf(stderr,
			"earth: %s: unknown queue mode '%s' (use sw or hwq)\n",
			what, v);
		return -EINVAL;
	}
	return 0;
}

const char *const earth_mode_names[3] = {
	[EARTH_MODE_DUAL] = "dual",
	[EARTH_MODE_SINGLE_IRQ] = "single-interrupt",
	[EARTH_MODE_SINGLE_POLL] = "single-poll",
};

static int set_mode(struct earth_options *o, const char *what, const char *v)
{
	for (int m = 0; m < 3; m++)
		if (!strcmp(v, earth_mode_names[m])) {
			o->node_mode = (enum earth_node_mode)m;
			return 0;
		}
	fprintf(stderr,
		"earth: %s: unknown node mode '%s' (use dual, "
		"single-interrupt or single-poll)\n",
		what, v);
	return -EINVAL;
}

static int set_slots(struct earth_options *o, const char *what, const char *v)
{
	uint32_t n;
	if (parse_u32(what, v, 1u << 24, &n))
		return -EINVAL;
	if (n < 8 || (n & (n - 1))) {
		fprintf(stderr,
			"earth: %s: %u slots: use a power of two >= 8\n", what,
			n);
		return -EINVAL;
	}
	o->queue_slots = n;
	return 0;
}

static int set_cpus(struct earth_options *o, const char *what, const char *v)
{
	uint32_t eu, su;
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", v);
	char *comma = strchr(buf, ',');
	if (!comma) {
		fprintf(stderr, "earth: %s: '%s': give two CPUs, EU,SU (e.g. 0,1)\n",
			what, v);
		return -EINVAL;
	}
	*comma = 0;
	if (parse_u32(what, buf, 4095, &eu) || parse_u32(what, comma + 1, 4095, &su))
		return -EINVAL;
	o->eu_cpu = (int)eu;
	o->su_cpu = (int)su;
	return 0;
}

static int set_flag(const char *what, const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off") ||
		 !*v)
		*out = 0;
	else {
		fprintf(stderr, "earth: %s: '%s': use 1 or 0\n", what, v);
		return -EINVAL;
	}
	return 0;
}

/* One setting by key; `what` names its source for messages. */
static int apply(struct earth_options *o, const char *key, const char *what,
		 const char *v)
{
	if (!strcmp(key, "queue"))
		return set_queue(o, what, v);
	if (!strcmp(key, "hwq-latency"))
		return parse_u32(what, v, 100000000, &o->hwq_latency_ns);
	if (!strcmp(key, "queue-slots"))
		return set_slots(o, what, v);
	if (!strcmp(key, "cpus"))
		return set_cpus(o, what, v);
	if (!strcmp(key, "spin-us"))
		return parse_u32(what, v, 10000000, &o->spin_us);
	if (!strcmp(key, "stats"))
		return set_flag(what, v, &o->print_stats);
	if (!strcmp(key, "mode"))
		return set_mode(o, what, v);
	return 1; /* not ours */
}

static const struct {
	const char *env, *key;
} env_keys[] = {
	{"EARTH_QUEUE", "queue"},         {"EARTH_HWQ_LATENCY_NS", "hwq-latency"},
	{"EARTH_QUEUE_SLOTS", "queue-slots"}, {"EARTH_CPUS", "cpus"},
	{"EARTH_SPIN_US", "spin-us"},     {"EARTH_STATS", "stats"},
	{"EARTH_MODE", "mode"},
};

static int env_status;

void earth_options_default(struct earth_options *o)
{
	memset(o, 0, sizeof(*o));
	o->queue_mode = EARTH_QUEUE_HWQ;
	o->queue_slots = EARTH_QUEUE_SLOTS_DEFAULT;
	o->eu_cpu = o->su_cpu = -1;
	o->spin_us = EARTH_SPIN_US_DEFAULT;
	env_status = 0;
	for (size_t i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++) {
		const char *v = getenv(env_keys[i].env);
		if (v && apply(o, env_keys[i].key, env_keys[i].env, v) < 0)
			env_status = -EINVAL;
	}
}

int earth_options_parse(struct earth_options *o, int *argc, char **argv)
{
	int status = env_status, out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--earth-", 8) != 0) {
			argv[out++] = argv[i];
			continue;
		}
		char key[64];
		const char *eq = strchr(a + 8, '=');
		size_t len = eq ? (size_t)(eq - (a + 8)) : strlen(a + 8);
		snprintf(key, sizeof(key), "%.*s", (int)len, a + 8);
		const char *v = eq ? eq + 1 : "1";
		int r = apply(o, key, a, v);
		if (r > 0) {
			fprintf(stderr,
				"earth: unknown option '%s' (known: "
				"--earth-queue=sw|hwq, --earth-hwq-latency=NS, "
				"--earth-queue-slots=N, --earth-cpus=EU,SU, "
				"--earth-spin-us=US, --earth-stats, "
				"--earth-mode=dual|single-interrupt|"
				"single-poll)\n",
				a);
			r = -EINVAL;
		}
		if (r < 0)
			status = -EINVAL;
	}
	argv[out] = NULL;
	*argc = out;
	return status;
}
