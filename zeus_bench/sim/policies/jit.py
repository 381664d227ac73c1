"""Zeus's just-in-time (JIT) power-limit choice: the limit of least epoch cost for a batch size."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from zeus_bench.cost import epoch_cost

ArrayF = npt.NDArray[np.float64]


def jit_power_limit(
    power_limits_w: ArrayF,
    time_per_epoch_s: ArrayF,
    avg_power_w: ArrayF,
    eta: float,
    max_power_w: float,
) -> float:
    """Power limit of least epoch cost, as the JIT profiler picks it.

    Limits are profiled from high to low and the first least-cost limit is kept, so ties go to
    the higher limit. Limits whose measurements are NaN (not measured) are skipped.

    Args:
        power_limits_w: Candidate limits (any order), W.
        time_per_epoch_s: Time per epoch at each limit (s).
        avg_power_w: Average power at each limit (W).
        eta: Energy weight of the cost.
        max_power_w: MAXPOWER of the epoch cost (the replay uses the batch size's largest limit).

    Returns:
        The chosen limit (W).

    Raises:
        ValueError: no limit has a measurement.
    """
    limits = np.asarray(power_limits_w, dtype=float)
    costs = epoch_cost(np.asarray(time_per_epoch_s, float), np.asarray(avg_power_w, float), eta, max_power_w)
    costs = np.where(np.isnan(costs), np.inf, costs)
    if not np.isfinite(costs).any():
        raise ValueError("no measured power limit to choose from")
    order = np.argsort(-limits, kind="stable")  # high to low
    return float(limits[order[int(np.argmin(costs[order]))]])
