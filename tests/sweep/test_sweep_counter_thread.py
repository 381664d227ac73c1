"""One thread reads the energy counters during a sweep point, and its log gives the sweep's energy.

Design note house-v3 §3.3: the monitor's edge reader and the sweep's own tracker used to follow
the same counters at once. Now the monitor's :class:`~zeus_bench.device.counter.CounterLog` is the
only reader; these tests run a fake-GPU sweep and check, at every training step of every point,
which threads exist and which threads read a counter, and that every window's energy is the
log's interpolation between the window's edges.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.sweep.conftest import FAST
from zeus_bench.cli.main import main
from zeus_bench.device.counter import THREAD_NAME, CounterLog
from zeus_bench.device.fake import FakeGPU
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.sweep import points


def _sweep(out: Path, *extra: str) -> int:
    return main(
        ["-q", "sweep", "--workload", "cifar100", "--backend", "fake", "--out", str(out), *FAST, *extra]
    )


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Wrap measure_steps, the fake counter and the log's interpolation to record what they see."""
    seen: dict[str, Any] = {"threads": [], "readers": set(), "calls": [], "points": [], "logs": []}
    # Threads alive before the sweep (monitors other tests in this process left running) are not its own.
    seen["before"] = before = set(threading.enumerate())
    original = points.measure_steps

    def measure_steps(step: Any, monitor: Any, *args: Any, **kwargs: Any) -> Any:
        assert isinstance(monitor, EnergyMonitor) and monitor.follows_counters
        seen["logs"].append(monitor.counter_log)

        def watched_step() -> object:
            seen["threads"].append(sorted(t.name for t in threading.enumerate() if t not in before))
            return step()

        point = original(watched_step, monitor, *args, **kwargs)
        seen["points"].append(point)
        return point

    read = FakeGPU.total_energy_j

    def total_energy_j(self: FakeGPU) -> float:
        if threading.current_thread() not in before:
            seen["readers"].add(threading.current_thread().name)
        return read(self)

    between = CounterLog.gpu_energy_between

    def gpu_energy_between(self: CounterLog, t0: float, t1: float) -> dict[int, float] | None:
        result = between(self, t0, t1)
        seen["calls"].append((self, t0, t1, result))
        return result

    monkeypatch.setattr(points, "measure_steps", measure_steps)
    monkeypatch.setattr(FakeGPU, "total_energy_j", total_energy_j)
    monkeypatch.setattr(CounterLog, "gpu_energy_between", gpu_energy_between)
    return seen


def test_one_counter_thread_per_gpu_set_serves_the_sweeps_interpolated_energy(
    fake_env: Any, tiny_workload: Any, tmp_path: Path, watched: dict[str, Any]
) -> None:
    from zeus_bench.device.fake import FakeBackend

    # Host-timed fake whose counter moves in steps of 10 ms, as NVML's does (every 0.1 s on an H200).
    FakeBackend().configure(samples_per_s=0.0, counter_update_period_s=0.01)
    assert _sweep(tmp_path / "power.parquet", "--batch-sizes", "4,8", "--power-limits", "300,700") == 0
    assert len(watched["points"]) == 4 and len(watched["threads"]) > 0
    # At every step of every point: exactly one thread following counters, and no power sampler.
    for names in watched["threads"]:
        counters = [n for n in names if n.startswith("zeus-bench-counter")]
        assert counters == [f"{THREAD_NAME}[0]"]
        assert "zeus-bench-power-sampler" not in names
    # And that thread is the only one that read an energy counter during the sweep.
    assert watched["readers"] == {f"{THREAD_NAME}[0]"}
    # One log for the whole sweep (one GPU set).
    logs = {id(log) for log in watched["logs"]}
    assert len(logs) == 1
    log: CounterLog = watched["logs"][0]
    # Every window's energy is that log's interpolation between its edges.
    windows = [w for p in watched["points"] for w in p.windows]
    interpolated = [w for w in windows if w.energy_from == "counter updates"]
    assert len(interpolated) >= len(windows) - 1 and len(windows) >= 12
    calls = [(t0, t1, r) for lg, t0, t1, r in watched["calls"] if lg is log and r is not None]
    assert len(calls) == len(interpolated)
    for w, (t0, t1, result) in zip(interpolated, calls, strict=True):
        assert w.energy_j == pytest.approx(sum(result.values()), rel=1e-12)
        assert w.time_s == pytest.approx(t1 - t0, rel=1e-12)
        assert log.energy_between(t0, t1) == pytest.approx(w.energy_j, rel=1e-12)  # kept after the sweep
    # The fake draws its cap at 300 W and 600 W unconstrained: the interpolated power says so.
    powers = sorted(round(p.avg_power_w) for p in watched["points"])
    assert powers[:2] == pytest.approx([300, 300], abs=6) and powers[2:] == pytest.approx([600, 600], abs=12)
    # The thread ends with the sweep.
    assert not any(
        t.name.startswith("zeus-bench-counter") for t in threading.enumerate() if t not in watched["before"]
    )
