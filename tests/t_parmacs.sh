#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_parmacs.sh - the PARMACS programs of tests/parmacs (written here:
# Jacobi, matrix multiply, blocked LU, all-to-all transpose, lock-heavy
# accumulation, flag pipeline) built with their own Makefile as a
# SPLASH-2 / Splash-3 suite is built (CC=earthcc MACROS=$(earthcc
# --showme:parmacs), m4 then earthcc), then each run with
# `earthrun -n N PROG -pP` for N = 1..4 nodes and P = N and 2N + 1
# threads, over each transport of T_PARMACS_TRANSPORTS (earthrun
# --transport; default "shm tcp"; one node: the default only): each must
# exit 0 and print its "ok PROG p=P ..." line (every program checks its
# own result exactly against a sequential run on node 0), each run on
# several nodes must show the protocol counts its layout fixes
# (check_counts, from --stats-json; no page refreshed at a grant), a
# bad -p must be refused with exit status 2, and 65 threads on one node
# must end the job naming the 64 a node runs. The same sources built on
# POSIX threads (benchmarks/parmacs/pthreads.m4) must each print a timed
# "ok" line on 1 and 3 threads. `make test-parmacs`.
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
# A suite's Makefile knows its sources, not the runtime earthcc links in:
# programs older than the library are built again.
for p in "${progs[@]}"; do
	[ -e "$out/$p" ] && [ "$out/$p" -ot "$build/rel/lib/libearth.a" ] &&
		rm -f "$out/$p"
done
make --no-print-directory -s -C tests/parmacs CC="$earthcc" MACROS="$macros" \
	O="$out" all
[ -x "$earthrun" ] || { echo "t_parmacs: $earthrun is missing (make)" >&2; exit 1; }

read -r -a transports <<<"${T_PARMACS_TRANSPORTS:-shm tcp}"
# The protocol's counts each program must show (--stats-json, per node),
# derived from its data layout and placement (docs/results/dsm.md,
# "Exact counts"); with the default sizes: 4 KiB pages; jacobi 20000
# doubles, 20 sweeps; matmul 64x64 longs (8 rows a page); lu 128x128, 16x16
# blocks (8 block steps of 3 phases); transpose 256x256 longs (2 rows a
# page); lockacc m = 200, 100 chunks; pipeline 100 rounds. Threads are
# spread round-robin: node k runs T_k = P/N (+1 when k < P mod N), ids
# k, k + N, ... (GET_PID). Every lock and barrier is made by main, on node
# 0. Where timing decides a count (which node touches a page first, which
# thread takes the next chunk, how threads of one node share an interval)
# a bound is asserted, with why.
# check_counts PROG NODES THREADS WHAT JSON
check_counts() {
	local p=$1 n=$2 np=$3 what=$4 json=$5 k
	local -a F D LL LR B BM T
	if ! jq -e '.nodes' "$json" >/dev/null 2>&1; then
		fail "$what: no statistics in $json"
		return
	fi
	while read -r k f d ll lr b bm; do
		F[k]=$f D[k]=$d LL[k]=$ll LR[k]=$lr B[k]=$b BM[k]=$bm
	done < <(jq -r '.nodes[] | "\(.node) \(.dsm.fetches) \(.dsm.diffs)
		\(.dsm.lock_local) \(.dsm.lock_remote) \(.dsm.barriers)
		\(.dsm.barrier_msgs)"' "$json" | paste -d' ' - - -)
	[ "${#F[@]}" = "$n" ] || { fail "$what: ${#F[@]} nodes in $json"; return; }
	local ft=0 dt=0 lt=0
	for ((k = 0; k < n; k++)); do
		T[k]=$((np / n + (k < np % n)))
		ft=$((ft + F[k])) dt=$((dt + D[k])) lt=$((lt + LL[k] + LR[k]))
	done
	# want WHAT-OF-COUNT GOT OP WANT
	want() { (($2 $3 $4)) || fail "$what: $1 is $2, wanted $3 $4 ($json)"; }
	# Barrier episodes and lock acquires each thread makes.
	local eps=0 locks=0
	case $p in
	jacobi) eps=21 locks=1 ;; # a barrier after the setup and each sweep; the id lock
	lu) eps=25 ;;             # after the setup and each of 8 x 3 phases
	transpose) eps=2 ;;
	lockacc) locks=400 ;; # m x (total + bucket); the chunks' below
	esac
	# Barriers: managed by node 0 (one episode each); messages: every
	# thread's arrival to node 0 (its own node's too) and node 0's release
	# of every node that has threads, one grant each (nn of them).
	# Locks: local on node 0, remote elsewhere.
	local nn=$((np < n ? np : n))
	for ((k = 0; k < n; k++)); do
		want "node $k barriers" "${B[k]}" == $((k ? 0 : eps))
		want "node $k barrier messages" "${BM[k]}" == \
			$(((T[k] + (k ? 0 : nn)) * eps))
		if [ "$p" = lockacc ]; then
			# + the chunks: 100 GETSUBs that get one, then a bucket
			# lock each, and one GETSUB per thread that gets -1;
			# which thread takes a chunk is timing: a bound here, the
			# job's total is exact below.
			want "node $k lock acquires" \
				"$((LL[k] + LR[k]))" '>=' $((T[k] * (locks + 1)))
		else
			want "node $k lock acquires" "$((LL[k] + LR[k]))" == \
				$((T[k] * locks))
		fi
		want "node $k acquires of another node's lock" \
			"${LL[k]}" == $((k ? 0 : LL[k]))
		want "node $k acquires of its own locks" "${LR[k]}" == \
			$((k ? LR[k] : 0))
	done
	case $p in
	jacobi)
		# Each pair of neighbouring blocks on different nodes (at least
		# N - 1 of them) shares a page read across it every sweep: at
		# least one fetch per such pair and sweep. At most: every
		# thread's two neighbour pages every sweep, the first writes to
		# pages homed elsewhere (2 arrays x 2 ends), and node 0's check
		# (one array, 40 pages). Which node homes a shared page is first
		# touch: timing.
		want "job fetches" $ft '>=' $(((n - 1) * 20))
		want "job fetches" $ft '<=' $((2 * np * 20 + 4 * np + 41))
		;;
	matmul)
		# A and B (8 pages each) written by main: homed on node 0, read
		# whole by every other node; every node writes rows of every
		# page of C (8 rows a page, rows dealt round-robin), and each
		# page of C has one home (whichever node touched it first): each
		# of the others fetches it before its first write and sends one
		# diff at its end. A node of several threads sends one more each
		# time a thread's end (a release) goes out before a sibling
		# writes that page again (timing): at most one per thread and
		# page.
		want "job fetches" $ft == $((24 * (n - 1)))
		if ((np == n)); then
			want "job diffs" $dt == $((8 * (n - 1)))
		else
			want "job diffs" $dt '>=' $((8 * (n - 1)))
			want "job diffs" $dt '<=' $((8 * np))
		fi
		want "node 0 fetches" "${F[0]}" '<=' 8
		;;
	transpose)
		if ((np == n && 128 % n == 0)); then
			# Blocks of 256 / N rows: 128 / N pages of each matrix
			# homed on each node (first touch by their only writer).
			# Phase 2 reads all of A, phase 3 all of B: the pages
			# homed elsewhere, once each (written before the barrier
			# that precedes the read, never again before it); node
			# 0's check reads all of A again after phase 3 rewrote it;
			# the others fetch the page of the barrier's handle
			# (homed on node 0) once.
			local o=$((128 - 128 / n))
			want "node 0 fetches" "${F[0]}" == $((3 * o))
			for ((k = 1; k < n; k++)); do
				want "node $k fetches" "${F[k]}" == $((2 * o + 1))
			done
			want "job diffs" $dt == 0
		else
			# Blocks not on page bounds: pages with two writers
			# (first touch decides their home).
			want "job fetches" $ft '<=' $((n * (3 * 128 + 1)))
		fi
		;;
	lockacc)
		want "job lock acquires" $lt == $((np * (locks + 1) + 200))
		# Everything is on node 0's page (main wrote it): node 0 never
		# fetches nor diffs; the others at most once per acquire: each
		# lock acquire, and the creation of each of their threads (a
		# thread may read the page before its first lock; whether that
		# lock's grant names the page again depends on node 0's
		# releases in between: its page kept writable is named in each).
		want "node 0 fetches" "${F[0]}" == 0
		want "node 0 diffs" "${D[0]}" == 0
		want "job fetches" $ft '<=' $((lt - LL[0] + np - T[0]))
		# Every critical section writes that page (the sums, the
		# chunk counter; a GETSUB that gets -1 counts the threads that
		# saw it): with one thread per node, each release of another
		# node sends one diff.
		for ((k = 1; k < n && np == n; k++)); do
			want "node $k diffs" "${D[k]}" == "${LR[k]}"
		done
		;;
	pipeline)
		# Slots and flags on node 0's page (main wrote it). Stage 0 is
		# on node 0 and writes its slot there: no diff. With one stage
		# per node, every other node writes that page once per round
		# (its slot, or the sum) and releases it once after (SETPAUSE):
		# one diff per round; and reads a slot another node wrote after
		# its acquire: at least one fetch per round.
		want "node 0 diffs" "${D[0]}" == 0
		for ((k = 1; k < n; k++)); do
			if ((np == n)); then
				want "node $k diffs" "${D[k]}" == 100
				want "node $k fetches" "${F[k]}" '>=' 100
			else
				# Threads of one node share its intervals: a
				# release may carry two threads' writes.
				want "node $k diffs" "${D[k]}" '<=' $((100 * T[k]))
			fi
		done
		;;
	esac
}

# run_one PROG NODES THREADS TRANSPORT ("" for the default) [ARGS]
run_one() {
	local p=$1 n=$2 np=$3 t=$4 x=${5:-} rc=0
	local log=$out/$1.n$2.p$3${4:+.$4}${5:+.${5// /}}.log
	local what="earthrun -n $n${t:+ --transport $t} $p -p$np${x:+ $x}"
	runs=$((runs + 1))
	if [ -n "$t" ]; then
		# (--transport: earthrun sets EARTH_TRANSPORT for its nodes,
		# shm without it.) The counts are the protocol's: no page
		# refreshed at an acquire (EARTH_DSM_REFRESH=0), no page
		# carried by a lock's grant between hosts
		# (EARTH_DSM_GRANT_PAGES=0), no home page kept writable and
		# named in notices unwritten (EARTH_DSM_HOME_KEEP=0: readers
		# would fetch it again as timing allows).
		EARTH_DSM_REFRESH=0 EARTH_DSM_GRANT_PAGES=0 \
			EARTH_DSM_HOME_KEEP=0 \
			timeout 300 "$earthrun" -n "$n" \
			--transport "$t" --stats-json="${log%.log}.json" \
			"$out/$p" "-p$np" $x >"$log" 2>&1 || rc=$?
	else
		timeout 300 "$earthrun" -n "$n" "$out/$p" "-p$np" $x >"$log" 2>&1 ||
			rc=$?
	fi
	if [ "$rc" != 0 ]; then
		fail "$what: exit $rc:"
		tail -n 20 "$log" >&2
	elif ! grep -q "ok $p p=$np " "$log"; then
		fail "$what: no \"ok $p p=$np\" line:"
		tail -n 20 "$log" >&2
	elif [ "$n" -gt 1 ]; then
		check_counts "$p" "$n" "$np" "$what" "${log%.log}.json"
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
# More threads than a node runs: CREATE ends the job naming the limit.
rc=0
timeout 60 "$earthrun" -n 1 "$out/lockacc" -p65 >"$out/lockacc.p65.log" 2>&1 ||
	rc=$?
if [ "$rc" != 70 ] || ! grep -q "EARTH_DSM_CREATE: thread 64 would be past \
the 64 program threads a node runs (at most 64 threads on the job's 1 \
node(s)): run on more nodes, or create fewer threads" "$out/lockacc.p65.log"; then
	fail "lockacc -p65 on 1 node: exit $rc, or no message naming the limit:"
	tail -n 5 "$out/lockacc.p65.log" >&2
fi
runs=$((runs + 1))
# LU with its blocks contiguous (lu -c, benchmarks/parmacs' lu_blocks):
# correct, with LU's barriers.
for n in 2 4; do
	for t in "${transports[@]}"; do
		run_one lu "$n" "$n" "$t" -c
		run_one lu "$n" $((2 * n + 1)) "$t" -c
	done
done
# The same sources on POSIX threads (benchmarks/parmacs/pthreads.m4, the
# floor benchmarks/parmacs measures against): each correct, and timed.
pth=$build/parmacs-pth
make --no-print-directory -s -C tests/parmacs CC=cc \
	MACROS="$PWD/benchmarks/parmacs/pthreads.m4" O="$pth" all
for p in "${progs[@]}"; do
	for np in 1 3; do
		rc=0
		timeout 120 "$pth/$p" "-p$np" >"$pth/$p.$np.log" 2>&1 || rc=$?
		if [ "$rc" != 0 ] ||
		   ! grep -q "ok $p p=$np .* us=[0-9]" "$pth/$p.$np.log"; then
			fail "$p on $np POSIX threads: exit $rc, or no timed \"ok\" line:"
			tail -n 20 "$pth/$p.$np.log" >&2
		fi
		runs=$((runs + 1))
	done
done
[ "$bad" = 0 ] || exit 1
echo "t_parmacs: ${#progs[@]} programs, $runs runs on 1-4 nodes and on" \
     "POSIX threads, all correct"
