"""The per-try noise level of ``--noise``: a number, or ``trace`` (from the traces' confidence columns).

A try's time and average power are scaled by seeded factors ``1 + level x z``
(:func:`zeus_bench.sim.executor.noisy`). ``trace`` takes the level from the power traces'
own confidence columns (this project's sweeps write them; the published Zeus traces have none):
the median over rows of the relative half-width of the 95 % interval of the time per epoch and of
the average power, divided by 1.96 (a standard deviation), the larger of the two. On the H200
trace (68 rows) that is 0.020 (time; power 0.0046). The range allowed, ``[0, 0.1]``
(:data:`~zeus_bench.sim.rules.MAX_NOISE`), holds the largest relative half-width any row of it
has (0.091).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.rules import check_noise

if TYPE_CHECKING:
    import pandas as pd

Z95 = 1.959963984540054  # half-width of a 95 % normal interval, in standard deviations


def trace_noise_level(power: pd.DataFrame) -> float | None:
    """The noise level a power trace's confidence columns justify (None: it has none)."""
    levels = []
    for ci, value in (("time_per_epoch_ci_s", "time_per_epoch_s"), ("avg_power_ci_w", "avg_power_w")):
        if ci not in power.columns:
            continue
        rel = (power[ci].astype(float) / power[value].astype(float)).to_numpy()
        rel = rel[np.isfinite(rel)]
        if len(rel):
            levels.append(float(np.median(rel)) / Z95)
    return max(levels) if levels else None


def resolve_noise(text: str | float, powers: Sequence[pd.DataFrame] = ()) -> float:
    """``--noise``: a level in ``[0, 0.1]``, or ``trace``: the largest level the ``powers`` justify.

    Raises:
        ConfigError: out of range, not a number, or ``trace`` without confidence columns.
    """
    if text == "trace":
        levels = [lv for lv in (trace_noise_level(p) for p in powers) if lv is not None]
        if not levels:
            raise ConfigError("--noise trace: no power trace of these GPUs has confidence columns (*_ci_*)")
        return check_noise(max(levels))
    return check_noise(text)
