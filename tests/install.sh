#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install.sh - `make install` into a temporary prefix: the files it puts
# there (checked against the list below and README.md's "Install"), a
# program built against them with pkg-config, linked statically against
# libearth.a and dynamically against libearth.so (found with nothing set:
# the run path earth.pc gives a prefix the loader does not search), then
# `make uninstall` leaves no file behind. Run by `make test-install` (and `make test`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/earth-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-install: FAILED: $*" >&2; exit 1; }

make --no-print-directory -s install PREFIX="$tmp" DESTDIR= BUILD="$BUILD" \
	>"$tmp.log" 2>&1 || { cat "$tmp.log"; rm -f "$tmp.log"; fail "make install"; }
rm -f "$tmp.log"

# What must be there; earthcc, threadedc.h, tc_stats.h, libearth_tc.a and
# the plugin come from install-tc (compiler-plugin/module.mk).
# The soname carries the minor version while the major is 0 (Makefile).
ver=$(cat VERSION)
so=libearth.so.${ver%.*}
want=(include/earth.h lib/libearth.a lib/libearth.so "lib/$so"
      "lib/libearth.so.$ver" lib/pkgconfig/earth.pc bin/earthrun bin/earthtrace
      bin/earthcc include/threadedc.h include/tc_stats.h lib/libearth_tc.a
      lib/pkgconfig/earth-tc.pc include/earth_dsm.h include/earth_dsm_fiber.h
      share/earth/earth_dsm.ld
      share/earth/earth_parmacs.m4)
for m in man/man1/*.1 man/man3/*.3 man/man7/*.7; do want+=("share/$m"); done
for f in "${want[@]}"; do
	[ -e "$tmp/$f" ] || fail "$f was not installed"
done
[ "$(readlink "$tmp/lib/libearth.so")" = "$so" ] ||
	fail "lib/libearth.so should link to $so"
[ "$(readlink "$tmp/lib/$so")" = "libearth.so.$ver" ] ||
	fail "lib/$so should link to libearth.so.$ver"
# (What a command prints is read whole before grep -q looks at it: under
# pipefail a grep -q that stops at its match would fail the pipe with the
# writer's SIGPIPE.)
dyn=$(objdump -p "$tmp/lib/libearth.so.$ver")
grep -q "SONAME *${so//./\\.}\$" <<<"$dyn" ||
	fail "libearth.so.$ver has no soname $so"
# Nothing else (the plugin only when it was built).
extra=$(cd "$tmp" && find . -type f -o -type l | sed 's|^\./||' | sort |
	grep -vxF -f <(printf '%s\n' "${want[@]}" lib/earth/earth_tc.so) || true)
[ -z "$extra" ] || fail "installed but not expected: $extra"
# Every installed file is named in README.md's install section.
for f in "${want[@]}"; do
	case $f in share/man/*) continue ;; esac
	grep -qF "${f##*/}" README.md || fail "README.md does not list $f"
done

# A program against the installed files, through pkg-config.
export PKG_CONFIG_PATH="$tmp/lib/pkgconfig"
cflags=$(pkg-config --cflags earth)
libs=$(pkg-config --libs earth)
slibs=$(pkg-config --static --libs earth)
for l in hwloc numa dl pthread uring sodium ucp uct ucs pmix; do
	[[ " $slibs " == *" -l$l "* ]] || fail "earth.pc: -l$l is not a private lib"
done
[[ " $libs " != *" -lnuma "* ]] || fail "earth.pc: the private libs are in Libs"
cc=${CC:-gcc}
# shellcheck disable=SC2086
$cc -O1 $cflags tests/install/prog.c ${slibs/-learth/-l:libearth.a} \
	-o "$tmp/prog-static" || fail "static link"
# shellcheck disable=SC2086
$cc -O1 $cflags tests/install/prog.c $libs -o "$tmp/prog-shared" ||
	fail "shared link"
deps=$(ldd "$tmp/prog-static" || true) # "not a dynamic executable"
! grep -q libearth <<<"$deps" ||
	fail "prog-static depends on libearth.so"
# The documented line, `cc prog.c $(pkg-config --cflags --libs earth)`,
# makes a program that finds the library with nothing set: earth.pc gives
# a prefix the loader does not search a run path.
[[ " $libs " == *" -Wl,-rpath,$tmp/lib "* ]] ||
	fail "earth.pc: no run path for $tmp/lib in: $libs"
deps=$(env -u LD_LIBRARY_PATH ldd "$tmp/prog-shared")
grep -q "$tmp/lib/$so" <<<"$deps" ||
	fail "prog-shared does not load the installed $so without LD_LIBRARY_PATH"
for p in prog-static prog-shared; do
	out=$(env -u LD_LIBRARY_PATH "$tmp/$p" 2>&1) ||
		fail "$p: exit $?: $out"
	grep -q "installed earth: 42" <<<"$out" || fail "$p printed: $out"
done
# The installed earthcc names the installed PARMACS macros and links with
# the installed earth_dsm.ld.
m4file=$("$tmp/bin/earthcc" --showme:parmacs) ||
	fail "earthcc --showme:parmacs: exit $?"
[ "$m4file" = "$tmp/share/earth/earth_parmacs.m4" ] ||
	fail "earthcc --showme:parmacs names $m4file, not the installed one"
[[ "$("$tmp/bin/earthcc" --showme:link)" == *"-Wl,-T,$tmp/share/earth/earth_dsm.ld"* ]] ||
	fail "earthcc --showme:link lacks the installed earth_dsm.ld"
# earth-tc.pc likewise.
tclibs=$(pkg-config --libs earth-tc)
[[ " $tclibs " == *" -Wl,-rpath,$tmp/lib "* ]] ||
	fail "earth-tc.pc: no run path for $tmp/lib in: $tclibs"
# and earthcc's linker script and macro file, as earthcc has them
[[ " $tclibs " == *" -Wl,-T,$tmp/share/earth/earth_dsm.ld "* ]] ||
	fail "earth-tc.pc: no earth_dsm.ld in: $tclibs"
[ "$(pkg-config --variable=parmacs earth-tc)" = "$m4file" ] ||
	fail "earth-tc.pc: parmacs is not $m4file"
# A prefix the loader searches (staged with DESTDIR: nothing is written
# outside $tmp) gets no run path: ldconfig's cache finds the library.
make --no-print-directory -s install PREFIX=/usr/local DESTDIR="$tmp/stage" \
	BUILD="$BUILD" >"$tmp.log" 2>&1 || { cat "$tmp.log"; rm -f "$tmp.log"; fail "make install DESTDIR"; }
rm -f "$tmp.log"
! grep -q '^Libs:.*-rpath' "$tmp/stage/usr/local/lib/pkgconfig/earth.pc" ||
	fail "earth.pc for /usr/local has a run path"
rm -rf "$tmp/stage"
# The man pages are found where they were installed.
if command -v man >/dev/null; then
	MANPATH="$tmp/share/man" man -w earth_sync >/dev/null ||
		fail "man -w earth_sync: not found under share/man"
fi

make --no-print-directory -s uninstall PREFIX="$tmp" DESTDIR= BUILD="$BUILD" ||
	fail "make uninstall"
left=$(cd "$tmp" && find . -type f -o -type l -name '*' | grep -v '^\./prog-' || true)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "test-install: ${#want[@]} files installed, a program linked static and" \
	"shared through pkg-config ran, uninstall removed them all"
