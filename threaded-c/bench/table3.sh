#!/usr/bin/env bash
# table3.sh - the paper's Table 3 on our programs: variables saved and
# restored per context switch (fiber start), with the minimal sets the
# earth_tc plugin computes and with the --save-all baseline.
#
# For each program: build it twice with earthcc, run it with
# EARTH_TC_STATS=1, and print
#   METRIC save_restore_avg.<program>.<min|all> <n> vars
#   METRIC restored_avg.<program>.<min|all> <n> vars
#   METRIC saved_avg.<program>.<min|all> <n> vars
#   METRIC switches.<program> <n> count
# Usage: threaded-c/bench/table3.sh   (from the repository root; QUICK=1 for
# smaller inputs). Needs clang-14 and the plugin (make tc); without them it
# says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
earthcc=threaded-c/earthcc
if ! command -v clang-14 >/dev/null 2>&1 || [ ! -f "${EARTH_BUILD:-build}/plugin/earth_tc.so" ]; then
	echo "table3: clang-14 or the earth_tc plugin is missing (make tc); skipped"
	exit 0
fi
if [ -n "${QUICK:-}" ]; then
	progs=("hello:" "fib:15" "nqueens:8 3" "pipeline:1000" "reduce:20000 32" "odd:")
else
	progs=("hello:" "fib:22" "nqueens:10 4" "pipeline:20000" "reduce:200000 32" "odd:")
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/table3.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p" "$2"; }

printf '%-10s %10s | %8s %8s %8s | %8s %8s %8s\n' program switches \
	"rest.min" "saved.min" "sum.min" "rest.all" "saved.all" "sum.all" >&2
for entry in "${progs[@]}"; do
	name=${entry%%:*} args=${entry#*:}
	src=threaded-c/examples/$name.tc
	[ "$name" = odd ] && src=tests/tc/corpus/odd.tc
	declare -A r=()
	for mode in min all; do
		flags=""; [ "$mode" = all ] && flags=--save-all
		$earthcc -O2 $flags "$src" -o "$tmp/$name.$mode"
		# shellcheck disable=SC2086
		EARTH_TC_STATS=1 "$tmp/$name.$mode" $args >"$tmp/out" 2>"$tmp/err" || {
			echo "table3: $name ($mode) failed:" >&2; cat "$tmp/out" "$tmp/err" >&2; exit 1; }
		r[$mode.sw]=$(field switches "$tmp/err")
		r[$mode.rest]=$(field restored_avg "$tmp/err")
		r[$mode.saved]=$(field saved_avg "$tmp/err")
		r[$mode.sum]=$(field save_restore_avg "$tmp/err")
		echo "METRIC save_restore_avg.$name.$mode ${r[$mode.sum]} vars"
		echo "METRIC restored_avg.$name.$mode ${r[$mode.rest]} vars"
		echo "METRIC saved_avg.$name.$mode ${r[$mode.saved]} vars"
	done
	echo "METRIC switches.$name ${r[min.sw]} count"
	printf '%-10s %10s | %8s %8s %8s | %8s %8s %8s\n' "$name" "${r[min.sw]}" \
		"${r[min.rest]}" "${r[min.saved]}" "${r[min.sum]}" \
		"${r[all.rest]}" "${r[all.saved]}" "${r[all.sum]}" >&2
	unset r
done
