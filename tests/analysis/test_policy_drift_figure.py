"""The drift figure draws one row per drift scenario: the step and the neutral tilt both appear."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from analysis.plots.study import plot_study_drift as plot_drift


def test_drift_figure_has_a_row_per_scenario_and_a_panel_per_gpu_and_factor() -> None:
    rows = []
    for gpu, kind, factor, policy in itertools.product(
        ("v100", "a40"), ("tilt", "step"), (1.5, 2.0), ("zeus", "zeus-plus", "sw-ts")
    ):
        since = np.arange(-10, 41)
        rows.append(
            pd.DataFrame(
                {
                    "gpu": gpu,
                    "workload": "w",
                    "scenario": kind,
                    "epoch_factor": factor,
                    "policy": policy,
                    "since_change": since,
                    "cost_vs_oracle_mean": 1.0 + 0.5 * np.exp(-np.maximum(since, 0) / 5.0),
                }
            )
        )
    fig = plot_drift(pd.concat(rows, ignore_index=True))
    axes = fig.get_axes()
    assert len(axes) == 2 * 4
    rows = [ax.get_ylabel() for ax in axes[::4]]
    assert rows == [
        "step: cost / oracle's",
        "tilt: cost / oracle's",
    ]  # step first, whatever the table's order
    assert [ax.get_title() for ax in axes[:4]] == [
        "v100, factor 1.5",
        "v100, factor 2",
        "a40, factor 1.5",
        "a40, factor 2",
    ]
    assert "tilt: whole curve tilts" in fig.get_suptitle()
    labels = {line.get_label() for line in axes[0].get_lines()}
    assert {"Zeus", "zeus-plus", "sw-ts (sliding-window TS)"} <= labels
