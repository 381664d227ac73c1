"""Draw functions of the studies' figures: the arena, the zeus-plus study and the cluster replay.

Each takes the parsed arguments of ``python -m analysis.figures <name>`` (one attribute per
registered input: ``args.arena``, ``args.study`` or ``args.cluster``, each a list of files) and
returns the Figure its plot function in :mod:`analysis.plots` draws.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from analysis.figures.inputs import load, load_all
from analysis.plots.arena import plot_arena
from analysis.plots.cluster import plot_cluster
from analysis.plots.study import plot_study_cost, plot_study_drift, plot_study_regret


def named(paths: Sequence[Path], name: str, option: str) -> Path:
    """The file called ``name`` among the files of one input (``option`` names it in the error).

    Raises:
        ValueError: none of ``paths`` is called ``name``.
    """
    for path in paths:
        if Path(path).name == name:
            return Path(path)
    raise ValueError(f"--{option}: no {name} among the files given")


def arena(args: argparse.Namespace) -> Figure:
    """The arena's regret per policy, GPU and fold (``arena_summary`` and ``arena_jobs``, horizon known)."""
    return plot_arena(
        load(named(args.arena, "arena_summary.parquet", "arena")),
        load(named(args.arena, "arena_jobs.parquet", "arena")),
    )


def study_regret(args: argparse.Namespace) -> Figure:
    """The study's cumulative regret per recurrence (``curves.csv``)."""
    return plot_study_regret(load(named(args.study, "curves.csv", "study")))


def study_cost(args: argparse.Namespace) -> Figure:
    """The study's cumulative cost over the baseline's (``comparison.csv``)."""
    return plot_study_cost(load(named(args.study, "comparison.csv", "study")))


def study_drift(args: argparse.Namespace) -> Figure:
    """The study's cost over the drifted oracle's around the change (``drift_curves.csv``)."""
    return plot_study_drift(load(named(args.study, "drift_curves.csv", "study")))


def cluster(args: argparse.Namespace) -> Figure:
    """The cluster replay's savings per GPU and workload (the replay's ``sim_summary`` CSVs)."""
    return plot_cluster(load_all(args.cluster))
