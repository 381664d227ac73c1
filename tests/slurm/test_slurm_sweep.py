"""The sweep workflow on a real SLURM cluster (fake GPUs): one job per cell, cancel, time limit.

Run by ``make test-slurm``; skipped without a cluster (see conftest.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from slurm_helpers import ACTIVE, REPO, job_fields, slurm_profile_args, snakemake, squeue, sweep_env, wait_for

from zeus_bench.device.fake import FakeBackend
from zeus_bench.store import read_table

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]

KIND = "fake-h200"
MERGED = f"results/sweep/{KIND}/power-{KIND}.parquet"
KEY = ["gpu", "dataset", "network", "optimizer", "batch_size", "power_limit_w"]


def write_config(tmp: Path, workloads: dict[str, list[int]], gpu: dict, measure: dict) -> Path:
    cfg = {
        "sweep": {
            "out_dir": "results/sweep",
            "command": "",
            "tiny": True,
            "gpus": {KIND: {"backend": "fake", "gpu_index": 0, **gpu}},
            "measure": measure,
            "workloads": workloads,
        }
    }
    path = tmp / "sweep.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def sweep(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return snakemake(
        tmp,
        ["-s", str(REPO / "workflows/sweep.smk"), "--configfile", str(tmp / "sweep.yaml"), *args],
        env=sweep_env(tmp),
    )


def shard_jobs(run: str) -> list[str]:
    """The `sweep_cell` job counts line of a Snakemake run (which cells it ran)."""
    return [line.split()[1] for line in run.splitlines() if line.startswith("sweep_cell ")]


def fake_limits(tmp: Path) -> list[float]:
    backend = FakeBackend(state_path=tmp / "fake-gpus.json", n_gpus=2)
    return [backend.gpu(i).power_limit_w() for i in range(backend.device_count())]


OBSERVE = {"observe": True, "power_limits": "current"}
# Short points: one warm-up step, three 0.05 s energy windows (at most 2 s per point).
FAST = {
    **{"warmup_iters": 1, "warmup_s": 0, "steady_s": 0, "measure_iters": 2, "measure_s": 0.2},
    **{"window_s": 0.05, "min_windows": 3, "max_measure_s": 2},
}
CELLS = {"movielens-1m": [4, 8], "cifar100": [4]}


def test_every_cell_is_a_one_gpu_job_and_the_merge_equals_a_local_run(tmp_path):
    local, cluster = tmp_path / "local", tmp_path / "slurm"
    for d in (local, cluster):
        d.mkdir()
        write_config(d, CELLS, OBSERVE, FAST)
    ran = sweep(local, "--profile", str(REPO / "profiles/local"), "--cores", "2")
    assert ran.returncode == 0, ran.stderr[-3000:]
    ran = sweep(cluster, *slurm_profile_args())
    assert ran.returncode == 0, ran.stderr[-3000:]

    a = read_table(local / MERGED, "power").sort_values(KEY).reset_index(drop=True)
    b = read_table(cluster / MERGED, "power").sort_values(KEY).reset_index(drop=True)
    assert b[KEY].equals(a[KEY]) and len(b) == 3
    for col in ("num_gpus", "observe_mode"):
        assert b[col].tolist() == a[col].tolist()
    # A fake GPU under full load draws its busy power (600 W, below the 700 W limit) in both runs;
    # a neighbour on the same fake GPU would have set its load to 0 when it ended. (A few per
    # cent of noise: the fake's energy clock and the window's are read a moment apart.)
    assert a["avg_power_w"].between(560, 640).all() and b["avg_power_w"].between(560, 640).all()

    # Every shard was measured by its own SLURM job, on the one GPU that job was given.
    shards = sorted((cluster / "results/sweep" / KIND).glob("*/bs*.parquet"))
    assert len(shards) == 3
    scheduler = [read_table(s, "power").attrs["zeus_bench"]["scheduler"] for s in shards]
    job_ids = {s["slurm_job_id"] for s in scheduler}
    assert len(job_ids) == 3
    # Each cell ran on the one GPU SLURM gave it. Which GPU depends on what else holds one (the
    # time-limited job of this session may hold either), so only the set it comes from is checked.
    assert all(s["cuda_visible_devices"] in {"0", "1"} for s in scheduler)
    assert not any(read_table(s, "power").attrs["zeus_bench"].get("scheduler") for s in [local / MERGED])
    for job_id in job_ids:
        job = job_fields(job_id)
        assert (job["TresPerJob"], job["Partition"], job["JobState"]) == ("gres:gpu:1", "gpu", "COMPLETED")
    assert all(not os.stat(s).st_mode & stat.S_IWUSR for s in shards)  # protected
    assert (cluster / f"logs/sweep_cell/{KIND}/cifar100/bs4.log").exists()


def test_cancelled_cell_leaves_no_shard_and_rerun_measures_only_it(tmp_path):
    # Two limits per cell: a cell writes its shard after its first point, so a cell cancelled
    # during its second point had a partial shard on disk when it was cancelled.
    write_config(
        tmp_path,
        {"movielens-1m": [4, 8]},
        {"observe": False, "power_limits": [300, 500]},
        {**FAST, "measure_s": 4, "window_s": 0.5, "max_measure_s": 4},
    )
    env = {**os.environ, **sweep_env(tmp_path)}
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--directory",
        str(tmp_path),
        "-s",
        str(REPO / "workflows/sweep.smk"),
        "--configfile",
        str(tmp_path / "sweep.yaml"),
        *slurm_profile_args(),
    ]
    victim = tmp_path / f"results/sweep/{KIND}/movielens-1m/bs8.parquet"
    kept = tmp_path / f"results/sweep/{KIND}/movielens-1m/bs4.parquet"
    with subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        wait_for(victim.exists, 120, "the first point of the bs8 cell")
        # The executor's job comment names the rule and the wildcards: rule_sweep_cell_wildcards_<gpu>_<workload>_<bs>.
        running = [
            job
            for job, comment, state in squeue("%i|%k|%T")
            if comment.endswith("_movielens-1m_8") and state == "RUNNING"
        ]
        assert len(running) == 1, squeue("%i|%k|%T")
        subprocess.run(["scancel", *running], check=True)
        out, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0, out[-3000:]
    assert not victim.exists(), "a cancelled cell left its partial shard"
    assert kept.exists()
    # The cancelled cell's job restored the limit it had set (SIGTERM from scancel).
    assert fake_limits(tmp_path) == [700.0, 700.0]
    assert not list((tmp_path / "zb-state/journal").glob("*.json"))

    before = kept.stat().st_mtime_ns
    rerun = sweep(tmp_path, *slurm_profile_args())
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert shard_jobs(rerun.stdout + rerun.stderr) == ["1"]
    assert kept.stat().st_mtime_ns == before
    merged = read_table(tmp_path / MERGED, "power")
    assert sorted(zip(merged["batch_size"], merged["power_limit_w"], strict=True)) == [
        (4, 300.0),
        (4, 500.0),
        (8, 300.0),
        (8, 500.0),
    ]


def test_limit_set_by_a_job_is_restored_when_slurm_kills_it_at_its_time_limit(time_limited_sweep):
    # Submitted when the SLURM tests started (conftest.py): its 1-minute limit ran out while the
    # tests above used the cluster.
    job, folder = time_limited_sweep
    state = wait_for(
        lambda: next((r[1] for r in squeue("%i|%T", "-j", job) if r[1] not in ACTIVE), None),
        150,
        "SLURM to end the job at its time limit",
        interval=2,
    )
    assert state == "TIMEOUT"
    log = (folder / "job.log").read_text()
    assert "DUE TO TIME LIMIT" in log and "restoring power limits" in log, log[-2000:]
    # A fresh fake GPU (700 W) saw two settings, the job's 300 W and the restore, and is at 700 W.
    backend = FakeBackend(state_path=folder / "fake-gpus.json", n_gpus=2)
    assert [backend.gpu(i).power_limit_w() for i in range(2)] == [700.0, 700.0]
    assert sum(backend.gpu(i).setter_calls() for i in range(2)) == 2
    assert not list((folder / "zb-state/journal").glob("*.json"))
    assert not (folder / "never.parquet").exists()  # its one point never finished
