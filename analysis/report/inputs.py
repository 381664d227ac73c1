"""The report's inputs: the reference numbers (:func:`read_references`) and the results files, read once (:class:`Inputs`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import metrics
from analysis.tables import load_all

REFERENCE_COLUMNS = ["gpu", "workload", "eta", "beta", "seeds", "baseline", "metric", "value_pct", "source"]


def read_references(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Reference numbers (``results/reference/*.csv``): original-simulator outputs and paper statements.

    Columns :data:`REFERENCE_COLUMNS`; ``source`` is the label to print (``paper`` or
    ``original simulator (Zeus v0.3.0 code)``). Missing files are skipped.

    Raises:
        ValueError: a file lacks one of the columns.
    """
    frames = []
    for name in paths:
        path = Path(name)
        if not path.is_file():
            continue
        df = pd.read_csv(path, dtype={"seeds": str})
        missing = [c for c in REFERENCE_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {', '.join(missing)}")
        extra = [c for c in ("statement",) if c in df.columns]  # optional: the words the source uses
        frames.append(df[REFERENCE_COLUMNS + extra])
    if not frames:
        return pd.DataFrame(columns=REFERENCE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


class Inputs:
    """The results files named on the command line, each read (or summarised) once, on first use."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Keep the arguments (file lists) of ``python -m analysis.report``."""
        self.args = args
        self._cache: dict[str, Any] = {}

    def _get(self, name: str, build: Any) -> Any:
        if name not in self._cache:
            self._cache[name] = build()
        return self._cache[name]

    @property
    def sim(self) -> pd.DataFrame | None:
        """The main simulation rows of every GPU."""
        return self._get("sim", lambda: load_all(self.args.sim) if self.args.sim else None)

    @property
    def summary(self) -> pd.DataFrame | None:
        """The ``sim_summary`` rows of the main simulation (the files, else summarised from the runs)."""

        def build() -> pd.DataFrame | None:
            if self.args.summary:
                return load_all(self.args.summary)
            return metrics.summary_of(self.sim) if self.sim is not None else None

        return self._get("summary", build)

    @property
    def potential_rows(self) -> pd.DataFrame | None:
        """The potential-savings rows of every GPU."""
        return self._get("potential", lambda: load_all(self.args.potential) if self.args.potential else None)

    @property
    def configs(self) -> pd.DataFrame | None:
        """The configurations (``zeus-bench pareto --all``) of every job."""
        return self._get("configs", lambda: load_all(self.args.configs) if self.args.configs else None)

    @property
    def references(self) -> pd.DataFrame:
        """The reference numbers (:func:`read_references`)."""
        return self._get("references", lambda: read_references(self.args.reference))

    @property
    def limits(self) -> dict[str, list[float]]:
        """Power limits per GPU in the data (simulation rows, else configurations)."""

        def build() -> dict[str, list[float]]:
            src = self.sim if self.sim is not None else self.configs
            if src is None:
                return {}
            return {str(g): sorted(set(d["power_limit_w"].astype(float))) for g, d in src.groupby("gpu")}

        return self._get("limits", build)

    def one_limit(self) -> list[str]:
        """GPUs whose data hold a single power limit."""
        return [g for g, lim in self.limits.items() if len(lim) == 1]
