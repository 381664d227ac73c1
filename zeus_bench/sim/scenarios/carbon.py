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

The series is a cost term (:class:`CarbonTerm`, a :class:`zeus_bench.core.cost.CostTerm` in a
:class:`~zeus_bench.core.cost.Cost`'s ``terms``), offered by this module through the registry
:mod:`zeus_bench.sim.scenarios.terms` (its flags, its column, its provenance): no other module
names it. Each row of the runs table gets ``co2_g`` (:func:`zeus_bench.core.cost.emissions_g` of
its ``energy_j``). With a carbon price (``--carbon-price``, the term's ``price``) the cost of every
try, what the policy observes, adds the price of its emissions, the early-stop budget's epoch cost
that of an epoch's emissions, and the rows' ``expected_cost`` that of their ``expected_energy_j``
at the recurrence's intensity. The arrival replays record ``co2_g`` but price no term (a price
with ``--arrivals`` is refused).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zeus_bench.core.cost import CostTerm, check_price, emissions_g
from zeus_bench.core.entry import float_arg
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.sim.scenarios.carbon_schema import CARBON_INTENSITY
from zeus_bench.store import Column, validate
from zeus_bench.store.frames import read_user_file

__all__ = ["CARBON_INTENSITY", "COLUMN", "NAME", "CarbonSeries", "CarbonTerm", "read_carbon"]

#: The term's key in the runs table's provenance.
NAME = "carbon"
#: The term's column of the runs table.
COLUMN = Column(
    "co2_g",
    "float",
    "Emissions of the try: energy_j at the carbon intensity of its recurrence's time "
    "(zeus_bench.sim.scenarios.carbon; missing without `--carbon-intensity`)",
    "gCO2",
    "1.2e4",
    nullable=True,
    required=False,
    checks=("nonnegative",),
)
#: Rows accepted in a series (ten years of 5-minute points).
MAX_ROWS = 1_100_000


@dataclass(frozen=True)
class CarbonSeries:
    """A validated carbon-intensity series (times strictly ascending), read from ``where``."""

    time_s: np.ndarray
    intensity_g_per_kwh: np.ndarray
    where: str

    def reach(self, offsets_s: np.ndarray, what: str) -> None:
        """Refuse offsets (s after the series' first time) past its last time.

        Raises:
            ConfigError: naming the first such point, e.g. ``"recurrence 40"`` (indexed from 1).
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

    def at(self, offsets_s: np.ndarray) -> np.ndarray:
        """The intensity (g/kWh) at ``offsets_s`` seconds after the series' first time (within :meth:`reach`)."""
        t = self.time_s[0] + np.asarray(offsets_s, dtype=float)
        return self.intensity_g_per_kwh[np.searchsorted(self.time_s, t, side="right") - 1]


@dataclass(frozen=True, eq=False)
class CarbonTerm:
    """The emissions term of the cost: ``co2_g`` of each try at its recurrence's intensity.

    Attributes:
        series: The carbon-intensity series.
        price: Joules of cost per gram of CO2-eq emitted (>= 0; 0: ``co2_g`` recorded, not priced).
            At eta 0.5 and 400 g/kWh, 4500 J/g weighs a joule's emissions as much as the joule.
    """

    series: CarbonSeries
    price: float = 0.0
    column = COLUMN.name
    unit = COLUMN.unit
    description = COLUMN.description
    in_time = True

    def __post_init__(self) -> None:
        """Check the price (:class:`ConfigError` naming it)."""
        object.__setattr__(self, "price", check_price(self.price, "the carbon price"))

    def amount(self, energy_j: np.ndarray, time_s: np.ndarray, when_s: np.ndarray) -> np.ndarray:
        """Emissions (g) of ``energy_j`` at the intensity of each place ``when_s`` (``time_s`` unused)."""
        return emissions_g(energy_j, self.series.at(when_s))

    def reach(self, when_s: np.ndarray, what: str) -> None:
        """:meth:`CarbonSeries.reach`: a place past the series' end is refused."""
        self.series.reach(when_s, what)


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


def add_args(p: argparse.ArgumentParser) -> None:
    """Add the term's flags to ``zeus-bench simulate``'s parser."""
    p.add_argument(
        "--carbon-intensity",
        type=Path,
        default=None,
        metavar="FILE",
        help="carbon-intensity series (.csv/.parquet: time_s, intensity_g_per_kwh): writes each try's co2_g "
        "(zeus_bench.sim.scenarios.carbon)",
    )
    p.add_argument(
        "--carbon-price",
        type=float_arg("--carbon-price", minimum=0.0),
        default=0.0,
        metavar="J_PER_G",
        help="joules of cost per gram of CO2-eq emitted (default 0: co2_g recorded, not priced; needs "
        "--carbon-intensity)",
    )


def from_args(args: argparse.Namespace) -> CostTerm | None:
    """The term the flags ask for (None without ``--carbon-intensity``).

    Raises:
        ConfigError: ``--carbon-price`` without ``--carbon-intensity``.
        TraceFormatError: the series does not read (:func:`read_carbon`).
    """
    if args.carbon_intensity is None:
        if args.carbon_price > 0.0:
            raise ConfigError("--carbon-price needs --carbon-intensity")
        return None
    return CarbonTerm(read_carbon(args.carbon_intensity), args.carbon_price)


def provenance(term: CostTerm, period_s: float | None) -> dict[str, Any]:
    """What the runs table's provenance records of the term (``period_s``: None for arrival tables)."""
    assert isinstance(term, CarbonTerm)
    return {"intensity": term.series.where, "period_s": period_s, "price_j_per_g": term.price}
