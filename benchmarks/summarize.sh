#!/usr/bin/env bash
# Merges the metrics.csv of several `make bench` runs into one markdown
# table: each metric's value in every run and the median across runs.
# Usage: summarize.sh RUN_DIR... > summary.md
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: summarize.sh RUN_DIR..." >&2; exit 2; }
. "$(dirname "$0")/lib/median.sh"
runs=$#
printf '| metric |'; for ((r = 1; r <= runs; r++)); do printf ' run %d |' "$r"; done
printf ' median | unit |\n|---|'; for ((r = 1; r <= runs; r++)); do printf -- '---:|'; done
printf -- '---:|---|\n'
# One line per metric, in the order first seen: name, unit, then its value
# in every run ("–" where a run lacks it). TSC cycle counts are left out.
{
	i=0
	for d in "$@"; do
		i=$((i + 1))
		tail -n +2 "$d/metrics.csv" | sed "s/^/$i,/"
	done
} | awk -F, -v runs="$runs" '
	!($3 in unit) { order[++n] = $3; unit[$3] = $5 }
	{ val[$3, $1] = $4 }
	END {
		for (k = 1; k <= n; k++) {
			m = order[k]; if (m ~ /\.cycles$/) continue
			printf "%s %s", m, unit[m]
			for (r = 1; r <= runs; r++)
				printf " %s", ((m, r) in val) ? val[m, r] : "–"
			printf "\n"
		}
	}' | while read -r m unit vals; do
	row="| \`$m\` |"
	for v in $vals; do row="$row $v |"; done
	med=$(tr ' ' '\n' <<<"$vals" | grep -v '^–$' | median %.3f)
	printf '%s %s | %s |\n' "$row" "$med" "$unit"
done
