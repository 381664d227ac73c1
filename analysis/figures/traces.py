"""Draw functions of the trace figures (potential, pareto, power-profiles): arguments in, Figure out."""

from __future__ import annotations

import argparse

from matplotlib.figure import Figure

from analysis import metrics, plots
from analysis.figures.inputs import load, load_all


def potential(args: argparse.Namespace) -> Figure:
    """Potential savings of every GPU (``--potential``)."""
    return plots.plot_potential(load_all(args.potential))


def pareto(args: argparse.Namespace) -> Figure:
    """The energy/time configurations of one GPU with the baseline, the optimum and where Zeus settles."""
    configs = load_all(args.configs)
    potential = load_all(args.potential)
    zeus_at = metrics.settled(load(args.sim)) if args.sim else None
    return plots.plot_pareto(configs, metrics.markers(configs, potential, zeus_at), args.gpu)


def power_profiles(args: argparse.Namespace) -> Figure:
    """Power, throughput and energy per epoch against the power limit (GPUs with several limits)."""
    potential = load_all(args.potential).rename(columns={"b0": "batch_size"})
    return plots.plot_power_profiles(metrics.power_profile(load_all(args.configs), potential), args.gpu)
