#!/usr/bin/env bash
# The main job (`make run`): the headline experiment on this host with
# default settings, in about 2 minutes on 2 cores.
#   1. Table 2 of the EARTH-MANNA paper: the EU's overhead and the SU's cost
#      per operation, both queue modes (eu_overhead), on the default path
#      (the EU performs what stays on its node) and on the paper's (every
#      operation through the SU, EARTH_EU_SIGNALS=0).
#   2. Figure 3: Livermore Loop 7 latency hiding, the masking table and the
#      plots (ll7, QUICK: n = 9900 and 10^6, x1 and x16; shm through node
#      1's SU, shm one-sided from its global memory, and tcp).
#   3. One traced 2-node LL7 job: the timeline (Chrome trace-event JSON for
#      Perfetto), its SVG utilisation picture, and the per-node time
#      breakdown.
# Prints where every result file is at the end.
#
#   benchmarks/main_job.sh BUILD_DIR [OUT_DIR]
# OUT_DIR: else RESULTS_DIR, else BUILD_DIR/main-job. Nothing committed is
# written unless asked: the default folder is under the build folder, and
# docs/results only when OUT_DIR or RESULTS_DIR names it
# (`make run RESULTS_DIR=docs/results`).
set -uo pipefail
build=${1:?usage: main_job.sh BUILD_DIR [OUT_DIR]}
out=${2:-${RESULTS_DIR:-$build/main-job}}
bin=$build/rel
mkdir -p "$out"
echo "main job: results into $out"
for f in bench/eu_overhead bench/ll7 bin/earthrun bin/earthtrace; do
	if [ ! -x "$bin/$f" ]; then
		echo "main job: $bin/$f is missing: run 'make' first" >&2
		exit 1
	fi
done
t_start=$(date +%s)
step() { printf '\n[%s] (%3ds) %s\n' "$1" $(($(date +%s) - t_start)) "$2"; }
status=0

step "1/3" "Table 2: EU overhead and SU cost per operation (both queue modes, both paths)"
# Twice: the default, where a dual node's EU performs what stays on its
# node itself (SYNC, local GET/DATA, INVOKE: no SU cost), and the paper's
# design, every operation through the SU (EARTH_EU_SIGNALS=0).
if QUICK=1 "$bin/bench/eu_overhead" > "$out/table2.log" 2>&1 &&
	EARTH_EU_SIGNALS=0 QUICK=1 "$bin/bench/eu_overhead" > "$out/table2-su.log" 2>&1; then
	awk '
	$1 == "METRIC" && $2 !~ /\.cycles$/ { v[FILENAME == ARGV[1] ? "eu" : "su", $2] = $3 }
	# an EU-path SU cost of 0: the EU performed the operation itself
	function su(path, key) {
		x = v[path, key]
		return x == "" ? "-" : (path == "eu" && x + 0 == 0 ? "on EU" : x)
	}
	END {
		n = split("sync get_sync data_sync blkmov_sync invoke end_function", ops, " ")
		split("SYNC GET_SYNC DATA_SYNC BLKMOV_SYNC(256B) INVOKE END_FUNCTION", names, " ")
		split("700 780 780 - 800-1500 750", eu95, " ")
		split("200 300 300 - 300-1000 0", su95, " ")
		f = "%-18s %7s %7s %7s %7s  %7s %7s %7s %7s  %8s %8s\n"
		printf "  %-18s %-31s  %-31s  %s\n", "", "EU path (default), ns", \
		    "SU path (EARTH_EU_SIGNALS=0), ns", "1995, ns"
		printf "  " f, "operation", "EU hwq", "EU sw", "SU hwq", "SU sw", \
		    "EU hwq", "EU sw", "SU hwq", "SU sw", "EU", "SU"
		for (i = 1; i <= n; i++) {
			k = ops[i]
			printf "  " f, names[i], \
			    v["eu", "eu_overhead." k ".hwq"], v["eu", "eu_overhead." k ".sw"], \
			    su("eu", "su_cost." k ".hwq"), su("eu", "su_cost." k ".sw"), \
			    v["su", "eu_overhead." k ".hwq"], v["su", "eu_overhead." k ".sw"], \
			    su("su", "su_cost." k ".hwq"), su("su", "su_cost." k ".sw"), \
			    eu95[i], su95[i]
		}
		printf "  " f, "END_THREAD", v["eu", "end_thread"], v["eu", "end_thread.sw"], \
		    "-", "-", v["su", "end_thread"], v["su", "end_thread.sw"], "-", "-", "720", "0"
		print "  (on EU: the EU performs the operation itself; no request reaches the SU)"
	}' "$out/table2.log" "$out/table2-su.log" | tee "$out/table2.txt"
	grep '^METRIC' "$out/table2.log" > "$out/table2.metrics"
	grep '^METRIC' "$out/table2-su.log" > "$out/table2-su.metrics"
else
	echo "  eu_overhead FAILED (see $out/table2.log, $out/table2-su.log)"
	status=1
fi

step "2/3" "Figure 3: Livermore Loop 7 latency hiding (2 nodes: shm, shm one-sided, tcp)"
if QUICK=1 RESULTS_DIR="$out" "$bin/bench/ll7" > "$out/ll7.log" 2>&1; then
	grep -E '^# ll7: (2 nodes|medians)' "$out/ll7.log" | sed 's/^# /  /'
	if [ -f "$out/ll7-summary.md" ]; then
		sed 's/^/  /' "$out/ll7-summary.md"
	fi
	grep '^METRIC' "$out/ll7.log" | grep -v '\.cycles '
else
	echo "  ll7 FAILED (see $out/ll7.log)"
	status=1
fi

step "3/3" "A traced 2-node LL7 job: timeline and time breakdown"
rm -f "$out/timeline.json" "$out/breakdown.json"
if "$bin/bin/earthrun" -n 2 --trace "$out/timeline.json" \
	--stats=json "$out/breakdown.json" \
	"$bin/bench/ll7" --job main dual 100000 1 1 1 4096 \
	> "$out/traced-job.log" 2>&1 &&
	"$bin/bin/earthtrace" --title "LL7, n = 100000, 2 nodes (shm)" \
		"$out/timeline.json" -o "$out/timeline.svg"; then
	awk '
	# The first number after "key": in s.
	function num(s, key) {
		if (!match(s, "\"" key "\":[0-9.]+"))
			return 0
		return substr(s, RSTART + length(key) + 3, RLENGTH - length(key) - 3) + 0
	}
	/"node":/ {
		eu = substr($0, index($0, "\"eu\":"))
		su = substr($0, index($0, "\"su\":"))
		wall = num($0, "wall_ns")
		if (wall <= 0)
			next
		printf "  node %d: wall %.1f ms; EU fibers %.0f%%, runtime %.0f%%, idle %.0f%%; SU serve %.0f%%, receive %.0f%%, send %.0f%%, idle %.0f%%\n", \
		    num($0, "node"), wall / 1e6, 100 * num(eu, "fiber_ns") / wall, \
		    100 * num(eu, "runtime_ns") / wall, 100 * num(eu, "idle_ns") / wall, \
		    100 * num(su, "serve_ns") / wall, 100 * num(su, "recv_ns") / wall, \
		    100 * num(su, "send_ns") / wall, 100 * num(su, "idle_ns") / wall
	}' "$out/breakdown.json"
else
	echo "  traced job FAILED (see $out/traced-job.log)"
	status=1
fi

printf '\nmain job: done in %ds%s\n' $(($(date +%s) - t_start)) \
	"$([ $status = 0 ] || echo ' (with failures)')"
echo "Result files:"
for f in table2.txt table2.log table2-su.log ll7-summary.md ll7-summary.csv ll7.csv \
	ll7-shm.svg ll7-shm.png ll7-shm_direct.svg ll7-shm_direct.png \
	ll7-tcp.svg ll7-tcp.png ll7.log \
	timeline.json timeline.svg breakdown.json traced-job.log; do
	[ -e "$out/$f" ] && printf '  %s\n' "$out/$f"
done
echo "Open timeline.json in https://ui.perfetto.dev (or chrome://tracing);"
echo "full runs of every benchmark: make bench (into $build/results/<date>-<host>/;"
echo "make bench UPDATE_DOCS=1 updates docs/results, see docs/results/README.md)."
exit $status
