"""The sweep workflow's dry run prints each cell's GPU-time and energy estimate (issue 23, item 8)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml
from workflow_helpers import REPO, SNAKEMAKE

from zeus_bench.cli.main import main


def _dry_run(tmp_path: Path, sweep: dict) -> str:
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({"sweep": sweep}))
    out = subprocess.run(
        [str(SNAKEMAKE), "-s", str(REPO / "workflows" / "sweep.smk"), "--configfile", str(config), "-n"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-2000:]
    assert "Traceback" not in text
    return text


def _table(text: str, header: str) -> list[str]:
    """The estimate table that starts at ``header``: its lines up to and including the total."""
    lines = text.splitlines()
    start = lines.index(header)
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("total"))
    return lines[start : end + 1]


def test_sweep_workflow_dry_run_prints_the_cli_estimate(tmp_path: Path, capsys) -> None:
    sweep = yaml.safe_load((REPO / "config" / "sweep-fake.yaml").read_text())["sweep"]
    sweep["out_dir"] = str(tmp_path / "out")
    sweep["workloads"] = {"cifar100": [32, 64], "movielens-1m": [256]}
    text = _dry_run(tmp_path, sweep)
    cifar = _table(text, "fake: dry run: cifar100, 4 point(s) in 2 cell(s); nothing measured")
    # one line per cell (batch size), both power limits of the GPU kind
    assert [line.split()[:2] for line in cifar[2:4]] == [["32", "2"], ["64", "2"]]
    assert _table(text, "fake: dry run: movielens-1m, 2 point(s) in 1 cell(s); nothing measured")
    # the same numbers as `zeus-bench sweep --dry-run` with the cells' own options
    m = sweep["measure"]
    argv = ["sweep", "--workload", "cifar100", "--batch-sizes", "32,64", "--backend", "fake"]
    argv += ["--power-limits", "700,400", "--tiny", "--out", str(tmp_path / "x.parquet"), "--dry-run"]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in m.items()]
    assert main(argv) == 0
    assert "fake: " + "\n".join(capsys.readouterr().out.splitlines()) == "\n".join(cifar)
    # 2 points of (0.5 s warm-up + max(2, 3 x 0.5) s) at least; the power of a tiny model no trace knows
    assert float(re.findall(r"([0-9.]+)-", cifar[2])[0]) == 5.0
    assert cifar[2].endswith("unknown  unknown (no trace of this batch size)")
    assert not (tmp_path / "out").exists()  # a dry run measures nothing


def test_dry_run_leaves_out_measured_cells(tmp_path: Path) -> None:
    sweep = yaml.safe_load((REPO / "config" / "sweep-fake.yaml").read_text())["sweep"]
    sweep["out_dir"] = str(tmp_path / "out")
    shard = tmp_path / "out" / "fake" / "movielens-1m" / "bs256.parquet"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(b"")
    text = _dry_run(tmp_path, sweep)
    assert "fake: movielens-1m: every cell already measured" in text
    assert "fake: dry run: cifar100, 2 point(s) in 1 cell(s); nothing measured" in text
    assert "dry run: movielens-1m" not in text


def test_dry_run_takes_power_from_the_gpu_kinds_merged_trace(tmp_path: Path) -> None:
    sweep = yaml.safe_load((REPO / "config" / "sweep-fake.yaml").read_text())["sweep"]
    sweep["out_dir"] = str(tmp_path / "out")
    sweep["workloads"] = {"cifar100": [1024]}
    sweep["gpus"]["fake"]["power_limits"] = [700]
    at_limit = _table(
        _dry_run(tmp_path, sweep), "fake: dry run: cifar100, 1 point(s) in 1 cell(s); nothing measured"
    )
    # an earlier run's merged trace of this GPU kind (here the committed H200 one)
    merged = tmp_path / "out" / "fake" / "power-fake.parquet"
    merged.parent.mkdir(parents=True)
    shutil.copy(REPO / "results" / "traces" / "h200" / "power-h200.parquet", merged)
    traced = _table(
        _dry_run(tmp_path, sweep), "fake: dry run: cifar100, 1 point(s) in 1 cell(s); nothing measured"
    )
    # without it the tiny model's power is unknown; with it, the trace's draw at bs 1024
    assert at_limit[2].endswith("unknown  unknown (no trace of this batch size)")
    assert traced[2].split()[-1] == "power-fake.parquet"
    assert at_limit[2].split()[2] == traced[2].split()[2]  # same GPU-time
    low_s = float(traced[2].split()[2].split("-")[0])
    low_kj = float(traced[2].split()[3].split("-")[0])
    assert 0 < low_kj * 1e3 < 700 * low_s  # the measured draw is below the limit
