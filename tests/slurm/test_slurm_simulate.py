"""The main workflow's simulation grid fanned out as SLURM jobs gives the local run's results.

The traces are a small synthetic job in the Zeus CSV format (numbers made up here), so the test
needs neither the published traces nor the network. Run by ``make test-slurm``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from slurm_helpers import REPO, job_fields, slurm_profile_args, snakemake, squeue

from zeus_bench.store import read_table

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]

GPU = "toygpu"
# One simulation of each rule of the grid (main, eta sweep, beta sweep) at values the main run
# does not use.
SIMS = [f"results/sim/{GPU}/{name}.parquet" for name in ("main", "eta-1", "beta-inf")]
TARGETS = [f"results/summary/{GPU}.csv", *SIMS]


def write_traces(folder: Path) -> None:
    """A cifar100-like job: 4 batch sizes x 4 limits, 3 runs each (made-up numbers)."""
    folder.mkdir()
    train, power = [], []
    for i, bs in enumerate((128, 256, 512, 1024)):
        for run in (1, 2, 3):
            epochs = 20 + 6 * i + 3 * run  # larger batches converge in more epochs
            train.append(("cifar100", "shufflenetv2", bs, "adadelta", 0.1, run, 0.6, epochs))
        for limit in (100, 150, 200, 250):
            # Faster and hungrier at higher limits and larger batches.
            time_per_epoch = 30.0 / (1 + 0.3 * i) * (250 / limit) ** 0.4
            power.append(
                ("cifar100", "shufflenetv2", bs, "adadelta", limit, time_per_epoch, 0.9 * limit - 5 * i)
            )
    pd.DataFrame(
        train,
        columns=[
            "dataset",
            "network",
            "batch_size",
            "optimizer",
            "learning_rate",
            "run",
            "target_metric",
            "target_epoch",
        ],
    ).to_csv(folder / "summary_train.csv", index=False)
    pd.DataFrame(
        power,
        columns=[
            "dataset",
            "network",
            "batch_size",
            "optimizer",
            "power_limit",
            "time_per_epoch",
            "average_power",
        ],
    ).to_csv(folder / f"summary_power_{GPU}.csv", index=False)


def workdir(root: Path, traces: Path) -> Path:
    root.mkdir()
    shutil.copytree(REPO / "config", root / "config")
    overrides = {
        "traces": {
            "zeus": {
                "local_dir": str(traces),
                "download": False,
                "files": {"summary_train.csv": None, f"summary_power_{GPU}.csv": None},
                "allow_unverified": True,
            },
            "own_dir": str(root / "no-own-traces"),
        },
        "gpus": [GPU],
        "workloads": "all",  # the synthetic traces hold cifar100 only
        "seeds": "1-2",
        "eta_sweep": {"values": [1.0], "seeds": "1"},
        "beta_sweep": {"values": ["inf"], "seeds": "1"},
    }
    (root / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    return root


def run(root: Path, *args: str):
    return snakemake(
        root,
        ["-s", str(REPO / "Snakefile"), "--configfile", str(root / "overrides.yaml"), *args, *TARGETS],
    )


def test_simulation_grid_as_slurm_jobs_equals_the_local_run(tmp_path):
    write_traces(tmp_path / "traces")
    local = workdir(tmp_path / "local", tmp_path / "traces")
    cluster = workdir(tmp_path / "slurm", tmp_path / "traces")
    ran = run(local, "--cores", "2")
    assert ran.returncode == 0, ran.stderr[-3000:]
    before = {row[0] for row in squeue("%i")}  # the time-limited sweep of conftest.py included
    ran = run(cluster, *slurm_profile_args())
    assert ran.returncode == 0, ran.stderr[-3000:]

    assert (cluster / TARGETS[0]).read_text() == (local / TARGETS[0]).read_text()
    for sim in SIMS:
        a, b = read_table(local / sim, "runs"), read_table(cluster / sim, "runs")
        pd.testing.assert_frame_equal(b, a)
    # Each simulation rule was one SLURM job of this run (its working directory) on the CPU
    # partition, with the rule's threads as CPUs; fetching the traces and summarising stayed on
    # the submitting host (localrules).
    jobs = [job_fields(job) for job in {row[0] for row in squeue("%i")} - before]
    mine = {
        job["Comment"].split("_wildcards")[0].removeprefix("rule_"): job
        for job in jobs
        if job["WorkDir"] == str(cluster)
    }
    assert sorted(mine) == ["simulate", "simulate_beta", "simulate_eta"]
    assert len([job for job in jobs if job["WorkDir"] == str(cluster)]) == 3  # one job each
    assert {(job["Partition"], job["JobState"]) for job in mine.values()} == {("cpu", "COMPLETED")}
    assert mine["simulate"]["NumCPUs"] == "2"  # threads: 2
