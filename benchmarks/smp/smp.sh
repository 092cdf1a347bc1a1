#!/usr/bin/env bash
# smp.sh - a node of k EUs against oneTBB at equal cores, in the same run
# (installed as $(BUILD)/rel/bench/smp, run by `make bench`):
#   smp.<prog>.k<k>              one node of k EUs (EARTH_EUS=k): median
#                                wall time, ns; k = 1 .. cores - 1 (the SU
#                                on a core of its own) and k = cores (the
#                                SU shares a core and dozes)
#   smp.<prog>.tbb<t>            oneTBB task_group with t threads, ns
#   smp.<prog>.k<k>_over_tbb<t>  T_tbb(t) / T_earth(k), the median of the
#                                rounds' ratios: above 1 the node is faster;
#                                t = k + 1 (equal cores), and t = k for
#                                k = cores (the SU dozing)
#   smp.uts_t3.k<k>.n2           UTS T3 on 2 nodes of k EUs each (tokens
#                                stolen between EUs and between nodes)
#   su_capacity.k<k>             remote GET_SYNC requests per second on 2
#                                nodes, every EU of node 0 feeding its SU
#                                (su_capacity.c), and su_capacity, the most
# prog: fib, nqueens (earth_tasks, tbb_tasks), uts_t1, uts_t3 (earth_uts,
# tbb_uts): the programs of compare.sh. A k the runtime refuses (a build
# that runs one EU per node) is named and skipped, not failed. On a machine
# with fewer cores than k + 1 the figures are reported, not judged.
# QUICK=1: smaller problems, fewer rounds. SMP_KMIN and SMP_KMAX bound k
# (SMP_KMIN: to finish a run a time limit cut short). SMP_PARTS: "one",
# "two" or both (the default): the one-node rounds, the two-node ones.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=smp
# rel, bin, earthrun, quick, status; metric, ratio, grab, run
# (benchmarks/lib/driver.sh, installed beside this driver)
. "$here/lib/driver.sh"
reps=${BENCH_REPS:-$([ -n "$quick" ] && echo 3 || echo 5)}
rounds=$([ -n "$quick" ] && echo 3 || echo 5)
# median
. "$here/lib/median.sh"

cores=$(nproc)
kmax=$cores
[ -n "${SMP_KMAX:-}" ] && [ "$SMP_KMAX" -lt "$kmax" ] && kmax=$SMP_KMAX
kmin=${SMP_KMIN:-1}
parts=${SMP_PARTS:-one two}
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
echo "# smp: $(lscpu | sed -n 's/^Model name: *//p' | head -n1); $cores usable" \
     "cores; a node of k EUs is k + 1 threads (its SU), k = $kmin..$kmax"
echo "# smp: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# smp: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

# Does this build run a node of k EUs? (A refusal says "not built yet".)
refused=""
eus_ok() {
	local k=$1 o
	[ "$k" = 1 ] && return 0
	case " $refused " in *" $k "*) return 1 ;; esac
	o=$(EARTH_EUS=$k "$bin/earth_tasks" fib 10 1 2>&1) && return 0
	if grep -q "not built yet" <<<"$o"; then
		echo "# smp: k=$k refused by this build: $o"
	else
		echo "# smp: k=$k FAILED: $o"
		status=1
	fi
	refused="$refused $k"
	return 1
}

tbb_t="" tbb_u=""
[ -x "$bin/tbb_tasks" ] && tbb_t=$bin/tbb_tasks ||
	echo "# smp: no tbb_tasks (Debian libtbb-dev and g++ missing?): oneTBB side skipped"
[ -x "$bin/tbb_uts" ] && tbb_u=$bin/tbb_uts ||
	echo "# smp: no tbb_uts (Debian libtbb-dev and g++ missing?): oneTBB side of UTS skipped"

each() { [ "$#" -gt 0 ] && printf '%s\n' "$@" | median %.3f; }

# prog_rounds NAME K "EARTH command" "TBB command before the thread count"
#   "TBB args after it": rounds of one EARTH run at k and oneTBB at k and
#   k + 1 (or at k alone for k = cores), each the median of its repeats
prog_rounds() {
	local name=$1 k=$2 ecmd=$3 tcmd=$4 targs=$5 r e t tt
	local -a E=() T=() R=()
	tt=$((k + 1))
	[ "$k" -ge "$cores" ] && tt=$k
	for ((r = 0; r < rounds; r++)); do
		e="" t=""
		# shellcheck disable=SC2086
		EARTH_EUS=$k run $ecmd && e=$(grab "$out" median)
		if [ -n "$tcmd" ]; then
			# shellcheck disable=SC2086
			run $tcmd "$tt" $targs && t=$(grab "$out" median)
		fi
		[ -n "$e" ] && E+=("$e")
		[ -n "$t" ] && T+=("$t")
		[ -n "$e" ] && [ -n "$t" ] && R+=("$(ratio "$t" "$e")")
	done
	local v
	v=$(each "${E[@]}") && metric "smp.$name.k$k" "$v" ns
	v=$(each "${T[@]}") && metric "smp.$name.tbb$tt" "$v" ns
	v=$(each "${R[@]}") && metric "smp.$name.k${k}_over_tbb$tt" "$v" x
	return 0
}

fib_n=$([ -n "$quick" ] && echo 24 || echo 30)
nq_n=$([ -n "$quick" ] && echo 11 || echo 13)
nq_depth=4
uts_reps=1
# placement K: where the node's units run at k EUs (its statistics)
placement() {
	local o cpus
	o=$(EARTH_EUS=$1 "$bin/earth_tasks" fib 10 1 --earth-stats 2>&1)
	cpus=$(sed -n 's/^  EU [0-9].*  CPU \([0-9]*\),.*/ \1/p' <<<"$o" |
		tr -d '\n')
	echo "# smp: k=$1 placement: $(sed -n 's/^  mode dual: //p' <<<"$o" |
		head -n1)${cpus:+; EU CPUs$cpus}"
}
part one && for ((k = kmin; k <= kmax; k++)); do
	eus_ok "$k" || continue
	placement "$k"
	prog_rounds fib "$k" "$bin/earth_tasks fib $fib_n $reps" \
		"${tbb_t:+$tbb_t fib $fib_n}" "$reps"
	prog_rounds nqueens "$k" "$bin/earth_tasks nqueens $nq_n $nq_depth $reps" \
		"${tbb_t:+$tbb_t nqueens $nq_n $nq_depth}" "$reps"
	for tree in t1 t3; do
		prog_rounds "uts_$tree" "$k" \
			"$earthrun -n 1 $bin/earth_uts $tree $uts_reps" \
			"${tbb_u:+$tbb_u $tree}" "$uts_reps"
	done
done

# ---- two nodes: UTS T3, and what one SU serves ----
w=$([ -n "$quick" ] && echo 64 || echo 256)
c=$([ -n "$quick" ] && echo 200 || echo 1000)
best=""
part two && for ((k = kmin; k <= kmax; k++)); do
	eus_ok "$k" || continue
	T=()
	for ((r = 0; r < rounds; r++)); do
		EARTH_EUS=$k run "$earthrun" -n 2 --transport shm \
			"$bin/earth_uts" t3 "$uts_reps" &&
			T+=("$(grab "$out" median)")
	done
	v=$(each "${T[@]}") && metric "smp.uts_t3.k$k.n2" "$v" ns
	EARTH_EUS=$k run "$earthrun" -n 2 --transport shm "$rel/smp/su_capacity" \
		"$((w * k))" "$c" "$reps" && {
		v=$(grab "$out" median)
		metric "su_capacity.k$k" "$v" requests/s
		[ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }' &&
			best=$v
	}
done
[ -n "$best" ] && metric su_capacity "$best" requests/s
exit $status
