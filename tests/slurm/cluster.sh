#!/usr/bin/env bash
# `make test-slurm`: a throw-away single-node SLURM cluster on this machine, the tests marked
# `slurm` against it, and a clean stop.
#
#   tests/slurm/cluster.sh [PYTHON] [PYTEST ARGS...]
#
# Needs root (it installs packages, starts daemons and creates device nodes). Steps:
#   1. apt-get install slurm-wlm and munge, only if a command is missing;
#   2. a configuration in /etc/slurm (state and logs in a temporary folder): one node `localhost`
#      with this machine's CPUs (at least 4) and memory and two GPUs (gres gpu:2) in the partitions of
#      profiles/slurm (`gpu`, default, and `cpu`),
#      whose "devices" are character-device nodes made here (slurmd wants a character device per
#      GPU; no cgroups, so nothing is ever opened), no accounting database. It must sit at the
#      default path: the executor's job step (snakemake-executor-plugin-slurm-jobstep) drops
#      every SLURM_* variable, SLURM_CONF included, before its nested srun. An existing
#      configuration that this script did not write is never overwritten (exit 2);
#   3. munged (only if none answers already), slurmctld, slurmd; waits until the node is idle;
#   4. pytest -m slurm with ZEUS_BENCH_SLURM=1, which turns a missing cluster into a failure
#      instead of a skip;
#   5. on exit, whatever happened: stops the daemons it started, by their PID files, and removes
#      its configuration.
set -euo pipefail

PYTHON=${1:-python3}
shift || true
REPO=$(cd "$(dirname "$0")/../.." && pwd)

die() {
	echo "test-slurm: $*" >&2
	exit 2
}

[ "$(id -u)" -eq 0 ] || die "needs root (installs SLURM, starts its daemons); CI runs as root"
command -v "$PYTHON" >/dev/null || die "no Python at $PYTHON"

# 1. Packages: Debian's SLURM 22.05 and munge. Accounting (slurmdbd) is not installed: the
#    executor plugin is told to poll squeue (tests/slurm/conftest.py), which needs none.
missing=()
for cmd in slurmctld slurmd sbatch squeue scancel sinfo munged; do
	command -v "$cmd" >/dev/null || PATH=$PATH:/usr/sbin command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "test-slurm: installing slurm-wlm and munge (missing: ${missing[*]})"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null
fi
export PATH=$PATH:/usr/sbin

# 2. Configuration, state and logs in one temporary folder.
ETC=/etc/slurm
MARK="# written by zeus-bench tests/slurm/cluster.sh"
for f in slurm.conf gres.conf; do
	if [ -e "$ETC/$f" ] && ! grep -qF "$MARK" "$ETC/$f"; then
		die "$ETC/$f exists and was not written by this script: a SLURM cluster is configured here; run the tests marked slurm against it (ZEUS_BENCH_SLURM=1 pytest -m slurm) instead"
	fi
done
DIR=$(mktemp -d /tmp/zeus-bench-slurm.XXXXXX)
STARTED_MUNGE=""
stop() {
	local rc=$?
	set +e
	for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" ${STARTED_MUNGE:+"$STARTED_MUNGE"}; do
		[ -s "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
	if [ "$rc" -ne 0 ]; then
		for log in "$DIR"/slurmctld.log "$DIR"/slurmd.log; do
			[ -f "$log" ] && { echo "--- tail of $log"; tail -n 20 "$log"; }
		done
	fi
	rm -rf "$DIR"
	for f in slurm.conf gres.conf; do
		grep -qsF "$MARK" "$ETC/$f" && rm -f "$ETC/$f"
	done
	exit "$rc"
}
trap stop EXIT
trap 'exit 130' INT TERM

# The node is declared with at least 4 CPUs, so that two sweep cells (2 CPUs each in
# profiles/slurm) run side by side on its two GPUs, as on a real GPU node. Nothing is pinned
# (task/none, no cgroups): on a 2-core machine the declaration only changes what is scheduled.
CPUS=$(nproc)
[ "$CPUS" -ge 4 ] || CPUS=4
# Without accounting, squeue and scontrol know a finished job for MinJobAge seconds only: an
# hour, so that the tests can read every job's final state (and the executor, polling squeue,
# never loses one). KillWait: 5 s between SIGTERM and SIGKILL at a time limit (default 30 s).
MEM_MB=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/dev"
for i in 0 1; do mknod "$DIR/dev/gpu$i" c 1 3; done # same major/minor as /dev/null
# Prolog and epilog: the repository's deploy/slurm scripts, reading the settings file that
# tests/slurm/test_slurm_epilog.py writes while it runs (absent: they do nothing). slurmd gives
# them a bare environment, so the wrappers name the file.
export ZEUS_BENCH_SLURM_HOOK_ENV=$DIR/slurm-hooks.env
for hook in prolog epilog; do
	printf '#!/bin/sh\nZEUS_BENCH_SLURM_HOOK_ENV=%s exec %s "$@"\n' "$ZEUS_BENCH_SLURM_HOOK_ENV" "$REPO/deploy/slurm/$hook.sh" >"$DIR/$hook"
	chmod +x "$DIR/$hook"
done
mkdir -p "$ETC"
cat >"$ETC/slurm.conf" <<EOF
$MARK
ClusterName=zeus-bench-test
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=3600
Prolog=$DIR/prolog
Epilog=$DIR/epilog
GresTypes=gpu
NodeName=localhost CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$MEM_MB Gres=gpu:2 State=UNKNOWN
PartitionName=gpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=cpu Nodes=localhost MaxTime=INFINITE State=UP
EOF
cat >"$ETC/gres.conf" <<EOF
$MARK
AutoDetect=off
NodeName=localhost Name=gpu File=$DIR/dev/gpu0
NodeName=localhost Name=gpu File=$DIR/dev/gpu1
EOF
unset SLURM_CONF

# 3. Daemons: munge (shared with anything else on the machine), controller, node daemon.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create >/dev/null
	mkdir -p /run/munge && chown munge:munge /run/munge
	runuser -u munge -- munged
	STARTED_MUNGE=/run/munge/munged.pid
	for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
slurmctld
slurmd -N localhost
state=""
for _ in $(seq 300); do
	state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.1
done
[ "$state" = idle ] || die "node localhost is '${state:-unreachable}', not idle, after 30 s"
echo "test-slurm: cluster up ($CPUS CPUs, gres gpu:2, SLURM $(sinfo -V | cut -d' ' -f2), config $ETC/slurm.conf)"

# 4. The tests (ZEUS_BENCH_SLURM=1: no cluster -> fail, never skip).
cd "$REPO"
ZEUS_BENCH_SLURM=1 "$PYTHON" -m pytest -m slurm -p no:cacheprovider "$@"
