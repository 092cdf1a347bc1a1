#!/usr/bin/env bash
# ll7.sh - Livermore Loop 7 with Y in shared memory (ll7_dsm.tc): Figure 3,
# the residual of the communication against the fiber size, on 2 nodes
# over shm (installed as $(BUILD)/rel/bench/tc_dsm_ll7, run by `make
# bench`). For n = 9900 and 10^5 and the fiber sizes of benchmarks/ll7
# (log-spaced, 3 a decade, 1..n), Y fetched once (f = 1), over shm and
# over shm with the emulated network of benchmarks/ll7 (10 us added each
# way, EARTH_NET_LATENCY_NS; names with _emu):
#   tc_dsm_ll7[_emu].n<n>.s<s>  (threaded - seq) / (ff - seq), %: 0 % all
#                              of the communication hidden, 100 % none
#   tc_dsm_ll7[_emu]_seq.n<n>, tc_dsm_ll7[_emu]_ff.n<n>   the loop with Y
#                              local and with all of Y acquired first, ns
#                              (medians)
# Each time is the median of 3 jobs (TC_DSM_JOBS), each job's the median of
# 3 repetitions after one not recorded. Writes tc_dsm_ll7.csv into
# RESULTS_DIR (else docs/results). QUICK=1: n = 9900, 5 sizes, one job,
# shm only.
# On fewer than four cores the figures are reported, not judged.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=tc_dsm_ll7
# rel, earthrun, quick, status; metric, grab, run
. "$here/lib/driver.sh"
# median
. "$here/lib/median.sh"
prog=$here/progs/tc_dsm_ll7
if [ ! -x "$prog" ]; then
	echo "# tc_dsm_ll7: $prog is missing (the Threaded-C plugin is not" \
	     "built: make tc): skipped"
	exit 0
fi
sizes() { # the fiber sizes of benchmarks/ll7 up to n, and n
	local n=$1 s
	for s in 1 2 5 10 22 46 100 215 464 1000 2154 4642 10000 21544 46416; do
		[ "$s" -lt "$n" ] && printf '%s ' "$s"
	done
	echo "$n"
}
if [ -n "$quick" ]; then
	ns="9900" jobs=${TC_DSM_JOBS:-1} lats="0"
else
	ns="9900 100000" jobs=${TC_DSM_JOBS:-3} lats="0 10"
fi
out_dir=${RESULTS_DIR:-docs/results}
mkdir -p "$out_dir"
csv=$out_dir/tc_dsm_ll7.csv
echo "lat_us,n,s,seq_ns,threaded_ns,ff_ns,pct" > "$csv"
echo "# tc_dsm_ll7: $(lscpu | sed -n 's/^Model name: *//p' | head -n1);" \
     "$(nproc) usable cores; 2 nodes over shm, $jobs jobs a figure"
echo "# tc_dsm_ll7: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
for lat in $lats; do
	name=tc_dsm_ll7
	[ "$lat" = 0 ] || name=tc_dsm_ll7_emu
	for n in $ns; do
		ss=$(sizes "$n")
		[ -n "$quick" ] && ss="1 10 100 1000 $n"
		rows=
		for ((j = 0; j < jobs; j++)); do
			run env EARTH_NET_LATENCY_NS=$((lat * 1000)) "$earthrun" \
			    -n 2 --transport shm "$prog" -n "$n" -r 3 $ss || continue
			rows+=$(grep '^ll7row ' <<<"$out")$'\n'
		done
		[ -n "$rows" ] || continue
		seq=$(awk '$1 == "ll7row" { print $4 }' <<<"$rows" | median %.0f)
		ff=$(awk '$1 == "ll7row" { print $6 }' <<<"$rows" | median %.0f)
		metric "${name}_seq.n$n" "$seq" ns
		metric "${name}_ff.n$n" "$ff" ns
		for s in $ss; do
			th=$(awk -v s="$s" '$1 == "ll7row" && $3 == s { print $5 }' \
			    <<<"$rows" | median %.0f)
			pct=$(awk -v a="$th" -v b="$seq" -v c="$ff" \
			    'BEGIN { if (c > b) printf "%.1f", 100 * (a - b) / (c - b) }')
			[ -n "$pct" ] && metric "$name.n$n.s$s" "$pct" pct
			echo "$lat,$n,$s,$seq,$th,$ff,$pct" >> "$csv"
		done
	done
done
echo "# tc_dsm_ll7: load average at end $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
