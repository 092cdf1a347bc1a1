#!/usr/bin/env bash
# hide.sh - latency hiding over shared memory with fibers and with program
# threads, in the same run (installed as $(BUILD)/rel/bench/tc_dsm, run by
# `make bench`): the Jacobi and the matrix multiply of hide.h on 2 nodes
# over shm, the emulated network delaying every message by 20 and 100 us
# one way (EARTH_NET_LATENCY_NS).
#   tc_dsm_hidden_time.<prog>.f<F>.lat<us>  hide.tc (progs/tc_dsm_hide), F
#                                           fiber chains per node, ns
#   tc_dsm_hidden_local.<prog>              T_local of the fibers: F = 1,
#                                           no emulated delay (the same
#                                           pages fetched over shm), ns
#   tc_dsm_hidden.<prog>.f<F>.lat<us>       h_F = (T_1 - T_F) / (T_1 -
#                                           T_local), T_1 and T_F at the
#                                           same delay (target >= 0.9 at
#                                           F >= 8)
#   dsm_hidden_time.<prog>.t<k>.lat<us>, dsm_hidden_local.<prog>,
#   dsm_hidden.<prog>.t<k>.lat<us>          the same with k program threads
#                                           per node (threads.c,
#                                           progs/tc_dsm_threads)
# prog: jacobi, matmul. F = 1 2 4 8 16 32 64, k = 1 2 4 8 16. Each time is
# the median of 3 jobs (TC_DSM_JOBS), each job's the median of 3
# repetitions after one not recorded (-r). Every job's checksum must be
# the same for a prog (fibers and threads alike), else the driver fails.
# Also writes tc_dsm_hidden.csv into RESULTS_DIR (else docs/results).
# QUICK=1: smaller problems, one repetition, one delay (20 us).
# TC_DSM_LATS, TC_DSM_FS, TC_DSM_KS: the delays, F and k to run (else all
# of the mode's). On fewer
# than four cores the two nodes' EUs and SUs share CPUs: the figures are
# reported, not judged.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=tc_dsm
# rel, earthrun, quick, status; metric, ratio, grab, run
. "$here/lib/driver.sh"
# median
. "$here/lib/median.sh"
progs=$here/progs
hide=$progs/tc_dsm_hide threads=$progs/tc_dsm_threads
if [ ! -x "$hide" ]; then
	echo "# tc_dsm: $hide is missing (the Threaded-C plugin is not" \
	     "built: make tc): skipped"
	exit 0
fi
jobs=${TC_DSM_JOBS:-3}
if [ -n "$quick" ]; then
	lats="20" fs="1 8" ks="1 8" r=1
	args_jacobi="-n 16 -s 2" args_matmul="-n 32"
else
	lats="20 100" fs="1 2 4 8 16 32 64" ks="1 2 4 8 16" r=3
	args_jacobi="-n 64 -s 4" args_matmul="-n 128"
fi
# A shorter sweep (the larger machine's run, benchmarks/device/run.sh):
# the delays, fiber counts and thread counts to measure (1 is always
# measured: every h needs T_1).
lats=${TC_DSM_LATS:-$lats}
fs=${TC_DSM_FS:-$fs} ks=${TC_DSM_KS:-$ks}
case " $fs " in *" 1 "*) ;; *) fs="1 $fs" ;; esac
case " $ks " in *" 1 "*) ;; *) ks="1 $ks" ;; esac
out_dir=${RESULTS_DIR:-docs/results}
mkdir -p "$out_dir"
csv=$out_dir/tc_dsm_hidden.csv
echo "prog,kind,workers,lat_us,ns,hidden" > "$csv"
echo "# tc_dsm: $(lscpu | sed -n 's/^Model name: *//p' | head -n1);" \
     "$(nproc) usable cores; 2 nodes over shm, $jobs jobs a figure"
echo "# tc_dsm: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# tc_dsm: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

declare -A sum_of
# time_of PROG KIND(f|t) N LAT_US: the median over the jobs into $tm, ns
# (empty when a job failed); checks the checksum
time_of() {
	local prog=$1 kind=$2 nw=$3 lat=$4 args v=() j
	tm=
	args="args_$prog"
	for ((j = 0; j < jobs; j++)); do
		if [ "$kind" = f ]; then
			run env EARTH_NET_LATENCY_NS=$((lat * 1000)) "$earthrun" \
			    -n 2 --transport shm "$hide" -m "$prog" -f "$nw" \
			    -r $r ${!args} || { status=1; return; }
		else
			run env EARTH_NET_LATENCY_NS=$((lat * 1000)) "$earthrun" \
			    -n 2 --transport shm "$threads" -m "$prog" -k "$nw" \
			    -r $r ${!args} || { status=1; return; }
		fi
		local sum
		sum=$(sed -n 's/^checksum //p' <<<"$out")
		if [ -z "${sum_of[$prog]:-}" ]; then
			sum_of[$prog]=$sum
		elif [ "$sum" != "${sum_of[$prog]}" ]; then
			echo "tc_dsm: $prog $kind$nw at $lat us: checksum $sum," \
			     "other runs ${sum_of[$prog]}" >&2
			status=1
		fi
		v+=("$(grab "$out" "result $prog")")
	done
	tm=$(printf '%s\n' "${v[@]}" | median %.0f)
}

for prog in jacobi matmul; do
	for kind in f t; do
		if [ $kind = f ]; then
			name=tc_dsm_hidden ws=$fs
		else
			name=dsm_hidden ws=$ks
		fi
		time_of $prog $kind 1 0
		local_t=$tm
		[ -n "$local_t" ] && metric "${name}_local.$prog" "$local_t" ns
		echo "$prog,$kind,1,0,$local_t," >> "$csv"
		for lat in $lats; do
			t1=
			for nw in $ws; do
				time_of $prog $kind "$nw" "$lat"
				t=$tm
				[ -n "$t" ] || continue
				[ "$nw" = 1 ] && t1=$t
				metric "${name}_time.$prog.$kind$nw.lat$lat" "$t" ns
				h=
				if [ -n "$t1" ] && [ -n "$local_t" ]; then
					h=$(awk -v a="$t1" -v b="$t" -v l="$local_t" \
					    'BEGIN { if (a > l) printf "%.3f", (a - b) / (a - l) }')
				fi
				[ -n "$h" ] && [ "$nw" != 1 ] &&
				    metric "$name.$prog.$kind$nw.lat$lat" "$h" ratio
				echo "$prog,$kind,$nw,$lat,$t,$h" >> "$csv"
			done
		done
	done
done
exit $status
