"""The committed H200 traces: valid, observe mode at one limit, confidence columns, and their figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from zeus_bench.store import read_table

H200 = Path(__file__).resolve().parents[2] / "results" / "traces" / "h200"


@pytest.fixture(scope="module")
def h200():
    return read_table(H200 / "power-h200.parquet", "power")


def test_h200_trace_is_observe_mode_at_one_limit_and_never_above_it(h200):
    assert sorted(h200["dataset"].unique()) == [
        "cifar100",
        "imagenet",
        "librispeech",
        "movielens-1m",
        "sentiment140",
        "squad",
    ]
    assert set(h200["gpu"]) == {"h200"} and (h200["num_gpus"] == 1).all()
    assert h200["observe_mode"].all() and set(h200["power_limit_w"]) == {700.0}
    assert (h200["avg_power_w"] < 700.0).all()


def test_every_row_is_v2_with_confidence_columns_and_the_flag_matches_them(h200):
    assert len(h200) == 68 and (h200["num_windows"] >= 3).all() and (h200["measured_s"] >= 10).all()
    assert h200[["time_per_epoch_ci_s", "avg_power_ci_w", "energy_per_sample_ci_rel"]].notna().all().all()
    assert (h200["ci_met"] == (h200["energy_per_sample_ci_rel"] <= 0.01)).all()
    # Each flagged point ran to a cap of 20 or 30 s of measurement.
    assert (h200.loc[~h200["ci_met"].astype(bool), "measured_s"] >= 20).all()
    # The Zeus train trace's batch sizes are all measured (extensions beyond them allowed).
    sizes = h200.groupby("dataset")["batch_size"].apply(set)
    assert {4, 8, 12, 16, 24, 32, 48, 56} <= sizes["squad"]
    assert {8, 16, 32, 40, 48, 56, 64, 128} <= sizes["sentiment140"]
    assert {2, 4, 8, 12, 16, 24, 32, 48, 56, 64, 72, 96, 128, 156, 192, 256, 512} <= sizes["librispeech"]


def test_markdown_table_lists_every_point_and_flags_the_wide_ones(h200):
    from analysis.plots.sweeps import markdown_table

    lines = markdown_table(h200).splitlines()
    rows = [ln for ln in lines[2:] if ln.startswith("|")]
    assert len(rows) == len(h200)
    flagged = int((~h200["ci_met"].astype(bool)).sum())
    assert sum("**no (flagged)**" in r for r in rows) == flagged > 0


def test_h200_figure_has_two_rows_per_workload(h200):
    from analysis.plots.sweeps import plot_sweep

    fig = plot_sweep(h200)
    axes = fig.get_axes()
    assert len(axes) == 12
    assert axes[0].get_ylabel() == "energy per sample (J)"
    imagenet_top = axes[1]
    assert len(imagenet_top.get_lines()) == 1
