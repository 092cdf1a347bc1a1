#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_parmacs.sh - the PARMACS programs of tests/parmacs (written here:
# Jacobi, matrix multiply, blocked LU, all-to-all transpose, lock-heavy
# accumulation, flag pipeline) built with their own Makefile as a
# SPLASH-2 / Splash-3 suite is built (CC=earthcc MACROS=$(earthcc
# --showme:parmacs), m4 then earthcc), then each run with
# `earthrun -n N PROG -pP` for N = 1..4 nodes and P = N and 2N + 1
# threads: each must exit 0 and print its "ok PROG p=P ..." line (every
# program checks its own result exactly against a sequential run on node
# 0), and a bad -p must be refused with exit status 2. `make test-parmacs`.
#
# While libearth.a lacks earth_dsm.h's functions (earth_dsm_main), the
# programs are compiled but neither linked nor run, and this says so.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
mkdir -p "$BUILD"
build=$(cd "$BUILD" && pwd)
export EARTH_BUILD=$build
earthcc=$PWD/threaded-c/earthcc
earthrun=${T_EARTHRUN:-$build/rel/bin/earthrun}
out=$build/parmacs
progs=(jacobi matmul lu transpose lockacc pipeline)
fail() { echo "t_parmacs: FAILED: $*" >&2; bad=1; }
bad=0

macros=$("$earthcc" --showme:parmacs)
if ! nm "$build/rel/lib/libearth.a" 2>/dev/null | grep -q ' T earth_dsm_main$'; then
	make --no-print-directory -s -C tests/parmacs CC="$earthcc" \
		MACROS="$macros" O="$out" objs
	echo "t_parmacs: ${#progs[@]} programs compiled; $build/rel/lib/libearth.a" \
		"has no earth_dsm_main yet, so they were not linked or run"
	exit 0
fi
make --no-print-directory -s -C tests/parmacs CC="$earthcc" MACROS="$macros" \
	O="$out" all
[ -x "$earthrun" ] || { echo "t_parmacs: $earthrun is missing (make)" >&2; exit 1; }

runs=0
for p in "${progs[@]}"; do
	for n in 1 2 3 4; do
		for np in "$n" $((2 * n + 1)); do
			runs=$((runs + 1))
			log=$out/$p.n$n.p$np.log
			rc=0
			timeout 300 "$earthrun" -n "$n" "$out/$p" "-p$np" >"$log" 2>&1 || rc=$?
			if [ "$rc" != 0 ]; then
				fail "earthrun -n $n $p -p$np: exit $rc:"
				tail -n 20 "$log" >&2
			elif ! grep -q "ok $p p=$np " "$log"; then
				fail "earthrun -n $n $p -p$np: no \"ok $p p=$np\" line:"
				tail -n 20 "$log" >&2
			fi
		done
	done
	rc=0
	timeout 60 "$earthrun" -n 2 "$out/$p" -p0 >"$out/$p.bad.log" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "$p -p0: exit $rc, wanted 2 (a usage error)"
done
[ "$bad" = 0 ] || exit 1
echo "t_parmacs: ${#progs[@]} programs, $runs runs on 1-4 nodes, all correct"
