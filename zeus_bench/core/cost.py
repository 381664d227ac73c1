"""The one cost model of Zeus, used by the profiler, the bandit, the simulator and the analysis.

A :class:`Cost` is the objective every computation is passed (as ml-energy/zeus passes its
optimizers an objective object, a ``ZeusCost`` selector, rather than a bare knob):

``cost = eta * energy_j + (1 - eta) * max_power_w * time_s + co2_price_j_per_g * co2_g`` (joules),

where ``max_power_w`` (MAXPOWER) is the largest power limit times the number of GPUs
(:func:`max_power_w`), ``eta = 1`` optimises energy only, ``eta = 0`` time only. Energy is measured
energy (time x *average* power), never time x the limit. The last term, the emissions' price, is
the first extension of the paper's cost: zero by default, and then never added, so every figure
without it is the paper's to the last bit. ``co2_g`` is the energy's emissions at the grid's
carbon intensity (:func:`emissions_g`; the simulator's series:
:mod:`zeus_bench.sim.scenarios.carbon`).

The defaults are owned here once: :data:`DEFAULT_ETA` (a :class:`Cost`'s) and :data:`DEFAULT_BETA`.
Beta, the early-stop threshold (a try stops at ``beta x`` the least recurrence cost so far), is a
rule of the replay and of the batch-size optimizer, not a term of what a run costs: it is no
field of :class:`Cost`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeVar, overload

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


@dataclass(frozen=True)
class Cost:
    """The objective: Zeus's energy-time cost, and a price on emissions (off by default).

    Attributes:
        eta: Weight of energy in [0, 1] (``DEFAULT_ETA``, the paper's 0.5).
        co2_price_j_per_g: Joules of cost per gram of CO2-eq emitted (>= 0; 0: the paper's cost).
            At eta 0.5 and 400 g/kWh, 4500 J/g weighs a joule's emissions as much as the joule.
    """

    eta: float = DEFAULT_ETA
    co2_price_j_per_g: float = 0.0

    def __post_init__(self) -> None:
        """Check the weights (:class:`ConfigError` naming the one at fault); keep them as floats."""
        object.__setattr__(self, "eta", check_eta(self.eta))
        price = float(self.co2_price_j_per_g)
        if not (math.isfinite(price) and price >= 0.0):
            raise ConfigError(
                f"the carbon price must be a finite number >= 0 J/g, got {self.co2_price_j_per_g}"
            )
        object.__setattr__(self, "co2_price_j_per_g", price)

    @property
    def weighs_co2(self) -> bool:
        """Whether emissions enter the cost (a positive carbon price)."""
        return self.co2_price_j_per_g > 0.0

    @overload
    def zeus_cost(
        self, energy_j: float, time_s: float, max_power_w: float, co2_g: float | None = None
    ) -> float: ...
    @overload
    def zeus_cost(
        self,
        energy_j: ArrayF,
        time_s: ArrayF | float,
        max_power_w: ArrayF | float,
        co2_g: ArrayF | None = None,
    ) -> ArrayF: ...
    @overload
    def zeus_cost(
        self,
        energy_j: ArrayF | float,
        time_s: ArrayF,
        max_power_w: ArrayF | float,
        co2_g: ArrayF | None = None,
    ) -> ArrayF: ...
    def zeus_cost(self, energy_j, time_s, max_power_w, co2_g=None):  # type: ignore[no-untyped-def]
        """The cost in joules of ``energy_j`` and ``time_s`` (and ``co2_g`` grams emitted).

        Args:
            energy_j: Energy consumed (J); a scalar or an array.
            time_s: Wall time (s), same shape as ``energy_j`` or broadcastable.
            max_power_w: MAXPOWER (:func:`max_power_w`, W); an array broadcasts (e.g. one per batch size).
            co2_g: Grams of CO2-eq emitted, or None (no emissions term). Priced only when
                :attr:`co2_price_j_per_g` is positive; otherwise nothing is added.

        Returns:
            ``eta * energy_j + (1 - eta) * max_power_w * time_s [+ co2_price_j_per_g * co2_g]``.
        """
        cost = self.eta * energy_j + (1.0 - self.eta) * max_power_w * time_s
        if co2_g is None or not self.weighs_co2:
            return cost
        return cost + self.co2_cost(co2_g)

    def co2_cost(self, co2_g: T) -> T:
        """The price of ``co2_g`` grams of CO2-eq emitted, J (0 without a carbon price)."""
        return self.co2_price_j_per_g * co2_g  # type: ignore[return-value]

    def epoch_cost(self, time_per_epoch_s: T, avg_power_w: T, max_power_w: float | ArrayF) -> T:
        """Cost of one epoch: ``(eta * avg_power_w + (1 - eta) * max_power_w) * time_per_epoch_s``.

        Equal to ``zeus_cost(avg_power_w * time_per_epoch_s, time_per_epoch_s, ...)`` up to the
        last bit. This order (power first, then times the epoch's time) is the one of the paper's
        JIT power-limit profiler, and the profiler's choice uses it. The paper's early-stop budget
        ``floor(beta * min_cost / epoch cost)`` instead costs the epoch as ``zeus_cost(time x
        power, time, ...)`` from the trace row, and sits exactly on an integer whenever the best
        run used the same configuration, so the replay's budget calls :meth:`zeus_cost` with that
        row's energy and time: the last bit decides the epoch count. No emissions term (an epoch
        has no place in time).
        """
        return (self.eta * avg_power_w + (1.0 - self.eta) * max_power_w) * time_per_epoch_s  # type: ignore[return-value]


#: The paper's cost (eta 0.5, no emissions term).
DEFAULT_COST = Cost()
