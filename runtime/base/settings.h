/* SPDX-License-Identifier: MIT */
/*
 * settings.h - every EARTH_* environment variable and --earth-* flag of a
 * node, declared once in one table (settings.c): name, flag, type, range,
 * default and one line of help. The node validates them all when it
 * starts (earth_options_default for the settings of struct earth_options,
 * earth_run for the rest) and keeps the values here; every layer reads
 * them through the getters. `--earth-help` prints the table, and
 * docs/user-guide.md's "Settings" table is checked against it
 * (tests/t_settings.c). Outside the node, earthrun reads EARTH_GMEM_MB
 * and EARTH_ASLR through it, Threaded-C's report EARTH_TC_STATS (after
 * earth_run loaded it), and the benchmarks the node's settings they look
 * at before the node starts (benchmarks/bench.h, bench_setting). The
 * launchers' variables (SLURM_*, OMPI_*, PMI_*, PMIX_*) are not here.
 */
#ifndef EARTH_BASE_SETTINGS_H
#define EARTH_BASE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One per setting; the index into the table. */
enum earth_set {
	/* struct earth_options (the public API), also as --earth-* flags */
	EARTH_SET_QUEUE,
	EARTH_SET_HWQ_LATENCY_NS,
	EARTH_SET_QUEUE_SLOTS,
	EARTH_SET_CPUS,
	EARTH_SET_SPIN_US,
	EARTH_SET_STATS,
	EARTH_SET_MODE,
	/* the node's, read when earth_run starts */
	EARTH_SET_EUS,
	EARTH_SET_TIMING,
	EARTH_SET_EU_SIGNALS,
	EARTH_SET_SU_DOZE,
	EARTH_SET_SHARED_SPIN_US,
	EARTH_SET_TRACE,
	EARTH_SET_TRACE_EVENTS,
	EARTH_SET_TRACE_EPOCH_NS,
	EARTH_SET_TRACE_PARTS,
	EARTH_SET_STATS_JSON,
	EARTH_SET_STATS_PARTS,
	EARTH_SET_PARTS_ID,
	EARTH_SET_NODE,
	EARTH_SET_NODES,
	EARTH_SET_LOCAL_NODE,
	EARTH_SET_LOCAL_NODES,
	EARTH_SET_TRANSPORT,
	EARTH_SET_SHM_FD,
	EARTH_SET_RENDEZVOUS,
	EARTH_SET_RENDEZVOUS_FD,
	EARTH_SET_JOB_SECRET,
	EARTH_SET_CONNECT_TIMEOUT,
	EARTH_SET_GMEM_MB,
	EARTH_SET_REMOTE,
	EARTH_SET_NET_LATENCY_NS,
	EARTH_SET_NET_BW_MBPS,
	EARTH_SET_PEER_QUEUE_MB,
	EARTH_SET_PEER_STALL_S,
	EARTH_SET_ASLR,
	EARTH_SET_TC_STATS,
	EARTH_SET_DSM_MB,
	EARTH_SET_DSM_PAGE,
	EARTH_SET_DSM_STACK_KB,
	EARTH_SET_DSM_REFRESH,
	EARTH_SET_DSM_HOME_KEEP,
	EARTH_SET_DSM_GRANT_PAGES,
	EARTH_SET_DSM_LOCK_PRETWIN,
	EARTH_SET_DSM_CLAIM_AHEAD,
	EARTH_SET_DSM_FAULTS,
	EARTH_SET_COUNT_
};

enum earth_set_type {
	EARTH_SET_T_BOOL, /* 1/yes/on or 0/no/off                       */
	EARTH_SET_T_UINT, /* whole number min..max                      */
	EARTH_SET_T_POW2, /* power of two min..max                      */
	EARTH_SET_T_REAL, /* number min..max (above min if MIN_EXCL)    */
	EARTH_SET_T_ENUM, /* one of choices "a|b|c"; the value is its index */
	EARTH_SET_T_FILE, /* a path                                     */
	EARTH_SET_T_CPUS, /* EU,SU: two CPU numbers 0..max              */
	EARTH_SET_T_HOSTPORT, /* host:port or [v6]:port                     */
	EARTH_SET_T_HEX,      /* min..max hex digits, an even number        */
	EARTH_SET_T_COUNT,    /* whole number min..max, or auto (the value 0) */
};

/* earth_setting.flags */
#define EARTH_SET_OPTION 1u   /* a field of struct earth_options      */
#define EARTH_SET_MIN_EXCL 2u /* REAL: above min, not equal           */
#define EARTH_SET_NONEMPTY 4u /* set but empty is an error, not unset */

struct earth_setting {
	const char *env;  /* EARTH_QUEUE                                  */
	const char *flag; /* "queue" for --earth-queue, or NULL           */
	enum earth_set_type type;
	unsigned flags;
	uint64_t min, max;   /* UINT, POW2, HEX digits, CPUS (max)           */
	double dmin, dmax;   /* REAL                                         */
	const char *choices; /* ENUM: "sw|hwq"                               */
	const char *dflt;    /* the default as a value, or NULL: unset        */
	const char *want;    /* what a bad value is told, "%s" = the value;
			      * NULL: from the type and range                */
	const char *help;    /* one line                                     */
};

extern const struct earth_setting earth_settings[EARTH_SET_COUNT_];

/* A setting's value. */
struct earth_set_value {
	bool given;    /* set in the environment or by a flag (not empty)  */
	uint64_t u;    /* BOOL, UINT, POW2, ENUM (the index), COUNT (0: auto) */
	double d;      /* REAL                                             */
	int eu, su;    /* CPUS; -1 when not given                          */
	const char *s; /* FILE, HOSTPORT, HEX: the text, NULL when unset */
};

/*
 * Parses v (NULL or "": the default) as setting id. On a bad value writes
 * "<what>: <why, with the allowed range>" into msg and returns -EINVAL;
 * `what` names the source: "EARTH_QUEUE='bogus'" or "--earth-queue=bogus".
 * out->s points into v or the table.
 */
int earth_setting_parse(enum earth_set id, const char *what, const char *v,
			struct earth_set_value *out, char *msg, size_t len);

/*
 * Reads every setting but the EARTH_SET_OPTION ones from the environment
 * into the table, printing "earth: <msg>" for each bad one. 0, or -EINVAL.
 * earth_run calls it first.
 */
int earth_settings_load(void);

/* One setting from the environment into the table; 0 or -EINVAL with the
 * message in msg (the emulated network, which tests configure without a
 * node). */
int earth_setting_load(enum earth_set id, char *msg, size_t len);

/* Stores a parsed value (copying its text). */
void earth_setting_store(enum earth_set id, const struct earth_set_value *v);
/* The same for a value given as --earth-<flag>: earth_settings_load then
 * leaves it (a setting outside struct earth_options that has a flag:
 * --earth-trace, --earth-stats-json). */
void earth_setting_store_flag(enum earth_set id,
			      const struct earth_set_value *v);

/* The value kept: of the last load or store, else the default. */
const struct earth_set_value *earth_setting(enum earth_set id);
static inline uint64_t earth_setting_u64(enum earth_set id)
{
	return earth_setting(id)->u;
}
static inline double earth_setting_real(enum earth_set id)
{
	return earth_setting(id)->d;
}
static inline bool earth_setting_on(enum earth_set id)
{
	return earth_setting(id)->u != 0;
}
static inline bool earth_setting_given(enum earth_set id)
{
	return earth_setting(id)->given;
}
/* FILE, HOSTPORT, HEX: the text or NULL; ENUM: the choice's name. */
const char *earth_setting_str(enum earth_set id);

/* The setting with flag --earth-<key> (key: the flag's name without
 * "--earth-" and "=..."), or -1. */
int earth_setting_by_flag(const char *key, size_t len);

/* The type and range column: "0..100000000", "sw|hwq", "bool", ... */
void earth_setting_range(enum earth_set id, char *buf, size_t len);

/* The table as --earth-help prints it: a header, then one line a setting:
 * variable, --earth-flag or -, type/range, default or -, help. */
void earth_settings_help(FILE *f);

/* The --earth-* flags for a message: "--earth-queue=sw|hwq, ...". */
void earth_settings_flags(char *buf, size_t len);

#endif
