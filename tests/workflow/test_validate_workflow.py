"""workflows/validate.smk end to end on the fake GPU at tiny size: sweep -> traces -> simulate -> online -> compare.

The same workflow runs on a real GPU with config/validate-h200.yaml; here the fake GPU's speed
model paces every step (20,000 samples/s), so the whole path takes a few PyTorch start-ups.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.optional import require
from zeus_bench.store import read_table

require("torch")
REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_validate_workflow_on_fake_gpu(tmp_path: Path) -> None:
    from zeus_bench.device.fake import FakeBackend

    cfg = yaml.safe_load((REPO / "config/validate-fake.yaml").read_text())
    # A target the tiny student reaches in a few epochs (the registry's is the full model's).
    override = tmp_path / "workloads.yaml"
    override.write_text(
        yaml.safe_dump(
            {
                "workloads": {
                    "teacher-student": {
                        "dataset": "teacher-student", "network": "mlp_1024x2", "optimizer": "adam",
                        "target_metric": 0.5, "metric": "validation accuracy", "metric_direction": "max",
                        "max_epochs": 6, "default_batch_size": 64,
                    }
                }
            }
        )
    )  # fmt: skip
    cfg["validate"]["workloads_file"] = str(override)
    config = tmp_path / "validate.yaml"
    config.write_text(yaml.safe_dump(cfg))
    state = tmp_path / "fake.json"
    FakeBackend(state_path=state).configure(index=0, samples_per_s=20_000.0, half_batch=0.0)
    env = {
        **os.environ,
        "ZEUS_BENCH_FAKE_STATE": str(state),
        "ZEUS_BENCH_STATE_DIR": str(tmp_path / "state"),
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "workflows/validate.smk"), "--directory",
        str(tmp_path), "--configfile", str(config), "--cores", "2", "--resources", "gpu=1",
    ]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-4000:]
    out = tmp_path / "data/validation/fake"
    train = read_table(out / "traces/train.parquet", "train")
    assert sorted(set(train["batch_size"])) == [32, 64, 128] and sorted(set(train["run"])) == [0, 1]
    power = read_table(out / "traces/power-fake.parquet", "power")
    assert power["observe_mode"].all() and len(power) == 3
    measured = read_table(out / "measured/online.parquet", "validation_online")
    assert sorted(set(measured["recurrence"])) == [1, 2, 3, 4]
    assert measured.groupby("recurrence")["reached"].any().all()
    assert not os.stat(out / "measured/online.parquet").st_mode & stat.S_IWUSR  # protected
    rec = read_table(out / "recurrences.parquet", "validation_recurrences")
    assert list(rec["recurrence"]) == [1, 2, 3, 4]
    assert (rec["sim_cum_cost_p2_5"] <= rec["sim_cum_cost_p97_5"]).all()
    findings = read_table(out / "findings.parquet", "validation_findings")
    assert {"percentile_at_N", "in_band_at_N", "diff_from_median_pct", "noise_covers_at_N"} <= set(
        findings["finding"]
    )
    value = dict(zip(findings["finding"], findings["value"], strict=True))
    assert value["recurrences"] == 4.0 and value["repeat_runs"] == 1.0  # the online run again, seed 1
    repeat = read_table(out / "measured/online-seed1.parquet", "validation_online")
    assert sorted(set(repeat["recurrence"])) == [1, 2, 3, 4]
    assert "trace_costed_j" in value or value["diff_from_median_pct"] == 0.0  # --power given
    noise = read_table(out / "noise.parquet", "validation_noise")
    assert sorted(noise["batch_size"]) == [32, 128]
    report = (out / "report.md").read_text()
    assert "batch-size side only, at the GPU's current power limit (observe mode)" in report
    assert (out / "validation.png").stat().st_size > 0


def test_validate_config_typo_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cfg = yaml.safe_load((REPO / "config/validate-fake.yaml").read_text())
    cfg["validate"]["online"]["repeat_seed"] = [1]  # a typo of repeat_seeds
    config = tmp_path / "validate.yaml"
    config.write_text(yaml.safe_dump(cfg))
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "workflows/validate.smk"), "--directory",
        str(tmp_path), "--configfile", str(config), "--cores", "1", "-n",
    ]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 2, run.stderr[-2000:]
    lines = [line for line in run.stderr.splitlines() if "error" in line.lower()]
    assert len(lines) == 1 and "unknown key validate.online.repeat_seed;" in lines[0], lines
    assert "did you mean repeat_seeds" in lines[0]
    assert "Traceback" not in run.stderr
