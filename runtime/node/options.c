/* SPDX-License-Identifier: MIT */
/*
 * options.c - struct earth_options from the settings table
 * (base/settings.h): defaults, EARTH_* environment variables, --earth-*
 * flags (--earth-X=V or --earth-X V), --earth-help, --earth-version
 * (docs/user-guide.md lists them all).
 */
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "base/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The VERSION file, from the Makefile. */
#ifndef EARTH_VERSION
#define EARTH_VERSION "unknown"
#endif

const char *const earth_mode_names[3] = {
    [EARTH_MODE_DUAL] = "dual",
    [EARTH_MODE_SINGLE_IRQ] = "single-interrupt",
    [EARTH_MODE_SINGLE_POLL] = "single-poll",
};

/* A parsed value of an EARTH_SET_OPTION setting into its field. */
static void to_field(struct earth_options *o, enum earth_set id,
		     const struct earth_set_value *v)
{
	switch (id) {
	case EARTH_SET_QUEUE: /* "sw|hwq" */
		o->queue_mode = v->u ? EARTH_QUEUE_HWQ : EARTH_QUEUE_SW;
		break;
	case EARTH_SET_HWQ_LATENCY_NS:
		o->hwq_latency_ns = (uint32_t)v->u;
		break;
	case EARTH_SET_QUEUE_SLOTS:
		o->queue_slots = (uint32_t)v->u;
		break;
	case EARTH_SET_CPUS:
		o->eu_cpu = v->eu;
		o->su_cpu = v->su;
		break;
	case EARTH_SET_SPIN_US:
		o->spin_us = (uint32_t)v->u;
		break;
	case EARTH_SET_STATS:
		o->print_stats = (int)v->u;
		break;
	case EARTH_SET_MODE: /* "dual|single-interrupt|single-poll" */
		o->node_mode = (enum earth_node_mode)v->u;
		break;
	default:
		break;
	}
}

static int env_status;

void earth_options_default(struct earth_options *o)
{
	memset(o, 0, sizeof(*o));
	env_status = 0;
	for (int i = 0; i < EARTH_SET_COUNT_; i++) {
		if (!(earth_settings[i].flags & EARTH_SET_OPTION))
			continue;
		char msg[512];
		if (earth_setting_load((enum earth_set)i, msg, sizeof(msg))) {
			fprintf(stderr, "earth: %s\n", msg);
			env_status = -EINVAL;
		}
		to_field(o, (enum earth_set)i,
			 earth_setting((enum earth_set)i));
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
		if (!strcmp(a, "--earth-help")) {
			earth_settings_help(stdout);
			fflush(stdout);
			exit(0);
		}
		if (!strcmp(a, "--earth-version")) {
			printf("EARTH runtime %s\n", EARTH_VERSION);
			fflush(stdout);
			exit(0);
		}
		const char *eq = strchr(a + 8, '=');
		size_t len = eq ? (size_t)(eq - (a + 8)) : strlen(a + 8);
		int id = earth_setting_by_flag(a + 8, len);
		if (id < 0) {
			char known[1024];
			earth_settings_flags(known, sizeof(known));
			fprintf(stderr,
				"earth: unknown option '%s' (known: %s)\n", a,
				known);
			status = -EINVAL;
			continue;
		}
		/* --earth-X=V, or --earth-X V; a bool alone is "1":
		 * --earth-stats. */
		const char *v = eq ? eq + 1 : "1";
		if (!eq && earth_settings[id].type != EARTH_SET_T_BOOL) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "earth: %s: give its value\n",
					a);
				status = -EINVAL;
				continue;
			}
			v = argv[++i];
		}
		struct earth_set_value val;
		char msg[512];
		if (earth_setting_parse((enum earth_set)id, a, v, &val, msg,
					sizeof(msg))) {
			fprintf(stderr, "earth: %s\n", msg);
			status = -EINVAL;
			continue;
		}
		earth_setting_store_flag((enum earth_set)id, &val);
		to_field(o, (enum earth_set)id, &val);
	}
	argv[out] = NULL;
	*argc = out;
	return status;
}
