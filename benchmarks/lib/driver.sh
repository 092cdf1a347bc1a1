# driver.sh - sourced by the benchmarks' shell drivers that run programs
# and print figures (compare.sh, smp.sh), installed in $(BUILD)/rel/bench:
# where the programs are, QUICK, METRIC lines, ratios, numbers out of a
# program's output, and running a command with its output kept. The
# driver sets `here` (its own folder) and DRIVER_NAME first.

rel=$(dirname "$here")     # $(BUILD)/rel
bin=$rel/compare           # the comparisons' programs
earthrun=$rel/bin/earthrun
quick=${QUICK:-0}          # "" or 1
[ "$quick" = 0 ] && quick=""
status=0 # 1 once a run failed

# metric NAME VALUE UNIT
metric() { echo "METRIC $1 $2 $3"; }
# ratio A B: A / B with 3 decimals, empty when either is missing
ratio() {
	[ -n "${1:-}" ] && [ -n "${2:-}" ] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'
}
# grab "text" "pattern before the number": the number after it
grab() { sed -n "s/.*$2 \([0-9.]*\).*/\1/p" <<<"$1" | head -n1; }
# run CMD...: prints the command (with DRIVER_NAME, default "bench") and
# its output but for rows and METRIC lines; leaves its output in $out and
# returns its status
run() {
	local who=$DRIVER_NAME
	echo "# $who: $*"
	out=$("$@" 2>&1)
	local st=$?
	echo "$out" | grep -v '^mpirow\|^ll7row\|^METRIC' || true
	[ $st -eq 0 ] || { echo "# $who: FAILED (status $st): $*"; status=1; }
	return $st
}
