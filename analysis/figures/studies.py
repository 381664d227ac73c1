"""Draw functions of the studies' figures: the arena, the zeus-plus study and the cluster replay.

Each takes the parsed arguments of ``python -m analysis.figures <name>`` (one attribute per
registered input: ``args.arena``, ``args.study`` or ``args.cluster``, each a list of files) and
returns the Figure its plot function in :mod:`analysis.plots` draws.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis.figures.inputs import load, load_all
from analysis.plots.arena import plot_arena
from analysis.plots.arena_answers import plot_profile, plot_recurrences
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


def arena_profile(args: argparse.Namespace) -> Figure:
    """The arena's performance profile with the horizon unknown (``arena_profile``)."""
    path = named(args.arena_unknown, "arena_profile.parquet", "arena_unknown")
    return plot_profile(load(path), _labels(path))


def arena_recurrences(args: argparse.Namespace) -> Figure:
    """Regret against the number of recurrences (the ``--recurrences N`` runs' ``arena_summary``)."""
    from zeus_bench.store import read_metadata

    frames = []
    for path in args.recurrences:
        if Path(path).name == "arena_summary.parquet":
            n = int(read_metadata(path)["recurrences"])
            frames.append(load(path).assign(n=n))
    if not frames:
        raise ValueError("--recurrences: no arena_summary.parquet among the files given")
    return plot_recurrences(pd.concat(frames, ignore_index=True))


def _labels(path: Path) -> dict[str, str]:
    """Each GPU's label (simulated, projected) from an arena table's provenance."""
    from zeus_bench.store import read_metadata

    return dict(read_metadata(path).get("labels", {}))


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
