#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# slurm.sh - runs one command (srun ...) on a private one-host Slurm
# cluster started for it: munged, slurmctld and slurmd on this host, as
# root, with their sockets, ports, state and logs of their own (a
# temporary folder, SLURM_CONF pointing at it), stopped afterwards. For the
# srun launch test (tests/t_tc_exec.c); Debian's slurmd, slurmctld,
# slurm-client and munge (the Makefile's DEB_OPT_PKGS).
#   tests/slurm.sh srun --mpi=pmix -n 2 ./prog args...
# Exits with the command's status; 77 with "slurm.sh: skipped: WHY" when
# no cluster can start here (packages missing, not root, no pmix plugin),
# 78 with the daemons' logs when one did not come up.
set -u
skip() { echo "slurm.sh: skipped: $*"; exit 77; }
for p in munged slurmctld slurmd srun sinfo; do
	command -v $p >/dev/null 2>&1 ||
		skip "$p missing (apt-get install slurmd slurmctld slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as their user only as root"

dir=$(mktemp -d /tmp/earth-slurm.XXXXXX)
chmod 700 "$dir"
stop() {
	local pids=()
	for f in slurmd slurmctld munged; do
		[ -s "$dir/$f.pid" ] && pids+=("$(cat "$dir/$f.pid")")
	done
	[ ${#pids[@]} = 0 ] || kill "${pids[@]}" 2>/dev/null
	# slurmd takes a moment: the folder goes once they are gone (5 s).
	for _ in $(seq 50); do
		kill -0 "${pids[@]}" 2>/dev/null || break
		sleep 0.1
	done
	rm -rf "$dir"
}
trap stop EXIT
fail() {
	echo "slurm.sh: $*"
	tail -n 20 "$dir"/*.log
	exit 78
}

host=$(hostname -s)
# Two ports of our own (another run may hold others at the same time).
port=$((20000 + $$ % 20000 * 2))
mkdir -p "$dir/state" "$dir/spool" "$dir/pmix"
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 600 "$dir/munge.key"
cat >"$dir/slurm.conf" <<EOF
ClusterName=earthtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=earth Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
# The pmix plugin's folders for each step (else /tmp/spmix_appdir_UID_JOB,
# which the first job of every such cluster would share).
echo "PMIxCliTmpDirBase=$dir/pmix" >"$dir/mpi.conf"
export SLURM_CONF=$dir/slurm.conf
munged --force -S "$dir/munge.sock" --key-file="$dir/munge.key" \
	--log-file="$dir/munged.log" --pid-file="$dir/munged.pid" \
	--seed-file="$dir/munged.seed" || fail "munged did not start"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 100); do
	[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
	sleep 0.2
done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] ||
	fail "the node did not become idle: $(sinfo 2>&1)"
srun --mpi=list 2>&1 | grep -qw pmix ||
	skip "this Slurm has no pmix plugin (srun --mpi=list)"
"$@"
st=$?
[ $st = 0 ] || { echo "slurm.sh: status $st; the daemons' logs end:"
	tail -n 12 "$dir/slurmctld.log" "$dir/slurmd.log"; }
exit $st
