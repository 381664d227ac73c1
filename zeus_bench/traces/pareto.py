"""Pareto frontier of energy-to-accuracy versus time-to-accuracy (pure functions)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd


def pareto_mask(time_s: npt.ArrayLike, energy_j: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Mark the points that no other point dominates, minimising both coordinates.

    A point is dominated when another is no worse in both coordinates and strictly better in
    at least one. Exact duplicates of a frontier point are all kept. NaN points are never on
    the frontier.

    Args:
        time_s: Time-to-accuracy of each point (s).
        energy_j: Energy-to-accuracy of each point (J), same length.

    Returns:
        Boolean mask, True for frontier points, in input order.
    """
    x = np.asarray(time_s, dtype=float)
    y = np.asarray(energy_j, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("time_s and energy_j must be 1-D arrays of the same length")
    mask = np.zeros(len(x), dtype=bool)
    valid = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    order = valid[np.lexsort((y[valid], x[valid]))]  # by time, then energy
    best_y = np.inf
    last: tuple[float, float] | None = None
    for i in order:
        point = (x[i], y[i])
        if y[i] < best_y:
            mask[i] = True
            best_y = y[i]
            last = point
        elif last is not None and point == last:
            mask[i] = True
    return mask


def pareto_frontier(
    configs: pd.DataFrame, time_col: str = "tta_s", energy_col: str = "eta_j"
) -> pd.DataFrame:
    """Return the feasible configurations on the ETA-vs-TTA frontier, sorted by time.

    Args:
        configs: A frame such as :meth:`zeus_bench.traces.jobs.JobTrace.configurations` returns; rows
            with a ``feasible`` column that is False are left out.
        time_col: Column holding time-to-accuracy.
        energy_col: Column holding energy-to-accuracy.
    """
    df = configs
    if "feasible" in df.columns:
        df = df[df["feasible"].astype(bool)]
    mask = pareto_mask(df[time_col].to_numpy(), df[energy_col].to_numpy())
    return df[mask].sort_values([time_col, energy_col]).reset_index(drop=True)
