"""Draw functions of the policy figures (policies, ablation, convergence, regret, eta, beta)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis import metrics, plots
from analysis.figures.inputs import convergence as converged
from analysis.figures.inputs import label, load, load_all, summary


def policies(args: argparse.Namespace) -> Figure:
    """Savings of each policy against max-batch and the baseline (the main simulation)."""
    sim = load(args.sim)
    present = set(sim["policy"].unique())
    pols = [p for p in ("zeus", "grid-search", "max-batch", "baseline", "oracle") if p in present]
    s = summary(args.sim)
    return plots.plot_policies(
        metrics.normalised(s, "max-batch"), metrics.normalised(s, "baseline"), pols, label(sim)
    )


def ablation(args: argparse.Namespace) -> Figure:
    """Zeus against its batch-size-only and power-limit-only variants."""
    sim = load(args.sim)
    one_limit = bool(sim["power_limit_w"].nunique() == 1)
    norm = metrics.normalised(summary(args.sim), "baseline")
    return plots.plot_ablation(norm, label=label(sim), one_limit=one_limit)


def convergence(args: argparse.Namespace) -> Figure:
    """Cost per recurrence, relative to the oracle, of each policy."""
    return plots.plot_convergence(converged(args.sim), label(load(args.sim)))


def regret(args: argparse.Namespace) -> Figure:
    """Cumulative regret of each policy."""
    return plots.plot_regret(converged(args.sim), label(load(args.sim)))


def _zeus_only(paths: Sequence[Path]) -> tuple[pd.DataFrame, str]:
    norm = metrics.normalised(summary(paths), "baseline")
    return norm[norm["policy"] == "zeus"], label(load_all(paths))


def eta(args: argparse.Namespace) -> Figure:
    """Zeus's savings across the eta sweep."""
    return plots.plot_eta(*_zeus_only(args.sim))


def beta(args: argparse.Namespace) -> Figure:
    """Zeus's savings across the beta sweep."""
    return plots.plot_beta(*_zeus_only(args.sim))
