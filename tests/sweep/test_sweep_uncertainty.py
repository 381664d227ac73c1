"""The power trace's avg_power_uncertainty_w comes from the monitor's per-window uncertainty."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.store import validate
from zeus_bench.sweep.measure import MeasureSettings, measure_steps
from zeus_bench.sweep.writer import power_row
from zeus_bench.traces.workloads import get_workload


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_power_row_carries_the_counter_uncertainty():
    clock = Clock()
    backend = FakeBackend(state_path=None, clock=clock)
    backend.configure(load=1.0)  # 600 W
    monitor = EnergyMonitor(
        backend.gpus([0]), sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
    )

    def step():
        clock.t += 0.5

    settings = MeasureSettings(0, 0.0, 1, 1.0, window_s=1.0, min_windows=4, steady_s=0)
    m = measure_steps(step, monitor, settings, "w", clock=clock)
    assert m.num_windows == 4 and all(w.energy_uncertainty_j == pytest.approx(60.0) for w in m.windows)
    # four windows of +-60 J (0.1 s at 600 W) in root-sum-square, over 4 s
    assert m.avg_power_uncertainty_w == pytest.approx(math.sqrt(4 * 60.0**2) / 4.0)
    row = power_row(get_workload("cifar100"), "h200", 64, 700.0, 1000, m, 1, True)
    assert row["avg_power_uncertainty_w"] == pytest.approx(30.0)
    assert m.windows[0].as_dict()["energy_uncertainty_j"] == 60.0
    checked = validate(pd.DataFrame([row]), "power")
    assert checked["avg_power_uncertainty_w"].iloc[0] == pytest.approx(30.0)
