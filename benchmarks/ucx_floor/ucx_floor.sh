#!/usr/bin/env bash
# ucx_floor.sh - the raw floors of the ucx transport's figures, over shared
# memory and over loopback TCP, in one run (installed as
# $(BUILD)/rel/bench/ucx_floor, run by `make bench`):
#   1. raw UCP between two processes pinned as a node's EU and SU CPUs
#      (ucp_floor): pingpong_rtt.ucx_<m>, ucp_get_lat.ucx_<m>,
#      ucp_put_bw.ucx_<m>, ucp_get_bw.ucx_<m>; shm is UCX_TLS=posix,cma, tcp is UCX_TLS=tcp
#      with UCX_NET_DEVICES=lo
#   2. Open MPI over the same media (mpi_floor; ob1 with btl self,vader for
#      shm, self,tcp for tcp): mpi_pingpong_rtt.<m>, mpi_get_lat.<m>. The
#      get is passive target (lock_all, flush per get) through osc rdma
#      over vader and osc pt2pt over tcp (osc rdma cannot create a window
#      over btl tcp; the Debian mca-params file disables pt2pt, turned back
#      on here for tcp). Skipped with a message without Open MPI.
# Every program checks the data it moved and exits 1 on a wrong byte.
# QUICK=1: fewer rounds and bytes. EARTH_CPUS: the two CPUs (else 0,1).
#   ucx_floor [ROUNDS [BLOCK [BLOCKS]]]   (ucp_floor's; ROUNDS for MPI too)
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(dirname "$here")/ucx_floor
quick=${QUICK:-0}
[ "$quick" = 0 ] && quick=""
reps=${BENCH_REPS:-$([ -n "$quick" ] && echo 5 || echo 11)}
[ "$reps" -ge 5 ] 2>/dev/null || reps=5
[ "$reps" -le 64 ] || reps=64
rounds=${1:-$([ -n "$quick" ] && echo 2000 || echo 20000)}
cpus=${EARTH_CPUS:-0,1}
cpu0=${cpus%%,*} cpu1=${cpus#*,}
status=0

echo "# ucx_floor: $(nproc) usable cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "# ucx_floor: load average at end $(cut -d" " -f1-3 /proc/loadavg)"' EXIT

for m in shm tcp; do
	"$bin/ucp_floor" "$m" "$rounds" "${@:2}" || {
		echo "# ucx_floor: ucp_floor $m FAILED"; status=1; }
done

if [ -x "$bin/mpi_floor" ] && command -v mpirun >/dev/null 2>&1; then
	# as root Open MPI asks for both variables
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	for m in shm tcp; do
		if [ $m = shm ]; then mca=(--mca btl self,vader --mca osc rdma)
		else mca=(--mca btl self,tcp --mca osc pt2pt); fi
		echo "# ucx_floor: mpirun ${mca[*]} mpi_floor $m"
		timeout 300 mpirun --oversubscribe --bind-to none -np 2 \
			--mca pml ob1 "${mca[@]}" \
			"$bin/mpi_floor" "$m" "$rounds" "$reps" "$cpu0" "$cpu1" || {
			echo "# ucx_floor: mpi_floor $m FAILED"; status=1; }
	done
else
	echo "# ucx_floor: no mpi_floor or mpirun (Debian libopenmpi-dev, openmpi-bin): MPI floors skipped"
fi
exit $status
