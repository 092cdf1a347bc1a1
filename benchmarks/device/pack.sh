#!/usr/bin/env bash
# pack.sh - packs the benchmarks that need more cores than this machine has
# into one folder that runs on a larger machine with nothing installed
# (`make device-pack`; the `device` tool carries it, run.sh runs it there):
#   $(BUILD)/device/rel/...   the programs and drivers, laid out as under
#                             $(BUILD)/rel (bench/smp, bench/lib, compare,
#                             smp, bin/earthrun, bench/dsm_ops and what it
#                             runs, bench/dsm_fault, bench/tc_dsm and its
#                             two programs, bench/parmacs and its twelve,
#                             bench/xcore_rtt)
#   $(BUILD)/device/lib/      the shared libraries they load but the C
#                             library's own (glibc stays the machine's),
#                             and UCX's transport modules in lib/ucx
#   $(BUILD)/device/run.sh    this folder's run.sh
# Usage: pack.sh BUILD_DIR. Fails, naming it, when a program is missing.
set -eu
build=${1:?usage: pack.sh BUILD_DIR}
rel=$build/rel
out=$build/device
here=$(cd "$(dirname "$0")" && pwd)
progs=(bench/smp bench/lib/driver.sh bench/lib/median.sh compare/earth_tasks
	compare/earth_uts compare/tbb_tasks compare/tbb_uts smp/su_capacity
	bin/earthrun bench/dsm_ops bench/dsm_fault bench/progs/dsm_ops_prog
	bench/xcore_rtt bench/tc_dsm bench/progs/tc_dsm_hide
	bench/progs/tc_dsm_threads bench/parmacs)
for pm in jacobi matmul lu transpose lockacc pipeline; do
	progs+=(bench/progs/parmacs-dsm/$pm bench/progs/parmacs-pth/$pm)
done
for p in "${progs[@]}"; do
	[ -e "$rel/$p" ] || {
		echo "device-pack: $rel/$p is missing: run make, make tc" \
		     "and make compare-extra (oneTBB) first" >&2
		exit 1
	}
done
rm -rf "$out"
mkdir -p "$out/rel" "$out/lib/ucx"
for p in "${progs[@]}"; do
	mkdir -p "$out/rel/$(dirname "$p")"
	cp -p "$rel/$p" "$out/rel/$p"
done
# Every library a program loads, but glibc's (the loader, libc, libm,
# libpthread, libdl, librt): those must match the machine's kernel and
# loader, and a newer machine runs programs built against an older glibc.
skip='^(ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|linux-vdso)'
for p in "${progs[@]}"; do
	file "$rel/$p" | grep -q ELF || continue
	ldd "$rel/$p" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
	grep -Eq "$skip" <<<"$(basename "$lib")" || cp -pL "$lib" "$out/lib/"
done
# UCX opens its transports as modules at run time (no ldd entry).
uct=$(ldd "$rel/bench/progs/dsm_ops_prog" | awk '/libuct\.so/{print $3}')
ucx=$(dirname "${uct:-/nonexistent/x}")/ucx
if [ -d "$ucx" ]; then
	for m in "$ucx"/*.so.0; do
		cp -pL "$m" "$out/lib/ucx/"
		ldd "$m" | awk '/=> \//{print $3}' | while read -r lib; do
			b=$(basename "$lib")
			grep -Eq "$skip" <<<"$b" || [ -e "$out/lib/$b" ] ||
				cp -pL "$lib" "$out/lib/"
		done
	done
fi
cp -p "$here/run.sh" "$out/run.sh"
echo "device-pack: $out, $(du -sh "$out" | cut -f1)"
