#!/bin/sh
# SLURM Prolog (slurm.conf: Prolog=/path/to/deploy/slurm/prolog.sh): record the power limit of every
# GPU allocated to the job, so that the epilog can put it back. Settings: the env file below (see
# deploy/README.md); without it the script does nothing.
conf=${ZEUS_BENCH_SLURM_HOOK_ENV:-/etc/zeus-bench/slurm-hooks.env}
[ -r "$conf" ] || exit 0
set -a
. "$conf"
set +a
exec "${ZEUS_BENCH_PYTHON:-python3}" -m zeus_bench.device.slurm_hooks prolog
