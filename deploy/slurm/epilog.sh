#!/bin/sh
# SLURM Epilog (slurm.conf: Epilog=/path/to/deploy/slurm/epilog.sh): put every GPU of the job back to
# the power limit the prolog recorded, however the job ended (scancel, time limit, SIGKILL, OOM).
# Exit 1 (slurmd drains the node) only when a limit could not be restored.
conf=${ZEUS_BENCH_SLURM_HOOK_ENV:-/etc/zeus-bench/slurm-hooks.env}
[ -r "$conf" ] || exit 0
set -a
. "$conf"
set +a
exec "${ZEUS_BENCH_PYTHON:-python3}" -m zeus_bench.device.slurm_hooks epilog
