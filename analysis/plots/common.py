"""What the plot functions share: panel grids, log axes, titles, grouped bars, marker styles."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter

from analysis.style import (
    FULL_W,
    WORKLOAD_ORDER,
    ordered,
    policy_color,
    series_color,
)

MARKER_STYLE: dict[str, dict[str, str]] = {
    "baseline": {"marker": "s", "color": policy_color("baseline"), "label": "Baseline (b0, max limit)"},
    "oracle": {"marker": "*", "color": policy_color("oracle"), "label": "Optimum (least cost)"},
    "zeus": {"marker": "o", "color": policy_color("zeus"), "label": "Where Zeus settles"},
}


def panel_grid(
    n: int, ncols: int = 3, height: float = 2.0, width: float = FULL_W
) -> tuple[Figure, list[Axes]]:
    """A figure of ``n`` panels, ``ncols`` a row, each ``height`` tall; the unused cells hidden."""
    nrows = max(1, math.ceil(n / ncols))
    fig = Figure(figsize=(width, height * nrows), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


class _PlainLogFormatter(LogFormatter):
    """Log-axis labels as plain numbers (0.05, 2, 300) instead of 5e-02."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        """Keep LogFormatter's choice of which ticks get a label; print those plainly."""
        return f"{x:g}" if super().__call__(x, pos) else ""


def log_scale(ax: Axes, which: str = "xy") -> None:
    """Log-scale the given axes with plain-number labels (matplotlib thins the minor ones by span)."""
    for name in which:
        axis = ax.xaxis if name == "x" else ax.yaxis
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        axis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1.0, 0.4)))
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1.0, 0.4)))


def gpu_names(df: pd.DataFrame, label: str | None) -> str:
    """The GPU(s) a figure shows, for its title: ``label`` if given, else the upper-case kinds."""
    return label if label else ", ".join(str(g).upper() for g in sorted(df["gpu"].unique()))


def suptitle(fig: Figure, text: str) -> None:
    """The figure's title; a second line (a GPU's notes) gets the figure that much taller."""
    lines = text.count("\n") + 1
    if lines > 1:
        fig.set_figheight(fig.get_figheight() + 0.18 * (lines - 1))
    fig.suptitle(text, fontsize=9)


def titled(what: str, gpus: str, how: str = "") -> str:
    """``what, GPU (how)``, and the GPU's notes (:func:`analysis.style.gpu_notes`) on a second line."""
    name, _, notes = gpus.partition(" (")
    first = f"{what}, {name}" + (f" ({how})" if how else "")
    return first + (f"\n({notes}" if notes else "")


def new_figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    """A figure ``width`` x ``height`` inches with one row of ``ncols`` panels."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, list(fig.subplots(1, ncols, squeeze=False).ravel())


def workload_order(df: pd.DataFrame) -> list[str]:
    """The workloads of ``df`` in the paper's order."""
    return ordered(df["workload"].unique(), WORKLOAD_ORDER)


@dataclass(frozen=True)
class BarSeries:
    """The series of :func:`grouped_bars`: the column that tells them apart, its values, their colours and labels."""

    column: str
    names: Sequence[str]
    colors: Sequence[str] | None = None  # None: series_color by position
    labels: Sequence[str] | None = None  # None: the names


def grouped_bars(
    ax: Axes, df: pd.DataFrame, groups: Sequence[str], bars: BarSeries, value: str, err: str | None = None
) -> None:
    """Bars of ``value`` for each group (x, workloads) and series (colours)."""
    series, colors, labels = bars.names, bars.colors, bars.labels
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, s in enumerate(series):
        sub = df[df[bars.column] == s].set_index("workload")
        vals = [float(sub.at[g, value]) if g in sub.index else np.nan for g in groups]
        errs = [float(sub.at[g, err]) if err and g in sub.index else 0.0 for g in groups] if err else None
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            vals,
            width * 0.95,
            yerr=errs,
            color=colors[i] if colors else series_color(i),
            label=labels[i] if labels else s,
            error_kw={"elinewidth": 0.6, "capsize": 1.5},
            edgecolor="white",
            linewidth=0.3,
        )
    ax.set_xticks(x, groups, rotation=25, ha="right")
    ax.set_xlabel("Workload")
    ax.grid(axis="x", visible=False)
