/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what every benchmark shares: repetitions and QUICK mode, TSC
 * timing, medians, the configuration line, and METRIC output
 * ("METRIC <name> <value> <unit>", once in ns and once in TSC cycles).
 * Starting jobs, pair statistics, floors and plots: benchmarks/lib/.
 */
#ifndef EARTH_BENCH_H
#define EARTH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/settings.h"
#include "queues/q_arch.h"

/* 1 when QUICK=1 is set: shorter runs, same metrics. */
extern int bench_quick;
/* Repetitions per figure (median taken); >= 5. */
extern int bench_reps;

/* Reads QUICK and BENCH_REPS, prints the configuration line. */
void bench_init(const char *name, int argc, char **argv);

/* Median of n doubles (sorts v). */
double bench_median(double *v, int n);

/* Converts TSC ticks to ns. */
double bench_ns(double ticks);

/* METRIC <name> <ns> ns, then METRIC <name>.cycles <ticks> cycles. */
void bench_metric_ns(const char *name, double ns);
/* METRIC <name> <value> <unit>, as is. */
void bench_metric(const char *name, double value, const char *unit);

/* Pins the calling thread to cpu. */
void bench_pin(int cpu);
/* A node's setting (EARTH_NODE, EARTH_TRANSPORT, ...) as the node will read
 * it, before the node starts: the settings table's parser
 * (base/settings.c); a bad value ends the program with its message. */
const struct earth_set_value *bench_setting(enum earth_set id);
/* This process's node number (EARTH_NODE), -1 when it is not a node of a
 * job. */
int bench_node_id(void);
/* The two CPUs a node would use (EU, SU), from EARTH_CPUS or 0,1. */
void bench_cpus(int *eu, int *su);

/* Round trip of a cache line between cpu_a (the caller, pinned there for
 * the duration) and cpu_b: the floor of any EU<->SU exchange. */
double bench_xcore_rtt_ns(int cpu_a, int cpu_b, long rounds);

/* The speed of cpu now: ns per call of an empty function through a table
 * of (function, argument) pairs read in order, the least that running a
 * fiber costs, measured by the caller pinned to cpu for the duration
 * (median of 9 passes). The host's other tenants slow a vCPU by up to
 * 1.7x for seconds at a time (docs/results/README.md); figures of the
 * EU's loop are judged against this floor taken in the same moment. */
double bench_dispatch_ns(int cpu);

#endif /* EARTH_BENCH_H */
