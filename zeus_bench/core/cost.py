"""The one cost model of Zeus, used by the profiler, the bandit, the simulator and the analysis.

A :class:`Cost` is the objective every computation is passed (as ml-energy/zeus passes its
optimizers an objective object, a ``ZeusCost`` selector, rather than a bare knob):

``cost = eta * energy_j + (1 - eta) * max_power_w * time_s + sum(term.price * term.amount(...))``
(joules), where ``max_power_w`` (MAXPOWER) is the largest power limit times the number of GPUs
(:func:`max_power_w`), ``eta = 1`` optimises energy only, ``eta = 0`` time only. Energy is measured
energy (time x *average* power), never time x the limit.

The sum runs over the cost's :class:`CostTerm` s (none by default; an unpriced one is recorded,
never added: without a priced term every figure is the paper's to the last bit). The simulator's
terms come from :mod:`zeus_bench.sim.scenarios.terms` (each module adds its flags to ``zeus-bench
simulate`` and builds its term); :func:`emissions_g` serves the first, the carbon term.

The defaults are owned here once: :data:`DEFAULT_ETA` (a :class:`Cost`'s) and :data:`DEFAULT_BETA`.
Beta, the early-stop threshold (a try stops at ``beta x`` the least recurrence cost so far), is a
rule of the replay and of the batch-size optimizer, not a term of what a run costs: it is no
field of :class:`Cost`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, TypeVar, overload, runtime_checkable

import numpy as np
import numpy.typing as npt

from zeus_bench.core.errors import ConfigError

DEFAULT_ETA = 0.5
DEFAULT_BETA = 2.0
#: Joules in a kilowatt-hour (a carbon intensity is given per kWh).
J_PER_KWH = 3.6e6

ArrayF = npt.NDArray[np.float64]
T = TypeVar("T", float, ArrayF)


def check_eta(eta: float) -> float:
    """Return ``eta`` if it lies in [0, 1], else raise :class:`ConfigError`."""
    if not (0.0 <= float(eta) <= 1.0):
        raise ConfigError(f"eta must lie in [0, 1], got {eta}")
    return float(eta)


def check_beta(beta: float) -> float:
    """Return ``beta`` if positive (``inf`` turns early stopping off), else raise."""
    b = float(beta)
    if not b > 0 or np.isnan(b):
        raise ConfigError(f"beta must be > 0 (inf turns early stopping off), got {beta}")
    return b


def max_power_w(max_limit_w: T, num_gpus: int) -> T:
    """MAXPOWER of the cost: the largest power limit of one GPU times the number of GPUs (W).

    An array gives one MAXPOWER per entry (the replay's early-stop budget uses one per batch size).
    """
    return max_limit_w * int(num_gpus)  # type: ignore[return-value]


def emissions_g(energy_j: T, intensity_g_per_kwh: T | float) -> T:
    """Emissions of ``energy_j`` joules drawn at ``intensity_g_per_kwh`` (gCO2-eq per kWh), in grams."""
    return energy_j / J_PER_KWH * intensity_g_per_kwh  # type: ignore[return-value]


def check_price(price: float, what: str) -> float:
    """``price`` (J per unit of a term) as a float if finite and >= 0, else :class:`ConfigError` naming ``what``."""
    p = float(price)
    if not (math.isfinite(p) and p >= 0.0):
        raise ConfigError(f"{what} must be a finite number >= 0 J per unit, got {price}")
    return p


@runtime_checkable
class CostTerm(Protocol):
    """One extension of the cost: an amount of each try, written to its own column, priced in joules.

    The protocol's members: :attr:`column` (the runs-table column of the amount, ``co2_g``),
    :attr:`unit` (``gCO2``), :attr:`description` (what the column holds), :attr:`price` (joules
    of cost per unit, >= 0; 0: recorded, not priced), :attr:`in_time` (whether the amount
    depends on the try's place in time; an online run has none, so
    :class:`~zeus_bench.online.optimizer.BatchSizeOptimizer` refuses such a term),
    :meth:`amount` and :meth:`reach`.
    """

    @property
    def column(self) -> str:
        """The runs-table column of the amount."""
        ...

    @property
    def unit(self) -> str:
        """The amount's unit."""
        ...

    @property
    def description(self) -> str:
        """What the column holds."""
        ...

    @property
    def price(self) -> float:
        """Joules of cost per unit (0: recorded, not priced)."""
        ...

    @property
    def in_time(self) -> bool:
        """Whether the amount depends on the try's place in time."""
        ...

    def amount(self, energy_j: ArrayF, time_s: ArrayF, when_s: ArrayF) -> ArrayF:
        """Each try's amount (in :attr:`unit`) from its energy (J), time (s) and place in time.

        ``when_s``: seconds after the first recurrence's time at which each try's recurrence
        starts (ignored by a term not :attr:`in_time`).
        """
        ...

    def reach(self, when_s: ArrayF, what: str) -> None:
        """Raise :class:`ConfigError` when a place in ``when_s`` lies beyond the term's data.

        ``what`` names the places (``"recurrence"``, ``"submission"``; the message counts them from 1).
        """
        ...


@dataclass(frozen=True)
class Cost:
    """The objective: Zeus's energy-time cost, and its terms (none by default).

    Attributes:
        eta: Weight of energy in [0, 1] (``DEFAULT_ETA``, the paper's 0.5).
        terms: The cost's :class:`CostTerm` s (each a column of the runs table; priced ones
            add ``price x amount`` to a try's cost). Empty: the paper's cost.
    """

    eta: float = DEFAULT_ETA
    terms: tuple[CostTerm, ...] = ()

    def __post_init__(self) -> None:
        """Check eta and the terms (:class:`ConfigError` naming the one at fault); keep eta a float."""
        object.__setattr__(self, "eta", check_eta(self.eta))
        terms = tuple(self.terms)
        for term in terms:
            check_price(term.price, f"the price of {term.column}")
        columns = [t.column for t in terms]
        if len(set(columns)) != len(columns):
            raise ConfigError(f"cost terms name a column twice: {', '.join(columns)}")
        object.__setattr__(self, "terms", terms)

    @property
    def priced(self) -> tuple[CostTerm, ...]:
        """The terms that enter the cost (a positive price)."""
        return tuple(t for t in self.terms if t.price > 0.0)

    @overload
    def zeus_cost(
        self, energy_j: float, time_s: float, max_power_w: float, when_s: ArrayF | None = None
    ) -> float: ...
    @overload
    def zeus_cost(
        self,
        energy_j: ArrayF,
        time_s: ArrayF | float,
        max_power_w: ArrayF | float,
        when_s: ArrayF | None = None,
    ) -> ArrayF: ...
    @overload
    def zeus_cost(
        self,
        energy_j: ArrayF | float,
        time_s: ArrayF,
        max_power_w: ArrayF | float,
        when_s: ArrayF | None = None,
    ) -> ArrayF: ...
    def zeus_cost(self, energy_j, time_s, max_power_w, when_s=None):  # type: ignore[no-untyped-def]
        """The cost in joules of ``energy_j`` and ``time_s`` (at places ``when_s``, with the terms).

        Args:
            energy_j: Energy consumed (J); a scalar or an array.
            time_s: Wall time (s), same shape as ``energy_j`` or broadcastable.
            max_power_w: MAXPOWER (:func:`max_power_w`, W); an array broadcasts (e.g. one per batch size).
            when_s: Each try's place in time (:meth:`CostTerm.amount`), or None: a figure with no
                place (a configuration's, the profiler's), the energy-time cost alone.

        Returns:
            ``eta * energy_j + (1 - eta) * max_power_w * time_s [+ term_cost(...)]``.
        """
        cost = self.eta * energy_j + (1.0 - self.eta) * max_power_w * time_s
        if when_s is None or not self.priced:
            return cost
        return cost + self.term_cost(energy_j, time_s, when_s)

    def term_cost(self, energy_j: ArrayF, time_s: ArrayF, when_s: ArrayF) -> ArrayF:
        """The priced terms' ``price x amount`` summed (J) at places ``when_s`` (zeros when none is priced)."""
        parts = [t.price * t.amount(energy_j, time_s, when_s) for t in self.priced]
        if not parts:
            return np.zeros(np.shape(energy_j))
        out = parts[0]
        for part in parts[1:]:
            out = out + part
        return out

    def epoch_cost(self, time_per_epoch_s: T, avg_power_w: T, max_power_w: float | ArrayF) -> T:
        """Cost of one epoch: ``(eta * avg_power_w + (1 - eta) * max_power_w) * time_per_epoch_s``.

        Equal to ``zeus_cost(avg_power_w * time_per_epoch_s, time_per_epoch_s, ...)`` up to the
        last bit. This order (power first, then times the epoch's time) is the one of the paper's
        JIT power-limit profiler, and the profiler's choice uses it. The paper's early-stop budget
        ``floor(beta * min_cost / epoch cost)`` instead costs the epoch as ``zeus_cost(time x
        power, time, ...)`` from the trace row, and sits exactly on an integer whenever the best
        run used the same configuration, so the replay's budget calls :meth:`zeus_cost` with that
        row's energy and time: the last bit decides the epoch count. No term (an epoch has no
        place in time; the replay adds :meth:`term_cost` at the try's).
        """
        return (self.eta * avg_power_w + (1.0 - self.eta) * max_power_w) * time_per_epoch_s  # type: ignore[return-value]


#: The paper's cost (eta 0.5, no terms).
DEFAULT_COST = Cost()
