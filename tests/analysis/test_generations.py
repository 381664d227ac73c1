"""The cross-generation figure: Zeus traces at their maximum limit beside the project's sweeps."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.plots.sweeps import generation_table, plot_generations, samples_per_epoch


def zeus_frame() -> pd.DataFrame:
    rows = []
    for gpu, limits in (("v100", (150.0, 250.0)), ("a40", (200.0, 300.0))):
        for limit in limits:
            for opt in ("adadelta", "adam"):
                for b in (64, 128):
                    rows.append(
                        {
                            "gpu": gpu,
                            "dataset": "imagenet",
                            "network": "resnet50",
                            "optimizer": opt,
                            "batch_size": b,
                            "power_limit_w": limit,
                            "time_per_epoch_s": 1000.0 + b,
                            "avg_power_w": limit - 10,
                        }
                    )
    return pd.DataFrame(rows)


def own_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "gpu": ["h200"] * 3,
            "dataset": ["imagenet", "imagenet", "squad"],
            "network": ["resnet50", "resnet50", "bert_base_uncased"],
            "optimizer": ["adadelta", "adadelta", "adamw"],
            "batch_size": [64, 128, 32],
            "power_limit_w": [700.0] * 3,
            "time_per_epoch_s": [500.0, 250.0, 100.0],
            "avg_power_w": [400.0, 600.0, 500.0],
            "samples_per_s": [2000.0, 4000.0, 880.0],
            "num_windows": [5, 5, 1],
        }
    )


def test_table_keeps_max_limit_and_the_sweeps_optimizer_and_computes_energy_per_sample():
    t = generation_table(zeus_frame(), own_frame())
    zeus = t[t["source"] == "zeus"]
    assert set(zip(zeus["gpu"], zeus["power_limit_w"], strict=True)) == {("v100", 250.0), ("a40", 300.0)}
    assert len(zeus) == 4  # adam rows dropped: the sweep trained imagenet with adadelta
    v100 = zeus[(zeus["gpu"] == "v100") & (zeus["batch_size"] == 64)].iloc[0]
    assert v100["energy_per_sample_j"] == pytest.approx(240.0 * 1064.0 / 1_000_000)  # N = 500 x 2000
    own = t[t["source"] == "zeus-bench"].set_index("batch_size")
    assert own.loc[128, "energy_per_sample_j"] == pytest.approx(600.0 / 4000.0)
    assert "original scripts" in v100["series"] and "bf16" in own.loc[64, "series"]
    assert "v1 workloads" in own.loc[32, "series"]


def test_samples_per_epoch_must_agree_within_a_dataset():
    own = own_frame()
    assert samples_per_epoch(own).to_dict() == {"imagenet": 1_000_000.0, "squad": 88_000.0}
    own.loc[1, "samples_per_s"] = 3000.0
    with pytest.raises(ValueError, match="imagenet imply different samples per epoch"):
        samples_per_epoch(own)


def test_figure_has_energy_and_time_rows_and_one_line_per_series():
    fig = plot_generations(generation_table(zeus_frame(), own_frame()))
    axes = fig.get_axes()
    assert len(axes) == 4  # imagenet and squad, two rows
    assert axes[0].get_ylabel() == "energy per sample (J)" and axes[2].get_ylabel() == "time per epoch (s)"
    assert len(axes[0].get_lines()) == 3  # V100, A40, H200 on imagenet
    assert len(axes[1].get_lines()) == 1  # squad: the H200 v1 row only
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("V100 250 W (Zeus trace") for label in labels)
