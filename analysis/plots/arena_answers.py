"""The arena's answer figures: the performance profile and regret against recurrences; no file I/O.

:func:`plot_profile` takes an ``arena_profile`` table (``zeus-bench arena``) and draws, per GPU, the
share of jobs x replays whose paired cost ratio to the baseline is at most tau, one curve per
policy (every split pooled when the table has it, else fold 1). :func:`plot_recurrences` takes the
``arena_summary`` tables of the ``--recurrences N`` runs stacked with a column ``n`` and draws,
per horizon and GPU, each policy's mean regret with its interval against N. Every number is
simulated; the H200's projected (the titles say which). The registry (:mod:`analysis.figures`)
draws them as ``policy-profile`` and ``policy-recurrences``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.style import paper_style

HIGHLIGHT = {"zeus": "#66CCEE", "zeus-plus": "#EE6677", "bo-ei": "#228833", "pl-only": "#CCBB44"}
SAFE = 1.02


def headline_scope(df: pd.DataFrame) -> pd.DataFrame:
    """The rows the answer is read from: every split's folds pooled (fold 0) when present, else fold 1."""
    pooled = df[df["fold"] == 0]
    return pooled if len(pooled) else df[df["fold"] == 1]


def plot_profile(profile: pd.DataFrame, labels: dict[str, str] | None = None) -> Figure:
    """Per GPU, the share of jobs x replays whose cost ratio to the baseline is <= tau, per policy."""
    rows = headline_scope(profile)
    gpus = list(dict.fromkeys(rows["gpu"]))
    labels = labels or {}
    with paper_style():
        fig = Figure(figsize=(3.0 * len(gpus) + 0.6, 3.2), layout="constrained")
        axes = fig.subplots(1, len(gpus), squeeze=False, sharey=True)[0]
        for ax, gpu in zip(axes, gpus, strict=True):
            g = rows[rows["gpu"] == gpu]
            for p, unsorted in g.groupby("policy", sort=False):
                gp = unsorted.sort_values("tau")
                strong = p in HIGHLIGHT
                ax.step(
                    gp["tau"], gp["share"], where="post", color=HIGHLIGHT.get(str(p), "0.6"),
                    lw=1.4 if strong else 0.7, label=str(p), zorder=3 if strong else 2,
                )  # fmt: skip
            ax.axvline(SAFE, color="black", lw=0.6, ls=":")
            ax.set_xlabel("tau: cost / baseline's on the same replay")
            ax.set_title(f"{gpu} ({labels.get(gpu, 'simulated')})")
            ax.set_ylim(0, 1.02)
        axes[0].set_ylabel("share of jobs x replays with ratio <= tau")
        handles, names = axes[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="outside right center", fontsize=6)
    return fig


def plot_recurrences(frame: pd.DataFrame) -> Figure:
    """Per (horizon, GPU): mean regret (%) with its interval against the number of recurrences."""
    rows = headline_scope(frame)
    gpus = list(dict.fromkeys(rows["gpu"]))
    horizons = list(dict.fromkeys(rows["horizon"]))
    with paper_style():
        fig = Figure(figsize=(2.8 * len(gpus) + 0.6, 2.4 * len(horizons) + 0.5), layout="constrained")
        grid = fig.subplots(len(horizons), len(gpus), squeeze=False, sharex=True)
        for axes, h in zip(grid, horizons, strict=True):
            for ax, gpu in zip(axes, gpus, strict=True):
                g = rows[(rows["gpu"] == gpu) & (rows["horizon"] == h)]
                for p, unsorted in g.groupby("policy", sort=False):
                    gp = unsorted.sort_values("n")
                    err = np.vstack(
                        [
                            gp["regret_pct_mean"] - gp["regret_pct_ci_lo"],
                            gp["regret_pct_ci_hi"] - gp["regret_pct_mean"],
                        ]
                    )
                    ax.errorbar(gp["n"], gp["regret_pct_mean"], yerr=err, marker="o", ms=3, lw=1, capsize=2,
                                color=HIGHLIGHT.get(str(p), "0.5"), label=str(p))  # fmt: skip
                ax.set_xscale("log")
                ax.set_yscale("symlog", linthresh=10.0)
                ax.set_title(f"{gpu}, horizon {h}")
                ax.set_xlabel("recurrences")
            axes[0].set_ylabel("regret vs oracle (%)")
        handles, names = grid[0][0].get_legend_handles_labels()
        fig.legend(handles, names, loc="outside lower center", ncols=len(names))
    return fig
