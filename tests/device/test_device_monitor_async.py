"""The monitor's counter reads off the caller's thread, and the uncertainty of each window."""

from __future__ import annotations

import threading

import pytest

from zeus_bench.device.errors import DeviceError
from zeus_bench.device.fake import FakeBackend, FakeGPU
from zeus_bench.device.monitor import EnergyMonitor, Measurement
from zeus_bench.device.ranks import merge_measurements


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class RecordingGPU(FakeGPU):
    """A fake GPU that notes which thread read its counter, and can fail a read on demand."""

    def __init__(self, backend: FakeBackend, index: int) -> None:
        super().__init__(backend, index)
        self.reader_threads: list[int] = []
        self.fail_next = 0

    def total_energy_j(self) -> float:
        self.reader_threads.append(threading.get_ident())
        if self.fail_next:
            self.fail_next -= 1
            raise DeviceError("GPU 0: cannot read the energy counter: NVML error 999: Unknown Error")
        return super().total_energy_j()


def test_counter_read_on_reader_thread_with_exact_energy():
    clock = Clock()
    b = FakeBackend(state_path=None, n_gpus=1, clock=clock)
    g = RecordingGPU(b, 0)
    g.set_load(1.0)  # 600 W
    mon = EnergyMonitor([g], sync_cuda=False, clock=clock, counter_update_period_s=0.1)
    caller = threading.get_ident()
    mon.begin_window("epoch")
    mon.flush()  # the manual clock may move only once the edge has been read
    clock.t += 2.0
    mon.begin_window("iter")
    mon.flush()
    clock.t += 1.0
    mon.begin_window("overlap")
    mon.flush()
    clock.t += 0.5
    it = mon.end_window_deferred("iter")
    mon.flush()
    clock.t += 0.5
    ov = mon.end_window_deferred("overlap")
    ep = mon.end_window_deferred("epoch")
    assert it.result().energy_j == pytest.approx({0: 900.0})
    assert ov.result().energy_j == pytest.approx({0: 600.0}) and ov.done()
    assert ep.result().time_s == pytest.approx(4.0) and ep.result().total_energy_j == pytest.approx(2400.0)
    assert g.reader_threads and caller not in g.reader_threads
    mon.close()


def test_read_error_reaches_the_caller_and_reader_survives():
    b = FakeBackend(state_path=None, n_gpus=1)
    g = RecordingGPU(b, 0)
    mon = EnergyMonitor([g], sync_cuda=False, counter_update_period_s=0.1)
    g.fail_next = 1
    mon.begin_window("bad")
    pending = mon.end_window_deferred("bad")
    with pytest.raises(DeviceError, match="NVML error 999"):
        pending.result()
    with mon.window("good") as out:
        pass
    assert out[0].energy_j[0] >= 0.0
    mon.close()


def test_uncertainty_is_one_update_at_window_power_and_covers_short_windows():
    clock = Clock()
    b = FakeBackend(state_path=None, n_gpus=1, clock=clock)
    b.configure(counter_update_period_s=0.1)  # the counter moves every 0.1 s, as on an H200
    g = b.gpu(0)
    g.set_load(1.0)  # 600 W
    mon = EnergyMonitor(
        [g], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1
    )
    clock.t = 100.02
    with mon.window("tiny") as out:  # 50 ms inside one update: the counter does not move
        clock.t += 0.05
    tiny = out[0]
    assert tiny.energy_j[0] == 0.0 and tiny.below_counter_period and tiny.high_uncertainty
    # the edges' instant power (600 W) stands in for the window's: the true 30 J lies within
    assert tiny.energy_uncertainty_j[0] == pytest.approx(60.0)
    assert abs(tiny.energy_j[0] - 600.0 * 0.05) <= tiny.total_energy_uncertainty_j
    with mon.window("one_s") as out:
        clock.t += 1.0
    assert out[0].energy_uncertainty_j[0] == pytest.approx(60.0)
    assert out[0].relative_uncertainty == pytest.approx(0.1) and out[0].high_uncertainty
    with mon.window("four_s") as out:
        clock.t += 4.0
    assert out[0].relative_uncertainty == pytest.approx(0.025) and not out[0].high_uncertainty
    assert not out[0].below_counter_period and out[0].counter_update_period_s == 0.1
    strict = EnergyMonitor(
        [g],
        sync_cuda=False,
        clock=clock,
        read_in_background=False,
        counter_update_period_s=0.1,
        uncertainty_threshold=0.01,
    )
    with strict.window("four_s") as out:
        clock.t += 4.0
    assert out[0].high_uncertainty


def test_update_period_is_measured_from_the_counter():
    b = FakeBackend(state_path=None, n_gpus=1)
    b.configure(counter_update_period_s=0.05, counter_latency_s=0.001, load=0.5)
    mon = EnergyMonitor(b.gpus([0]), sync_cuda=False)
    assert mon.counter_update_period_s() == pytest.approx(0.05, rel=0.25)
    mon.begin_window("w")
    m = mon.end_window("w")  # a window of well under one update
    assert m.below_counter_period and m.counter_update_period_s == mon.counter_update_period_s()
    mon.close()


def test_merge_keeps_uncertainty_per_physical_gpu():
    a = Measurement("e", 2.0, {0: 100.0}, 10.0, energy_uncertainty_j={0: 5.0}, counter_update_period_s=0.1)
    b = Measurement("e", 2.0, {1: 100.0}, 10.0, energy_uncertainty_j={1: 7.0}, counter_update_period_s=0.12)
    dup = Measurement("e", 2.0, {0: 100.0}, 10.0, energy_uncertainty_j={0: 5.0})
    m = merge_measurements([("h", a), ("h", b), ("h", dup)])
    assert m.energy_uncertainty_j == {0: 5.0, 1: 7.0} and m.counter_update_period_s == 0.12
    assert m.relative_uncertainty == pytest.approx(0.06) and m.high_uncertainty


def test_bad_uncertainty_settings():
    b = FakeBackend(state_path=None, n_gpus=1)
    with pytest.raises(DeviceError, match="uncertainty_threshold"):
        EnergyMonitor(b.gpus([0]), uncertainty_threshold=0)
    with pytest.raises(DeviceError, match="counter_update_period_s"):
        EnergyMonitor(b.gpus([0]), counter_update_period_s=-1)
