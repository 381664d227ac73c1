"""Shard merge, projection onto another GPU, and the torch-free measurement core."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.device.counter import CounterLog, Edge
from zeus_bench.store import read_table, write_table
from zeus_bench.sweep.devices import gpu_kind_from_name
from zeus_bench.sweep.measure import GPUState, MeasureSettings, is_steady, measure_steps
from zeus_bench.sweep.merge import merge_shards
from zeus_bench.sweep.projection import project, project_per_batch_size
from zeus_bench.sweep.stats import ci_halfwidth, relative_ci, t_quantile_975
from zeus_bench.sweep.writer import power_row
from zeus_bench.traces.workloads import get_workload


def power_rows(batch_sizes, tpe, watts, gpu="h200", dataset="cifar100"):
    return pd.DataFrame(
        {
            "gpu": gpu,
            "dataset": dataset,
            "network": "shufflenetv2",
            "optimizer": "adadelta",
            "batch_size": batch_sizes,
            "power_limit_w": 700.0,
            "time_per_epoch_s": tpe,
            "avg_power_w": watts,
        }
    )


def test_merge_concatenates_shards_and_refuses_duplicates(tmp_path):
    a = write_table(power_rows([8], [10.0], [100.0]), tmp_path / "a.parquet", "power", {"complete": True})
    b = write_table(power_rows([16], [6.0], [150.0]), tmp_path / "b.parquet", "power", {"complete": True})
    df = merge_shards([b, a], tmp_path / "m.parquet")
    assert df["batch_size"].tolist() == [8, 16]
    meta = read_table(tmp_path / "m.parquet", "power").attrs["zeus_bench"]
    assert [s["file"] for s in meta["shards"]] == ["b.parquet", "a.parquet"] and meta["complete"] is True
    c = write_table(power_rows([8], [11.0], [99.0]), tmp_path / "c.parquet", "power")
    with pytest.raises(
        TraceFormatError, match=r"batch size 8 at 700 W on h200 is in several shards: a.parquet, c.parquet"
    ):
        merge_shards([a, c], tmp_path / "m2.parquet")


def train_rows():
    # b=8 needs 10 epochs, b=16 needs 4 and 6 (mean 5), b=32 never reaches the target.
    rows = [(8, 0, 10), (16, 0, 4), (16, 1, 6), (32, 0, None)]
    df = pd.DataFrame(
        [
            {
                "dataset": "cifar100",
                "network": "shufflenetv2",
                "optimizer": "adadelta",
                "batch_size": b,
                "learning_rate": 0.1,
                "run": r,
                "target_metric": 0.6,
                "target_epoch": e,
            }
            for b, r, e in rows
        ]
    )
    df["target_epoch"] = pd.array(df["target_epoch"].tolist(), dtype="Int64")
    return df


@pytest.fixture
def traces(tmp_path: Path) -> tuple[Path, Path]:
    train = write_table(train_rows(), tmp_path / "train.parquet", "train")
    power = write_table(
        power_rows([8, 16, 32, 1024], [10.0, 6.0, 4.0, 1.0], [100.0, 150.0, 200.0, 300.0]),
        tmp_path / "power-h200.parquet",
        "power",
    )
    return train, power


def test_projection_numbers(traces, monkeypatch):
    from dataclasses import replace

    import zeus_bench.traces.workloads as registry

    spec = replace(registry.get_workload("cifar100"), default_batch_size=8)
    monkeypatch.setattr("zeus_bench.sweep.projection.load_workloads", lambda path=None: {"cifar100": spec})
    df = project(*traces, cost=Cost(1.0))
    row = df.iloc[0]
    # ETA: b=8 -> 10 x 10 s x 100 W = 10 kJ; b=16 -> 5 x 6 x 150 = 4.5 kJ; b=32 never converges.
    assert row["b0"] == 8 and row["b0_eta_j"] == pytest.approx(10_000)
    assert row["least_energy_bs"] == 16 and row["least_energy_eta_j"] == pytest.approx(4_500)
    assert row["least_energy_saving_vs_b0_pct"] == pytest.approx(55.0)
    assert row["maxbatch_bs"] == 16 and row["least_energy_saving_vs_maxbatch_pct"] == pytest.approx(0.0)
    assert "power-limit dimension is ABSENT" in df.attrs["power_limit_note"]
    per_bs = project_per_batch_size(*traces, cost=Cost(1.0))
    assert per_bs["batch_size"].tolist() == [8, 16, 32]  # 1024 has no train rows
    assert per_bs["tta_s"].iloc[:2].tolist() == pytest.approx([100.0, 30.0])


def test_project_cli_says_power_limit_dimension_is_absent(traces, capsys, tmp_path):
    train, power = traces
    wl = tmp_path / "wl.yaml"
    wl.write_text(
        "workloads:\n  cifar100: {dataset: cifar100, network: shufflenetv2, optimizer: adadelta, target_metric: 0.6,"
        " metric: acc, metric_direction: max, max_epochs: 100, default_batch_size: 16}\n"
    )
    assert main(["project", "--train", str(train), "--power", str(power), "--workloads-file", str(wl)]) == 0
    out = capsys.readouterr().out
    assert "The power-limit dimension is ABSENT" in out and "700 W" in out and "least_energy_bs" in out
    assert main(["project", "--train", str(train), "--power", str(power), "--gpu", "a100"]) == 2
    assert "GPU 'a100' is not in" in capsys.readouterr().err


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Monitor:
    def __init__(self, clock, watts):
        self.clock, self.watts, self.start = clock, watts, None

    def begin_window(self, name):
        self.start = self.clock()

    def end_window(self, name):
        dt = self.clock() - self.start
        return type("M", (), {"time_s": dt, "total_energy_j": dt * self.watts})()


def test_measure_steps_meets_every_bound_in_repeated_windows():
    clock = Clock()

    def step():
        clock.t += 0.5
        return 1.25

    settings = MeasureSettings(2, 3.0, 4, 1.0, window_s=1.0, min_windows=3, steady_s=0)
    m = measure_steps(step, Monitor(clock, 250.0), settings, "w", clock=clock)
    # 3 s of warm-up; windows of 2 iterations (1 s) until 3 windows (constant steps: CI 0)
    assert (m.warmup_iterations, m.iterations, m.num_windows) == (6, 6, 3)
    assert m.time_s == pytest.approx(3.0) and m.avg_power_w == pytest.approx(250.0)
    assert m.samples_per_s(64) == pytest.approx(128.0)
    assert m.energy_per_sample_rel_ci == 0.0 and m.ci_met
    assert [w.loss for w in m.windows] == [1.25] * 3


class NoisyMonitor(Monitor):
    """Energy of each window scaled by the next factor of a cycle (a noisy counter)."""

    def __init__(self, clock, watts, factors):
        super().__init__(clock, watts)
        self.factors, self.k = list(factors), 0

    def end_window(self, name):
        m = super().end_window(name)
        f = self.factors[self.k % len(self.factors)]
        self.k += 1
        return type("M", (), {"time_s": m.time_s, "total_energy_j": m.total_energy_j * f})()


def test_measure_steps_repeats_windows_until_the_confidence_target_then_caps_and_flags():
    clock = Clock()

    def step():
        clock.t += 0.5

    # +-2 % alternating energy: the half-width shrinks as 1/sqrt(n) and reaches 1 % after some windows
    settings = MeasureSettings(
        0, 0.0, 1, 1.0, window_s=0.5, min_windows=3, rel_ci=0.01, max_measure_s=100, steady_s=0
    )
    m = measure_steps(step, NoisyMonitor(clock, 100.0, [1.02, 0.98]), settings, "w", clock=clock)
    assert m.ci_met and m.energy_per_sample_rel_ci <= 0.01
    values = [w.energy_j / w.iterations for w in m.windows[:-1]]
    assert relative_ci(values) > 0.01  # one window fewer would not have met it
    assert m.avg_power_ci_w == pytest.approx(ci_halfwidth([w.energy_j / w.time_s for w in m.windows]))
    # The cap: +-20 % noise cannot reach 1 % within 5 s; the point is flagged.
    capped = MeasureSettings(0, 0.0, 1, 1.0, window_s=0.5, min_windows=3, max_measure_s=5.0, steady_s=0)
    m = measure_steps(step, NoisyMonitor(clock, 100.0, [1.2, 0.8]), capped, "w", clock=clock)
    assert not m.ci_met and m.time_s == pytest.approx(5.0) and m.num_windows == 10
    row = power_row(get_workload("cifar100"), "h200", 64, 700.0, 1000, m, 1, True)
    assert row["num_windows"] == 10 and row["ci_met"] is False
    assert row["energy_per_sample_ci_rel"] == pytest.approx(m.energy_per_sample_rel_ci, rel=1e-4)
    assert row["time_per_epoch_ci_s"] == pytest.approx(0.0)  # every window had the same step time


def test_t_quantiles_and_interval():
    assert t_quantile_975(1) == 12.706 and t_quantile_975(30) == 2.042
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert t_quantile_975(1000) == pytest.approx(1.9623, abs=1e-3)
    # mean 2, sd 1, n 4: 3.182 * 1 / 2
    assert ci_halfwidth([1.0, 2.0, 3.0, 2.0]) == pytest.approx(3.182 * (2 / 3) ** 0.5 / 2)
    assert ci_halfwidth([1.0]) == float("inf")


def test_warm_up_runs_on_until_clock_and_temperature_are_steady():
    clock = Clock()

    def step():
        clock.t += 0.25

    temps = iter([40.0 + min(t, 20) for t in range(1000)])  # +1 C per read (every 0.5 s) for 20 reads

    def probe():
        return GPUState(1980.0, next(temps))

    settings = MeasureSettings(1, 1.0, 1, 0.5, window_s=0.5, min_windows=1, warmup_max_s=60, steady_s=2.0)
    m = measure_steps(step, Monitor(clock, 100.0), settings, "w", clock=clock, probe=probe)
    assert 10.0 <= m.warmup_time_s <= 13.0 and m.warmup_steady  # ~10 s of rising temperature, then 2 s flat
    assert m.windows[0].temperature_c == 60.0 and m.windows[0].sm_clock_mhz == 1980.0
    hot = iter(range(1000))
    m = measure_steps(
        step,
        Monitor(clock, 100.0),
        MeasureSettings(1, 1.0, 1, 0.5, window_s=0.5, min_windows=1, warmup_max_s=4, steady_s=2.0),
        "w",
        clock=clock,
        probe=lambda: GPUState(1980.0, float(next(hot))),
    )
    assert m.warmup_time_s == pytest.approx(4.0) and not m.warmup_steady


def test_is_steady():
    flat = [(t / 2, GPUState(1980.0, 50.0)) for t in range(5)]
    assert is_steady(flat) and not is_steady(flat[:3])  # 2 s of samples needed
    assert not is_steady([(t / 2, GPUState(1980.0 - 100 * t, 50.0)) for t in range(5)])
    assert is_steady([(t / 2, GPUState(None, None)) for t in range(5)])


def test_measure_settings_and_gpu_kind_refusals():
    with pytest.raises(ConfigError, match="--measure-iters must be >= 1"):
        MeasureSettings(measure_iters=0)
    with pytest.raises(ConfigError, match="--warmup-s must be a finite number"):
        MeasureSettings(warmup_s=float("nan"))
    with pytest.raises(ConfigError, match="--rel-ci must lie in"):
        MeasureSettings(rel_ci=0)
    with pytest.raises(ConfigError, match="--max-measure-s"):
        MeasureSettings(measure_s=20, max_measure_s=10)
    with pytest.raises(ConfigError, match="--min-windows"):
        MeasureSettings(min_windows=0)
    assert gpu_kind_from_name("NVIDIA H200") == "h200"
    assert gpu_kind_from_name("Tesla V100-SXM2-32GB") == "v100-sxm2-32gb"
    with pytest.raises(ConfigError):
        gpu_kind_from_name(" --- ")


class SteppedCounter:
    """An energy counter that moves only every 0.1 s (as NVML's does), at a constant 500 W."""

    index = 0

    def __init__(self, clock):
        self.clock = clock

    def total_energy_j(self):
        return 500.0 * math.floor(self.clock() / 0.1 + 1e-9) * 0.1

    def instant_power_w(self):
        return 500.0


def following(clock):
    """A counter log that follows one stepped counter, read only when the test polls it."""
    return CounterLog([SteppedCounter(clock)], clock, period_s=0.1, follow=True, start=False)


def test_counter_log_interpolates_between_updates_where_edge_reads_err():
    clock = Clock()
    counters = following(clock)
    gpu = counters.gpus[0]
    for k in range(0, 301):  # poll every 10 ms for 3 s
        clock.t = k * 0.01
        counters.poll()
    t0, t1 = 0.555, 2.505  # 1.95 s
    edges = gpu_at(gpu, clock, t1) - gpu_at(gpu, clock, t0)
    assert edges == pytest.approx(500 * 2.0)  # the edge reads count 2.0 s of energy: 2.6 % high
    assert counters.energy_between(t0, t1) == pytest.approx(500 * 1.95, rel=0.01)
    assert counters.gpu_energy_between(t0, t1) == {0: pytest.approx(500 * 1.95, rel=0.01)}
    assert counters.passed(2.5) and not counters.passed(3.0)
    assert counters.energy_between(t0, 3.5) is None  # not bracketed by updates


def gpu_at(gpu, clock, t):
    clock.t = t
    return gpu.total_energy_j()


def test_counter_log_never_dates_an_update_by_a_read_after_a_pause():
    clock = Clock()
    counters = following(clock)
    for k in range(0, 31):  # 0-0.3 s, polled
        clock.t = k * 0.01
        counters.poll()
    counters.pause()
    assert not counters.active
    clock.t = 0.75  # several updates happen unobserved
    counters.activate()
    counters.poll()  # only sets the reference value
    assert counters.changes(0)[0][-1] == pytest.approx(0.3)
    for k in range(76, 121):
        clock.t = k * 0.01
        counters.poll()
    assert counters.changes(0)[0][-3:] == pytest.approx([1.0, 1.1, 1.2])
    assert counters.energy_between(0.85, 1.15) == pytest.approx(500 * 0.3)


def test_following_pauses_once_past_an_edge_and_resumes_when_one_is_expected():
    clock = Clock()
    counters = following(clock)
    for k in range(0, 25):
        clock.t = k * 0.01
        counters.poll()
    assert counters.active  # no edge yet: following from the start
    counters.submit(Edge(0.25))  # a window begins
    clock.t = 0.29
    counters.poll()
    assert counters.active  # the counter has not moved past the edge yet
    clock.t = 0.30
    counters.poll()
    assert not counters.active  # it moved (at 0.3 s): paused mid-window
    clock.t = 1.0
    counters.poll()
    assert counters.changes(0)[0][-1] == pytest.approx(0.3)  # nothing recorded while paused
    counters.expect_edge()  # the window's end is near
    assert counters.active
    for k in range(101, 131):
        clock.t = k * 0.01
        counters.poll()
    assert counters.active  # updates at 1.1, 1.2 and 1.3 s, but the edge has not come yet
    assert counters.changes(0)[0][-3:] == pytest.approx([1.1, 1.2, 1.3])
    counters.submit(Edge(1.25))  # the window ends; the counter already moved past it
    counters.poll()
    assert not counters.active
    assert counters.energy_between(0.25, 1.25) == pytest.approx(500 * 1.0)


def test_the_cap_never_cuts_a_point_below_the_minimum_windows():
    clock = Clock()

    def step():
        clock.t += 0.5

    settings = MeasureSettings(0, 0.0, 1, 1.0, window_s=0.5, min_windows=3, max_measure_s=1.0, steady_s=0)
    m = measure_steps(step, NoisyMonitor(clock, 100.0, [1.2, 0.8]), settings, "w", clock=clock)
    assert m.num_windows == 3 and m.time_s == pytest.approx(1.5) and not m.ci_met
