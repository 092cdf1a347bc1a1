#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-layers.sh - the runtime's layers stay acyclic (docs/architecture.md,
# "Layers"). Every file of runtime/<layer>/ may include and call only its
# own layer and the layers below it; eu and su, side by side, not each
# other.
#   tools/check-layers.sh [OBJDIR]
# Includes are read from the sources; with OBJDIR (a build's obj/ folder,
# e.g. build/asan/obj) calls are read from the objects too: every undefined
# symbol of an object must be defined in its own layer or below.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bottom to top; layers of equal rank may not see each other.
declare -A rank=([base]=0 [queues]=1 [net]=2 [gas]=3 [unit]=4 [eu]=5 [su]=5
		 [node]=6)
bad=0
fail() { echo "layers: $*" >&2; bad=1; }

allowed() { # from-layer to-layer
	local f=$1 t=$2
	[ "$f" = "$t" ] && return 0
	[ "${rank[$t]}" -lt "${rank[$f]}" ]
}

for layer in "${!rank[@]}"; do
	[ -d "runtime/$layer" ] || fail "runtime/$layer is missing"
done
for d in runtime/*/; do
	d=${d%/}; l=${d#runtime/}
	case $l in include|launcher) continue ;; esac
	[ -n "${rank[$l]+x}" ] || fail "$d is not a layer (tools/check-layers.sh lists them)"
done

# ---- includes ----
for layer in "${!rank[@]}"; do
	for f in runtime/"$layer"/*.[ch]; do
		[ -e "$f" ] || continue
		while IFS=: read -r line inc; do
			inc=${inc#*\"}; inc=${inc%%\"*}
			case $inc in
			earth.h) continue ;; # the public API
			*/*) to=${inc%%/*} ;;
			*) fail "$f:$line: #include \"$inc\": include runtime headers by layer folder (\"layer/file.h\")"; continue ;;
			esac
			if [ -z "${rank[$to]+x}" ]; then
				fail "$f:$line: #include \"$inc\": $to is not a layer"
			elif ! allowed "$layer" "$to"; then
				fail "$f:$line: #include \"$inc\": $layer may not include $to (upward or sideways)"
			fi
		done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
	done
done

# ---- calls and data, from the objects ----
if [ $# -ge 1 ]; then
	obj=$1/runtime
	[ -d "$obj" ] || { echo "layers: no objects in $obj (build first)" >&2; exit 2; }
	declare -A def
	# An object of a source that still exists (a build folder keeps the
	# objects of moved files).
	current() { [ -e "$1" ] && [ -e "runtime/$2/$(basename "${1%.o}").c" ]; }
	for layer in "${!rank[@]}"; do
		for o in "$obj/$layer"/*.o; do
			current "$o" "$layer" || continue
			while read -r sym; do def[$sym]=$layer; done < <(nm --defined-only "$o" | awk '$2 ~ /[TDBRCVW]/ {print $3}')
		done
	done
	for layer in "${!rank[@]}"; do
		for o in "$obj/$layer"/*.o; do
			current "$o" "$layer" || continue
			while read -r sym; do
				to=${def[$sym]-}
				[ -n "$to" ] || continue # libc and friends
				allowed "$layer" "$to" || fail "${o#"$1"/}: uses $sym of $to: $layer may not reach $to (upward or sideways)"
			done < <(nm -u "$o" | awk '{print $2}')
		done
	done
fi

if [ $bad -ne 0 ]; then
	echo "layers: FAILED (a layer reached up or sideways; see docs/architecture.md, \"Layers\")" >&2
	exit 1
fi
echo "layers: base < queues < net < gas < unit < eu, su < node: no upward or sideways include${1:+ or call}"
