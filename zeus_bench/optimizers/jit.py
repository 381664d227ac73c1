"""The just-in-time (JIT) power-limit choice, in its two forms: the simulator's and the profiler's.

Both choose the power limit of least Zeus cost (:meth:`zeus_bench.core.cost.Cost.zeus_cost`) for one batch
size from what profiling measured at each limit, and both break ties towards the higher limit
(faster, and what an uncapped GPU does anyway). They differ in what they read and in what counts
as a tie:

* :func:`jit_power_limit` (the simulator's replay) reads a trace's time per epoch and average
  power at each limit, skips limits not measured (NaN), and takes the **first argmin** over the
  limits from high to low: only exactly equal costs are ties. That is the original simulator's
  choice, which the replay reproduces bit for bit.
* :class:`MinCostPerSample` (the online profiler, :mod:`zeus_bench.online.profiler`) reads
  :class:`LimitMeasurement` windows (energy, time and samples at each limit, in any order) and
  treats costs **within** ``rel_tol`` (relative, default 1e-6) of the least as ties: measured
  energies carry counter noise, so costs that agree to a part in a million are not told apart.

A cost per sample is a cost per epoch over the samples of an epoch, so on the same measurements
the two agree except where two limits' costs differ by less than ``rel_tol``. Another choice of
optimum is any object with :class:`OptimumStrategy`'s ``choose``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError

ArrayF = npt.NDArray[np.float64]

__all__ = ["LimitMeasurement", "MinCostPerSample", "OptimumStrategy", "jit_power_limit"]


def jit_power_limit(
    power_limits_w: ArrayF,
    time_per_epoch_s: ArrayF,
    avg_power_w: ArrayF,
    cost: Cost,
    max_power_w: float,
) -> float:
    """Power limit of least epoch cost, as the JIT profiler picks it.

    Limits are profiled from high to low and the first least-cost limit is kept, so ties go to
    the higher limit. Limits whose measurements are NaN (not measured) are skipped.

    Args:
        power_limits_w: Candidate limits (any order), W.
        time_per_epoch_s: Time per epoch at each limit (s).
        avg_power_w: Average power at each limit (W).
        cost: The cost (its epoch cost, :meth:`~zeus_bench.core.cost.Cost.epoch_cost`).
        max_power_w: MAXPOWER of the epoch cost (the replay uses the batch size's largest limit).

    Returns:
        The chosen limit (W).

    Raises:
        ValueError: no limit has a measurement.
    """
    limits = np.asarray(power_limits_w, dtype=float)
    costs = cost.epoch_cost(np.asarray(time_per_epoch_s, float), np.asarray(avg_power_w, float), max_power_w)
    costs = np.where(np.isnan(costs), np.inf, costs)
    if not np.isfinite(costs).any():
        raise ValueError("no measured power limit to choose from")
    order = np.argsort(-limits, kind="stable")  # high to low
    return float(limits[order[int(np.argmin(costs[order]))]])


@dataclass(frozen=True)
class LimitMeasurement:
    """Throughput and power measured at one power limit."""

    power_limit_w: float
    iterations: int
    samples: int
    time_s: float
    energy_j: float
    below_counter_period: bool = False

    @property
    def throughput_sps(self) -> float:
        """Samples per second."""
        return self.samples / self.time_s

    @property
    def avg_power_w(self) -> float:
        """Average power over the GPUs' sum, W."""
        return self.energy_j / self.time_s

    def cost_per_sample_j(self, cost: Cost, max_power_w: float) -> float:
        """Zeus cost of one sample at this limit, J."""
        return cost.zeus_cost(self.energy_j / self.samples, self.time_s / self.samples, max_power_w)


class OptimumStrategy(Protocol):
    """Chooses the power limit from a profile."""

    def choose(self, measurements: Sequence[LimitMeasurement], cost: Cost, max_power_w: float) -> float:
        """Return the chosen power limit, W."""
        ...


class MinCostPerSample:
    """The limit of least Zeus cost per sample.

    Costs within ``rel_tol`` of the least are ties, broken towards the higher limit (faster,
    and what an uncapped GPU does anyway).
    """

    def __init__(self, rel_tol: float = 1e-6) -> None:
        self.rel_tol = rel_tol

    def choose(self, measurements: Sequence[LimitMeasurement], cost: Cost, max_power_w: float) -> float:
        """Return the limit of least cost per sample, W."""
        if not measurements:
            raise ConfigError("no power limit was measured")
        costs = [m.cost_per_sample_j(cost, max_power_w) for m in measurements]
        least = min(costs)
        ties = [
            m.power_limit_w
            for m, c in zip(measurements, costs, strict=True)
            if c <= least * (1 + self.rel_tol)
        ]
        return max(ties)
