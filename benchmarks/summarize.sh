#!/usr/bin/env bash
# Merges the metrics.csv of several `make bench` runs into one markdown
# table: each metric's value in every run and the median across runs.
# Usage: summarize.sh RUN_DIR... > summary.md
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: summarize.sh RUN_DIR..." >&2; exit 2; }
{
	i=0
	for d in "$@"; do
		i=$((i + 1))
		tail -n +2 "$d/metrics.csv" | sed "s/^/$i,/"
	done
} | awk -F, -v runs=$# '
	!($3 in unit) { order[++n] = $3; unit[$3] = $5 }
	{ val[$3, $1] = $4 }
	END {
		printf "| metric |"; for (r = 1; r <= runs; r++) printf " run %d |", r
		printf " median | unit |\n|---|"; for (r = 1; r <= runs; r++) printf "---:|"
		printf "---:|---|\n"
		for (k = 1; k <= n; k++) {
			m = order[k]; if (m ~ /\.cycles$/) continue
			c = 0; printf "| `%s` |", m
			for (r = 1; r <= runs; r++) {
				if ((m, r) in val) { v[++c] = val[m, r]; printf " %s |", val[m, r] }
				else printf " – |"
			}
			# median of the c values (insertion sort)
			for (a = 2; a <= c; a++) { x = v[a]; b = a - 1
				while (b >= 1 && v[b] + 0 > x + 0) { v[b + 1] = v[b]; b-- }
				v[b + 1] = x }
			med = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
			printf " %.3f | %s |\n", med, unit[m]
		}
	}'
