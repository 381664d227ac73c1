"""Helpers of the tests marked ``slurm``: Snakemake runs with the SLURM profile, squeue, polling."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
#: Options every test run adds to the profile: the test cluster has no accounting database, so
#: the executor polls squeue (sacct would fail and Snakemake wait forever), and polls early.
CLUSTER_OPTIONS = (
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "2",
)

#: squeue states of a job that has not ended.
ACTIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED")


def sweep_env(folder: Path) -> dict[str, str]:
    """Two fake GPUs in one state file (jobs pick theirs through CUDA_VISIBLE_DEVICES)."""
    return {
        "ZEUS_BENCH_FAKE_STATE": str(folder / "fake-gpus.json"),
        "ZEUS_BENCH_FAKE_GPUS": "2",
        "ZEUS_BENCH_STATE_DIR": str(folder / "zb-state"),
        "OMP_NUM_THREADS": "1",
    }


def submit_time_limited_sweep(folder: Path) -> str:
    """Submit a one-GPU fake sweep that sets 300 W and would measure for an hour; 1-minute limit.

    SLURM ends it between 60 and 90 s after it starts (slurmctld checks time limits every 30 s),
    with SIGTERM, then SIGKILL after KillWait. Returns the job id; its log is ``folder/job.log``.
    """
    sweep = (
        f"'{sys.executable}' -m zeus_bench.cli.main sweep --backend fake --workload movielens-1m --tiny "
        "--batch-sizes 4 --power-limits 300 --warmup-iters 1 --warmup-s 0 --steady-s 0 --measure-iters 1 "
        f"--measure-s 3600 --max-measure-s 3600 --gpus 0 --out '{folder / 'never.parquet'}'"
    )
    cmd = ["sbatch", "--parsable", "--partition=gpu", "--gpus=1", "--cpus-per-task=1"]
    cmd += ["--time=1", f"--output={folder / 'job.log'}", "--export=ALL", f"--wrap={sweep}"]
    env = {**os.environ, **sweep_env(folder)}
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def snakemake(
    workdir: Path, args: list[str], env: dict[str, str] | None = None, timeout: float = 400
) -> subprocess.CompletedProcess[str]:
    """Run Snakemake in ``workdir`` (output captured, never raising on failure)."""
    return subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def slurm_profile_args() -> list[str]:
    """``--profile profiles/slurm`` plus the test cluster's status-polling options."""
    return ["--profile", str(REPO / "profiles/slurm"), *CLUSTER_OPTIONS]


def squeue(fmt: str, *args: str) -> list[list[str]]:
    """Rows of ``squeue --states=all`` (finished jobs stay listed for MinJobAge: an hour on the test cluster)."""
    out = subprocess.run(
        ["squeue", "--states=all", "-h", "-o", fmt, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    return [line.split("|") for line in out.stdout.splitlines() if line.strip()]


def job_fields(job_id: str) -> dict[str, str]:
    """``scontrol show job`` of one job as a dict (TresPerJob, Partition, JobState, ...)."""
    out = subprocess.run(
        ["scontrol", "-o", "show", "job", job_id], capture_output=True, text=True, check=True, timeout=20
    ).stdout
    return dict(item.split("=", 1) for item in out.split() if "=" in item)


def wait_for(condition, timeout: float, what: str, interval: float = 0.5):
    """Poll ``condition()`` until it returns something truthy; fail after ``timeout`` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
