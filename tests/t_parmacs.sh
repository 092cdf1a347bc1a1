#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_parmacs.sh - the PARMACS programs of tests/parmacs (written here:
# Jacobi, matrix multiply, blocked LU, all-to-all transpose, lock-heavy
# accumulation, flag pipeline) built with their own Makefile as a
# SPLASH-2 / Splash-3 suite is built (CC=earthcc MACROS=$(earthcc
# --showme:parmacs), m4 then earthcc), then each run with
# `earthrun -n N PROG -pP` for N = 1..4 nodes and P = N and 2N + 1
# threads, over each transport of T_PARMACS_TRANSPORTS (EARTH_TRANSPORT;
# default "shm tcp"; one node: the default only): each must exit 0 and print its "ok PROG p=P ..." line (every
# program checks its own result exactly against a sequential run on node
# 0), and a bad -p must be refused with exit status 2. `make test-parmacs`.
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
make --no-print-directory -s -C tests/parmacs CC="$earthcc" MACROS="$macros" \
	O="$out" all
[ -x "$earthrun" ] || { echo "t_parmacs: $earthrun is missing (make)" >&2; exit 1; }

read -r -a transports <<<"${T_PARMACS_TRANSPORTS:-shm tcp}"
# run_one PROG NODES THREADS TRANSPORT ("" for the default)
run_one() {
	local p=$1 n=$2 np=$3 t=$4 rc=0 log=$out/$1.n$2.p$3${4:+.$4}.log
	local what="${t:+EARTH_TRANSPORT=$t }earthrun -n $n $p -p$np"
	runs=$((runs + 1))
	if [ -n "$t" ]; then
		EARTH_TRANSPORT=$t timeout 300 "$earthrun" -n "$n" "$out/$p" "-p$np" \
			>"$log" 2>&1 || rc=$?
	else
		timeout 300 "$earthrun" -n "$n" "$out/$p" "-p$np" >"$log" 2>&1 || rc=$?
	fi
	if [ "$rc" != 0 ]; then
		fail "$what: exit $rc:"
		tail -n 20 "$log" >&2
	elif ! grep -q "ok $p p=$np " "$log"; then
		fail "$what: no \"ok $p p=$np\" line:"
		tail -n 20 "$log" >&2
	fi
}
runs=0
for p in "${progs[@]}"; do
	run_one "$p" 1 1 ""
	run_one "$p" 1 3 ""
	for n in 2 3 4; do
		for t in "${transports[@]}"; do
			run_one "$p" "$n" "$n" "$t"
			run_one "$p" "$n" $((2 * n + 1)) "$t"
		done
	done
	rc=0
	timeout 60 "$earthrun" -n 2 "$out/$p" -p0 >"$out/$p.bad.log" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "$p -p0: exit $rc, wanted 2 (a usage error)"
done
[ "$bad" = 0 ] || exit 1
echo "t_parmacs: ${#progs[@]} programs, $runs runs on 1-4 nodes, all correct"
