#!/usr/bin/env bash
# Runs every benchmark: each program in BIN_DIR (the order below first),
# then the benchmark programs against their sequential twins
# (benchmarks/apps/run_apps.sh) and the paper's Table 3 counters
# (threaded-c/bench/table3.sh). Writes, in the results folder,
#   metrics.csv  (benchmark,name,value,unit): every METRIC line of them all
#   bench.log    (everything they printed)
#   machine.txt  (the machine the figures come from)
# and whatever the benchmarks write there themselves (ll7, remote_load,
# apps, table3). The results folder is RESULTS_DIR, else docs/results
# (`make bench` always names one: a folder of its own per run,
# docs/results only when asked). While it runs it prints every METRIC
# line as it comes, at the start of its line ("METRIC name value unit",
# so `make bench | grep ^METRIC` lists them), and on lines of their own
# which benchmark started and how long each took; the rest of their
# output, and failures, in bench.log. QUICK=1: short runs.
# Usage: benchmarks/run.sh BIN_DIR   (from the repository root; BUILD: the
# build folder, default the one BIN_DIR is in)
set -euo pipefail
bin_dir=${1:?usage: run.sh BIN_DIR}
export BUILD=${BUILD:-$(dirname "$(dirname "$bin_dir")")}
export EARTH_BUILD=${EARTH_BUILD:-$(cd "$BUILD" && pwd)}
out=${RESULTS_DIR:-docs/results}
mkdir -p "$out"
export RESULTS_DIR=$out
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

# name and command of each benchmark, in the order they run
names=() cmds=()
order="xcore_rtt queue_msg eu_overhead fib remote_ops"
for b in $order $(ls "$bin_dir"); do
	[ -x "$bin_dir/$b" ] && [ -f "$bin_dir/$b" ] || continue
	case " ${names[*]-} " in *" $b "*) continue ;; esac
	names+=("$b") cmds+=("$bin_dir/$b")
done
names+=(apps) cmds+=(benchmarks/apps/run_apps.sh)
names+=(table3) cmds+=(threaded-c/bench/table3.sh)

total=${#names[@]}
echo "run.sh: $total benchmarks into $out (QUICK=${QUICK:-0}); full output: $log"
status=0
t_all=$SECONDS
for i in "${!names[@]}"; do
	b=${names[$i]}
	echo "== $b" >> "$log"
	printf '[%d/%d] %s: started %s\n' $((i + 1)) "$total" "$b" "$(date +%H:%M:%S)"
	t0=$SECONDS
	# The benchmark's output to the log and to .cur as it comes; METRIC
	# lines to standard output too, failures to standard error.
	if ! "${cmds[$i]}" 2>&1 | tee -a "$log" > "$out/.cur" >(
		while IFS= read -r line; do
			case $line in
			METRIC\ *) printf '%s\n' "$line" ;;
			*FAILED* | *WRONG* | *rror*) printf '%s: %s\n' "$b" "$line" >&2 ;;
			esac
		done
	); then
		echo "benchmark $b FAILED" | tee -a "$log" >&2; status=1
	fi
	wait
	n=$(awk '$1 == "METRIC"' "$out/.cur" | wc -l)
	printf '[%d/%d] %s: done in %ds, %d METRIC lines\n' $((i + 1)) "$total" \
		"$b" $((SECONDS - t0)) "$n"
	awk -v b="$b" '$1 == "METRIC" { print b "," $2 "," $3 "," $4 }' "$out/.cur" >> "$csv"
done
rm -f "$out/.cur"
echo "run.sh: $total benchmarks in $((SECONDS - t_all))s; results: $csv, $log, $out/machine.txt"
exit $status
