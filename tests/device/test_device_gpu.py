"""Tests on a real NVIDIA GPU (skipped without CUDA). They never set a power limit: the NVML
setters are replaced by a trap for the whole module, and every session observes."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture
def no_setter():
    from zeus_bench.device.nvml import forbid_power_limit_writes

    undo = forbid_power_limit_writes()
    yield
    undo()


def _busy(seconds: float) -> int:
    import torch

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(20):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()
        n += 20
    return n


def test_monitor_counter_and_samples_agree_under_load(no_setter, tmp_path):
    from zeus_bench.device import get_backend
    from zeus_bench.device.monitor import EnergyMonitor

    gpu = get_backend("nvml").gpu(0)
    _busy(1.0)
    with EnergyMonitor([gpu], sample_interval_s=0.02) as mon:
        mon.begin_window("busy")
        _busy(3.0)
        m = mon.end_window("busy")
        sampled = mon.sampled_window_energy_j(m)[0]
        mon.write_power_timeline(tmp_path / "p.parquet")
    assert 2.9 < m.time_s < 4.0 and not m.below_counter_period
    _lo, hi = gpu.power_limit_range_w()
    assert 50 < m.avg_power_w <= hi * 1.1
    assert sampled == pytest.approx(m.energy_j[0], rel=0.1)


def test_observe_session_and_profiler_on_real_gpu(no_setter, tmp_path):
    import torch

    from zeus_bench.device import get_backend
    from zeus_bench.device.control import PowerLimitSession
    from zeus_bench.device.monitor import EnergyMonitor
    from zeus_bench.online.profiler import JITPowerLimitProfiler, ProfilerConfig, ProfilerState

    gpu = get_backend("nvml").gpu(0)
    before = gpu.power_limit_w()
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    with PowerLimitSession([gpu], observe=True, journal_dir=tmp_path) as session:
        prof = JITPowerLimitProfiler(
            session,
            EnergyMonitor([gpu]),
            "matmul",
            ProfilerConfig(warmup_iters=5, warmup_min_s=0.2, profile_iters=20, profile_min_s=1.0),
        )
        prof.on_epoch_begin(4096)
        while prof.state is not ProfilerState.DONE:
            for _ in range(10):
                a = (a @ a).clamp_(-1, 1)
            prof.on_step_end(4096)
    (m,) = prof.profile.measurements
    assert prof.profile.observe_mode and m.power_limit_w == before
    assert m.time_s >= 1.0 and m.throughput_sps > 0 and m.avg_power_w > 50
    assert gpu.power_limit_w() == before
