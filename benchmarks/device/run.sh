#!/usr/bin/env bash
# run.sh - on a larger machine, the benchmarks pack.sh packed beside this
# script, with the libraries packed with them; every METRIC line into
# $OUT/metrics.txt, each driver's output into $OUT/<driver>.log, and the
# machine into $OUT/machine.txt:
#   smp        a node of k EUs against oneTBB, k = 1 .. SMP_KMAX (default:
#              the cores, at most 16: the last with the SU dozing on a
#              core an EU shares), full sizes unless QUICK=1
#   dsm_ops    the shared-memory figures that need four free cores
#   dsm_fault  a fault's kernel part by protections and by userfaultfd
#   tc_dsm     latency hiding with fibers and with program threads on 2
#              nodes (full sizes; F = 1, 8, 16 and k = 1, 8, at 20 and
#              100 us: the figures the targets name; TC_DSM_LATS,
#              TC_DSM_FS and TC_DSM_KS set others, as for the driver)
#   parmacs    the PARMACS programs of tests/parmacs on 1, 2, 4, ... nodes
#              against as many POSIX threads: wall-clock speedups
#   dsm_trace  where the latency-hiding programs' time goes, at 100 us
#              one way, 3 repetitions: dsm_ops's `-m hidden` with 1, 8
#              and 16 threads a node (hidden.k<k>) and tc_dsm's Jacobi
#              with 1 and 8 fiber chains a node (tc_jacobi.f<k>); each
#              job's statistics ($OUT/<job>.json) and timeline
#              ($OUT/<job>.trace.json.gz, Chrome trace-event JSON)
#   xcore_rtt  the cache-line round trip between two CPUs, before and after
# Each driver gets at most RUN_LIMIT seconds (default 240). RUN=NAME runs
# one of them (smp, dsm_ops, dsm_fault, tc_dsm, parmacs, dsm_trace).
# Usage: OUT=DIR run.sh
set -u
d=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$d/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UCX_MODULE_DIR=$d/lib/ucx
export QUICK=${QUICK:-0}
limit=${RUN_LIMIT:-240}
cores=$(nproc)
kmax=$((cores < 16 ? cores : 16))
export SMP_KMAX=${SMP_KMAX:-$kmax}
{
	echo "date: $(date -u +%FT%TZ)"
	lscpu
	echo "nproc: $cores"
	echo "numa: $(find /sys/devices/system/node -maxdepth 1 -name "node[0-9]*" 2>/dev/null | wc -l) nodes"
	echo "kernel: $(uname -r)"
	echo "load: $(cat /proc/loadavg)"
} >"$OUT/machine.txt"
status=0
step() { # name command...
	local name=$1
	shift
	case "${RUN:-all}" in all | "$name") ;; *) return 0 ;; esac
	echo "== $name ($(date -u +%T))"
	timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
	local st=$?
	[ $st -eq 0 ] || { echo "run: $name FAILED (status $st)"; status=1; }
	grep '^METRIC' "$OUT/$name.log" >>"$OUT/metrics.txt"
	tail -n 3 "$OUT/$name.log"
}
: >"$OUT/metrics.txt"
step xcore_rtt "$d/rel/bench/xcore_rtt"
step smp "$d/rel/bench/smp"
step dsm_ops "$d/rel/bench/dsm_ops"
step dsm_fault "$d/rel/bench/dsm_fault"
step tc_dsm env QUICK=0 TC_DSM_LATS="${TC_DSM_LATS:-20 100}" \
	TC_DSM_FS="${TC_DSM_FS:-8 16}" TC_DSM_KS="${TC_DSM_KS:-8}" \
	RESULTS_DIR="$OUT" "$d/rel/bench/tc_dsm"
step parmacs "$d/rel/bench/parmacs"
# Latency-hiding jobs of dsm_ops and tc_dsm again, observed (the drivers
# run them unobserved: their figures stay their own).
observe() { # name program args...: one job at 100 us, observed
	local name=$1 st=0
	shift
	EARTH_NET_LATENCY_NS=100000 "$d/rel/bin/earthrun" -n 2 \
		--stats-json="$OUT/$name.json" --trace="$OUT/$name.trace.json" \
		"$@" || st=1
	gzip -f "$OUT/$name.trace.json" || st=1
	return $st
}
dsm_trace() {
	local k st=0
	for k in 1 8 16; do
		observe "hidden.k$k" "$d/rel/bench/progs/dsm_ops_prog" \
			-m hidden -n 256 -r 3 -k "$k" || st=1
	done
	for k in 1 8; do
		observe "tc_jacobi.f$k" "$d/rel/bench/progs/tc_dsm_hide" \
			-m jacobi -f "$k" -r 3 || st=1
	done
	return $st
}
export -f observe dsm_trace
export d OUT
step dsm_trace bash -c dsm_trace
echo "run: $(grep -c . "$OUT/metrics.txt") METRIC lines in $OUT"
exit $status
