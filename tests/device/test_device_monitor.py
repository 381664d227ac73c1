from __future__ import annotations

import time

import numpy as np
import pytest

from tests.helpers.optional import require
from zeus_bench.device.errors import MeasurementWindowError, NoSuchGPUError
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import (
    EnergyMonitor,
    Measurement,
    integrate_power_j,
)
from zeus_bench.device.ranks import local_gpu_index, merge_measurements
from zeus_bench.store import read_table


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def manual(gpus, clock, **kw):
    """A monitor on a manual clock: counters read on the caller's thread, period given."""
    return EnergyMonitor(
        gpus, sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=0.1, **kw
    )


@pytest.fixture
def clocked():
    clock = Clock()
    backend = FakeBackend(state_path=None, n_gpus=2, clock=clock)
    return clock, backend


def test_nested_and_overlapping_windows(clocked):
    clock, b = clocked
    g0, g1 = b.gpus()
    g0.set_load(1.0)  # 600 W; g1 stays idle at 80 W
    mon = manual([g0, g1], clock)
    mon.begin_window("epoch")
    clock.t += 2.0
    mon.begin_window("iter")
    clock.t += 1.0
    mon.begin_window("overlap")
    clock.t += 0.5
    it = mon.end_window("iter")
    clock.t += 0.5
    ov = mon.end_window("overlap")
    ep = mon.end_window("epoch")
    assert it.time_s == pytest.approx(1.5)
    assert it.energy_j == pytest.approx({0: 900.0, 1: 120.0})
    assert ov.time_s == pytest.approx(1.0) and ov.total_energy_j == pytest.approx(680.0)
    assert ep.time_s == pytest.approx(4.0)
    assert ep.total_energy_j == pytest.approx(4 * 680.0)
    assert ep.avg_power_w == pytest.approx(680.0)
    assert not ep.below_counter_period
    assert mon.open_windows() == []


def test_short_window_flagged(clocked):
    clock, b = clocked
    mon = manual(b.gpus([0]), clock)
    with mon.window("tiny") as out:
        clock.t += 0.05
    assert out[0].below_counter_period
    with mon.window("ok") as out:
        clock.t += 0.2
    assert not out[0].below_counter_period


def test_window_misuse(clocked):
    _, b = clocked
    mon = EnergyMonitor(b.gpus([0]), sync_cuda=False)
    mon.begin_window("a")
    with pytest.raises(MeasurementWindowError, match="'a' is already open"):
        mon.begin_window("a")
    with pytest.raises(MeasurementWindowError, match="'b' was never begun"):
        mon.end_window("b")
    with pytest.raises(MeasurementWindowError, match="at least one GPU"):
        EnergyMonitor([])
    with pytest.raises(MeasurementWindowError, match="listed twice"):
        EnergyMonitor([b.gpu(0), b.gpu(0)])
    with pytest.raises(MeasurementWindowError, match="sample_interval_s"):
        EnergyMonitor(b.gpus([0]), sample_interval_s=0)


def test_no_counter_falls_back_to_sampled_power(clocked):
    clock, b = clocked
    b.configure(0, energy_counter=False)
    g = b.gpu(0)
    g.set_load(1.0)
    mon = manual([g], clock)
    assert mon.sample_interval_s == pytest.approx(0.1)
    mon.stop_sampling()  # drive the samples by hand on the manual clock
    mon.begin_window("w")
    clock.t += 1.0
    g.set_power_limit_w(300.0)
    mon._record_sample(0, clock.t, g.instant_power_w())
    clock.t += 1.0
    m = mon.end_window("w")
    assert m.sampled_gpus == (0,)
    # linear interpolation between the 600 W edge sample and the 300 W sample, then flat
    assert m.energy_j[0] == pytest.approx(450.0 + 300.0)


def test_integrate_power():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    p = np.array([100.0, 200.0, 200.0, 100.0])
    assert integrate_power_j(t, p, 0.0, 3.0) == pytest.approx(150 + 200 + 150)
    assert integrate_power_j(t, p, 0.5, 1.5) == pytest.approx(187.5)
    assert integrate_power_j(t[::-1], p[::-1], 0.0, 3.0) == pytest.approx(500.0)
    assert integrate_power_j(np.array([]), np.array([]), 0, 1) == 0.0


def test_background_sampling_and_timeline(fake_env, tmp_path):
    b = FakeBackend(n_gpus=1)
    g = b.gpu(0)
    g.set_load(1.0)
    with EnergyMonitor([g], sync_cuda=False, sample_interval_s=0.01) as mon:
        mon.begin_window("w")
        time.sleep(0.3)
        m = mon.end_window("w")
        mon.stop_sampling()
        df = mon.power_timeline()
        path = mon.write_power_timeline(tmp_path / "power.parquet")
    assert len(df) >= 10
    assert (df["power_w"] == 600.0).all()
    assert df["time_s"].is_monotonic_increasing
    back = read_table(path, "power_timeline")
    assert len(back) == len(df) and back.attrs["zeus_bench"]["gpu_names"] == {"0": "Fake H200"}
    # counter and integrated samples agree on a steady window
    assert m.energy_j[0] == pytest.approx(600.0 * m.time_s, rel=0.02)
    assert mon.sampled_window_energy_j(m)[0] == pytest.approx(m.energy_j[0], rel=0.02)


def test_merge_counts_each_gpu_once():
    a = Measurement("e", 2.0, {0: 100.0}, 10.0)
    b = Measurement("e", 2.1, {1: 120.0}, 10.1)
    dup = Measurement("e", 2.0, {0: 101.0}, 10.0)
    m = merge_measurements([("h1", a), ("h1", b), ("h1", dup)])
    assert m.energy_j == {0: 100.0, 1: 120.0} and m.time_s == 2.1
    two_hosts = merge_measurements([("h1", a), ("h2", dup)])
    assert two_hosts.total_energy_j == pytest.approx(201.0)
    with pytest.raises(MeasurementWindowError):
        merge_measurements([])


def test_local_gpu_index(monkeypatch):
    b = FakeBackend(state_path=None, n_gpus=4)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert local_gpu_index(b) == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert local_gpu_index(b, 1) == 1
    assert local_gpu_index(b, 0) == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-2")
    assert local_gpu_index(b, 0) == 2
    with pytest.raises(NoSuchGPUError, match="CUDA device 1 is not among"):
        local_gpu_index(b, 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-nope")
    with pytest.raises(NoSuchGPUError, match="matches no GPU"):
        local_gpu_index(b, 0)


def test_gather_measurement_single_process_group():
    torch = require("torch")
    import torch.distributed as dist

    from zeus_bench.device.ranks import gather_measurement

    m = Measurement("e", 1.5, {0: 10.0, 1: 20.0}, 5.0)
    assert gather_measurement(m) is m  # no process group: unchanged
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        g = gather_measurement(m)
    finally:
        dist.destroy_process_group()
    assert g.energy_j == {0: 10.0, 1: 20.0} and g.time_s == 1.5 and torch is not None


def _ddp_worker(rank, world, init_file, state_file, out_dir):
    import json
    import os

    import torch.distributed as dist

    from zeus_bench.device.ranks import gather_measurement

    os.environ["ZEUS_BENCH_FAKE_STATE"] = state_file
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    b = FakeBackend(n_gpus=2)
    out = {}
    for case, index in (("own", local_gpu_index(b, rank)), ("same", 0)):
        mon = EnergyMonitor([b.gpu(index)], sync_cuda=False)
        dist.barrier()
        mon.begin_window("w")
        time.sleep(0.3)
        m = mon.end_window("w")
        g = gather_measurement(m)
        out[case] = {"local": m.total_energy_j, "keys": sorted(g.energy_j), "total": g.total_energy_j}
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as fh:
        json.dump(out, fh)


def test_gather_over_two_ranks_counts_each_gpu_once(tmp_path):
    require("torch")
    import json

    import torch.multiprocessing as mp

    state = tmp_path / "fake.json"
    FakeBackend(state_path=state, n_gpus=2).configure(load=1.0)  # both GPUs draw 600 W
    mp.spawn(_ddp_worker, args=(2, str(tmp_path / "init"), str(state), str(tmp_path)), nprocs=2)
    r0, r1 = (json.loads((tmp_path / f"{r}.json").read_text()) for r in (0, 1))
    # each rank measures its own GPU: both GPUs, summed
    assert r0["own"]["keys"] == r1["own"]["keys"] == [0, 1]
    assert r0["own"]["total"] == r1["own"]["total"] == pytest.approx(r0["own"]["local"] + r1["own"]["local"])
    assert r0["own"]["total"] == pytest.approx(2 * 600 * 0.3, rel=0.2)
    # both ranks measure GPU 0: counted once
    assert r0["same"]["keys"] == [0]
    assert r0["same"]["total"] == r1["same"]["total"] == r0["same"]["local"]
