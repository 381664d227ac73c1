"""Carbon intensity over time: each try's emissions, and their price in the cost.

A carbon-intensity series (kind ``carbon_intensity``, :mod:`~zeus_bench.sim.scenarios.carbon_schema`)
is a CSV or Parquet file of two columns, exactly these names:

=================== ===== =====================================================================
column              type  meaning
=================== ===== =====================================================================
time_s              float Time the intensity starts to hold (s, any origin), strictly ascending
intensity_g_per_kwh float Grams of CO2-eq per kWh drawn from then on (>= 0)
=================== ===== =====================================================================

Each row's intensity holds until the next row's time (a step function); the last row's holds at
its own time only. ``zeus-bench simulate --carbon-intensity FILE`` places each recurrence in time
and charges every try of it the intensity at the recurrence's start (a try is not split over the
series' steps):

* a plain recurring job: recurrence ``r`` at ``first time + (r - 1) x --recurrence-period-s``
  (:data:`DEFAULT_PERIOD_S`, one a day);
* an arrival table (``--arrivals``): each submission at its ``start_time``, the table's earliest
  start at the series' first time.

A recurrence placed after the series' last time is an error naming the file (no extrapolation).
Each row of the runs table gets ``co2_g`` (:func:`zeus_bench.core.cost.emissions_g` of its
``energy_j``). With a carbon price (``--carbon-price``, :attr:`Cost.co2_price_j_per_g
<zeus_bench.core.cost.Cost.co2_price_j_per_g>`) the cost of every try, what the policy observes, adds
the price of its emissions (:class:`~zeus_bench.sim.model.JobModel` with the recurrences'
intensities), the early-stop budget's epoch cost that of an epoch's emissions, and the rows'
``expected_cost`` that of their ``expected_energy_j`` at the recurrence's intensity. The arrival
replays record ``co2_g`` but price no emissions (a price with ``--arrivals`` is refused).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zeus_bench.core.cost import Cost, emissions_g
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.sim.scenarios.carbon_schema import CARBON_INTENSITY
from zeus_bench.store import validate
from zeus_bench.store.frames import read_user_file

__all__ = ["CARBON_INTENSITY", "DEFAULT_PERIOD_S", "CarbonSeries", "read_carbon", "with_emissions"]

#: Seconds between two recurrences of a plain recurring job (a daily retraining).
DEFAULT_PERIOD_S = 86400.0
#: Rows accepted in a series (ten years of 5-minute points).
MAX_ROWS = 1_100_000


@dataclass(frozen=True)
class CarbonSeries:
    """A validated carbon-intensity series (times strictly ascending).

    ``origin_s``: the arrival-table time placed at the series' first time (its earliest start).
    """

    time_s: np.ndarray
    intensity_g_per_kwh: np.ndarray
    where: str
    origin_s: float = 0.0

    def at(self, offsets_s: np.ndarray, what: str) -> np.ndarray:
        """The intensity (g/kWh) at ``offsets_s`` seconds after the series' first time.

        Raises:
            ConfigError: an offset falls after the series' last time (``what`` names the
                first such point, e.g. ``"recurrence 40"``, indexed from 1).
        """
        t = self.time_s[0] + np.asarray(offsets_s, dtype=float)
        late = np.flatnonzero(t > self.time_s[-1])
        if len(late):
            k = int(late[0])
            raise ConfigError(
                f"{self.where}: the series ends {self.time_s[-1] - self.time_s[0]:g} s after its first "
                f"time, but {what} {k + 1} falls {t[k] - self.time_s[0]:g} s after it (a longer series"
                + (", or a shorter --recurrence-period-s)" if what == "recurrence" else ")")
            )
        return self.intensity_g_per_kwh[np.searchsorted(self.time_s, t, side="right") - 1]

    def by_recurrence(self, recurrences: int, period_s: float) -> np.ndarray:
        """Intensity at each recurrence ``1..recurrences`` a ``period_s`` apart (index 0: NaN, unused)."""
        out = np.full(recurrences + 1, math.nan)
        out[1:] = self.at(np.arange(recurrences) * float(period_s), "recurrence")
        return out

    def by_submission(self, starts: list[np.ndarray]) -> list[np.ndarray]:
        """Intensity at each arrival-table group's submissions (start times, ``origin_s`` at the series' first time)."""
        return [self.at(s - self.origin_s, "submission") for s in starts]


def check_period(period_s: float) -> float:
    """``period_s`` if a finite number > 0, else :class:`ConfigError`."""
    if not (math.isfinite(period_s) and period_s > 0):
        raise ConfigError(f"--recurrence-period-s must be a finite number > 0, got {period_s}")
    return float(period_s)


def read_carbon(path: str | Path) -> CarbonSeries:
    """Read and validate a carbon-intensity series.

    Raises:
        TraceFormatError: unreadable file, no rows or too many, a missing column, a value that is
            not a finite number (or a negative intensity), or times not strictly ascending: one
            line naming the file, and the column and row at fault.
    """
    where = str(path)
    df = read_user_file(path, "carbon-intensity series")
    if df.empty:
        raise TraceFormatError(f"{where}: no rows")
    if len(df) > MAX_ROWS:
        raise TraceFormatError(f"{where}: {len(df)} rows, more than the {MAX_ROWS} allowed")
    out = validate(df, CARBON_INTENSITY.kind, where)
    times = out["time_s"].to_numpy(dtype=float)
    back = np.flatnonzero(np.diff(times) <= 0)
    if len(back):
        row = int(back[0]) + 1
        raise TraceFormatError(
            f"{where}: column 'time_s' row {row}: {times[row]:g} is not after the previous row's "
            f"{times[row - 1]:g} (times must ascend strictly)"
        )
    return CarbonSeries(times, out["intensity_g_per_kwh"].to_numpy(dtype=float), where)


def with_emissions(tries: dict[str, np.ndarray], intensity: np.ndarray, cost: Cost) -> dict[str, np.ndarray]:
    """The try columns with ``co2_g`` (each row's ``energy_j`` at its ``intensity``, g/kWh per row).

    With a carbon price, ``expected_cost`` adds the price of ``expected_energy_j``'s emissions at
    the same intensity (the replay's ``cost`` has it already).
    """
    out = dict(tries)
    out["co2_g"] = emissions_g(np.asarray(tries["energy_j"], dtype=float), intensity)
    if cost.weighs_co2:
        expected = np.asarray(tries["expected_energy_j"], dtype=float)
        out["expected_cost"] = tries["expected_cost"] + cost.co2_cost(emissions_g(expected, intensity))
    return out
