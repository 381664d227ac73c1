"""The monitor's edge rules, pinned before the counter code moves (design §6.2: device/counter.py).

Each test here was seen failing against a single-point bug of the kind a move makes: the update
period probe dividing the span by N instead of N - 1, and the uncertainty using only one edge's
power.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import PROBE_UPDATES, EnergyMonitor


class TickClock:
    """A clock that moves ``dt`` on every read, whichever thread reads it (deterministic probe)."""

    def __init__(self, dt: float = 0.0005) -> None:
        self.t = 100.0
        self.dt = dt
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.t += self.dt
            return self.t


@pytest.mark.parametrize("period", [0.03, 0.05])
def test_probe_measures_the_update_period_within_a_few_percent(period: float) -> None:
    # The probe's change times are known to a few clock ticks, so over PROBE_UPDATES - 1
    # periods the estimate is within 2 %; dividing the span by the number of changes (not the
    # number of intervals) would be (N-1)/N = 17 % low.
    clock = TickClock()
    b = FakeBackend(state_path=None, n_gpus=1, clock=clock)
    b.configure(counter_update_period_s=period, load=0.5)
    mon = EnergyMonitor(b.gpus([0]), sync_cuda=False, clock=clock)
    try:
        measured = mon.counter_update_period_s()
    finally:
        mon.close()
    assert PROBE_UPDATES >= 3
    assert measured == pytest.approx(period, rel=0.02)


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_uncertainty_takes_the_larger_edge_power_when_a_window_ends_idle() -> None:
    clock = Clock()
    b = FakeBackend(state_path=None, n_gpus=1, clock=clock)
    g = b.gpu(0)
    g.set_load(1.0)  # 600 W at the start edge
    mon = EnergyMonitor(
        [g], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
    )
    mon.begin_window("falls_idle")
    clock.t += 0.5
    g.set_load(0.0)  # idle (80 W) for the rest, and at the end edge
    clock.t += 4.5
    m = mon.end_window("falls_idle")
    assert m.energy_j[0] == pytest.approx(600.0 * 0.5 + 80.0 * 4.5)  # 660 J: 132 W on average
    # one update period at the larger of the two edges' power (600 W), not the end's (80 W)
    # nor the window's average (132 W)
    assert m.energy_uncertainty_j[0] == pytest.approx(60.0)
    # and the other way round: a window that starts idle and ends loaded
    mon.begin_window("wakes_up")
    clock.t += 4.5
    g.set_load(1.0)
    clock.t += 0.5
    m = mon.end_window("wakes_up")
    assert m.energy_uncertainty_j[0] == pytest.approx(60.0)
    # a window idle at both edges: the average power (above the edges') sets it
    g.set_load(0.0)
    mon.begin_window("idle_edges")
    clock.t += 1.0
    g.set_load(1.0)
    clock.t += 1.0
    g.set_load(0.0)
    clock.t += 2.0
    m = mon.end_window("idle_edges")
    assert m.avg_power_w == pytest.approx((80.0 * 3 + 600.0) / 4)
    assert m.energy_uncertainty_j[0] == pytest.approx(0.1 * m.avg_power_w)


def test_integrating_an_empty_or_reversed_interval_gives_nothing() -> None:
    from zeus_bench.device.monitor import integrate_power_j

    t, p = np.array([0.0, 1.0, 2.0]), np.array([100.0, 200.0, 300.0])
    assert integrate_power_j(t, p, 1.5, 0.5) == 0.0  # reversed: no energy, not a negative one
    assert integrate_power_j(t, p, 1.0, 1.0) == 0.0
    assert integrate_power_j(np.array([]), np.array([]), 0.0, 1.0) == 0.0
    assert integrate_power_j(t, p, 0.5, 1.5) == pytest.approx(200.0)
