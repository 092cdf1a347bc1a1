#!/usr/bin/env bash
# run_apps.sh - the EARTH benchmark programs against their sequential C
# twins. For each program, REPS rounds of: the twin, then the Threaded-C
# version on 1..cores single-core nodes and on 1..N dual nodes of this
# host (earthrun, shm transport). Each figure is the median of the
# program's own time_ms (the computation only; start-up, setup and checking
# excluded); every run must print "ok" and the twin's answer. Then the
# Table 3 counters on one node: context switches and variables saved and
# restored per switch, minimal sets (PROG) against earthcc --save-all
# (PROG.all).
#
# Prints
#   METRIC app.<prog>.time.seq <ms> ms
#   METRIC app.<prog>.time.<N>n <ms> ms                 (N dual nodes)
#   METRIC app.<prog>.speedup_vs_seq.<N>n <x> x
#   METRIC app.<prog>.time.<N>n_single <ms> ms          (N single-core
#   METRIC app.<prog>.speedup_vs_seq.<N>n_single <x> x   nodes, single-poll)
#   METRIC save_restore_avg.<prog>.<min|all> <n> vars
#   METRIC switches.<prog> <n> count
# and writes docs/results/apps.csv (times), apps_table3.csv (counters),
# apps.md (both tables) and, in full runs, the ray tracer's image
# apps_ray.png (RESULTS_DIR overrides docs/results).
#
# Usage (from the repository root, after `make apps`):
#   benchmarks/apps/run_apps.sh
# QUICK=1: small inputs, one run each. BUILD: the build directory (default
# build). NODES: the largest dual node count (default cores / 2, at least
# 2, at most 8); single-core nodes go up to the core count (2..8). REPS:
# runs per median (default 3, QUICK 1). APPS: the programs to run (default
# all). Without the programs (no clang-14 or plugin) it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
bin=$build/rel/apps
earthrun=$build/rel/bin/earthrun
out=${RESULTS_DIR:-docs/results}
all_apps="fib nqueens paraffins pfold tomcatv ray jacobi matmul quad exptree uts"
apps=${APPS:-$all_apps}
quick=""  # QUICK set and not 0, as benchmarks/bench.c reads it
if [ -n "${QUICK:-}" ] && [ "$QUICK" != 0 ]; then quick=1; fi

if [ ! -x "$bin/fib" ] || [ ! -x "$earthrun" ]; then
	echo "run_apps: $bin/ or $earthrun is missing (clang-14 or the earth_tc" \
	     "plugin not installed, or not built: make apps); skipped"
	exit 0
fi

# program arguments: full run, QUICK=1 run
args_of() {
	case $1 in
	fib)       [ -n "$quick" ] && echo "27 15"     || echo "35 20" ;;
	nqueens)   [ -n "$quick" ] && echo "11 3"      || echo "14 3" ;;
	paraffins) [ -n "$quick" ] && echo "18"        || echo "24" ;;
	pfold)     [ -n "$quick" ] && echo "2 2 4 4"   || echo "2 2 6 5" ;;
	tomcatv)   [ -n "$quick" ] && echo "65 30"     || echo "257 100" ;;
	ray)       [ -n "$quick" ] && echo "128 128 2" || echo "512 512 2" ;;
	jacobi)    [ -n "$quick" ] && echo "64"        || echo "256" ;;
	matmul)    [ -n "$quick" ] && echo "128"       || echo "512" ;;
	quad)      [ -n "$quick" ] && echo "7 8"       || echo "11 10" ;;
	exptree)   [ -n "$quick" ] && echo "40 5"      || echo "70 7" ;;
	uts)       [ -n "$quick" ] && echo "s3"        || echo "t3" ;;
	*) echo "run_apps: unknown program $1" >&2; exit 2 ;;
	esac
}
# the twin takes the leading arguments only (no cutoff, grain, depth)
seq_args() {
	local p=$1
	set -- $(args_of "$p")
	case $p in
	fib|nqueens|matmul|jacobi|paraffins|quad|uts) echo "$1" ;;
	tomcatv|ray|exptree) echo "$1 $2" ;;
	pfold) echo "$1 $2 $3" ;;
	esac
}

cores=$(nproc)
max_nodes=${NODES:-$((cores / 2))}
[ "$max_nodes" -lt 2 ] && max_nodes=2
[ "$max_nodes" -gt 8 ] && max_nodes=8
if [ -n "$quick" ]; then reps=${REPS:-1}; else reps=${REPS:-3}; fi
max_single=$cores
[ "$max_single" -lt 2 ] && max_single=2
[ "$max_single" -gt 8 ] && max_single=8
# configurations: Nn = N dual nodes (EU + SU, 2 threads each), Nn_single =
# N single-core nodes (EARTH_MODE=single-poll: 1 thread each)
cfgs=()
declare -A cfg_mode=() cfg_nodes=() cfg_threads=() cfg_title=()
for ((nn = 1; nn <= max_single; nn++)); do
	c=${nn}n_single; cfgs+=("$c")
	cfg_mode[$c]=single-poll cfg_nodes[$c]=$nn cfg_threads[$c]=$nn
	cfg_title[$c]="$nn single-core node$([ "$nn" = 1 ] || echo s)"
done
for ((nn = 1; nn <= max_nodes; nn++)); do
	c=${nn}n; cfgs+=("$c")
	cfg_mode[$c]=dual cfg_nodes[$c]=$nn cfg_threads[$c]=$((2 * nn))
	cfg_title[$c]="$nn dual node$([ "$nn" = 1 ] || echo s)"
done
# The twin runs pinned to the CPU of node 0's EU (where a one-node job
# computes), so that both meet the same neighbours on a shared machine.
eu_cpu=$(EARTH_STATS=1 "$bin/matmul" 1 2>&1 | sed -n 's/.*(EU cpu \([0-9]*\),.*/\1/p' | head -n 1)
pin=()
if [ -n "$eu_cpu" ] && command -v taskset > /dev/null 2>&1; then
	pin=(taskset -c "$eu_cpu")
	echo "run_apps: the sequential twins run on CPU $eu_cpu (node 0's EU)"
fi
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_apps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "run_apps: $cores cores available; dual nodes 1..$max_nodes (2 threads each," \
     "EU and SU: $((2 * max_nodes)) threads at $max_nodes nodes$([ $((2 * max_nodes)) -gt "$cores" ] && echo ", oversubscribed"));" \
     "single-core nodes 1..$max_single (1 thread each); $reps run(s) per median"

. benchmarks/lib/median.sh
field() { sed -n "s/^$1: //p" "$2" | head -n 1; }

status=0
csv=$out/apps.csv
echo "program,args,mode,nodes,threads,cores,time_ms,seq_ms,speedup_vs_seq,answer_ok" > "$csv"
t3csv=$tmp/t3.csv
: > "$t3csv"
md_rows=""

# run CMD... into $tmp/run; checks ok and the answer; echoes time_ms
run_one() {
	local want=$1; shift
	if ! timeout 300 "$@" > "$tmp/run" 2> "$tmp/err"; then
		echo "run_apps: FAILED: $* (exit $?)" >&2
		cat "$tmp/run" "$tmp/err" >&2
		return 1
	fi
	if ! grep -q '^ok' "$tmp/run"; then
		echo "run_apps: no 'ok' from: $*" >&2; cat "$tmp/run" >&2; return 1
	fi
	if [ -n "$want" ] && [ "$(field answer "$tmp/run")" != "$want" ]; then
		echo "run_apps: MISMATCH: $* answered '$(field answer "$tmp/run")'," \
		     "the twin '$want'" >&2
		return 1
	fi
	field time_ms "$tmp/run"
}

for p in $apps; do
	a=$(args_of "$p") sa=$(seq_args "$p")
	echo "== $p $a (twin: ${p}_seq $sa)"
	# shellcheck disable=SC2086
	if ! "$bin/${p}_seq" $sa > "$tmp/seq" 2>&1; then
		echo "run_apps: ${p}_seq failed:" >&2; cat "$tmp/seq" >&2; status=1; continue
	fi
	want=$(field answer "$tmp/seq")
	echo "answer: $want"
	# rounds: the twin, then every configuration, so that load changes on
	# a shared machine hit them all alike
	declare -A okc=()
	: > "$tmp/t.seq"
	for c in "${cfgs[@]}"; do : > "$tmp/t.$c"; okc[$c]=1; done
	for ((r = 0; r < reps; r++)); do
		# shellcheck disable=SC2086
		run_one "" "${pin[@]}" "$bin/${p}_seq" $sa >> "$tmp/t.seq" || status=1
		for c in "${cfgs[@]}"; do
			# shellcheck disable=SC2086
			run_one "$want" env EARTH_MODE="${cfg_mode[$c]}" "$earthrun" \
				-n "${cfg_nodes[$c]}" "$bin/$p" $a >> "$tmp/t.$c" ||
				{ okc[$c]=0; status=1; }
		done
	done
	seq_ms=$(median < "$tmp/t.seq"); seq_ms=${seq_ms:-nan}
	echo "METRIC app.$p.time.seq $seq_ms ms"
	row="| $p | \`$a\` | $seq_ms |"
	for c in "${cfgs[@]}"; do
		ms=$(median < "$tmp/t.$c") ok=${okc[$c]}; ms=${ms:-nan}
		sp=$(awk -v s="$seq_ms" -v t="$ms" 'BEGIN { if (t > 0) printf "%.3f", s / t; else print "nan" }')
		echo "METRIC app.$p.time.$c $ms ms"
		echo "METRIC app.$p.speedup_vs_seq.$c $sp x"
		echo "$p,\"$a\",${cfg_mode[$c]},${cfg_nodes[$c]},${cfg_threads[$c]},$cores,$ms,$seq_ms,$sp,$ok" >> "$csv"
		row="$row $ms ($sp x)$([ "$ok" = 1 ] || echo ' FAILED') |"
	done
	unset okc
	md_rows="$md_rows$row"$'\n'
	# the image, rendered on 2 nodes (identical to the twin's: checked)
	if [ "$p" = ray ] && [ -z "$quick" ]; then
		if timeout 300 "$earthrun" -n 2 "$bin/ray" 512 384 2 "$tmp/ray.ppm" > "$tmp/run" 2>&1 &&
		   grep -q '^ok' "$tmp/run"; then
			if command -v pnmtopng > /dev/null 2>&1; then
				pnmtopng "$tmp/ray.ppm" > "$out/apps_ray.png" && echo "run_apps: wrote $out/apps_ray.png"
			else
				cp "$tmp/ray.ppm" "$out/apps_ray.ppm" && echo "run_apps: wrote $out/apps_ray.ppm (no pnmtopng for a PNG)"
			fi
		else
			echo "run_apps: ray image failed:" >&2; cat "$tmp/run" >&2; status=1
		fi
	fi
	# Table 3 counters, one node
	declare -A c=()
	for mode in min all; do
		exe=$bin/$p; [ "$mode" = all ] && exe=$bin/$p.all
		# shellcheck disable=SC2086
		if ! EARTH_TC_STATS=1 "$exe" $a > "$tmp/t3" 2>&1; then
			echo "run_apps: $exe (counters) failed:" >&2; cat "$tmp/t3" >&2; status=1; continue
		fi
		line=$(grep '^earth_tc ' "$tmp/t3" | head -n 1)
		c[$mode.sw]=$(sed -n 's/.* switches \([0-9]*\).*/\1/p' <<< "$line")
		c[$mode.sr]=$(sed -n 's/.* save_restore_avg \([0-9.]*\).*/\1/p' <<< "$line")
		c[$mode.r]=$(sed -n 's/.* restored_avg \([0-9.]*\).*/\1/p' <<< "$line")
		c[$mode.s]=$(sed -n 's/.* saved_avg \([0-9.]*\).*/\1/p' <<< "$line")
		echo "METRIC save_restore_avg.$p.$mode ${c[$mode.sr]} vars"
	done
	echo "METRIC switches.$p ${c[min.sw]:-nan} count"
	echo "$p,${c[min.sw]:-},${c[min.r]:-},${c[min.s]:-},${c[min.sr]:-},${c[all.r]:-},${c[all.s]:-},${c[all.sr]:-}" >> "$t3csv"
	unset c
done

{
	echo "program,switches,restored_avg_min,saved_avg_min,save_restore_avg_min,restored_avg_all,saved_avg_all,save_restore_avg_all"
	cat "$t3csv"
} > "$out/apps_table3.csv"

{
	echo "# The EARTH benchmark programs (benchmarks/apps/)"
	echo
	echo "Generated by \`benchmarks/apps/run_apps.sh\` on $(date -u +%Y-%m-%dT%H:%MZ)" \
	     "(git $(git rev-parse --short HEAD 2>/dev/null || echo none))$([ -n "$quick" ] && echo ', QUICK=1 (small inputs)')."
	echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $cores cores" \
	     "available. A dual node runs 2 threads (EU and SU), a single-core node" \
	     "(\`EARTH_MODE=single-poll\`) 1; more threads than cores oversubscribe" \
	     "the machine. Shared and noisy: treat the times as rough. The twins ran" \
	     "pinned to CPU ${eu_cpu:-?}, the CPU of node 0's EU."
	echo
	echo "Times: median of $reps run(s) of each program's own \`time_ms\` (the" \
	     "computation; start-up, setup and checks excluded), in ms; in" \
	     "parentheses the speedup over the sequential C twin. Every run printed" \
	     "\`ok\` and the twin's answer. On this 2-vCPU guest a thread polling one" \
	     "vCPU can slow a computation on the other, by up to 1.5-2x where the" \
	     "host places the two vCPUs on one core: one dual node's SU sleeps while" \
	     "its EU computes (\`EARTH_SU_DOZE\`), two dual nodes' SUs poll while" \
	     "their EUs compute; single-core nodes have no second thread."
	echo
	hdr="| program | arguments | seq C (ms) |" sep="|---|---|---:|"
	for c in "${cfgs[@]}"; do
		hdr="$hdr ${cfg_title[$c]} (ms) |"
		sep="$sep---:|"
	done
	echo "$hdr"; echo "$sep"
	printf '%s' "$md_rows"
	echo
	echo "Table 3 (the paper's): context switches (fiber starts) on one node and" \
	     "variables restored and saved per switch, with the minimal sets earthcc" \
	     "computes and with \`--save-all\`."
	echo
	echo "| program | switches | restored (min) | saved (min) | total (min) | restored (all) | saved (all) | total (all) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	tr ',' ' ' < "$t3csv" | while read -r p sw r s sr ra sa sra; do
		echo "| $p | $sw | $r | $s | $sr | $ra | $sa | $sra |"
	done
} > "$out/apps.md"
echo "run_apps: wrote $csv, $out/apps_table3.csv and $out/apps.md"
exit $status
