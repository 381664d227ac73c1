"""The arena's figure: regret per policy and GPU with 95 % intervals, unsafe seeds marked; no file I/O.

:func:`plot_arena` takes the ``arena_summary`` and ``arena_jobs`` tables (``zeus-bench arena``) and
draws one panel per GPU and cross-fitting fold (a row per fold): per policy its mean regret over
the GPU's jobs with the bootstrap interval (bar and error bar), each job's mean regret as a dot,
filled red where some seed of that job cost more than 1.02 x the baseline (its share of such seeds
in the table), and the policy's rank. The registry (:mod:`analysis.figures`) draws it as ``policy-arena``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.style import paper_style

UNSAFE = "#CC3311"
BAR = "#4477AA"
HIGHLIGHT = {"zeus": "#66CCEE", "zeus-plus": "#EE6677"}


def plot_arena(summary: pd.DataFrame, jobs: pd.DataFrame) -> Figure:
    """One panel per (fold, GPU): regret (%) per policy, interval bars, job dots, unsafe jobs in red.

    One row of panels per cross-fitting fold (column ``fold``; fold 1 on top), one column per GPU.
    """
    gpus = list(dict.fromkeys(summary["gpu"]))
    folds = sorted(set(summary["fold"])) if "fold" in summary.columns else [1]
    first = summary[summary["fold"] == folds[0]] if "fold" in summary.columns else summary
    order = list(first.groupby("policy")["regret_pct_mean"].mean().sort_values().index)
    with paper_style():
        fig = Figure(
            figsize=(2.6 * len(gpus) + 0.6, len(folds) * (0.32 * len(order) + 0.9) + 0.5),
            layout="constrained",
        )
        grid = fig.subplots(len(folds), len(gpus), squeeze=False, sharey=True)
        for row, fold in zip(grid, folds, strict=True):
            fs = summary[summary["fold"] == fold] if "fold" in summary.columns else summary
            fj = jobs[jobs["fold"] == fold] if "fold" in jobs.columns else jobs
            for ax, gpu in zip(row, gpus, strict=True):
                _panel(
                    ax, fs[fs["gpu"] == gpu].set_index("policy").reindex(order), fj[fj["gpu"] == gpu], order
                )
                s = fs[fs["gpu"] == gpu]
                ax.set_title(f"{gpu}, {scope_title(s, fold)}")
        axes = grid.ravel()
        axes[0].scatter([], [], s=14, color=UNSAFE, label="job with a seed > 1.02 x baseline")
        axes[0].scatter([], [], s=8, color="black", label="job (mean over seeds)")
        fig.legend(loc="outside lower center", ncols=2)
    return fig


def scope_title(rows: pd.DataFrame, fold: int) -> str:
    """``fold 1 (6 seeds, judge half)``, or for fold 0 ``5 splits pooled (6 seeds each, both halves)``."""
    seeds = int(rows["seeds"].max())
    if fold == 0:
        splits = int(rows["splits"].max()) if "splits" in rows.columns else 1
        return f"{splits} split(s) x 2 folds pooled ({seeds} seeds each)"
    return f"fold {fold} ({seeds} seeds, {rows['half'].iloc[0]} half)"


def _panel(ax: Any, s: pd.DataFrame, j: pd.DataFrame, order: list[str]) -> None:
    """One GPU and fold: bars with intervals (``s``: its summary by policy), job dots (``j``), ranks."""
    y = np.arange(len(order))
    mean = s["regret_pct_mean"].to_numpy()
    err = np.vstack([mean - s["regret_pct_ci_lo"].to_numpy(), s["regret_pct_ci_hi"].to_numpy() - mean])
    colors = [HIGHLIGHT.get(p, BAR) for p in order]
    ax.barh(y, mean, xerr=err, color=colors, alpha=0.8, error_kw={"elinewidth": 0.8, "capsize": 2})
    for k, p in enumerate(order):
        jp = j[j["policy"] == p]
        unsafe = jp["unsafe_seed_share"].to_numpy() > 0
        ax.scatter(jp["regret_pct_mean"][~unsafe], np.full((~unsafe).sum(), k), s=8, color="black", zorder=3)
        ax.scatter(jp["regret_pct_mean"][unsafe], np.full(unsafe.sum(), k), s=14, color=UNSAFE, zorder=4)
    ax.set_xscale("symlog", linthresh=10.0)
    ax.set_xlabel("Regret vs oracle (%)")
    for k, p in enumerate(order):  # the rank on this GPU, right of the interval
        if pd.notna(s.loc[p, "rank"]):
            ax.annotate(
                f"#{int(s.loc[p, 'rank'])}", (float(s.loc[p, "regret_pct_ci_hi"]), k), xytext=(3, 5),
                textcoords="offset points", fontsize=6, va="bottom",
            )  # fmt: skip
    ax.set_yticks(y, order)
    ax.invert_yaxis()
