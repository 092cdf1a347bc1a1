#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# man.sh - the manual pages of man/: each formats with groff without a
# warning (-ww: all of them, as errors), each .so alias names a page that
# exists, and every function earth.h declares (after the preprocessor,
# which spells out the GET_SYNC/DATA_SYNC families) and every function
# earth_dsm.h and earth_dsm_fiber.h declare has a page or alias in man/man3, and every page's
# footer names the version in VERSION. Run by
# `make test-man` (and `make test`).
set -euo pipefail
cd "$(dirname "$0")/../man"
CC=${CC:-gcc}
fail() { echo "test-man: FAILED: $*" >&2; bad=1; }
bad=0 n=0
version=$(cat ../VERSION)
for p in man1/*.1 man3/*.3 man7/*.7; do
	n=$((n + 1))
	if so=$(sed -n 's/^\.so //p' "$p") && [ -n "$so" ]; then
		[ "$(wc -l <"$p")" = 1 ] || fail "$p: an alias is one .so line"
		[ -f "$so" ] || fail "$p: .so $so: no such page"
		continue
	fi
	grep -q '^\.TH ' "$p" || fail "$p: no .TH"
	grep -q "^\.TH .* \"EARTH $version\"" "$p" ||
		fail "$p: its .TH does not name \"EARTH $version\" (VERSION)"
	out=$(groff -man -Tutf8 -ww -z "$p" 2>&1) || fail "$p: groff failed"
	[ -z "$out" ] || fail "$p: $out"
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 man -l "$p" 2>&1 >/dev/null) || fail "$p: man -l failed"
		[ -z "$out" ] || fail "$p: man -l: $out"
	fi
done
# The functions of a public header: every identifier earth_* followed by
# "(" in the preprocessed header (declarations and inline definitions).
# pages HEADER MIN: each has a page; sets np to how many there are.
pages() {
	local f funcs
	funcs=$(echo "#include \"$1\"" | $CC -E -P -I../runtime/include -x c - |
		grep -o '\bearth_[a-z0-9_]*[[:space:]]*(' | tr -d ' (' | sort -u)
	np=$(wc -w <<<"$funcs")
	[ "$np" -gt "$2" ] || fail "parsed only $np functions from $1"
	for f in $funcs; do
		[ -f "man3/$f.3" ] || fail "$f ($1) has no page man/man3/$f.3"
	done
}
pages earth.h 50
nf=$np
pages earth_dsm.h 10
nd=$np
pages earth_dsm_fiber.h 10
[ "$bad" = 0 ] || exit 1
echo "test-man: $n pages format cleanly; the $nf functions of earth.h, the" \
	"$nd of earth_dsm.h and those of earth_dsm_fiber.h all have one"
