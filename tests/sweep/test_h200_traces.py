"""The committed H200 traces: valid, observe mode at one limit, and their figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from zeus_bench.store import read_table

H200 = Path(__file__).resolve().parents[2] / "results" / "traces" / "h200"


@pytest.fixture(scope="module")
def h200():
    return read_table(H200 / "power-h200.parquet", "power"), read_table(
        H200 / "power-h200x2.parquet", "power"
    )


def test_h200_traces_are_observe_mode_at_one_limit(h200):
    single, ddp = h200
    assert sorted(single["dataset"].unique()) == [
        "cifar100",
        "imagenet",
        "librispeech",
        "movielens-1m",
        "sentiment140",
        "squad",
    ]
    for df, gpu, n in ((single, "h200", 1), (ddp, "h200x2", 2)):
        assert set(df["gpu"]) == {gpu} and (df["num_gpus"] == n).all()
        assert df["observe_mode"].all() and set(df["power_limit_w"]) == {700.0}
        assert (df["avg_power_w"] <= 700.0 * n + 10).all()  # never above the limit(s), counter noise aside
    # Every batch size of the paper's train trace that ResNet-50 has fits on the H200.
    assert {64, 128, 192, 256, 360, 512, 1024} <= set(
        single.loc[single["dataset"] == "imagenet", "batch_size"]
    )
    assert ddp["dataset"].unique().tolist() == ["imagenet"]


def test_h200_figure_has_two_rows_per_workload(h200):
    import pandas as pd

    from analysis.h200 import plot_sweep

    fig = plot_sweep(pd.concat(h200, ignore_index=True))
    axes = fig.get_axes()
    assert len(axes) == 12
    assert axes[0].get_ylabel() == "energy per sample (J)"
    imagenet_top = axes[1]
    assert len(imagenet_top.get_lines()) == 2  # one GPU and DDP over two
