#!/usr/bin/env bash
# Runs every benchmark in BIN_DIR, prints their output, and writes
#   docs/results/metrics.csv  (benchmark,name,value,unit)
#   docs/results/bench.log    (everything they printed)
#   docs/results/machine.txt  (the machine the figures come from)
# QUICK=1: short runs. RESULTS_DIR overrides docs/results.
set -euo pipefail
bin_dir=${1:?usage: run.sh BIN_DIR}
out=${RESULTS_DIR:-docs/results}
mkdir -p "$out"
log=$out/bench.log; csv=$out/metrics.csv
: > "$log"
echo "benchmark,name,value,unit" > "$csv"
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
	echo "kernel: $(uname -r)"
	lscpu | grep -E '^ *(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L1d|L2|L3|Hypervisor)' || true
	echo "quick: ${QUICK:-0}"
} > "$out/machine.txt"
order="xcore_rtt queue_msg eu_overhead fib remote_ops"
status=0
done_list=""
for b in $order $(ls "$bin_dir"); do
	[ -x "$bin_dir/$b" ] || continue
	case " $done_list " in *" $b "*) continue ;; esac
	done_list="$done_list $b"
	echo "== $b" | tee -a "$log"
	if ! "$bin_dir/$b" 2>&1 | tee -a "$log" > "$out/.cur"; then
		echo "benchmark $b FAILED" | tee -a "$log"; status=1
	fi
	cat "$out/.cur"
	awk -v b="$b" '$1 == "METRIC" { print b "," $2 "," $3 "," $4 }' "$out/.cur" >> "$csv"
done
rm -f "$out/.cur"
echo "results: $csv, $log, $out/machine.txt"
exit $status
