# median.sh - sourced by the benchmarks' shell drivers (compare.sh,
# run_apps.sh, summarize.sh): the one median they all use.
#
# median: the median of the numbers on standard input, one per line (the
# mean of the middle two of an even count), printed with %g's precision
# or with FORMAT when given (median %.3f); prints nothing when there are
# none.
median() {
	sort -g | awk -v fmt="${1:-%.6g}" '{ v[NR] = $1 }
		END { if (NR) printf fmt "\n",
			NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
