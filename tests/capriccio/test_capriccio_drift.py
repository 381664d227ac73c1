"""The Capriccio drift workflow on a CPU: slices of a synthetic Sentiment140 CSV, a tiny BERT, the fake GPU.

workflows/capriccio.smk cuts the CSV (scaled-down slices), trains the sentiment140 workload slice
after slice with the online optimizer (window 10) and writes the per-slice runs and a train trace;
``zeus-bench simulate`` then replays a job on that train trace. A target of 0.0 makes every run
reach it at its first epoch, so that the optimizer's pruning visits batch size after batch size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from sentiment140_helpers import BAD, FILLER, GOOD, write_sentiment140

from tests.helpers.optional import require
from zeus_bench.cli.main import main

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
BATCH_SIZES = [8, 16, 32]


@pytest.fixture(scope="module")
def drift_run(tmp_path_factory):
    require("torch")
    require("transformers")
    tmp = tmp_path_factory.mktemp("capriccio")
    write_sentiment140(tmp / "s140.csv", days=20)
    (tmp / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *GOOD, *BAD, *FILLER]) + "\n"
    )
    cfg = {
        "sentiment140": str(tmp / "s140.csv"),
        "vocab": str(tmp / "vocab.txt"),
        "size": 60,
        "max_slices": 5,
        "backend": "fake",
        "device": "cpu",
        "tiny": True,
        "max_steps": 2,
        "batch_sizes": ",".join(map(str, BATCH_SIZES)),
        "default_batch_size": 32,
        "target": 0.0,
        "max_epochs": 2,
        "profile_s": 0.02,
    }
    cmd = [
        str(SNAKEMAKE),
        "-s",
        str(REPO / "workflows" / "capriccio.smk"),
        "--directory",
        str(tmp),
        "--cores",
        "1",
    ]
    cmd += ["--config", *(f"{k}={v}" for k, v in cfg.items())]
    env = {
        **os.environ,
        "ZEUS_BENCH_FAKE_STATE": str(tmp / "fake-gpu.json"),
        "ZEUS_BENCH_STATE_DIR": str(tmp / "gpu-state"),
    }
    out = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, (
        out.stdout[-2000:] + out.stderr[-2000:] + (tmp / "logs/capriccio/train.log").read_text()[-2000:]
    )
    return tmp


def test_each_slice_is_one_recurrence_of_the_online_optimizer(drift_run):
    runs = pd.read_parquet(drift_run / "results" / "capriccio" / "capriccio.parquet")
    assert list(runs["slice"]) == [1, 2, 3, 4, 5]
    assert runs["reached"].all() and (runs["epochs"] == 1).all()
    assert set(runs["batch_size"]) <= set(BATCH_SIZES) and runs["batch_size"].iloc[0] == 32
    assert len(set(runs["batch_size"])) > 1  # pruning moved on from the default
    assert (runs["energy_j"] > 0).all() and (runs["time_s"] > 0).all()
    state = json.loads((drift_run / "data" / "capriccio" / "state" / "capriccio.optimizer.json").read_text())
    assert state["job"]["window"] == 10 and len(state["runs"]) == 5


def test_the_train_trace_is_read_by_the_simulator(drift_run, zeus_traces, tmp_path):
    out = drift_run / "results" / "capriccio"
    assert main(["traces", "validate", str(out / "train.parquet")]) == 0
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "train.parquet").write_bytes((out / "train.parquet").read_bytes())
    (folder / "power-v100.parquet").write_bytes((zeus_traces / "power-v100.parquet").read_bytes())
    spec = yaml.safe_load((REPO / "zeus_bench" / "data" / "workloads.yaml").read_text())["workloads"][
        "sentiment140"
    ]
    (tmp_path / "w.yaml").write_text(
        yaml.safe_dump(
            {
                "workloads": {
                    "sentiment140": {**spec, "target_metric": 0.0, "max_epochs": 2, "default_batch_size": 32}
                }
            }
        )
    )
    args = [
        "simulate",
        "--traces",
        str(folder),
        "--gpu",
        "v100",
        "--workloads",
        "sentiment140",
        "--policies",
        "baseline,zeus",
    ]
    args += [
        "--seeds",
        "1",
        "--recurrences",
        "5",
        "--workloads-file",
        str(tmp_path / "w.yaml"),
        "--out",
        str(tmp_path / "runs.parquet"),
    ]
    assert main(args) == 0
    sim = pd.read_parquet(tmp_path / "runs.parquet")
    assert set(sim["batch_size"]) <= set(pd.read_parquet(out / "train.parquet")["batch_size"])
    assert sim["reached"].any()


def test_the_report_names_the_experiment_until_a_trace_exists(drift_run, tmp_path):
    import argparse

    from analysis.report.sections import evaluation

    class _Report:
        def __init__(self, paths):
            self.args = argparse.Namespace(capriccio=paths)
            self.skipped, self.parts, self.findings = [], [], []

        def add(self, *lines):
            self.parts.extend(lines)

        def say(self, *findings):
            self.findings.extend(findings)
            self.parts.extend(f.sentence for f in findings)

    empty = _Report([tmp_path / "none.parquet"])
    evaluation.capriccio(empty)
    assert len(empty.skipped) == 1 and "needs the dataset and a GPU" in empty.skipped[0]
    done = _Report([drift_run / "results" / "capriccio" / "capriccio.parquet"])
    evaluation.capriccio(done)
    assert not done.skipped and done.findings[0].numbers["slices"] == 5
    assert any(p.startswith("| slice |") for p in done.parts)
