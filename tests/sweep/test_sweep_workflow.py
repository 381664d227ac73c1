"""The Snakemake sweep workflow end to end on the fake GPU, its rerun, and the SLURM profile."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from zeus_bench.store import read_table

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def config(tmp: Path) -> Path:
    cfg = {
        "sweep": {
            "out_dir": "results/sweep",
            "command": "",
            "tiny": True,
            "gpus": {
                "fake-h200": {"backend": "fake", "gpu_index": 0, "observe": True, "power_limits": "current"}
            },
            "measure": {
                **{"warmup_iters": 1, "warmup_s": 0, "steady_s": 0, "measure_iters": 2, "measure_s": 0.2},
                **{"window_s": 0.05, "min_windows": 3, "max_measure_s": 2},
            },
            "workloads": {"movielens-1m": [4, 8], "cifar100": [4]},
        }
    }
    path = tmp / "sweep.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def snakemake(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ZEUS_BENCH_FAKE_STATE": str(tmp / "fake.json"),
        "ZEUS_BENCH_STATE_DIR": str(tmp / "state"),
        "OMP_NUM_THREADS": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "workflows/sweep.smk"),
        "--directory",
        str(tmp),
        "--configfile",
        str(config(tmp)),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=500, check=False)


def test_sweep_workflow_end_to_end_on_fake_gpu_and_rerun_measures_only_missing(tmp_path):
    run = snakemake(tmp_path, "--profile", str(REPO / "profiles/local"), "--cores", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    merged = read_table(tmp_path / "results/sweep/fake-h200/power-fake-h200.parquet", "power")
    assert sorted(zip(merged["dataset"], merged["batch_size"], strict=True)) == [
        ("cifar100", 4),
        ("movielens-1m", 4),
        ("movielens-1m", 8),
    ]
    assert merged["observe_mode"].all() and (merged["power_limit_w"] == 700.0).all()
    assert len(merged.attrs["zeus_bench"]["shards"]) == 3
    shard = tmp_path / "results/sweep/fake-h200/movielens-1m/bs8.parquet"
    assert not os.stat(shard).st_mode & stat.S_IWUSR  # protected
    assert (tmp_path / "logs/sweep_cell/fake-h200/movielens-1m/bs8.log").exists()
    # An interrupted sweep: one cell's shard is missing and the merge never ran; the rerun
    # measures that cell alone and leaves the completed (protected) cells as they are.
    kept = tmp_path / "results/sweep/fake-h200/cifar100/bs4.parquet"
    before = kept.stat().st_mtime_ns
    shard.unlink()
    (tmp_path / "results/sweep/fake-h200/power-fake-h200.parquet").unlink()
    rerun = snakemake(tmp_path, "--cores", "1", "--resources", "gpu=1")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    counts = [line.split() for line in rerun.stderr.splitlines() if line.startswith("sweep_cell ")]
    assert counts == [["sweep_cell", "1"]], rerun.stderr[-2000:]
    assert kept.stat().st_mtime_ns == before and shard.exists()


def test_slurm_profile_dry_run_and_lint(tmp_path):
    dry = snakemake(tmp_path, "--profile", str(REPO / "profiles/slurm"), "--dry-run")
    assert dry.returncode == 0, dry.stderr[-3000:]
    out = dry.stdout + dry.stderr
    assert "sweep_cell" in out and "This was a dry-run" in out
    lint = snakemake(tmp_path, "--lint")
    assert lint.returncode == 0 and "Congratulations" in lint.stdout + lint.stderr
