"""zeus-bench sweep --dry-run: the cells and their GPU-time and energy before any GPU-hour is spent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zeus_bench.cli.main import main
from zeus_bench.sweep.estimate import estimate_cells, point_seconds
from zeus_bench.sweep.measure import MeasureSettings

REPO = Path(__file__).resolve().parents[2]


def test_point_bounds_follow_the_measuring_settings():
    settings = MeasureSettings(
        5, 2.0, 20, 10.0, window_s=2.0, min_windows=3, max_measure_s=60, warmup_max_s=30
    )
    assert point_seconds(settings) == (12.0, 90.0)
    wide = MeasureSettings(5, 2.0, 20, 1.0, window_s=2.0, min_windows=4, max_measure_s=60, warmup_max_s=30)
    assert point_seconds(wide)[0] == 2.0 + 8.0  # four windows of 2 s outlast measure_s


def test_dry_run_prints_cells_with_estimates_and_measures_nothing(tmp_path, capsys):
    out = tmp_path / "sweep.parquet"
    args = ["sweep", "--dry-run", "--workload", "cifar100", "--batch-sizes", "64,100"]
    assert main([*args, "--power-limits", "300,500", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "4 point(s) in 2 cell(s)" in text and not out.exists()
    # bs 64 is in the committed H200 trace (cifar100 at 700 W): its power, not the limits'; bs 100 is not
    line64 = next(line for line in text.splitlines() if line.split()[0] == "64")
    low_s, high_s, low_kj, high_kj = (float(x) for x in re.findall(r"[0-9.]+", line64)[2:6])
    assert (low_s, high_s) == (24, 180) and line64.endswith("power-h200.parquet")
    watts = low_kj * 1e3 / low_s
    assert 100 < watts < 300 and high_kj * 1e3 / high_s == pytest.approx(watts, rel=0.02)
    assert (
        "       100      2      24-180               unknown  unknown (no trace of this batch size)" in text
    )
    assert "     total             48-360               unknown" in text


def test_each_workload_and_batch_size_its_own_estimate():
    trace = REPO / "results" / "traces" / "h200" / "power-h200.parquet"
    settings = MeasureSettings(
        5, 2.0, 20, 10.0, window_s=2.0, min_windows=3, max_measure_s=60, warmup_max_s=30
    )
    cells = {
        (d, b): estimate_cells([b], [700.0], settings, traces=[trace], dataset=d)[0]
        for d in ("cifar100", "imagenet")
        for b in (64, 128)
    }
    energies = {key: c.min_j for key, c in cells.items()}
    assert len(set(energies.values())) == 4 and all(e is not None for e in energies.values())
    assert energies[("imagenet", 64)] > energies[("cifar100", 64)]  # ImageNet draws more than CIFAR-100
    (unknown,) = estimate_cells([100], [700.0], settings, traces=[trace], dataset="cifar100")
    assert (unknown.min_s, unknown.max_s, unknown.min_j, unknown.max_j) == (12.0, 90.0, None, None)
    (none,) = estimate_cells([64], [700.0], settings)
    assert none.min_j is None and none.power_source.startswith("unknown")


def test_step_time_from_the_trace_bounds_the_point(tmp_path):
    """20 measured steps of a batch that trains at 2 samples/s last at least 20 x 512 / 2 s."""
    from zeus_bench.store import read_table, write_table

    trace = REPO / "results" / "traces" / "h200" / "power-h200.parquet"
    power = read_table(trace, "power")
    row = power[(power["dataset"] == "cifar100") & (power["batch_size"] == 512)].head(1).copy()
    row["samples_per_s"] = 2.0
    slow = write_table(row, tmp_path / "power-slow.parquet", "power")
    settings = MeasureSettings(
        5, 2.0, 20, 10.0, window_s=2.0, min_windows=3, max_measure_s=60, warmup_max_s=30
    )
    (cell,) = estimate_cells([512], [700.0], settings, traces=[slow], dataset="cifar100")
    assert cell.min_s == 5 * 256.0 + 20 * 256.0 and cell.max_s == cell.min_s
    assert cell.min_j == pytest.approx(cell.min_s * float(row["avg_power_w"].iloc[0]))


def test_estimate_from_a_power_trace():
    trace = REPO / "results" / "traces" / "h200" / "power-h200.parquet"
    settings = MeasureSettings(
        5, 2.0, 20, 10.0, window_s=2.0, min_windows=3, max_measure_s=60, warmup_max_s=30
    )
    (cell,) = estimate_cells([1024], [700.0], settings, traces=[trace], dataset="cifar100")
    assert cell.power_source == "power-h200.parquet" and cell.min_j is not None
    assert 0 < cell.min_j / cell.min_s < 700.0


def test_sweep_progress_logs_an_eta():
    from zeus_bench.sweep.single import progress_line

    assert progress_line(2, 8, 30.0) == "2/8 points measured in 30 s; ETA 90 s"
