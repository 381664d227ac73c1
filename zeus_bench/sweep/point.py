"""What one sweep point's measurement saw: each energy window, and the totals over them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from zeus_bench.device.measurement import FROM_EDGES
from zeus_bench.sweep.stats import ci_halfwidth, finite_or_none, relative_ci


@dataclass(frozen=True)
class WindowRecord:
    """One energy window of a point."""

    iterations: int
    time_s: float
    energy_j: float
    sm_clock_mhz: float | None = None
    temperature_c: float | None = None
    loss: float | None = None
    energy_from: str = FROM_EDGES
    #: +- J from the counter's update period (:attr:`Measurement.total_energy_uncertainty_j`).
    energy_uncertainty_j: float = math.nan

    def as_dict(self) -> dict[str, object]:
        """JSON-ready values, rounded for the provenance."""
        return {
            "iterations": self.iterations,
            "time_s": round(self.time_s, 4),
            "energy_j": round(self.energy_j, 3),
            "sm_clock_mhz": self.sm_clock_mhz,
            "temperature_c": self.temperature_c,
            "loss": self.loss,
            "energy_from": self.energy_from,
            "energy_uncertainty_j": finite_or_none(round(self.energy_uncertainty_j, 3)),
        }


@dataclass(frozen=True)
class PointMeasurement:
    """What one point's measuring windows saw (totals over the windows, and each window)."""

    iterations: int
    time_s: float
    energy_j: float
    warmup_iterations: int
    warmup_time_s: float
    windows: tuple[WindowRecord, ...] = ()
    rel_ci_target: float = 0.01
    warmup_steady: bool = True

    def samples_per_s(self, batch_size: int) -> float:
        """Training throughput over the windows (samples/s)."""
        return self.iterations * batch_size / self.time_s

    @property
    def avg_power_w(self) -> float:
        """Average power over the windows, summed over the GPUs (W)."""
        return self.energy_j / self.time_s

    @property
    def num_windows(self) -> int:
        """Energy windows measured (1 for a measurement made of a single window)."""
        return max(1, len(self.windows))

    @property
    def energy_per_sample_rel_ci(self) -> float:
        """Relative 95 % half-width of energy per sample (per iteration: same batch), inf below 2 windows."""
        return relative_ci([w.energy_j / w.iterations for w in self.windows])

    @property
    def time_rel_ci(self) -> float:
        """Relative 95 % half-width of time per iteration (hence per epoch)."""
        return relative_ci([w.time_s / w.iterations for w in self.windows])

    @property
    def avg_power_uncertainty_w(self) -> float:
        """+- W of :attr:`avg_power_w` from the energy counter's update period.

        The windows' energy uncertainties in root-sum-square, over the measured time; nan when
        there are no window records or a window has no uncertainty.
        """
        if not self.windows:
            return math.nan
        return math.sqrt(sum(w.energy_uncertainty_j**2 for w in self.windows)) / self.time_s

    @property
    def avg_power_ci_w(self) -> float:
        """95 % half-width of the average power, W."""
        return ci_halfwidth([w.energy_j / w.time_s for w in self.windows])

    @property
    def ci_met(self) -> bool:
        """Whether energy per sample reached the target confidence."""
        return self.energy_per_sample_rel_ci <= self.rel_ci_target

    def provenance(self) -> dict[str, object]:
        """Warm-up, windows, SM clock and temperature of the point, for the trace's metadata."""
        return {
            "warmup_iterations": self.warmup_iterations,
            "warmup_s": round(self.warmup_time_s, 3),
            "warmup_steady": self.warmup_steady,
            "measured_iterations": self.iterations,
            "measured_s": round(self.time_s, 3),
            "energy_per_sample_rel_ci": finite_or_none(self.energy_per_sample_rel_ci),
            "ci_met": self.ci_met,
            "windows": [w.as_dict() for w in self.windows],
        }
