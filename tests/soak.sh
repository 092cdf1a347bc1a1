#!/usr/bin/env bash
# Runs test binaries N times back to back (make soak: the job tests of
# table.txt), one line per round; stops at the first failure and names its
# round, binary and failing tests, with what Criterion said about them.
# Usage: tests/soak.sh N BIN...
set -u
if [ $# -lt 2 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: tests/soak.sh N BIN... (N: rounds, 1 or more; make soak sets SOAK=N)" >&2
	exit 2
fi
rounds=$1; shift
t_all=$SECONDS
for ((r = 1; r <= rounds; r++)); do
	t0=$SECONDS
	for bin in "$@"; do
		name=$(basename "$bin")
		out=$("$bin" --jobs=1 --short-filename 2>&1); rc=$?
		summary=$(printf '%s\n' "$out" | grep -E '^\[====\] Synthesis:' | tail -n 1)
		f=$(printf '%s' "$summary" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
		c=$(printf '%s' "$summary" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
		if [ "$rc" -ne 0 ] || [ -z "$summary" ] || [ "${f:-0}" -ne 0 ] || [ "${c:-0}" -ne 0 ]; then
			printf '%s\n' "$out" | grep -vE '^\[(SKIP|RUN |PASS)\]' | tail -n 80
			tests=$(printf '%s\n' "$out" |
				sed -n 's/^\[FAIL\] \([^ ]*::[^ ]*\): .*/\1/p' |
				sort -u | paste -sd ' ' -)
			echo "soak: round $r of $rounds: $name failed: ${tests:-(exit status $rc; see above)}"
			exit 1
		fi
	done
	echo "soak: round $r of $rounds: $# binaries passed ($((SECONDS - t0)) s)"
done
echo "soak: $rounds rounds of $# binaries passed ($((SECONDS - t_all)) s)"
