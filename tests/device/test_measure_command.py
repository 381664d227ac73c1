"""``zeus-bench measure -- COMMAND``: a command's GPU energy on the fake GPU, whose draw is known."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from tests.helpers.gpud_helpers import setter_calls
from zeus_bench.cli.main import main
from zeus_bench.device.command import run_summary
from zeus_bench.device.fake import DEFAULT_GPU
from zeus_bench.store import read_table

IDLE_W = DEFAULT_GPU["idle_w"]
BUSY_W = DEFAULT_GPU["busy_w"]

#: A child that runs GPU 0 of the shared fake state at full load for 1 s, then idles it again.
BUSY_CHILD = (
    "import time; from zeus_bench.device.fake import FakeBackend; g = FakeBackend().gpu(0); "
    "g.set_load(1.0); time.sleep(1.0); g.set_load(0.0)"
)


def test_measure_reports_the_energy_the_command_drew(
    fake_env: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ZEUS_BENCH_FAKE_GPUS", "2")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    status = main(
        ["measure", "--backend", "fake", "--format", "json", "--", sys.executable, "-c", BUSY_CHILD]
    )
    assert status == 0
    rows = json.loads(capfd.readouterr().out)
    assert [(r["run"], r["gpu_index"]) for r in rows] == [(1, 0), (1, 1)]
    busy, idle = rows
    assert busy["time_s"] == idle["time_s"] >= 1.0
    # GPU 0: at least 1 s at full load, and never more than full load for the whole run.
    # (The counter thread reads each edge a little after its time: a few % on a busy host.)
    assert 0.97 * BUSY_W * 1.0 <= busy["energy_j"] <= 1.03 * BUSY_W * busy["time_s"]
    assert 1.5 * IDLE_W < busy["avg_power_w"] <= 1.03 * BUSY_W
    # GPU 1 idled throughout: its draw is the idle power.
    assert idle["avg_power_w"] == pytest.approx(IDLE_W, rel=0.03)
    assert all(r["exit_status"] == 0 and r["backend"] == "fake" for r in rows)
    assert all(r["energy_uncertainty_j"] > 0 for r in rows)
    # measure only reads counters: no limit was set on either GPU (so it needs no --observe).
    assert setter_calls(fake_env / "fake.json") == [0, 0]


def test_measure_table_and_exit_status(fake_env: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = fake_env / "m.parquet"
    status = main(["measure", "--backend", "fake", "--out", str(out), "--", "sh", "-c", "sleep 0.3; exit 3"])
    assert status == 3  # the command's own exit status
    table = capfd.readouterr().out
    assert "GPU energy of 'sh -c 'sleep 0.3; exit 3''" in table
    assert "exit status 3" in table and "±" in table
    assert max(len(line) for line in table.splitlines()) <= 100
    df = read_table(out, "energy_measurement")
    assert df["exit_status"].tolist() == [3]
    assert df["time_s"].iloc[0] >= 0.3
    assert df["avg_power_w"].iloc[0] == pytest.approx(IDLE_W, rel=0.03)


def test_repeat_stops_at_the_first_failing_run(fake_env: Path, capfd: pytest.CaptureFixture[str]) -> None:
    flag = fake_env / "ran-once"
    script = f"test -e {flag} && exit 5; touch {flag}"
    status = main(
        ["measure", "--backend", "fake", "--repeat", "4", "--format", "csv", "--", "sh", "-c", script]
    )
    assert status == 5
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) == 3  # header, run 1 (exit 0), run 2 (exit 5); runs 3 and 4 never started
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "2"]


def test_run_summary_adds_the_spread_of_runs_to_the_counter_uncertainty() -> None:
    rows = [
        {
            "run": 1,
            "gpu_index": 0,
            "gpu_name": "A",
            "energy_j": 100.0,
            "energy_uncertainty_j": 1.0,
            "time_s": 1.0,
        },
        {
            "run": 2,
            "gpu_index": 0,
            "gpu_name": "A",
            "energy_j": 110.0,
            "energy_uncertainty_j": 3.0,
            "time_s": 1.2,
        },
        {
            "run": 1,
            "gpu_index": 1,
            "gpu_name": "A",
            "energy_j": 50.0,
            "energy_uncertainty_j": 1.0,
            "time_s": 1.0,
        },
        {
            "run": 2,
            "gpu_index": 1,
            "gpu_name": "A",
            "energy_j": 50.0,
            "energy_uncertainty_j": 1.0,
            "time_s": 1.2,
        },
    ]
    gpu0, gpu1, total = run_summary(rows)
    assert gpu0["energy_j"] == 105.0
    # counter: mean of 1 and 3; runs: standard error sqrt(50 / 2) = 5; in quadrature.
    assert gpu0["energy_pm_j"] == pytest.approx(math.hypot(2.0, 5.0))
    assert gpu0["time_s"] == pytest.approx(1.1) and gpu0["time_pm_s"] == pytest.approx(0.1)
    assert gpu1["energy_pm_j"] == 1.0  # identical runs: only the counter's
    assert total["gpu"] == "total" and total["energy_j"] == 155.0
    assert total["avg_power_w"] == pytest.approx(155.0 / 1.1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["measure", "--backend", "fake"], "no command given"),
        (["measure", "--backend", "fake", "--", "no-such-command-zb"], "cannot run 'no-such-command-zb'"),
        (["measure", "--backend", "fake", "--gpus", "3", "--", "true"], "3"),
        (["measure", "--backend", "fake", "--out", "x.txt", "--format", "csv", "--", "true"], "x.txt"),
        (["measure", "--backend", "fake", "--gpus", "0,0", "--", "true"], "listed twice"),
    ],
)
def test_bad_input_is_one_line(
    fake_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(fake_env)
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (fake_env / "x.txt").exists()
