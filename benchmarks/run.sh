#!/usr/bin/env bash
# Runs every benchmark in BIN_DIR and writes, in the results folder,
#   metrics.csv  (benchmark,name,value,unit)
#   bench.log    (everything they printed)
#   machine.txt  (the machine the figures come from)
# and whatever the benchmarks write there themselves (ll7, remote_load).
# The results folder is RESULTS_DIR, else docs/results (`make bench` always
# names one: a folder of its own per run, docs/results only when asked).
# While it runs it prints which benchmark started, each METRIC line as it
# comes with the seconds since that benchmark started, and how long each
# took; the rest of their output is in bench.log. QUICK=1: short runs.
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
list=""
for b in $order $(ls "$bin_dir"); do
	[ -x "$bin_dir/$b" ] && [ -f "$bin_dir/$b" ] || continue
	case " $list " in *" $b "*) continue ;; esac
	list="$list $b"
done
total=$(echo $list | wc -w)
echo "run.sh: $total benchmarks into $out (QUICK=${QUICK:-0}); full output: $log"
status=0
i=0
t_all=$SECONDS
for b in $list; do
	i=$((i + 1))
	echo "== $b" >> "$log"
	printf '[%d/%d] %s: started %s\n' "$i" "$total" "$b" "$(date +%H:%M:%S)"
	t0=$SECONDS
	# The benchmark's output to the log and to .cur as it comes; METRIC
	# lines and failures to the terminal too.
	if ! "$bin_dir/$b" 2>&1 | tee -a "$log" > "$out/.cur" >(
		while IFS= read -r line; do
			case $line in
			METRIC\ *) printf '  %4ds  %s\n' $((SECONDS - t0)) "$line" ;;
			*FAILED* | *WRONG* | *rror*) printf '  %4ds  %s\n' $((SECONDS - t0)) "$line" ;;
			esac
		done
	); then
		echo "benchmark $b FAILED" | tee -a "$log"; status=1
	fi
	wait
	n=$(awk '$1 == "METRIC"' "$out/.cur" | wc -l)
	printf '[%d/%d] %s: done in %ds, %d METRIC lines\n' "$i" "$total" "$b" \
		$((SECONDS - t0)) "$n"
	awk -v b="$b" '$1 == "METRIC" { print b "," $2 "," $3 "," $4 }' "$out/.cur" >> "$csv"
done
rm -f "$out/.cur"
echo "run.sh: $total benchmarks in $((SECONDS - t_all))s; results: $csv, $log, $out/machine.txt"
exit $status
