"""The one cost model of Zeus, used by the profiler, the bandit, the simulator and the analysis.

``cost = eta * energy_j + (1 - eta) * max_power_w * time_s`` (joules), where ``max_power_w`` is the
maximum power limit times the number of GPUs. ``eta = 1`` optimises energy only, ``eta = 0`` time
only. Energy is measured energy (time x *average* power), never time x the limit.
"""

from __future__ import annotations

from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from zeus_bench.core.errors import ConfigError

DEFAULT_ETA = 0.5
DEFAULT_BETA = 2.0

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


@overload
def zeus_cost(energy_j: float, time_s: float, eta: float, max_power_w: float) -> float: ...
@overload
def zeus_cost(
    energy_j: ArrayF, time_s: ArrayF | float, eta: float, max_power_w: ArrayF | float
) -> ArrayF: ...
@overload
def zeus_cost(
    energy_j: ArrayF | float, time_s: ArrayF, eta: float, max_power_w: ArrayF | float
) -> ArrayF: ...
def zeus_cost(energy_j, time_s, eta, max_power_w):  # type: ignore[no-untyped-def]
    """Zeus's energy-time cost in joules.

    Args:
        energy_j: Energy consumed (J); a scalar or an array.
        time_s: Wall time (s), same shape as ``energy_j`` or broadcastable.
        eta: Weight of energy in [0, 1].
        max_power_w: Maximum power limit times number of GPUs (W); an array broadcasts (e.g. one
            MAXPOWER per batch size).

    Returns:
        ``eta * energy_j + (1 - eta) * max_power_w * time_s``.
    """
    return eta * energy_j + (1.0 - eta) * max_power_w * time_s


def epoch_cost(time_per_epoch_s: T, avg_power_w: T, eta: float, max_power_w: float | ArrayF) -> T:
    """Cost of one epoch: ``(eta * avg_power_w + (1 - eta) * max_power_w) * time_per_epoch_s``.

    Equal to ``zeus_cost(avg_power_w * time_per_epoch_s, time_per_epoch_s, ...)`` up to the last
    bit. This order (power first, then times the epoch's time) is the one of the paper's JIT
    power-limit profiler, and the profiler's choice uses it. The paper's early-stop budget
    ``floor(beta * min_cost / epoch cost)`` instead costs the epoch as
    ``zeus_cost(time x power, time, ...)`` from the trace row, and sits exactly on an integer
    whenever the best run used the same configuration, so the replay's budget calls
    :func:`zeus_cost` with that row's energy and time: the last bit decides the epoch count.
    """
    return (eta * avg_power_w + (1.0 - eta) * max_power_w) * time_per_epoch_s  # type: ignore[return-value]
