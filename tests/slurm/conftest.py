"""The SLURM cluster the tests marked ``slurm`` need (``make test-slurm`` starts one).

They run only with ``ZEUS_BENCH_SLURM=1`` (set by ``tests/slurm/cluster.sh``, i.e. ``make test-slurm``):
then a missing or unhealthy cluster fails them, so ``make test-slurm`` never skips silently. Without
it they skip, even where a SLURM cluster answers, so that a plain ``make test`` on a cluster's
login node never submits jobs to that cluster.
The cluster is expected to offer partitions ``gpu`` and ``cpu`` (those of ``profiles/slurm``) on
a node with two GPUs (``gres gpu:2``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from slurm_helpers import submit_time_limited_sweep

EXPECTED_ENV = "ZEUS_BENCH_SLURM"


def _cluster_problem() -> str | None:
    """None when a SLURM controller answers with an idle or busy node, else what is wrong."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "SLURM client commands (sinfo, sbatch) are not on PATH"
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-o", "%P %T %G"], capture_output=True, text=True, timeout=20, check=False
        )
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if out.returncode != 0:
        return f"sinfo failed: {out.stderr.strip()}"
    states = {line.split()[0].rstrip("*"): line.split()[1:] for line in out.stdout.splitlines() if line}
    for partition in ("gpu", "cpu"):
        if partition not in states:
            return f"no partition {partition!r} (sinfo: {out.stdout.strip()!r})"
    state, gres = states["gpu"]
    if state not in ("idle", "mixed", "allocated") or "gpu:2" not in gres:
        return f"partition gpu is {state} with gres {gres}; expected an idle node with gpu:2"
    return None


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    """Skip unless ``ZEUS_BENCH_SLURM=1``; then fail unless a usable SLURM cluster answers."""
    if os.environ.get(EXPECTED_ENV) != "1":
        pytest.skip(f"SLURM tests run with {EXPECTED_ENV}=1 against a test cluster: `make test-slurm`")
    problem = _cluster_problem()
    if problem is None:
        return
    pytest.fail(f"{EXPECTED_ENV}=1 but the SLURM cluster is unusable: {problem}")


@pytest.fixture(scope="session", autouse=True)
def time_limited_sweep(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A fake-GPU sweep with a 1-minute time limit, submitted when the SLURM tests start.

    SLURM can end a job no sooner than a minute after it starts, so the job runs while the
    other tests use the cluster (it holds one GPU and one CPU) and its test only checks the end.
    """
    folder = tmp_path_factory.mktemp("time-limit")
    return submit_time_limited_sweep(folder), folder
