"""One measurement window's result: :class:`Measurement` (energy, time, and their uncertainty)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from zeus_bench.device.counter import COUNTER_UPDATE_PERIOD_S

#: Relative energy uncertainty above which a measurement is flagged (``high_uncertainty``).
UNCERTAINTY_THRESHOLD = 0.05
#: ``Measurement.energy_from`` of energy interpolated between the counters' update times.
FROM_COUNTER_UPDATES = "counter updates"
#: ``Measurement.energy_from`` of energy read at the window's edges (or sampled power).
FROM_EDGES = "edges"


@dataclass(frozen=True)
class Measurement:
    """Result of one measurement window.

    Attributes:
        name: Window name.
        time_s: Wall time between the edges, s.
        energy_j: Energy per GPU index, J.
        start_unix_s: Unix time of the window's start, s.
        below_counter_period: True when the window was shorter than the energy counter's
            measured update period: its energy may be off by a whole update.
        sampled_gpus: GPU indices whose energy was integrated from sampled power (no counter).
        energy_uncertainty_j: Per GPU index, +- J: one counter update period (the sampling
            interval for sampled GPUs) times the window's power.
        counter_update_period_s: The update period behind the uncertainty (the largest over
            the GPUs), s.
        uncertainty_threshold: Relative uncertainty above which :attr:`high_uncertainty` is set.
        energy_from: ``"counter updates"`` when every counter's energy was interpolated between
            its update times (a monitor following its counters), else ``"edges"`` (the counters
            read at the window's edges, or sampled power).
    """

    name: str
    time_s: float
    energy_j: Mapping[int, float]
    start_unix_s: float = 0.0
    below_counter_period: bool = False
    sampled_gpus: tuple[int, ...] = field(default=())
    energy_uncertainty_j: Mapping[int, float] = field(default_factory=dict)
    counter_update_period_s: float = COUNTER_UPDATE_PERIOD_S
    uncertainty_threshold: float = UNCERTAINTY_THRESHOLD
    energy_from: str = FROM_EDGES

    @property
    def total_energy_j(self) -> float:
        """Energy summed over the GPUs, J."""
        return float(sum(self.energy_j.values()))

    @property
    def avg_power_w(self) -> float:
        """Average power summed over the GPUs, W (0 for an empty window)."""
        return self.total_energy_j / self.time_s if self.time_s > 0 else 0.0

    @property
    def total_energy_uncertainty_j(self) -> float:
        """Uncertainty of :attr:`total_energy_j`, +- J (the GPUs' uncertainties added)."""
        return float(sum(self.energy_uncertainty_j.values()))

    @property
    def relative_uncertainty(self) -> float:
        """:attr:`total_energy_uncertainty_j` over :attr:`total_energy_j` (``inf`` if no energy)."""
        unc = self.total_energy_uncertainty_j
        if self.total_energy_j > 0:
            return unc / self.total_energy_j
        return math.inf if unc > 0 else 0.0

    @property
    def high_uncertainty(self) -> bool:
        """Whether :attr:`relative_uncertainty` exceeds :attr:`uncertainty_threshold`."""
        return self.relative_uncertainty > self.uncertainty_threshold
