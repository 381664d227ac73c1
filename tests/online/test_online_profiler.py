from __future__ import annotations

import json

import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.device.control import PowerLimitSession
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.online.profiler import (
    JITPowerLimitProfiler,
    ProfileCache,
    ProfilerConfig,
    ProfilerState,
)

BASE_STEP_S = 0.02  # uncapped step time
BATCH = 64


class Clock:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


def expected_optimum(
    eta: float, limits: list[float], idle=80.0, busy=600.0, exponent=0.4, max_w=700.0
) -> float:
    """Cost per sample of the fake GPU's model, written out independently of the code."""
    best, best_cost = None, None
    for limit in limits:
        draw = min(busy, limit)
        rel = 1.0 if limit >= busy else ((draw - idle) / (busy - idle)) ** exponent
        time_per_sample = BASE_STEP_S / rel / BATCH
        cost = eta * draw * time_per_sample + (1 - eta) * max_w * time_per_sample
        if best_cost is None or cost < best_cost - 1e-12:
            best, best_cost = limit, cost
    return best


def run_epoch(profiler, gpu, clock, steps=2000):
    profiler.on_epoch_begin(BATCH)
    for _ in range(steps):
        profiler.on_step_begin()
        clock.t += gpu.step_time_s(BASE_STEP_S)
        profiler.on_step_end(BATCH)
        if profiler.state is ProfilerState.DONE:
            break
    profiler.on_epoch_end()


def make(tmp_path, eta=0.5, observe=False, cache=True, **cfg):
    clock = Clock()
    backend = FakeBackend(state_path=None, clock=clock)
    gpu = backend.gpu(0)
    gpu.set_load(1.0)
    session = PowerLimitSession(
        [gpu], observe=observe, journal_dir=tmp_path / "state", handle_signals=False
    ).__enter__()
    monitor = EnergyMonitor(
        [gpu], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
    )
    config = ProfilerConfig(
        cost=Cost(eta), warmup_iters=3, warmup_min_s=0.1, profile_iters=10, profile_min_s=0.5, **cfg
    )
    prof = JITPowerLimitProfiler(
        session,
        monitor,
        "toy",
        config,
        cache=ProfileCache(tmp_path / "profiles.json") if cache else None,
        clock=clock,
    )
    return prof, gpu, clock, session


@pytest.mark.parametrize("eta", [0.0, 0.3, 0.5, 0.8, 1.0])
def test_profiler_picks_model_optimum(tmp_path, eta):
    prof, gpu, clock, session = make(tmp_path, eta=eta)
    assert prof.state is ProfilerState.READY
    run_epoch(prof, gpu, clock)
    assert prof.state is ProfilerState.DONE
    limits = [700.0 - 25 * i for i in range(21)]
    assert [m.power_limit_w for m in prof.profile.measurements] == limits
    expected = expected_optimum(eta, limits)
    assert prof.chosen_power_limit_w == expected
    assert gpu.power_limit_w() == expected
    for m in prof.profile.measurements:
        assert m.time_s >= 0.5 and m.iterations >= 10
        assert m.avg_power_w == pytest.approx(min(600.0, m.power_limit_w))
    session.__exit__(None, None, None)
    assert gpu.power_limit_w() == 700.0  # restored after the job


def test_profiler_energy_only_prefers_low_limits_time_only_high(tmp_path):
    p1, g1, c1, _ = make(tmp_path / "a", eta=1.0)
    run_epoch(p1, g1, c1)
    p0, g0, c0, _ = make(tmp_path / "b", eta=0.0)
    run_epoch(p0, g0, c0)
    assert p1.chosen_power_limit_w == 200.0
    assert p0.chosen_power_limit_w == 700.0  # ties among uncapped limits go to the higher


def test_profile_state_transitions_and_cache(tmp_path):
    prof, gpu, clock, _ = make(tmp_path, power_limits_w=(300.0, 650.0))
    prof.on_epoch_begin(BATCH)
    assert prof.state is ProfilerState.WARM_UP and gpu.power_limit_w() == 650.0
    for _ in range(3):
        clock.t += 0.05
        prof.on_step_end(BATCH)
    assert prof.state is ProfilerState.PROFILING
    run_epoch(prof, gpu, clock)
    assert prof.state is ProfilerState.DONE
    cached = json.loads((tmp_path / "profiles.json").read_text())
    assert list(cached) == ["toy|Fake H200|x1|64"]
    # A later recurrence finds the profile and applies the optimum at once.
    prof2, gpu2, _, _ = make(tmp_path / "other", power_limits_w=(300.0, 650.0))
    prof2.cache = ProfileCache(tmp_path / "profiles.json")
    prof2.on_epoch_begin(BATCH)
    assert prof2.state is ProfilerState.DONE
    assert gpu2.power_limit_w() == prof.chosen_power_limit_w
    assert gpu2.setter_calls() == 1


def test_epoch_ending_early_chooses_among_measured(tmp_path):
    prof, gpu, clock, _ = make(tmp_path, eta=1.0)
    prof.on_epoch_begin(BATCH)
    steps = 0
    while len(prof._done) < 3:
        clock.t += gpu.step_time_s(BASE_STEP_S)
        prof.on_step_end(BATCH)
        steps += 1
    prof.on_epoch_end()
    assert prof.state is ProfilerState.DONE
    assert [m.power_limit_w for m in prof.profile.measurements][:3] == [700.0, 675.0, 650.0]
    assert prof.chosen_power_limit_w in (700.0, 675.0, 650.0, 625.0)


def test_observe_mode_measures_current_limit_only(tmp_path):
    clock = Clock()
    backend = FakeBackend(state_path=None, clock=clock)
    gpu = backend.gpu(0)
    gpu.set_load(1.0)
    gpu.set_power_limit_w(500.0)
    calls = gpu.setter_calls()
    with PowerLimitSession([gpu], observe=True, journal_dir=tmp_path, handle_signals=False) as session:
        monitor = EnergyMonitor(
            [gpu], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
        )
        prof = JITPowerLimitProfiler(
            session,
            monitor,
            "toy",
            ProfilerConfig(warmup_iters=2, profile_iters=5, profile_min_s=0.2),
            clock=clock,
        )
        run_epoch(prof, gpu, clock)
    assert prof.state is ProfilerState.DONE
    assert prof.profile.observe_mode
    assert [m.power_limit_w for m in prof.profile.measurements] == [500.0]
    assert prof.chosen_power_limit_w == 500.0
    assert gpu.setter_calls() == calls


def test_observe_profile_not_reused_when_controlling(tmp_path):
    prof, gpu, clock, _ = make(tmp_path, observe=True)
    run_epoch(prof, gpu, clock)
    assert prof.profile.observe_mode
    prof2, _gpu2, _clock2, _ = make(tmp_path / "x", power_limits_w=(400.0, 700.0))
    prof2.cache = ProfileCache(tmp_path / "profiles.json")
    prof2.on_epoch_begin(BATCH)
    assert prof2.state is ProfilerState.WARM_UP  # profiles afresh


def test_config_validation():
    with pytest.raises(ConfigError, match="eta"):
        ProfilerConfig(cost=Cost(1.5))
    with pytest.raises(ConfigError, match="step"):
        ProfilerConfig(step_w=0)
    with pytest.raises(ConfigError, match="profile_iters"):
        ProfilerConfig(profile_iters=0)
    with pytest.raises(ConfigError, match=r"power limit\(s\) \[800.0\] W outside"):
        ProfilerConfig(power_limits_w=(800.0,)).limits_w(200, 700)
    assert ProfilerConfig(step_w=100).limits_w(200, 700) == [700, 600, 500, 400, 300, 200]


def test_corrupt_cache(tmp_path):
    (tmp_path / "p.json").write_text("{nope")
    with pytest.raises(ConfigError, match="corrupt power-profile cache"):
        ProfileCache(tmp_path / "p.json").get("a", "b", 1, 2)
