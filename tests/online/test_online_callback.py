from __future__ import annotations

import json
import time

import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.device.fake import FakeBackend
from zeus_bench.online.callback import ZeusCallback
from zeus_bench.online.callback_settings import DeviceSettings, JobSettings
from zeus_bench.online.optimizer import OptimizerSettings
from zeus_bench.online.profiler import ProfilerConfig

FAST = ProfilerConfig(
    power_limits_w=(700.0, 400.0), warmup_iters=1, warmup_min_s=0.0, profile_iters=2, profile_min_s=0.02
)


def recurrence(tmp_path, backend, metrics, beta=2.0, observe=False, steps=30):
    zeus = ZeusCallback(
        job="toy",
        batch_sizes=[16, 32, 64],
        default_batch_size=32,
        target_metric=0.9,
        max_epochs=len(metrics),
        state_dir=tmp_path / "job",
        beta=beta,
        backend=backend,
        observe=observe,
        profiler=FAST,
        journal_dir=tmp_path / "state",
    )
    with zeus:
        for epoch in zeus.epochs():
            for _ in range(steps):
                zeus.on_step_begin()
                time.sleep(0.002)
                zeus.on_step_end(samples=zeus.batch_size)
            zeus.on_epoch_end(metric=metrics[epoch - 1])
    return zeus


def test_two_recurrences_persist_and_restore_limits(tmp_path):
    backend = FakeBackend(state_path=None)
    gpu = backend.gpu(0)
    gpu.set_load(1.0)
    gpu.set_power_limit_w(650.0)
    first = recurrence(tmp_path, backend, [0.5, 0.95, 0.99])
    s = first.summary()
    assert s["batch_size"] == 32 and s["reached"] and s["epochs"] == 2
    assert s["profiled_limits_w"] == [700.0, 400.0]
    assert s["energy_j"] > 0 and s["time_s"] > 0
    assert s["cost_j"] == pytest.approx(0.5 * s["energy_j"] + 0.5 * 700.0 * s["time_s"])
    assert gpu.power_limit_w() == 650.0  # the job's limits are undone afterwards
    second = recurrence(tmp_path, backend, [0.95])
    assert second.batch_size == 16  # pruning continues downwards from the default
    state = json.loads((tmp_path / "job" / "toy.optimizer.json").read_text())
    assert [r["batch_size"] for r in state["runs"]] == [32, 16]
    profiles = json.loads((tmp_path / "job" / "power_profiles.json").read_text())
    assert sorted(profiles) == ["toy|Fake H200|x1|16", "toy|Fake H200|x1|32"]


def test_early_stop_ends_costly_run(tmp_path):
    backend = FakeBackend(state_path=None)
    backend.gpu(0).set_load(1.0)
    recurrence(tmp_path, backend, [0.95], steps=5)  # a cheap successful run sets the bar
    costly = recurrence(tmp_path, backend, [0.1] * 20, beta=2.0, steps=30)
    assert costly.early_stopped and not costly.reached
    assert costly.epoch < 20
    assert costly.record is not None and costly.record.early_stopped


def test_observe_mode_never_sets(tmp_path):
    backend = FakeBackend(state_path=None)
    gpu = backend.gpu(0)
    gpu.set_load(1.0)
    calls = gpu.setter_calls()
    zeus = recurrence(tmp_path, backend, [0.95], observe=True)
    assert gpu.setter_calls() == calls
    assert zeus.summary()["profiled_limits_w"] == [700.0] and zeus.summary()["observe_mode"]


def test_failed_run_is_not_reported(tmp_path):
    backend = FakeBackend(state_path=None)
    zeus = ZeusCallback(
        "toy", [16, 32], 32, 0.9, 3, tmp_path / "job", backend=backend, profiler=FAST, journal_dir=tmp_path
    )
    with pytest.raises(RuntimeError), zeus:
        raise RuntimeError("oom")
    assert not (tmp_path / "job" / "toy.optimizer.json").exists()


def test_callback_misuse(tmp_path):
    backend = FakeBackend(state_path=None)
    with pytest.raises(ConfigError, match="max_epochs"):
        ZeusCallback("toy", [16], 16, 0.9, 0, tmp_path, backend=backend)
    zeus = ZeusCallback("toy", [16], 16, 0.9, 2, tmp_path, backend=backend)
    with pytest.raises(ConfigError, match="inside 'with zeus:'"):
        next(zeus.epochs())
    with pytest.raises(ConfigError, match="profiler cost"):
        ZeusCallback(
            "toy",
            [16],
            16,
            0.9,
            2,
            tmp_path,
            backend=backend,
            cost=Cost(0.3),
            profiler=ProfilerConfig(cost=Cost(0.5)),
        )


def test_settings_objects_and_keywords_make_the_same_callback(tmp_path):
    """Settings objects, flat keywords and positional job fields agree; a keyword overrides its object."""
    backend = FakeBackend(state_path=None)
    spec = JobSettings("toy", [16, 32, 64], 32, 0.9, 3, tmp_path / "job", higher_is_better=False)
    opt = OptimizerSettings(cost=Cost(0.3), beta=3.0, seed=7, window=4)
    dev = DeviceSettings(backend=backend, observe=True, profiler=ProfilerConfig(cost=Cost(0.3)))
    by_objects = ZeusCallback(spec, optimizer=opt, device=dev)
    by_keywords = ZeusCallback(
        job="toy", batch_sizes=[16, 32, 64], default_batch_size=32, target_metric=0.9, max_epochs=3,
        state_dir=tmp_path / "job", higher_is_better=False, cost=Cost(0.3), beta=3.0, seed=7, window=4,
        backend=backend, observe=True, profiler=ProfilerConfig(cost=Cost(0.3)),
    )  # fmt: skip
    for z in (by_objects, by_keywords):
        assert (z.job, z.max_epochs, z.target_metric, z.higher_is_better) == ("toy", 3, 0.9, False)
        assert z.observe and z.profiler_config.cost == Cost(0.3) and z.optimizer.cost == Cost(0.3)
        assert z.optimizer.beta == 3.0 and z.batch_size == by_objects.batch_size
    # A keyword overrides the same field of its settings object.
    assert not ZeusCallback(spec, optimizer=opt, device=dev, observe=False).observe
    positional = ZeusCallback("toy", [16], 16, 0.9, 2, tmp_path / "p", backend=backend)
    assert positional.settings == JobSettings("toy", [16], 16, 0.9, 2, tmp_path / "p")
    with pytest.raises(TypeError, match="unexpected keyword argument 'betta'"):
        ZeusCallback(spec, device=dev, betta=2.0)
    with pytest.raises(TypeError, match="multiple values for argument 'job'"):
        ZeusCallback("toy", [16], 16, 0.9, 2, tmp_path, job="other", backend=backend)
    with pytest.raises(TypeError, match="at most 7 positional"):
        ZeusCallback("toy", [16], 16, 0.9, 2, tmp_path, True, 1, backend=backend)


def test_each_recurrence_logs_one_summary_line_at_info(tmp_path, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="zeus_bench.online.callback")
    backend = FakeBackend(state_path=None)
    backend.gpu(0).set_load(1.0)
    first = recurrence(tmp_path, backend, [0.5, 0.95])
    lines = [r.getMessage() for r in caplog.records if " run 1: " in r.getMessage()]
    assert len(lines) == 1
    line = lines[0]
    s = first.summary()
    assert line.startswith(
        f"job toy run 1: {s['energy_j']:.4g} J, {s['time_s']:.4g} s, cost {s['cost_j']:.4g} J"
    )
    assert "reached the target in 2 epoch(s)" in line
    limit = first.profiler.chosen_power_limit_w
    assert f"batch size 32 at {limit:g} W" in line and "zeus: pruning, each batch size in turn" in line
    assert s["phase"] == "pruning" and s["choice"] == "zeus: pruning, each batch size in turn"
    caplog.clear()
    recurrence(tmp_path, backend, [0.1, 0.1])  # batch size 16 misses the target
    (line,) = [r.getMessage() for r in caplog.records if " run 2: " in r.getMessage()]
    assert "missed the target in 2 epoch(s); batch size 16" in line and "best batch size so far 32" in line
