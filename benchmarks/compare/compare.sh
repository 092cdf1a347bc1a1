#!/usr/bin/env bash
# compare.sh - side by side in the same run (installed as
# $(BUILD)/rel/bench/compare, run by `make bench`):
#   1. fib and N-Queens: EARTH TOKEN on one node (earth_tasks) against
#      oneTBB task_group (tbb_tasks) with 2 threads and with 1, in rounds
#      (one run of each per round; ratios: median of the rounds' ratios)
#   1b. Unbalanced Tree Search, T1 (geometric) and T3 (binomial), exact
#      node counts: EARTH TOKEN on one node (earth_uts) against oneTBB
#      task_group (tbb_uts) with 1 thread and 2, with nodes per second
#   2. remote access over shm and tcp: EARTH GET_SYNC and INVOKE round trips
#      on 2 nodes (earth_remote) against Open MPI MPI_Get + flush and an
#      8-byte ping-pong, timed by ucx_floor's mpi_floor (btl vader and osc
#      rdma for shm, tcp and osc pt2pt for tcp; ranks on EARTH_CPUS, else
#      CPUs 0 and 1)
#   3. Livermore Loop 7, n = 10^6, x1: EARTH fibers (ll7) against MPI
#      nonblocking prefetch (mpi_ll7), best fiber size of each, over shm
# Prints METRIC lines: absolute medians (ns) and ratios (x, other/EARTH:
# above 1 means EARTH is faster). A part whose package is missing is
# skipped with a message. QUICK=1: smaller problems, fewer repetitions.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=compare
# rel, bin, earthrun, quick, status; metric, ratio, grab, run
# (benchmarks/lib/driver.sh, installed beside this driver)
. "$here/lib/driver.sh"
reps=${BENCH_REPS:-$([ -n "$quick" ] && echo 5 || echo 9)}
mpirun_=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)

cores=$(nproc)
echo "# compare: $cores usable cores; one EARTH node = 2 threads (EU + SU, only" \
     "the EU computes), 2 nodes = 4 threads$([ "$cores" -lt 4 ] && echo \
     " (oversubscribed)"); TBB: 2 threads and 1; MPI: 2 ranks, busy-polling"

echo "# compare: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# compare: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

# ---- 1. task spawning on one node ----
# The host slows a vCPU for seconds at a time, so EARTH and oneTBB run in
# rounds, one run of each per round (each the median of its own repeats):
# every ratio is the median over the rounds of the ratio within a round,
# and every absolute figure the median over the rounds.
rounds=$([ -n "$quick" ] && echo 3 || echo 5)
# median (benchmarks/lib/median.sh, installed beside this driver)
. "$here/lib/median.sh"
# task_rounds NAME "EARTH args" "TBB args before the thread count" REPS
# GRAB_RATE: runs the rounds and prints the metrics of one problem
task_rounds() {
	local name=$1 eargs=$2 targs=$3 r=$4 rate=$5 e s t1 t2 k
	local -a E=() S=() T1=() T2=() RE=() RS=() R1=() R2=()
	local -a NE=() NS=() N1=() N2=()
	for ((k = 0; k < rounds; k++)); do
		e="" s="" t1="" t2=""
		# shellcheck disable=SC2086
		run $eargs "$r" && e=$(grab "$out" median) &&
			NE+=("$(grab "$out" "nodes.s")")
		# shellcheck disable=SC2086
		EARTH_MODE=single-poll run $eargs "$r" &&
			s=$(grab "$out" median) && NS+=("$(grab "$out" "nodes.s")")
		if [ -n "$targs" ]; then
			# shellcheck disable=SC2086
			run $targs 1 "$r" && t1=$(grab "$out" median) &&
				N1+=("$(grab "$out" "nodes.s")")
			# shellcheck disable=SC2086
			run $targs 2 "$r" && t2=$(grab "$out" median) &&
				N2+=("$(grab "$out" "nodes.s")")
		fi
		[ -n "$e" ] && E+=("$e")
		[ -n "$s" ] && S+=("$s")
		[ -n "$t1" ] && T1+=("$t1")
		[ -n "$t2" ] && T2+=("$t2")
		[ -n "$t1" ] && [ -n "$e" ] && RE+=("$(ratio "$t1" "$e")")
		[ -n "$t1" ] && [ -n "$s" ] && RS+=("$(ratio "$t1" "$s")")
		[ -n "$t2" ] && [ -n "$e" ] && R1+=("$(ratio "$t2" "$e")")
		[ -n "$t2" ] && [ -n "$s" ] && R2+=("$(ratio "$t2" "$s")")
	done
	each() { [ "$#" -gt 0 ] && printf '%s\n' "$@" | median %.3f; }
	local v
	v=$(each "${E[@]}") && metric "compare.$name.earth_token" "$v" ns
	v=$(each "${S[@]}") && metric "compare.$name.earth_token_single" "$v" ns
	v=$(each "${T1[@]}") && metric "compare.$name.tbb1" "$v" ns
	v=$(each "${T2[@]}") && metric "compare.$name.tbb" "$v" ns
	v=$(each "${RE[@]}") && metric "compare.$name.tbb1_over_earth" "$v" x
	v=$(each "${RS[@]}") &&
		metric "compare.$name.tbb1_over_earth_single" "$v" x
	v=$(each "${R1[@]}") && metric "compare.$name.tbb_over_earth" "$v" x
	v=$(each "${R2[@]}") &&
		metric "compare.$name.tbb_over_earth_single" "$v" x
	if [ -n "$rate" ]; then
		v=$(each "${NE[@]}") &&
			metric "compare.$name.earth_token_nodes_per_s" "$v" nodes/s
		v=$(each "${NS[@]}") &&
			metric "compare.$name.earth_token_single_nodes_per_s" "$v" nodes/s
		v=$(each "${N1[@]}") &&
			metric "compare.$name.tbb1_nodes_per_s" "$v" nodes/s
		v=$(each "${N2[@]}") &&
			metric "compare.$name.tbb_nodes_per_s" "$v" nodes/s
	fi
	return 0
}

fib_n=$([ -n "$quick" ] && echo 22 || echo 26)
nq_n=$([ -n "$quick" ] && echo 10 || echo 12)
nq_depth=4
tbb_t="" tbb_u=""
[ -x "$bin/tbb_tasks" ] && tbb_t=$bin/tbb_tasks ||
	echo "# compare: no tbb_tasks (Debian libtbb-dev and g++ missing?): TBB part skipped"
[ -x "$bin/tbb_uts" ] && tbb_u=$bin/tbb_uts ||
	echo "# compare: no tbb_uts (Debian libtbb-dev and g++ missing?): TBB part of UTS skipped"
# The single-poll mode: one thread does the EU's and the SU's work (as
# oneTBB with 1 thread).
task_rounds fib "$bin/earth_tasks fib $fib_n" \
	"${tbb_t:+$tbb_t fib $fib_n}" "$reps" ""
task_rounds nqueens "$bin/earth_tasks nqueens $nq_n $nq_depth" \
	"${tbb_t:+$tbb_t nqueens $nq_n $nq_depth}" "$reps" ""

# ---- 1b. Unbalanced Tree Search (T1, T3), one node ----
uts_reps=$([ -n "$quick" ] && echo 1 || echo 3)
for tree in t1 t3; do
	task_rounds "uts_$tree" "$earthrun -n 1 $bin/earth_uts $tree" \
		"${tbb_u:+$tbb_u $tree}" "$uts_reps" rate
done

# ---- 2. remote access over shm and tcp ----
k=$([ -n "$quick" ] && echo 500 || echo 2000)
mpi_floor=$rel/ucx_floor/mpi_floor
cpus=${EARTH_CPUS:-0,1}
have_mpi=""
command -v mpirun >/dev/null 2>&1 && have_mpi=1
[ -n "$have_mpi" ] && [ -x "$mpi_floor" ] ||
	echo "# compare: no mpi_floor or mpirun (Debian libopenmpi-dev, openmpi-bin): MPI remote access skipped"
for tr in shm tcp; do
	e_get="" e_inv=""
	run "$earthrun" -n 2 --transport "$tr" "$bin/earth_remote" "$k" "$reps" && {
		e_get=$(grab "$out" "get_sync rtt median")
		e_inv=$(grab "$out" "invoke rtt median")
		metric compare.get_sync.earth.$tr "$e_get" ns
		metric compare.invoke.earth.$tr "$e_inv" ns
	}
	[ -n "$have_mpi" ] && [ -x "$mpi_floor" ] || continue
	if [ $tr = shm ]; then btl=(--mca btl self,vader --mca osc rdma); else
		btl=(--mca btl self,tcp --mca osc pt2pt); fi
	run "${mpirun_[@]}" --mca pml ob1 "${btl[@]}" "$mpi_floor" "$tr" "$k" \
		"$reps" "${cpus%%,*}" "${cpus#*,}" && {
		m_pp=$(grab "$out" "METRIC mpi_pingpong_rtt.$tr")
		m_get=$(grab "$out" "METRIC mpi_get_lat.$tr")
		metric compare.pingpong.mpi.$tr "$m_pp" ns
		metric compare.get.mpi.$tr "$m_get" ns
		r=$(ratio "$m_get" "$e_get")
		[ -n "$r" ] && metric compare.get.mpi_over_earth.$tr "$r" x
		r=$(ratio "$m_pp" "$e_inv")
		[ -n "$r" ] && metric compare.pingpong_over_invoke.mpi_over_earth.$tr "$r" x
	}
done

# ---- 3. Livermore Loop 7, n = 10^6, x1, over shm ----
n=1000000
cap=65536
lreps=$([ -n "$quick" ] && echo 3 || echo 5)
run "$earthrun" -n 2 --transport shm "$here/ll7" --job cmp dual "$n" 1 "$lreps" 2 "$cap" && {
	# ll7row: net,mode,n,f,s,fibers,seq,ff,fetch,threaded,...,pct
	e_best=$(awk -F, '$1 == "ll7row" && (b == "" || $11 < b) { b = $11 } END { print b }' <<<"$out")
	e_pct=$(awk -F, '$1 == "ll7sum" { print $8 }' <<<"$out")
	e_s=$(awk -F, '$1 == "ll7sum" { print $7 }' <<<"$out")
	metric compare.ll7.earth_best "$e_best" ns
	metric compare.ll7.earth_residual_pct "$e_pct" %
	echo "# compare: EARTH ll7 best s=$e_s"
}
if [ -n "$have_mpi" ] && [ -x "$bin/mpi_ll7" ]; then
	run "${mpirun_[@]}" --mca btl self,vader "$bin/mpi_ll7" "$n" "$lreps" "$cap" && {
		# mpirow: n,s,seq,ff,prefetch,pct
		m_best=$(awk -F, '$1 == "mpirow" && (b == "" || $6 < b) { b = $6 } END { print b }' <<<"$out")
		m_pct=$(sed -n 's/.*prefetch [0-9]* ns, \([-0-9.]*\)%.*/\1/p' <<<"$out")
		metric compare.ll7.mpi_best "$m_best" ns
		metric compare.ll7.mpi_residual_pct "$m_pct" %
		r=$(ratio "$m_best" "${e_best:-}")
		[ -n "$r" ] && metric compare.ll7.mpi_over_earth "$r" x
	}
fi
exit $status
