"""The inputs of the draw functions: results files and summaries, each read or computed once per process."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis import metrics, tables
from analysis.style import gpu_label


@functools.cache
def _read(path: Path) -> pd.DataFrame:
    return tables.load(path)


def load(path: str | Path) -> pd.DataFrame:
    """Read one results file once per process (the per-gpu command draws several figures from it)."""
    return _read(Path(path)).copy()


def load_all(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Read and concatenate several results files, each read once per process."""
    if not paths:
        raise ValueError("no input files")
    return pd.concat([load(p) for p in paths], ignore_index=True)


#: ``sim_summary`` tables by the simulation files they summarise (:func:`summary`).
_SUMMARIES: dict[tuple[Path, ...], pd.DataFrame] = {}


def _key(paths: str | Path | Sequence[str | Path]) -> tuple[Path, ...]:
    return tuple(Path(p) for p in ((paths,) if isinstance(paths, (str, Path)) else paths))


def summary(paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """The ``sim_summary`` of one or several simulation files, computed once per process by zeus-bench."""
    key = _key(paths)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = metrics.summary_of(load_all(key))
    return _SUMMARIES[key].copy()


def write_summary_csv(sim: Path, out: Path) -> str:
    """Write the summary of the runs table ``sim`` to ``out`` (CSV), as ``zeus-bench summarize`` does.

    Raises:
        ZeusBenchError: ``sim`` is not a valid runs table.
    """
    from zeus_bench.sim.summarize import read_runs, summarize, write_summary

    write_summary(summarize(read_runs(sim)), out, sim)
    _SUMMARIES[_key(sim)] = tables.load(out)
    return str(out)


def write_summary_table(sims: Sequence[Path], out: Path) -> str:
    """Write the ``sim_summary`` table (Parquet) of several simulation files (a sweep) to ``out``."""
    from zeus_bench.store import write_table

    write_table(
        summary(sims),
        out,
        "sim_summary",
        provenance={"command": "analysis.figures per-gpu", "runs": [str(p) for p in sims]},
    )
    return str(out)


@functools.cache
def _converged(path: Path) -> pd.DataFrame:
    return metrics.convergence(load(path))


def convergence(path: str | Path) -> pd.DataFrame:
    """The :func:`analysis.metrics.convergence` rows of one simulation file, once per process."""
    return _converged(Path(path)).copy()


def label(sim: pd.DataFrame) -> str:
    """The GPU(s) of a simulation for a title, with their notes (one power limit, measured by a sweep)."""
    return ", ".join(gpu_label(g, d["power_limit_w"].unique()) for g, d in sim.groupby("gpu"))
