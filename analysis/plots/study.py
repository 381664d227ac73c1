"""Figures of the zeus-plus study (``results/policy/*.csv`` from ``zeus-bench study``); no file I/O.

:func:`plot_study_regret` (cumulative regret over recurrences, mean and 10-90 % band over seeds, per GPU and
job), :func:`plot_study_cost` (cumulative cost over the baseline's per job: Zeus and zeus-plus, with the 1.02
safety line) and :func:`plot_study_drift` (cost over the drifted oracle's around the change, mean over jobs,
one row per drift scenario: step, morph and the neutral tilt). The registry
(:mod:`analysis.figures`) draws them as ``policy-regret``, ``policy-cost`` and ``policy-drift``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.style import paper_style, series_color

POLICY_STYLE = {
    "zeus": ("Zeus", "#4477AA", "-"),
    "zeus-window10": ("Zeus, window 10", "#66CCEE", "--"),
    "zeus-plus": ("zeus-plus", "#EE6677", "-"),
    "sw-ts": ("sw-ts (sliding-window TS)", "#228833", "-."),
}
# Drift scenarios in the order drawn (rows of the figure) and how a panel names each.
DRIFT_SCENARIOS = {
    "step": "optimum's epochs x{f} at once",
    "morph": "the same over 20 recurrences",
    "tilt": "whole curve tilts x{f} per doubling over 20 (neutral)",
}
SAFE = 1.02
WIDTH = 7.0


def _style(policy: str) -> tuple[str, str, str]:
    return POLICY_STYLE.get(policy, (policy, "#777777", ":"))


def plot_study_regret(curves: pd.DataFrame) -> Figure:
    """One panel per GPU and job: cumulative regret (%) per recurrence, band over seeds."""
    keys = list(curves[["gpu", "workload"]].drop_duplicates().itertuples(index=False, name=None))
    ncols = 6
    nrows = int(np.ceil(len(keys) / ncols))
    with paper_style():
        fig = Figure(figsize=(WIDTH * 1.4, 1.6 * nrows + 0.4))
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax, (gpu, w) in zip(axes, keys, strict=False):
            c = curves[(curves["gpu"] == gpu) & (curves["workload"] == w)]
            for p in ("zeus", "zeus-plus"):
                s = c[c["policy"] == p].sort_values("recurrence")
                label, color, ls = _style(p)
                ax.plot(s["recurrence"], s["regret_pct_mean"], color=color, linestyle=ls, label=label)
                ax.fill_between(
                    s["recurrence"],
                    s["regret_pct_p10"],
                    s["regret_pct_p90"],
                    color=color,
                    alpha=0.2,
                    linewidth=0,
                )
            ax.set_title(f"{gpu} {w}")
            ax.set_yscale("symlog", linthresh=10.0)
            ax.set_xlabel("Recurrence")
            ax.set_ylabel("Regret (%)")
        for ax in axes[len(keys) :]:
            ax.set_visible(False)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=2)
        fig.suptitle(
            "Cumulative regret vs. the oracle (mean over seeds; band: 10th-90th percentile)", fontsize=9
        )
    return fig


def plot_study_cost(comparison: pd.DataFrame) -> Figure:
    """Cumulative cost over the baseline's per job and GPU, Zeus and zeus-plus, with std bars."""
    gpus = list(dict.fromkeys(comparison["gpu"]))
    with paper_style():
        fig = Figure(figsize=(WIDTH, 1.9 * len(gpus) + 0.3))
        axes = fig.subplots(len(gpus), 1, squeeze=False).ravel()
        for ax, gpu in zip(axes, gpus, strict=True):
            c = comparison[comparison["gpu"] == gpu]
            jobs = list(dict.fromkeys(c["workload"]))
            x = np.arange(len(jobs))
            for k, p in enumerate(("zeus", "zeus-plus")):
                s = c[c["policy"] == p].set_index("workload").loc[jobs]
                label, color, _ = _style(p)
                ax.bar(
                    x + (k - 0.5) * 0.38,
                    s["cost_ratio_vs_baseline_cum_mean"],
                    0.36,
                    yerr=s["cost_ratio_vs_baseline_cum_std"],
                    color=color,
                    label=label,
                    error_kw={"linewidth": 0.6},
                )
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.axhline(SAFE, color=series_color(3), linestyle="--", linewidth=0.8, label="1.02 x baseline")
            ax.set_xticks(x, jobs)
            ax.set_xlim(-0.6, max(len(jobs), 6) - 0.4)  # same bar width in every panel
            ax.set_ylabel("Cost / baseline's")
            ax.set_title(f"{gpu}: cumulative cost over b0 at the max limit (mean ± std over seeds)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
    return fig


def plot_study_drift(curves: pd.DataFrame) -> Figure:
    """Cost over the drifted oracle's around the change, mean over jobs: a row per scenario, a panel per GPU and factor."""
    scenarios = [k for k in DRIFT_SCENARIOS if k in set(curves["scenario"])]
    panels = list(curves[["gpu", "epoch_factor"]].drop_duplicates().itertuples(index=False, name=None))
    policies = [p for p in POLICY_STYLE if p in set(curves["policy"])]
    nrows, ncols = max(len(scenarios), 1), max(len(panels), 1)
    with paper_style():
        fig = Figure(figsize=(max(WIDTH, 1.9 * ncols), 1.8 * nrows + 0.5))
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for row, kind in enumerate(scenarios):
            c = curves[curves["scenario"] == kind]
            for col, (gpu, factor) in enumerate(panels):
                ax = axes[row, col]
                s = c[
                    (c["gpu"] == gpu) & (c["epoch_factor"] == factor) & (c["since_change"].between(-10, 40))
                ]
                for p in policies:
                    m = s[s["policy"] == p].groupby("since_change")["cost_vs_oracle_mean"].mean()
                    label, color, ls = _style(p)
                    ax.plot(m.index, m.to_numpy(), color=color, linestyle=ls, label=label)
                ax.axhline(1.05, color="black", linestyle=":", linewidth=0.8, label="1.05 x new oracle")
                ax.axvline(0, color="grey", linewidth=0.6)
                if row == 0:
                    ax.set_title(f"{gpu}, factor {factor:g}")
                if row == nrows - 1:
                    ax.set_xlabel("Recurrences since the change")
                if col == 0:
                    ax.set_ylabel(f"{kind}: cost / oracle's")
        caption = "; ".join(f"{k}: {DRIFT_SCENARIOS[k].format(f='F')}" for k in scenarios)
        fig.suptitle(f"Mean over jobs (F: factor). {caption}", fontsize="x-small")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig
