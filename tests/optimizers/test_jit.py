"""The two JIT power-limit choices: the simulator's first argmin and the profiler's ties within rel_tol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.online import profiler
from zeus_bench.optimizers.jit import LimitMeasurement, MinCostPerSample, jit_power_limit

ETA, MAX_POWER_W = 0.5, 700.0
SAMPLES, TIME_S = 100, 10.0  # one epoch: 100 samples in 10 s at every limit
LIMITS_W = [300.0, 250.0, 200.0]


def _both(energies_j: list[float], rel_tol: float = 1e-6) -> tuple[float, float]:
    """(profiler's choice, simulator's choice) on the same measurements, one epoch per limit."""
    measured = [
        LimitMeasurement(power_limit_w=w, iterations=10, samples=SAMPLES, time_s=TIME_S, energy_j=e)
        for w, e in zip(LIMITS_W, energies_j, strict=True)
    ]
    online = MinCostPerSample(rel_tol).choose(measured, Cost(ETA), MAX_POWER_W)
    replay = jit_power_limit(
        np.array(LIMITS_W),
        np.full(len(LIMITS_W), TIME_S),
        np.array(energies_j) / TIME_S,
        Cost(ETA),
        MAX_POWER_W,
    )
    return online, replay


def test_clear_optimum_is_chosen_by_both() -> None:
    assert _both([3000.0, 2500.0, 2600.0]) == (250.0, 250.0)
    assert _both([3000.0, 2500.0, 2500.0 * (1 - 1e-4)]) == (200.0, 200.0)


def test_exact_tie_goes_to_the_higher_limit_in_both() -> None:
    assert _both([3000.0, 2500.0, 2500.0]) == (250.0, 250.0)


def test_near_tie_within_rel_tol_splits_the_two_choices() -> None:
    """200 W is cheaper by 2.6e-10 of the cost: a tie for the profiler, the argmin for the replay."""
    energies = [3000.0, 2500.0, 2500.0 * (1 - 1e-9)]
    c250, c200 = (Cost(ETA).zeus_cost(e / SAMPLES, TIME_S / SAMPLES, MAX_POWER_W) for e in energies[1:])
    assert 0.0 < (c250 - c200) / c250 < 1e-6
    assert _both(energies) == (250.0, 200.0)
    assert _both(energies, rel_tol=0.0) == (200.0, 200.0)  # no tolerance: the same rule


def test_replay_skips_unmeasured_limits_and_order_does_not_matter() -> None:
    limits = np.array([200.0, 300.0, 250.0])
    tpe = np.array([math.nan, 10.0, 10.0])
    power = np.array([100.0, 300.0, 250.0])
    assert jit_power_limit(limits, tpe, power, Cost(ETA), MAX_POWER_W) == 250.0
    with pytest.raises(ValueError, match="no measured power limit"):
        jit_power_limit(limits, np.full(3, math.nan), power, Cost(ETA), MAX_POWER_W)


def test_profiler_choice_needs_a_measurement_and_costs_per_sample() -> None:
    with pytest.raises(ConfigError, match="no power limit"):
        MinCostPerSample().choose([], Cost(ETA), MAX_POWER_W)
    m = LimitMeasurement(power_limit_w=300, iterations=10, samples=100, time_s=2.0, energy_j=600.0)
    assert m.throughput_sps == 50 and m.avg_power_w == 300
    assert m.cost_per_sample_j(Cost(0.5), 700) == pytest.approx(0.5 * 6.0 + 0.5 * 700 * 0.02)


def test_old_paths_re_export_the_same_objects() -> None:
    assert profiler.MinCostPerSample is MinCostPerSample
    assert profiler.LimitMeasurement is LimitMeasurement
