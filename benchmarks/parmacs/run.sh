#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# benchmarks/parmacs/run.sh - installed as $(BUILD)/rel/bench/parmacs, run
# by `make bench`: the six PARMACS programs of tests/parmacs (LU twice:
# rows and contiguous blocks, lu_blocks), unchanged,
# built twice (progs/parmacs-dsm/: m4 with runtime/earth_parmacs.m4, then
# earthcc; progs/parmacs-pth/: m4 with benchmarks/parmacs/pthreads.m4,
# then cc), each run's time its own (CLOCK around CREATE .. WAIT_FOR_END,
# the "us=" of its "ok" line, which the run must print):
#
#   METRIC parmacs.<prog>.pthreads.p<P>      us   P POSIX threads, 1 process
#   METRIC parmacs.<prog>.n<N>               us   N dual nodes, a thread each
#   METRIC parmacs.<prog>.n<N>.single_poll   us   N single-poll nodes
#   METRIC parmacs.<prog>.speedup.n<N>[.single_poll]  x  p1 / nN
#   METRIC parmacs.<prog>.speedup_pthreads.p<P>        x  p1 / pP
#   METRIC parmacs.<prog>.n<N>_over_pthreads[.single_poll]  x  nN / pN
#
# Speedups are over one POSIX thread (p1), the floor, not over one node.
#
# P and N go 1, 2, 4, ... up to the usable cores; dual nodes only while
# every node's two units have a core (2N <= cores), single-poll nodes
# while every node has one. Each figure is the median of 3 jobs (1 with
# QUICK=1, which also runs the programs' small default sizes). A larger
# machine (make device-pack) gives the wall-clock speedups.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=parmacs
. "$here/lib/driver.sh"
. "$here/lib/median.sh"
dsm=$here/progs/parmacs-dsm pth=$here/progs/parmacs-pth
# A figure's name and the program it runs (lu_blocks: lu -c, the matrix
# in contiguous blocks).
progs=(jacobi matmul lu lu_blocks transpose lockacc pipeline)
declare -A bin=([jacobi]=jacobi [matmul]=matmul [lu]=lu [lu_blocks]=lu
		[transpose]=transpose [lockacc]=lockacc [pipeline]=pipeline)
for p in "${bin[@]}"; do
	if [ ! -x "$dsm/$p" ] || [ ! -x "$pth/$p" ]; then
		echo "# parmacs: $dsm/$p or $pth/$p is missing (built by make" \
		     "with the apps, which need clang-14): skipped"
		exit 0
	fi
done
cores=$(nproc)
cores=${PARMACS_CORES:-$cores}
if [ -n "$quick" ]; then
	jobs=1
	declare -A args=([jacobi]="" [matmul]="" [lu]="" [lu_blocks]="-c"
			 [transpose]="" [lockacc]="" [pipeline]="")
else
	jobs=3
	declare -A args=([jacobi]="-n 1000000 -s 20" [matmul]="-n 256"
			 [lu]="-n 512 -b 32" [lu_blocks]="-n 512 -b 32 -c"
			 [transpose]="-n 1024"
			 [lockacc]="-m 2000" [pipeline]="-r 2000")
fi
echo "# parmacs: $(lscpu | sed -n 's/^Model name: *//p' | head -n1);" \
     "$cores usable cores; nodes over shm, $jobs jobs a figure"
echo "# parmacs: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# parmacs: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

# time_of PROG WHAT(pth|dual|sp) P: the median "us=" of the jobs into $tm
# (empty when a job failed or printed no "ok" line)
time_of() {
	local p=$1 what=$2 np=$3 v=() j u
	tm=
	for ((j = 0; j < jobs; j++)); do
		case $what in
		pth) run "$pth/${bin[$p]}" -p"$np" ${args[$p]} || return ;;
		dual) run "$earthrun" -n "$np" --transport shm \
			  "$dsm/${bin[$p]}" -p"$np" ${args[$p]} || return ;;
		sp) run env EARTH_MODE=single-poll "$earthrun" -n "$np" \
			--transport shm "$dsm/${bin[$p]}" -p"$np" \
			${args[$p]} || return ;;
		esac
		u=$(sed -n "s/^ok ${bin[$p]} p=$np .* us=\([0-9]*\).*/\1/p" \
			<<<"$out")
		if [ -z "$u" ]; then
			echo "# parmacs: $p ($what, $np): no \"ok ${bin[$p]}" \
			     "p=$np\" line"
			status=1
			return
		fi
		v+=("$u")
	done
	tm=$(printf '%s\n' "${v[@]}" | median %.0f)
}

for p in "${progs[@]}"; do
	declare -A t=()
	for ((np = 1; np <= cores; np *= 2)); do
		time_of "$p" pth "$np"
		[ -n "$tm" ] && t[pth$np]=$tm &&
			metric "parmacs.$p.pthreads.p$np" "$tm" us
		if ((2 * np <= cores)); then
			time_of "$p" dual "$np"
			[ -n "$tm" ] && t[dual$np]=$tm &&
				metric "parmacs.$p.n$np" "$tm" us
		fi
		time_of "$p" sp "$np"
		[ -n "$tm" ] && t[sp$np]=$tm &&
			metric "parmacs.$p.n$np.single_poll" "$tm" us
	done
	for ((np = 1; np <= cores; np *= 2)); do
		r=$(ratio "${t[pth1]:-}" "${t[pth$np]:-}")
		((np > 1)) && [ -n "$r" ] &&
			metric "parmacs.$p.speedup_pthreads.p$np" "$r" x
		r=$(ratio "${t[pth1]:-}" "${t[dual$np]:-}")
		[ -n "$r" ] && metric "parmacs.$p.speedup.n$np" "$r" x
		r=$(ratio "${t[pth1]:-}" "${t[sp$np]:-}")
		[ -n "$r" ] && metric "parmacs.$p.speedup.n$np.single_poll" "$r" x
	done
	for ((np = 1; np <= cores; np *= 2)); do
		r=$(ratio "${t[dual$np]:-}" "${t[pth$np]:-}")
		[ -n "$r" ] && metric "parmacs.$p.n${np}_over_pthreads" "$r" x
		r=$(ratio "${t[sp$np]:-}" "${t[pth$np]:-}")
		[ -n "$r" ] &&
			metric "parmacs.$p.n${np}_over_pthreads.single_poll" "$r" x
	done
	unset t
done
exit $status
