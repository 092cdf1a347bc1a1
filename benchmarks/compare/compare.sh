#!/usr/bin/env bash
# compare.sh - side by side in the same run (installed as
# $(BUILD)/rel/bench/compare, run by `make bench`):
#   1. fib and N-Queens: EARTH TOKEN on one node (earth_tasks) against
#      oneTBB task_group (tbb_tasks) with 2 threads and with 1
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
rel=$(dirname "$here")
bin=$rel/compare
earthrun=$rel/bin/earthrun
quick=${QUICK:-0}
[ "$quick" = 0 ] && quick=""
reps=${BENCH_REPS:-$([ -n "$quick" ] && echo 5 || echo 9)}
status=0
mpirun_=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)

cores=$(nproc)
echo "# compare: $cores usable cores; one EARTH node = 2 threads (EU + SU, only" \
     "the EU computes), 2 nodes = 4 threads$([ "$cores" -lt 4 ] && echo \
     " (oversubscribed)"); TBB: 2 threads and 1; MPI: 2 ranks, busy-polling"

echo "# compare: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# compare: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

metric() { echo "METRIC $1 $2 $3"; }
# ratio A B: A / B with 3 decimals, empty when either is missing
ratio() {
	[ -n "${1:-}" ] && [ -n "${2:-}" ] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'
}
# median_of "text" "pattern before the number": the number after it
grab() { sed -n "s/.*$2 \([0-9.]*\).*/\1/p" <<<"$1" | head -n1; }
run() { # prints the command and its output; returns its output in $out
	echo "# compare: $*"
	out=$("$@" 2>&1)
	local st=$?
	echo "$out" | grep -v '^mpirow\|^ll7row\|^METRIC' || true
	[ $st -eq 0 ] || { echo "# compare: FAILED (status $st): $*"; status=1; }
	return $st
}

# ---- 1. task spawning on one node ----
fib_n=$([ -n "$quick" ] && echo 22 || echo 26)
nq_n=$([ -n "$quick" ] && echo 10 || echo 12)
nq_depth=4
run "$bin/earth_tasks" fib "$fib_n" "$reps" && e_fib=$(grab "$out" median)
run "$bin/earth_tasks" nqueens "$nq_n" "$nq_depth" "$reps" &&
	e_nq=$(grab "$out" median)
metric compare.fib.earth_token "${e_fib:-0}" ns
metric compare.nqueens.earth_token "${e_nq:-0}" ns
# The same node in the single-poll mode: one thread, the EU's and the SU's
# work (as oneTBB with 1 thread).
EARTH_MODE=single-poll run "$bin/earth_tasks" fib "$fib_n" "$reps" &&
	s_fib=$(grab "$out" median)
EARTH_MODE=single-poll run "$bin/earth_tasks" nqueens "$nq_n" "$nq_depth" \
	"$reps" && s_nq=$(grab "$out" median)
metric compare.fib.earth_token_single "${s_fib:-0}" ns
metric compare.nqueens.earth_token_single "${s_nq:-0}" ns
if [ -x "$bin/tbb_tasks" ]; then
	for th in 2 1; do
		run "$bin/tbb_tasks" fib "$fib_n" "$th" "$reps" &&
			t=$(grab "$out" median) && {
			sfx=$([ $th = 1 ] && echo tbb1 || echo tbb)
			metric compare.fib.$sfx "$t" ns
			r=$(ratio "$t" "${e_fib:-}")
			[ -n "$r" ] && metric compare.fib.${sfx}_over_earth "$r" x
			r=$(ratio "$t" "${s_fib:-}")
			[ -n "$r" ] && metric compare.fib.${sfx}_over_earth_single "$r" x
		}
		run "$bin/tbb_tasks" nqueens "$nq_n" "$nq_depth" "$th" "$reps" &&
			t=$(grab "$out" median) && {
			sfx=$([ $th = 1 ] && echo tbb1 || echo tbb)
			metric compare.nqueens.$sfx "$t" ns
			r=$(ratio "$t" "${e_nq:-}")
			[ -n "$r" ] && metric compare.nqueens.${sfx}_over_earth "$r" x
			r=$(ratio "$t" "${s_nq:-}")
			[ -n "$r" ] && metric compare.nqueens.${sfx}_over_earth_single "$r" x
		}
	done
else
	echo "# compare: no tbb_tasks (Debian libtbb-dev and g++ missing?): TBB part skipped"
fi

# ---- 1b. Unbalanced Tree Search (T1, T3), one node ----
uts_reps=$([ -n "$quick" ] && echo 1 || echo 3)
for tree in t1 t3; do
	e_uts="" s_uts=""
	run "$earthrun" -n 1 "$bin/earth_uts" "$tree" "$uts_reps" && {
		e_uts=$(grab "$out" median)
		metric compare.uts_$tree.earth_token "$e_uts" ns
		metric compare.uts_$tree.earth_token_nodes_per_s \
			"$(grab "$out" "nodes.s")" nodes/s
	}
	EARTH_MODE=single-poll run "$earthrun" -n 1 "$bin/earth_uts" "$tree" \
		"$uts_reps" && {
		s_uts=$(grab "$out" median)
		metric compare.uts_$tree.earth_token_single "$s_uts" ns
		metric compare.uts_$tree.earth_token_single_nodes_per_s \
			"$(grab "$out" "nodes.s")" nodes/s
	}
	if [ -x "$bin/tbb_uts" ]; then
		for th in 1 2; do
			sfx=$([ $th = 1 ] && echo tbb1 || echo tbb)
			run "$bin/tbb_uts" "$tree" "$th" "$uts_reps" && {
				t=$(grab "$out" median)
				metric compare.uts_$tree.$sfx "$t" ns
				metric compare.uts_$tree.${sfx}_nodes_per_s \
					"$(grab "$out" "nodes.s")" nodes/s
				r=$(ratio "$t" "$e_uts")
				[ -n "$r" ] && metric compare.uts_$tree.${sfx}_over_earth "$r" x
				r=$(ratio "$t" "$s_uts")
				[ -n "$r" ] && metric compare.uts_$tree.${sfx}_over_earth_single "$r" x
			}
		done
	else
		echo "# compare: no tbb_uts (Debian libtbb-dev and g++ missing?): TBB part of UTS skipped"
	fi
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
