from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.optional import require

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_online.py"


def _env(tmp_path: Path) -> dict[str, str]:
    """A bare environment with a fresh fake GPU (and this checkout's PYTHONPATH, if set)."""
    return {
        "ZEUS_BENCH_FAKE_STATE": str(tmp_path / "fake.json"),
        "ZEUS_BENCH_STATE_DIR": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


def test_example_runs_two_recurrences_on_fake_gpu(tmp_path):
    require("torch")
    env = _env(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--backend",
            "fake",
            "--device",
            "cpu",
            "--state-dir",
            str(tmp_path / "job"),
            "--recurrences",
            "2",
            "--train-samples",
            "4000",
            "--max-epochs",
            "3",
            "--profile-s",
            "0.05",
            "--step-w",
            "250",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    runs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["batch_size"] for r in runs] == [128, 64]
    assert all(r["energy_j"] > 0 and r["cost_j"] > 0 for r in runs)
    assert runs[0]["profiled_limits_w"][0] == 700.0
    state = json.loads((tmp_path / "job" / "gaussian-mlp.optimizer.json").read_text())
    assert len(state["runs"]) == 2


def test_tiny_example_ends_with_what_the_optimizer_chose(tmp_path):
    """--tiny: the fake GPU's model sets the pace; at most one warning; a short summary at the end."""
    require("torch")
    env = _env(tmp_path)
    args = ["--backend", "fake", "--device", "cpu", "--tiny", "--state-dir", str(tmp_path / "job")]
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), *args, "--recurrences", "2", "--max-epochs", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.count("WARNING zeus_bench.device.fake_load") <= 1
    assert len(out.stderr.splitlines()) + len(out.stdout.splitlines()) < 40
    table = out.stdout.splitlines()
    head = table.index("run  batch  limit_W  epochs  outcome  energy_J  time_s    cost_J  chosen by")
    rows = [line.split() for line in table[head + 1 : head + 3]]
    assert rows[0][1] == "32" and rows[1][1] in {"16", "64"}  # the --tiny default, then a neighbour
    assert [r[-1] for r in rows] == ["pruning", "pruning"]
    assert "Best batch size so far: " in out.stdout
    assert max(len(line) for line in table) <= 100
    state = json.loads((tmp_path / "job" / "gaussian-mlp.optimizer.json").read_text())
    assert [str(r["batch_size"]) for r in state["runs"]] == [rows[0][1], rows[1][1]]
