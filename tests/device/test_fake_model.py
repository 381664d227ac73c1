"""The fake GPU as a model (issue 23): simulated speed, steady at once, and bad state refused."""

from __future__ import annotations

import json
import logging
import random
import threading
import time

import pytest

from zeus_bench.cli.main import main
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.fake_load import MODEL_COUNTER_PERIOD_S, FakeLoad, ModelClock, model_clock
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.sweep.measure import MeasureSettings, measure_steps


def _measure(backend: FakeBackend, batch: int, limit_w: float, host_s: float) -> tuple:
    gpu = backend.gpu(0)
    clock = model_clock(backend, [gpu])
    assert clock is not None
    gpu.set_power_limit_w(limit_w)
    rng = random.Random(0)

    def host_step() -> None:  # a busy host: every step takes a different, random time
        time.sleep(rng.uniform(0, host_s))

    with FakeLoad([gpu], clock) as load:
        monitor = EnergyMonitor(
            [gpu],
            sync_cuda=False,
            clock=clock,
            counter_update_period_s=MODEL_COUNTER_PERIOD_S,
            read_in_background=False,
        )
        try:
            point = measure_steps(
                load.paced(host_step, batch),
                monitor,
                MeasureSettings(2, 0.5, 5, 2.0, window_s=0.5, min_windows=3, rel_ci=0.01, max_measure_s=10),
                "t",
                clock=clock,
            )
        finally:
            monitor.close()
        return point, load.step_s(batch)


def test_fake_speed_is_the_model_whatever_the_host_load(caplog):
    caplog.set_level(logging.WARNING)
    results = {}
    for host_s in (0.0, 0.004):  # idle host, then a host whose steps take up to 4 ms at random
        for limit in (700.0, 200.0):
            point, step_s = _measure(FakeBackend(state_path=None), 64, limit, host_s)
            results[host_s, limit] = point
            assert point.ci_met and point.warmup_steady
            assert point.time_s == pytest.approx(point.iterations * step_s, rel=1e-6)
    for host_s in (0.0, 0.004):
        full, capped = results[host_s, 700.0], results[host_s, 200.0]
        # The model's numbers exactly: 1000 x 64 / (64 + 32) samples/s uncapped, slower at 200 W.
        assert full.samples_per_s(64) == pytest.approx(1000 * 64 / 96, rel=1e-6)
        assert capped.samples_per_s(64) < full.samples_per_s(64)
        assert full.energy_j / full.time_s == pytest.approx(600.0, rel=1e-6)
        assert capped.energy_j / capped.time_s == pytest.approx(200.0, rel=1e-6)
    assert results[0.0, 200.0].samples_per_s(64) == pytest.approx(results[0.004, 200.0].samples_per_s(64))
    assert not [r for r in caplog.records if "still moving" in r.getMessage() or "flagged" in r.getMessage()]


def test_model_clock_moves_only_forward():
    clock = ModelClock(10.0)
    clock.advance(0.5)
    assert clock() == 10.5
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(-1)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "fake GPU state is not valid JSON"),
        ("[1, 2]", 'must be an object with a non-empty "gpus" list'),
        (json.dumps({"allow_set": True, "gpus": []}), 'non-empty "gpus" list'),
        (json.dumps({"allow_set": True, "gpus": ["x"]}), "gpus[0] is not an object"),
        (json.dumps({"allow_set": "yes", "gpus": [{}]}), '"allow_set" must be true, false or "root"'),
    ],
)
def test_corrupt_or_wrong_shape_state_file_is_one_line(fake_env, capsys, content, expected):
    state = fake_env / "fake.json"
    state.write_text(content)
    assert main(["gpu", "info", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(state) in err and expected in err, err
    assert state.read_text() == content  # left as it was


def test_state_with_a_non_number_field_is_one_line(fake_env, capsys):
    FakeBackend().gpu(0).power_limit_w()  # creates the state file
    state = fake_env / "fake.json"
    data = json.loads(state.read_text())
    data["gpus"][0]["power_limit_w"] = "700"
    state.write_text(json.dumps(data))
    assert main(["gpu", "info", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpus[0].power_limit_w must be a finite number, got '700'" in err


@pytest.mark.parametrize("limit", [float("nan"), "250", None, -5, True])
def test_journal_with_an_impossible_limit_is_refused_and_kept(fake_env, capsys, limit):
    gpu = FakeBackend().gpu(0)
    gpu.set_power_limit_w(300.0)
    folder = fake_env / "state" / "journal"
    folder.mkdir(parents=True)
    entry = {
        "backend": "fake",
        "gpu_index": 0,
        "gpu_uuid": gpu.uuid(),
        "previous_power_limit_w": limit,
        "pid": 1,
        "host": "h",
        "started_utc": "2026-11-30T00:00:00+00:00",
    }
    path = folder / f"fake-{gpu.uuid()}.json"
    path.write_text(json.dumps(entry))
    assert main(["gpu", "restore", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "invalid previous_power_limit_w" in err, err
    assert path.exists() and gpu.power_limit_w() == 300.0  # nothing restored, nothing deleted


def test_a_host_slower_than_the_model_warns_once_per_process(monkeypatch, caplog):
    """A loop that wraps every step anew (as the online example does) still gets one warning."""
    import zeus_bench.device.fake_load as fake_load_module

    monkeypatch.setattr(fake_load_module, "SLOW_HOST_WARNED", threading.Event())
    caplog.set_level(logging.WARNING, logger="zeus_bench.device.fake_load")
    backend = FakeBackend(state_path=None)
    backend.configure(index=0, samples_per_s=1e9, half_batch=0.0)  # a step of the model: 64 ns
    calls = []
    for _recurrence in range(2):
        with FakeLoad([backend.gpu(0)]) as load:
            for _ in range(5):
                assert load.paced(lambda: calls.append(1) or time.sleep(0.002), 64)() is None
    assert len(calls) == 10
    warnings = [r for r in caplog.records if "the host took" in r.getMessage()]
    assert len(warnings) == 1 and "warned once" in warnings[0].getMessage()
