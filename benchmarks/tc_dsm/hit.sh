#!/usr/bin/env bash
# hit.sh - a covered access through a SHARED pointer against a private
# one (installed as $(BUILD)/rel/bench/tc_dsm_hit, run by `make bench`):
#   tc_dsm_hit             ns per covered access (hit.tc, progs/tc_dsm_hit)
#   tc_dsm_plain           ns per access to a private array, same loop
#   tc_dsm_hit_over_plain  their ratio (target: 1.0, nothing between a
#                          fiber and pages it acquired)
# Each the median of 5 runs (3 with QUICK=1); every run's sums must agree.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRIVER_NAME=tc_dsm_hit
# rel, quick, status; metric, ratio, grab, run
. "$here/lib/driver.sh"
# median
. "$here/lib/median.sh"
prog=$here/progs/tc_dsm_hit
if [ ! -x "$prog" ]; then
	echo "# tc_dsm_hit: $prog is missing (the Threaded-C plugin is not" \
	     "built: make tc): skipped"
	exit 0
fi
runs=$([ -n "$quick" ] && echo 3 || echo 5)
reps=$([ -n "$quick" ] && echo 1000 || echo 4000)
echo "# tc_dsm_hit: $(lscpu | sed -n 's/^Model name: *//p' | head -n1);" \
     "one node, load average $(cut -d' ' -f1-3 /proc/loadavg)"
C=() P=() R=()
for ((i = 0; i < runs; i++)); do
	run "$prog" "$reps" || continue
	grep -q "sums equal" <<<"$out" || {
		echo "# tc_dsm_hit: FAILED: the sums differ: $out"
		status=1
		continue
	}
	c=$(grab "$out" covered) p=$(grab "$out" plain)
	C+=("$c") P+=("$p") R+=("$(ratio "$c" "$p")")
done
each() { [ "$#" -gt 0 ] && printf '%s\n' "$@" | median %.4f; }
v=$(each "${C[@]}") && metric tc_dsm_hit "$v" ns
v=$(each "${P[@]}") && metric tc_dsm_plain "$v" ns
v=$(each "${R[@]}") && metric tc_dsm_hit_over_plain "$v" x
exit $status
