from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.optional import require

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_online.py"


def test_example_runs_two_recurrences_on_fake_gpu(tmp_path):
    require("torch")
    env = {
        "ZEUS_BENCH_FAKE_STATE": str(tmp_path / "fake.json"),
        "ZEUS_BENCH_STATE_DIR": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
    }
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
