#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-layers.sh - the runtime's layers stay acyclic (docs/architecture.md,
# "Layers"), and the maps name every file. Every file of runtime/<layer>/
# may include and call only its own layer and the layers below it; eu and
# su, side by side, not each other. The queue library (queues/, the bottom
# layer) is a library of its own: its files include and call only each
# other. runtime/README.md names every file of runtime/ in the row of its
# folder, queues/README.md every file of queues/.
#   tools/check-layers.sh [OBJDIR]
# Includes are read from the sources; with OBJDIR (a build's obj/ folder,
# e.g. build/asan/obj) calls are read from the objects too: every undefined
# symbol of an object must be defined in its own layer or below.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bottom to top; layers of equal rank may not see each other.
declare -A rank=([queues]=0 [base]=1 [net]=2 [gas]=3 [unit]=4 [dsm]=5 [eu]=6 [su]=6
		 [node]=7)
# Where a layer's files live: runtime/<layer>, but the queue library at the
# top of the tree.
dir_of() { if [ "$1" = queues ]; then echo queues; else echo "runtime/$1"; fi; }
bad=0
fail() { echo "layers: $*" >&2; bad=1; }

allowed() { # from-layer to-layer
	local f=$1 t=$2
	[ "$f" = "$t" ] && return 0
	[ "${rank[$t]}" -lt "${rank[$f]}" ]
}

for layer in "${!rank[@]}"; do
	[ -d "$(dir_of "$layer")" ] || fail "$(dir_of "$layer") is missing"
done
for d in runtime/*/; do
	d=${d%/}; l=${d#runtime/}
	case $l in include|launcher) continue ;; esac
	[ -n "${rank[$l]+x}" ] || fail "$d is not a layer (tools/check-layers.sh lists them)"
done

# ---- includes ----
for layer in "${!rank[@]}"; do
	for f in "$(dir_of "$layer")"/*.[ch]; do
		[ -e "$f" ] || continue
		while IFS=: read -r line inc; do
			inc=${inc#*\"}; inc=${inc%%\"*}
			if [ "$layer" = queues ]; then
				case $inc in
				*/*) fail "$f:$line: #include \"$inc\": the queue library includes only its own headers, by file name" ;;
				*) [ -e "queues/$inc" ] || fail "$f:$line: #include \"$inc\": not a file of queues/" ;;
				esac
				continue
			fi
			case $inc in
			earth.h | earth_dsm.h | earth_dsm_fiber.h) continue ;; # the public API
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
	current() { [ -e "$1" ] && [ -e "$(dir_of "$2")/$(basename "${1%.o}").c" ]; }
	objs_of() { if [ "$1" = queues ]; then echo "$obj/../queues"; else echo "$obj/$1"; fi; }
	for layer in "${!rank[@]}"; do
		for o in "$(objs_of "$layer")"/*.o; do
			current "$o" "$layer" || continue
			while read -r sym; do def[$sym]=$layer; done < <(nm --defined-only "$o" | awk '$2 ~ /[TDBRCVW]/ {print $3}')
		done
	done
	for layer in "${!rank[@]}"; do
		for o in "$(objs_of "$layer")"/*.o; do
			current "$o" "$layer" || continue
			while read -r sym; do
				to=${def[$sym]-}
				[ -n "$to" ] || continue # libc and friends
				allowed "$layer" "$to" || fail "${o#"$1"/}: uses $sym of $to: $layer may not reach $to (upward or sideways)"
			done < <(nm -u "$o" | awk '{print $2}')
		done
	done
fi

# ---- the maps ----
# A row of runtime/README.md's table starts with its folder: "| eu | ...".
for f in runtime/*/*; do
	[ -f "$f" ] || continue
	d=${f#runtime/}; d=${d%%/*}; b=$(basename "$f")
	grep -q "^| $d |.*\`$b\`" runtime/README.md ||
		fail "$f is not in runtime/README.md (add it to the row of $d/ with one line on what it does)"
done
for f in queues/* queues/tests/*; do
	[ -f "$f" ] || continue
	b=${f#queues/}
	[ "$b" = README.md ] && continue
	grep -q "\`$b\`" queues/README.md ||
		fail "$f is not in queues/README.md (add a line on what it does)"
	grep -q "^| queues |.*\`$(basename "$f")\`" runtime/README.md ||
		fail "$f is not in runtime/README.md (add it to the rows of queues/)"
done

if [ $bad -ne 0 ]; then
	echo "layers: FAILED (a layer reached up or sideways, or a map misses a file; see docs/architecture.md, \"Layers\")" >&2
	exit 1
fi
echo "layers: queues < base < net < gas < unit < dsm < eu, su < node: no upward or sideways include${1:+ or call}; the maps name every file"
