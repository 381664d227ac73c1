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


def test_v2_rows_have_confidence_columns_and_the_flag_matches_them(h200):
    v2 = h200[h200["num_windows"] > 1]
    v1 = h200[h200["num_windows"] == 1]
    assert len(v2) == 40 and set(v1["dataset"]) == {"squad", "sentiment140"}
    assert (v2["num_windows"] >= 3).all() and (v2["measured_s"] >= 10).all()
    assert v2[["time_per_epoch_ci_s", "avg_power_ci_w", "energy_per_sample_ci_rel"]].notna().all().all()
    assert (v2["ci_met"] == (v2["energy_per_sample_ci_rel"] <= 0.01)).all()
    assert v1["ci_met"].isna().all() and v1["avg_power_ci_w"].isna().all()
    # Each flagged point ran to a cap of 20 or 30 s of measurement.
    assert (v2.loc[~v2["ci_met"].astype(bool), "measured_s"] >= 20).all()


def test_h200_figure_has_two_rows_per_workload(h200):
    from analysis.h200 import plot_sweep

    fig = plot_sweep(h200)
    axes = fig.get_axes()
    assert len(axes) == 12
    assert axes[0].get_ylabel() == "energy per sample (J)"
    imagenet_top = axes[1]
    assert len(imagenet_top.get_lines()) == 1
