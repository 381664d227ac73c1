"""Figures of the simulated policies: savings, ablation, convergence and regret, the eta and beta sweeps.

Each takes the DataFrame :mod:`analysis.metrics` builds and returns a Figure; no file I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter

from analysis.plots.common import (
    BarSeries,
    gpu_names,
    grouped_bars,
    log_scale,
    new_figure,
    panel_grid,
    suptitle,
    titled,
    workload_order,
)
from analysis.style import (
    FULL_W,
    POLICY_ORDER,
    ordered,
    paper_style,
    policy_color,
    policy_label,
    series_color,
)


def _policy_bars(ax: Axes, norm: pd.DataFrame, policies: Sequence[str], metric: str) -> None:
    groups = workload_order(norm)
    pols = [p for p in policies if p in set(norm["policy"])]
    bars = BarSeries("policy", pols, [policy_color(p) for p in pols], [policy_label(p) for p in pols])
    grouped_bars(ax, norm, groups, bars, f"{metric}_ratio_mean", f"{metric}_ratio_std")
    ax.axhline(1.0, color="black", linewidth=0.6)


def plot_policies(
    norm_maxbatch: pd.DataFrame,
    norm_baseline: pd.DataFrame,
    policies: Sequence[str],
    label: str | None = None,
) -> Figure:
    """Cumulative energy and time of each policy, normalised to max-batch and to b0 at max limit.

    Args:
        norm_maxbatch: :func:`analysis.metrics.normalised` rows with reference ``max-batch``.
        norm_baseline: The same with reference ``baseline``.
        policies: Policies to show, in order.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    with paper_style():
        fig = Figure(figsize=(FULL_W, 4.4), layout="constrained")
        axes = fig.subplots(2, 2, squeeze=False)
        refs = ((norm_maxbatch, "max. batch size at max. limit"), (norm_baseline, "b0 at max. limit"))
        for col, (norm, ref) in enumerate(refs):
            for row, metric in enumerate(("energy", "time")):
                ax = axes[row][col]
                _policy_bars(ax, norm, policies, metric)
                ax.set_ylabel(f"Cumulative {metric}\n(× reference)")
                if row == 0:
                    ax.set_title(f"Reference: {ref}")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels)))
        suptitle(
            fig,
            titled(
                "Policies over all recurrences",
                gpu_names(norm_baseline, label),
                "mean over seeds, error bars: one std.",
            ),
        )
    return fig


def plot_ablation(
    norm: pd.DataFrame,
    policies: Sequence[str] = ("bs-only", "pl-only", "zeus"),
    label: str | None = None,
    one_limit: bool = False,
) -> Figure:
    """Knob ablation: batch size only, power limit only and both, relative to the baseline.

    Args:
        norm: :func:`analysis.metrics.normalised` rows (reference ``baseline``).
        policies: Policies to show, in order.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
        one_limit: The GPU's traces hold one power limit: the power-limit-only policy has nothing
            to tune, so its bars are left out and marked n/a.
    """
    if one_limit:
        policies = [p for p in policies if p != "pl-only"]
    with paper_style():
        fig, axes = new_figure(FULL_W, 2.5, ncols=2)
        for ax, metric in zip(axes, ("energy", "time"), strict=True):
            _policy_bars(ax, norm, policies, metric)
            ax.set_ylabel(f"Cumulative {metric}\n(× b0 at max. limit)")
        handles, labels = axes[0].get_legend_handles_labels()
        if one_limit:
            labels = [*labels, f"{policy_label('pl-only')}: n/a (one power limit)"]
            handles = [*handles, Line2D([], [], linestyle="none")]
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        knobs = "batch size (the only knob here)" if one_limit else "batch size, power limit or both"
        suptitle(fig, titled(f"Which knob saves what: {knobs}", gpu_names(norm, label)))
    return fig


def _band_panels(
    conv: pd.DataFrame, value: str, ylabel: str, title: str, relative: bool, label: str | None = None
) -> Figure:
    """One panel per workload: a line per policy (mean over seeds) and a band (min to max).

    With ``relative``, values are divided by the oracle's expected cost, drawn on a log axis with
    the oracle as a dashed line at 1.
    """
    workloads = workload_order(conv)
    with paper_style():
        fig, axes = panel_grid(len(workloads), height=1.9)
        for ax, w in zip(axes, workloads, strict=True):
            c = conv[conv["workload"] == w]
            for p in ordered(c["policy"].unique(), POLICY_ORDER):
                s = c[c["policy"] == p].sort_values("recurrence")
                scale = s["oracle_cost"] if relative else 1.0
                color = policy_color(p)
                ax.plot(
                    s["recurrence"],
                    s[f"{value}_mean"] / scale,
                    color=color,
                    label=policy_label(p),
                    linewidth=1.0,
                )
                ax.fill_between(
                    s["recurrence"],
                    s[f"{value}_lo"] / scale,
                    s[f"{value}_hi"] / scale,
                    color=color,
                    alpha=0.2,
                    linewidth=0,
                )
            if relative:
                ax.axhline(
                    1.0,
                    color=policy_color("oracle"),
                    linestyle="--",
                    linewidth=1.0,
                    label=policy_label("oracle"),
                )
                log_scale(ax, "y")
            else:
                ax.yaxis.set_major_formatter(EngFormatter(unit="J"))
            ax.set_title(w)
            ax.set_xlabel("Recurrence")
            ax.set_ylabel(ylabel)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        suptitle(fig, titled(title, gpu_names(conv, label), "mean over seeds; band: range over seeds"))
    return fig


def plot_convergence(conv: pd.DataFrame, label: str | None = None) -> Figure:
    """Cost per recurrence of Zeus and grid search, relative to the oracle, with a band over seeds.

    Args:
        conv: :func:`analysis.metrics.convergence` rows of one GPU, eta and beta.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    return _band_panels(
        conv,
        "cost",
        "Cost per recurrence\n(× oracle, log)",
        "Convergence: cost per recurrence relative to the oracle's expected cost",
        relative=True,
        label=label,
    )


def plot_regret(conv: pd.DataFrame, label: str | None = None) -> Figure:
    """Cumulative regret against the oracle's expected cost, with a band over seeds."""
    return _band_panels(
        conv,
        "regret",
        "Cumulative regret",
        "Cumulative regret vs. the oracle's expected cost",
        relative=False,
        label=label,
    )


def _sweep_lines(
    norm: pd.DataFrame, x: str, xlabel: str, title: str, categorical: bool = False, label: str | None = None
) -> Figure:
    workloads = workload_order(norm)
    with paper_style():
        fig, axes = new_figure(FULL_W, 2.5, ncols=2)
        xs = sorted(norm[x].unique())
        pos = {v: i for i, v in enumerate(xs)}
        for ax, (metric, what) in zip(axes, (("energy", "energy"), ("time", "time")), strict=True):
            for i, w in enumerate(workloads):
                s = norm[norm["workload"] == w].sort_values(x)
                xv = s[x].map(pos) if categorical else s[x]
                ax.errorbar(
                    xv,
                    s[f"{metric}_ratio_mean"],
                    yerr=s[f"{metric}_ratio_std"],
                    color=series_color(i),
                    marker="o",
                    markersize=3,
                    capsize=1.5,
                    elinewidth=0.6,
                    label=w,
                )
            ax.axhline(1.0, color="black", linewidth=0.6)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"Cumulative {what} of Zeus\n(× b0 at max. limit, log)")
            log_scale(ax, "y")
            if categorical:
                ax.set_xticks(range(len(xs)), ["off" if math.isinf(v) else f"{v:g}" for v in xs])
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        suptitle(fig, titled(title, gpu_names(norm, label), "mean over seeds, error bars: one std."))
    return fig


def plot_eta(norm: pd.DataFrame, label: str | None = None) -> Figure:
    """Zeus's energy and time (relative to the baseline) as eta goes from 0 (time) to 1 (energy).

    Args:
        norm: :func:`analysis.metrics.normalised` rows of Zeus, one GPU, several eta.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    return _sweep_lines(
        norm, "eta", "η (weight of energy in the cost)", "Energy/time of Zeus as η varies", label=label
    )


def plot_beta(norm: pd.DataFrame, label: str | None = None) -> Figure:
    """Zeus's energy and time (relative to the baseline) for several early-stopping thresholds."""
    return _sweep_lines(
        norm,
        "beta",
        "β (early-stopping threshold; off: never stop early)",
        "Sensitivity of Zeus to β",
        categorical=True,
        label=label,
    )
