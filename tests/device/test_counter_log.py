"""The monitor's one counter thread: following the counters and interpolating window energy."""

from __future__ import annotations

import threading
import time

import pytest

from zeus_bench.device.counter import THREAD_NAME, CounterLog
from zeus_bench.device.errors import MeasurementWindowError
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.measurement import Measurement
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.device.ranks import merge_measurements

PERIOD_S = 0.05  # the fake counter moves every 50 ms
WATTS = 600.0  # the fake H200 at full load


def _settle(pending, timeout_s: float = 2.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not pending.settled() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_following_monitor_interpolates_window_energy_between_counter_updates() -> None:
    b = FakeBackend(state_path=None, n_gpus=2)
    b.configure(counter_update_period_s=PERIOD_S, load=1.0)
    before = {t.name for t in threading.enumerate()}
    with EnergyMonitor(b.gpus([0, 1]), sync_cuda=False, follow_counters=True) as mon:
        assert mon.follows_counters and mon.counter_update_period_s() == pytest.approx(PERIOD_S, rel=0.1)
        new = {t.name for t in threading.enumerate()} - before
        assert new == {f"{THREAD_NAME}[0,1]"}  # one thread for the GPU set, not one per GPU
        results, spans = [], []
        for k in range(3):
            mon.expect_edge()
            time.sleep(2 * PERIOD_S)  # updates before the begin edge
            t_begin = time.monotonic()
            mon.begin_window(f"w{k}")
            time.sleep(0.6)
            pending = mon.end_window_deferred(f"w{k}")
            spans.append((t_begin, time.monotonic()))
            _settle(pending)
            assert pending.settled()
            results.append(pending.result())
        log = mon.counter_log
        assert log is not None
    for m in results:
        assert m.energy_from == "counter updates"
        for gpu in (0, 1):
            # within 3 % of the true energy (constant power), where one edge read can be off by
            # a whole update (30 J of 360 J here); the thread's scheduling delays are the rest
            assert m.energy_j[gpu] == pytest.approx(WATTS * m.time_s, rel=0.03)
    # Following paused once the counters passed each begin edge: no update recorded mid-window
    # (about ten happened), and the end was interpolated across the pause.
    for gpu in (0, 1):
        times, _ = log.changes(gpu)
        for t_begin, t_end in spans:
            assert not [t for t in times if t_begin + 0.25 < t < t_end]
            assert [t for t in times if t_begin - 2 * PERIOD_S < t < t_begin + 0.25]


def test_not_following_keeps_edge_reads_and_never_logs_changes() -> None:
    b = FakeBackend(state_path=None, n_gpus=1)
    b.configure(counter_update_period_s=PERIOD_S, load=1.0)
    with EnergyMonitor(b.gpus([0]), sync_cuda=False, counter_update_period_s=PERIOD_S) as mon:
        mon.expect_edge()  # nothing to do when not following
        mon.begin_window("w")
        time.sleep(0.12)
        pending = mon.end_window_deferred("w")
        assert pending.settled()
        m = pending.result()
        log = mon.counter_log
        assert log is not None and not log.active
    assert m.energy_from == "edges"
    assert log.changes(0) == ([], [])
    # The edge reads are off by up to one update's energy (30 J).
    assert abs(m.energy_j[0] - WATTS * m.time_s) <= WATTS * PERIOD_S + 1e-9


def test_following_needs_the_counter_thread_and_a_positive_poll() -> None:
    b = FakeBackend(state_path=None, n_gpus=1)
    with pytest.raises(MeasurementWindowError, match="follow_counters needs read_in_background"):
        EnergyMonitor(b.gpus([0]), read_in_background=False, follow_counters=True)
    with pytest.raises(MeasurementWindowError, match="poll_s must be > 0"):
        CounterLog(b.gpus([0]), poll_s=0.0, start=False)


def test_a_failed_poll_stops_following_and_the_thread_keeps_serving_edges() -> None:
    b = FakeBackend(state_path=None, n_gpus=1)
    b.configure(load=1.0)
    log = CounterLog(b.gpus([0]), period_s=0.1, follow=True)
    try:
        assert log.active
        b.configure(energy_counter=False)  # the next poll raises
        deadline = time.monotonic() + 2.0
        while log.follow and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not log.follow and not log.active
        b.configure(energy_counter=True)
        log.flush()  # the thread is alive and still reads edges
    finally:
        log.close()


def test_merged_measurements_keep_energy_from_only_when_every_part_agrees() -> None:
    a = Measurement("e", 2.0, {0: 100.0}, energy_from="counter updates")
    b = Measurement("e", 2.0, {1: 100.0}, energy_from="counter updates")
    c = Measurement("e", 2.0, {1: 100.0})
    assert merge_measurements([("h", a), ("h", b)]).energy_from == "counter updates"
    assert merge_measurements([("h", a), ("h", c)]).energy_from == "edges"
