#!/usr/bin/env bash
# Runs Criterion test binaries one after another; prints one line per
# binary with its time and a final "N passed, N failed" line; exits
# non-zero on any failure. Usage: tests/run.sh VARIANT BIN...
set -u
variant=$1; shift
pass=0; fail=0; failed=()
# EARTH_MODE set: the runtime suite once more in that node mode (Makefile
# test-asan). A single-poll node does the SU's work only between fibers,
# so a test whose fiber spins until the SU has worked is dual/interrupt
# only.
# TSan: UCX's libucm patches mmap/madvise in libc (its memory hooks),
# which a thread's exit then runs before TSan knows the thread: every
# program crashed. The hooks only serve UCX's registration cache, which
# shared memory and TCP lanes do not use.
[ "$variant" = tsan ] && export UCX_MEM_MMAP_HOOK_MODE=none
filter=()
[ "${EARTH_MODE:-}" = single-poll ] && filter=("--filter=!(runtime_modes/floods*)")
t_all=$SECONDS
for bin in "$@"; do
	name=$(basename "$bin")
	t0=$SECONDS
	out=$("$bin" --jobs=1 --short-filename "${filter[@]}" 2>&1); rc=$?
	took="$((SECONDS - t0)) s"
	summary=$(printf '%s\n' "$out" | grep -E '^\[====\] Synthesis:' | tail -n 1)
	p=$(printf '%s' "$summary" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
	f=$(printf '%s' "$summary" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
	c=$(printf '%s' "$summary" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
	p=${p:-0}; f=${f:-0}; c=${c:-0}
	if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "$c" -ne 0 ] || [ -z "$summary" ]; then
		# Criterion prints assertion failures as [----] lines: show
		# what surrounds them (else the end of the output).
		rest=$(printf '%s\n' "$out" | grep -vE '^\[(SKIP|RUN |PASS)\]')
		ctx=$(printf '%s\n' "$rest" | grep -E -B2 -A12 \
			'Assertion|\[FAIL\]|ERROR|WARNING|Crash|Timeout|signal')
		printf '%s\n' "${ctx:-$rest}" | tail -n 80
		failed+=("$name")
		fail=$((fail + f + c + (f + c == 0 ? 1 : 0)))
		echo "FAIL [$variant] $name ($summary) ($took)"
	else
		echo "ok   [$variant] $name: $p passed ($took)"
	fi
	pass=$((pass + p))
done
echo "$variant: $pass passed, $fail failed ($((SECONDS - t_all)) s)"
[ "${#failed[@]}" -eq 0 ] || { echo "[$variant] failed: ${failed[*]}"; exit 1; }
