"""zeus-bench sweep --dry-run: the cells and their GPU-time and energy before any GPU-hour is spent."""

from __future__ import annotations

from pathlib import Path

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
    args = ["sweep", "--dry-run", "--workload", "cifar100", "--batch-sizes", "64,128"]
    assert main([*args, "--power-limits", "300,500", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "4 point(s) in 2 cell(s)" in text and not out.exists()
    # 2 limits x 12-90 s; energy at the limits: 12 x (300 + 500) J = 9.6 kJ up to 90 x 800 J = 72 kJ.
    assert "        64      2      24-180          9.6-72.0      limit" in text
    assert "total             48-360         19.2-144.0" in text


def test_estimate_from_a_power_trace():
    trace = REPO / "results" / "traces" / "h200" / "power-h200.parquet"
    settings = MeasureSettings(
        5, 2.0, 20, 10.0, window_s=2.0, min_windows=3, max_measure_s=60, warmup_max_s=30
    )
    (cell,) = estimate_cells([1024], [700.0], settings, trace=trace, dataset="cifar100")
    assert cell.power_source == "trace" and 0 < cell.min_j / cell.min_s < 700.0


def test_sweep_progress_logs_an_eta():
    from zeus_bench.sweep.single import progress_line

    assert progress_line(2, 8, 30.0) == "2/8 points measured in 30 s; ETA 90 s"
