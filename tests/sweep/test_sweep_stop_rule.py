"""The sweep's stop rule, pinned before measure.py changes (windows until every bound and the CI, or the cap).

Each bound is made the binding one in turn on a manual clock (so every window is exactly as
long as planned): seen failing against an off-by-one (``>`` for ``>=``) on any bound, a cap that
cuts below ``min_windows``, and a CI target compared the wrong way.
"""

from __future__ import annotations

import pytest

from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.sweep.measure import MeasureSettings, measure_steps


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _measure(settings: MeasureSettings, noisy: bool = False):
    clock = Clock()
    backend = FakeBackend(state_path=None, clock=clock)
    backend.configure(load=1.0)
    g = backend.gpu(0)
    monitor = EnergyMonitor(
        [g], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
    )
    steps = [0]

    def step() -> None:
        steps[0] += 1
        if noisy:  # windows of two iterations alternate between a busy and a light load
            g.set_load(1.0 if (steps[0] - 1) // 2 % 2 else 0.1)
        clock.t += 0.5

    return measure_steps(step, monitor, settings, "w", clock=clock)


def _settings(**kw: float) -> MeasureSettings:
    base = {"warmup_iters": 0, "warmup_s": 0.0, "measure_iters": 1, "measure_s": 0.0, "window_s": 1.0}
    base |= {"min_windows": 2, "steady_s": 0.0, "max_measure_s": 100.0}
    return MeasureSettings(**(base | kw))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "windows"),
    [
        ({}, 2),  # min_windows binds (constant load: the CI is met at once)
        ({"min_windows": 5}, 5),
        ({"measure_s": 6.0}, 6),  # 1 s windows: exactly 6 s is enough
        ({"measure_iters": 14}, 7),  # 2 iterations a window: exactly 14 is enough
        ({"measure_s": 6.0, "max_measure_s": 6.0}, 6),
    ],
)
def test_stops_as_soon_as_every_bound_is_met(kw: dict[str, float], windows: int) -> None:
    m = _measure(_settings(**kw))
    assert m.num_windows == windows
    assert all(w.iterations == 2 and w.time_s == pytest.approx(1.0) for w in m.windows)
    assert m.ci_met and m.energy_per_sample_rel_ci == pytest.approx(0.0, abs=1e-12)


def test_noisy_point_runs_to_the_cap_and_is_flagged() -> None:
    m = _measure(_settings(max_measure_s=9.0), noisy=True)
    assert m.num_windows == 9 and m.time_s == pytest.approx(9.0)
    assert not m.ci_met and m.energy_per_sample_rel_ci > 0.01


def test_cap_never_cuts_below_min_windows() -> None:
    m = _measure(_settings(min_windows=6, max_measure_s=2.0), noisy=True)
    assert m.num_windows == 6 and not m.ci_met


def test_a_loose_target_stops_a_noisy_point_early() -> None:
    m = _measure(_settings(rel_ci=0.99, max_measure_s=9.0), noisy=True)
    assert m.num_windows < 9 and m.ci_met
    assert m.energy_per_sample_rel_ci <= 0.99
