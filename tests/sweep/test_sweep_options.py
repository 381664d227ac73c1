"""Sweep options that are refused or passed through: train-to-target, DDP, workloads file, fake load."""

from __future__ import annotations

import pytest
import yaml

from tests.sweep.test_sweep_runner import sweep
from zeus_bench.store import read_table


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--power-limits", "300"], "--train-to-target trains at the limit in force; drop --power-limits"),
        (["--gpus", "0,1"], "--train-to-target trains on one GPU; --gpus names 2"),
        (["--stop-at-oom"], "--stop-at-oom applies to power sweeps, not to --train-to-target"),
    ],
)
def test_train_to_target_refuses_options_it_would_ignore(
    fake_env, tiny_workload, tmp_path, capsys, extra, message
):
    out = tmp_path / "t.parquet"
    code = sweep(out, "--batch-sizes", "4", "--train-to-target", "--data-root", str(tmp_path), *extra)
    assert code == 2
    assert message in _one_error_line(capsys)
    assert not out.exists() and tiny_workload.steps == 0


def test_stop_at_oom_is_refused_with_several_gpus(fake_env, tiny_workload, tmp_path, capsys):
    out = tmp_path / "d.parquet"
    assert sweep(out, "--batch-sizes", "4", "--gpus", "0,1", "--stop-at-oom", "--observe") == 2
    assert "--stop-at-oom works with one GPU only" in _one_error_line(capsys)
    assert not out.exists()


def test_workloads_file_overrides_the_registry_entry(fake_env, tiny_workload, tmp_path):
    entry = {
        "dataset": "cifar100",
        "network": "tinynet",
        "optimizer": "SGD",
        "target_metric": 0.5,
        "metric": "accuracy",
        "metric_direction": "max",
        "max_epochs": 3,
        "default_batch_size": 4,
    }
    wfile = tmp_path / "workloads.yaml"
    wfile.write_text(yaml.safe_dump({"workloads": {"cifar100": entry}}))
    out = tmp_path / "w.parquet"
    assert sweep(out, "--batch-sizes", "4", "--observe", "--workloads-file", str(wfile)) == 0
    df = read_table(out, "power")
    assert df["network"].tolist() == ["tinynet"] and df["optimizer"].tolist() == ["sgd"]


def test_bad_workloads_file_exits_2(fake_env, tiny_workload, tmp_path, capsys):
    wfile = tmp_path / "workloads.yaml"
    wfile.write_text("workloads: [1, 2]\n")
    out = tmp_path / "w.parquet"
    assert sweep(out, "--batch-sizes", "4", "--observe", "--workloads-file", str(wfile)) == 2
    assert "expected a mapping with a 'workloads' mapping" in _one_error_line(capsys)
    assert not out.exists()


def test_fake_load_paces_steps_by_the_fake_gpus_throughput_at_the_limit():
    from zeus_bench.device.fake import FakeBackend
    from zeus_bench.device.fake_load import fake_load

    backend = FakeBackend(n_gpus=2)
    gpus = backend.gpus([0, 1])
    load = fake_load(gpus)
    assert load is not None
    with load:
        assert [g.instant_power_w() for g in gpus] == [600.0, 600.0]
        assert load.slowdown() == 1.0
        calls = []

        def step() -> int:
            calls.append(1)
            return 7

        assert load.paced(step) is step  # uncapped: the step itself
        gpus[1].set_power_limit_w(300.0)
        # The slowest GPU sets the pace: ((300 - 80) / (600 - 80)) ** 0.4 of the uncapped speed.
        assert load.slowdown() == pytest.approx(1 / (220 / 520) ** 0.4)
        assert load.paced(step)() == 7 and calls == [1]
    assert [g.instant_power_w() for g in gpus] == [80.0, 80.0]  # idle after the job


def test_fake_load_is_none_unless_every_gpu_is_fake():
    from unittest import mock

    from zeus_bench.device.base import GPU
    from zeus_bench.device.fake import FakeBackend
    from zeus_bench.device.fake_load import fake_load

    real = mock.Mock(spec=GPU)
    assert fake_load([real]) is None
    assert fake_load([FakeBackend().gpu(0), real]) is None
    assert fake_load([]) is None


def test_the_installed_workloads_are_read_once(monkeypatch):
    """A process that drops to an unprivileged user after its first sweep still finds its workloads
    (the package metadata may then be unreadable: a clone under a folder of mode 0700)."""
    import zeus_bench.sweep.workload as workload

    workload._installed.cache_clear()
    assert "movielens-1m" in workload.available_workloads()
    monkeypatch.setattr(workload, "entry_points", lambda group: [])  # metadata unreadable from now on
    assert "movielens-1m" in workload.available_workloads()
    assert type(workload.load_workload("movielens-1m", tiny=True)).__name__
