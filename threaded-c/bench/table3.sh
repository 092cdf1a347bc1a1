#!/usr/bin/env bash
# table3.sh - the paper's Table 3 on our programs: variables saved and
# restored per context switch (fiber start), with the minimal sets the
# earth_tc plugin computes and with the --save-all baseline.
#
# For each program (the examples as ex_<name>, the corpus as corpus_<name>;
# the benchmark programs of benchmarks/apps report under their own names,
# from benchmarks/apps/run_apps.sh): build it twice with earthcc, run it on
# one node with EARTH_TC_STATS=1, and print
#   METRIC save_restore_avg.<program>.<min|all> <n> vars
#   METRIC restored_avg.<program>.<min|all> <n> vars
#   METRIC saved_avg.<program>.<min|all> <n> vars
#   METRIC switches.<program> <n> count
# and a table on stderr; the same table, in markdown, goes to
# ${RESULTS_DIR:-docs/results}/table3.md.
# Usage: threaded-c/bench/table3.sh   (from the repository root; QUICK=1 for
# smaller inputs; EARTH_BUILD: the build directory with the plugin and the
# libraries, default build; make bench sets it). Needs clang-14 and the
# plugin (make tc); without them it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
earthcc=threaded-c/earthcc
if ! command -v clang-14 >/dev/null 2>&1 || [ ! -f "${EARTH_BUILD:-build}/plugin/earth_tc.so" ]; then
	echo "table3: clang-14 or the earth_tc plugin is missing (make tc); skipped"
	exit 0
fi
# name:source:arguments (QUICK=1: smaller inputs)
ex=threaded-c/examples corpus=tests/tc/corpus
if [ -n "${QUICK:-}" ]; then
	sizes=("" "15" "8 3" "1000" "20000 32")
else
	sizes=("" "22" "10 4" "5000" "200000 32")
fi
progs=("ex_hello:$ex/hello.tc:${sizes[0]}" "ex_fib:$ex/fib.tc:${sizes[1]}"
	"ex_nqueens:$ex/nqueens.tc:${sizes[2]}"
	"ex_pipeline:$ex/pipeline.tc:${sizes[3]}"
	"ex_reduce:$ex/reduce.tc:${sizes[4]}" "corpus_odd:$corpus/odd.tc:"
	"corpus_scopes:$corpus/scopes.tc:")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/table3.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p" "$2"; }
md=$tmp/table3.md
{
	echo "# Table 3: variables saved and restored per context switch"
	echo
	echo "Written by \`threaded-c/bench/table3.sh\` (\`make bench\`$([ -n "${QUICK:-}" ] && echo ", QUICK=1")) on $(nproc) CPU(s)," \
	     "one node per program. A switch is a fiber start; \"min\": the sets the" \
	     "earth_tc plugin computes by liveness; \"all\": \`earthcc --save-all\`" \
	     "(every local in scope at every boundary). Counts, not times: they do" \
	     "not depend on the machine's load."
	echo
	echo "The EARTH-MANNA paper's Table 3 counts *registers* saved and restored" \
	     "per switch by the PGI-based Threaded-C compiler and finds the average" \
	     "\"quite low for all five programs\" (shared/reference/002, section 2)." \
	     "We count C *variables* moved between the frame and locals at fiber" \
	     "boundaries (the C compiler then keeps those locals in registers or not);" \
	     "parameters loaded at fiber 0 count as restores, frame-resident" \
	     "variables (arrays, address-taken) are never moved. The benchmark" \
	     "programs of benchmarks/apps report the same counters from" \
	     "benchmarks/apps/run_apps.sh (apps.md)."
	echo
	echo "| program | switches | restored min | saved min | sum min | restored all | saved all | sum all | all / min |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$md"

printf '%-14s %10s | %8s %8s %8s | %8s %8s %8s\n' program switches \
	"rest.min" "saved.min" "sum.min" "rest.all" "saved.all" "sum.all" >&2
for entry in "${progs[@]}"; do
	IFS=: read -r name src args <<<"$entry"
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
	printf '%-14s %10s | %8s %8s %8s | %8s %8s %8s\n' "$name" "${r[min.sw]}" \
		"${r[min.rest]}" "${r[min.saved]}" "${r[min.sum]}" \
		"${r[all.rest]}" "${r[all.saved]}" "${r[all.sum]}" >&2
	echo "| $name | ${r[min.sw]} | ${r[min.rest]} | ${r[min.saved]} | ${r[min.sum]} | ${r[all.rest]} | ${r[all.saved]} | ${r[all.sum]} | $(awk -v a="${r[all.sum]}" -v m="${r[min.sum]}" 'BEGIN { printf (m > 0 ? "%.2f" : "-"), a / (m > 0 ? m : 1) }') |" >>"$md"
	unset r
done
results=${RESULTS_DIR:-docs/results}
mkdir -p "$results" && cp "$md" "$results/table3.md"
