"""The sweep on the fake GPU: valid power traces, observe mode, errors (exit 2), resume."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.sweep.conftest import FAST
from zeus_bench.cli.main import main
from zeus_bench.store import read_table


def sweep(out: Path, *extra: str) -> int:
    return main(
        ["-q", "sweep", "--workload", "cifar100", "--backend", "fake", "--out", str(out), *FAST, *extra]
    )


def test_sweep_writes_valid_power_trace_and_restores_limits(fake_env, tiny_workload, tmp_path):
    from zeus_bench.device.fake import FakeBackend

    out = tmp_path / "power.parquet"
    # Host-timed fake (no speed model, so no simulated clock): the counter tracker's path, as on a GPU.
    FakeBackend().configure(samples_per_s=0.0)
    assert sweep(out, "--batch-sizes", "8,4", "--power-limits", "300,700") == 0
    df = read_table(out, "power")
    assert list(zip(df["batch_size"], df["power_limit_w"], strict=True)) == [
        (4, 300.0),
        (4, 700.0),
        (8, 300.0),
        (8, 700.0),
    ]
    assert set(df["gpu"]) == {"fake-h200"} and set(df["dataset"]) == {"cifar100"}
    assert set(df["network"]) == {"shufflenetv2"} and set(df["optimizer"]) == {"adadelta"}
    # The fake H200 draws 600 W under full load: capped at 300 W, it draws the cap.
    capped, free = df[df["power_limit_w"] == 300], df[df["power_limit_w"] == 700]
    assert capped["avg_power_w"].between(295, 305).all()
    assert free["avg_power_w"].between(590, 610).all()
    assert (df["time_per_epoch_s"] * df["samples_per_s"]).round(6).eq(1000).all()  # samples per epoch
    assert (df["measured_s"] >= 0.25).all() and not df["observe_mode"].any()
    assert (df["num_gpus"] == 1).all()
    meta = df.attrs["zeus_bench"]
    assert meta["mode"] == "set" and meta["complete"] is True and meta["gpu_name"] == "Fake H200"
    for key in ("driver", "torch", "cuda", "measuring_s", "started_utc", "finished_utc", "warmup_iters"):
        assert key in meta
    assert [p["measured_iterations"] >= 3 for p in meta["points"]] == [True] * 4
    # Repeated windows, energy interpolated at the counter's updates, clock and temperature logged.
    assert (df["num_windows"] >= 3).all() and df["avg_power_ci_w"].notna().all()
    windows = [w for p in meta["points"] for w in p["windows"]]
    # (a window falls back to the edge reads when the counter did not move within 1 s of its end,
    # which a loaded test machine can cause)
    sources = [w["energy_from"] for w in windows]
    assert set(sources) <= {"counter updates", "edges"} and "counter updates" in sources
    assert all(w["sm_clock_mhz"] > 0 and w["temperature_c"] > 30 for w in windows)
    gpu = FakeBackend().gpu(0)
    assert gpu.power_limit_w() == 700.0  # restored
    assert gpu.setter_calls() >= 3  # set 300, 700, ..., then restored


def test_observe_mode_never_sets_a_limit(fake_env, tiny_workload, tmp_path):
    from zeus_bench.device.fake import FakeBackend

    FakeBackend().configure(0, power_limit_w=450.0)
    out = tmp_path / "obs.parquet"
    assert sweep(out, "--batch-sizes", "4", "--observe") == 0
    df = read_table(out, "power")
    assert df["power_limit_w"].tolist() == [450.0] and df["observe_mode"].tolist() == [True]
    assert df["avg_power_w"].iloc[0] == pytest.approx(450.0, abs=5)
    assert FakeBackend().gpu(0).setter_calls() == 0
    assert df.attrs["zeus_bench"]["mode"] == "observe"


def test_bad_workload_name_exits_2(fake_env, tmp_path, capsys):
    assert sweep(tmp_path / "x.parquet", "--batch-sizes", "4", "--workload", "nope") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown workload 'nope'" in err[0]


def test_limit_outside_range_exits_2(fake_env, tiny_workload, tmp_path, capsys):
    out = tmp_path / "x.parquet"
    assert sweep(out, "--batch-sizes", "4", "--power-limits", "150") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "power limit 150 W is outside GPU 0's range [200, 700] W" in err[0]
    assert not out.exists() and tiny_workload.steps == 0


def test_observe_with_limits_exits_2(fake_env, tiny_workload, tmp_path, capsys):
    assert sweep(tmp_path / "x.parquet", "--batch-sizes", "4", "--power-limits", "300", "--observe") == 2
    assert "--observe measures at the current limit only" in capsys.readouterr().err


def test_oom_exits_2_and_keeps_completed_points(fake_env, tiny_workload, tmp_path, capsys):
    tiny_workload.oom_above = 8
    out = tmp_path / "oom.parquet"
    assert sweep(out, "--batch-sizes", "4,8,16", "--observe") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "batch size 16 of cifar100 does not fit in the memory of GPU 0" in err[0]
    df = read_table(out, "power")
    assert df["batch_size"].tolist() == [4, 8]
    assert df.attrs["zeus_bench"]["complete"] is False


def test_stop_at_oom_records_skipped_sizes(fake_env, tiny_workload, tmp_path):
    tiny_workload.oom_above = 4
    out = tmp_path / "oom.parquet"
    assert sweep(out, "--batch-sizes", "4,8,16", "--observe", "--stop-at-oom") == 0
    df = read_table(out, "power")
    assert df["batch_size"].tolist() == [4]
    skipped = df.attrs["zeus_bench"]["skipped"]
    assert [s["batch_size"] for s in skipped] == [8, 16] and skipped[0]["reason"] == "out of memory"


def test_half_finished_sweep_keeps_cells_and_resume_measures_only_the_rest(fake_env, tiny_workload, tmp_path):
    out = tmp_path / "half.parquet"
    tiny_workload.interrupt_at = 8
    assert sweep(out, "--batch-sizes", "4,8", "--power-limits", "300,700") == 130
    first = read_table(out, "power")
    assert first["batch_size"].tolist() == [4, 4] and first.attrs["zeus_bench"]["complete"] is False
    from zeus_bench.device.fake import FakeBackend

    assert FakeBackend().gpu(0).power_limit_w() == 700.0  # restored after the interrupt
    assert sweep(out, "--batch-sizes", "4,8", "--power-limits", "300,700") == 2  # exists, no --resume
    tiny_workload.interrupt_at = None
    assert sweep(out, "--batch-sizes", "4,8", "--power-limits", "300,700", "--resume") == 0
    df = read_table(out, "power")
    assert list(zip(df["batch_size"], df["power_limit_w"], strict=True)) == [
        (4, 300.0),
        (4, 700.0),
        (8, 300.0),
        (8, 700.0),
    ]
    pd.testing.assert_frame_equal(
        df.iloc[:2].reset_index(drop=True), first.reset_index(drop=True), check_like=True
    )
    assert len(df.attrs["zeus_bench"]["points"]) == 2  # only batch size 8 was measured again


def test_unreadable_dataset_root_exits_2(fake_env, tiny_workload, tmp_path, capsys):
    missing = tmp_path / "no-data"
    code = sweep(
        tmp_path / "t.parquet", "--batch-sizes", "4", "--train-to-target", "--data-root", str(missing)
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"dataset root {missing} is not a folder" in err[0]


def test_train_to_target_writes_train_trace(fake_env, tiny_workload, tmp_path):
    import torch

    gen = torch.Generator().manual_seed(1)
    for split, n in (("train", 256), ("val", 128)):
        x = torch.randn(n, 8, generator=gen)
        torch.save({"x": x, "y": (x[:, 0] > 0).long()}, tmp_path / f"{split}.pt")
    out = tmp_path / "train.parquet"
    code = sweep(
        out,
        "--batch-sizes",
        "4,8",
        "--train-to-target",
        "--data-root",
        str(tmp_path),
        "--runs",
        "2",
        "--max-epochs",
        "5",
    )
    assert code == 0
    df = read_table(out, "train")
    assert len(df) == 4 and set(df["run"]) == {0, 1} and set(df["batch_size"]) == {4, 8}
    assert (df["target_metric"] == 0.6).all()
    # A linear rule on x[:, 0] is learnt to 60 % accuracy within the first epoch or two.
    assert df["target_epoch"].notna().all() and (df["target_epoch"] <= 5).all()
    assert sorted(df["learning_rate"].unique()) == pytest.approx([0.04, 0.08])


@pytest.mark.slow
def test_ddp_sweep_on_two_fake_gpus_sums_energy(fake_env, tmp_path, monkeypatch):
    # Real workload (tiny), two processes with gloo on CPU; energy summed over both fake GPUs.
    monkeypatch.setenv("ZEUS_BENCH_FAKE_GPUS", "2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "ddp.parquet"
    code = sweep(
        out, "--workload", "movielens-1m", "--tiny", "--gpus", "0,1", "--batch-sizes", "8,16", "--observe"
    )
    assert code == 0
    df = read_table(out, "power")
    assert df["gpu"].unique().tolist() == ["fake-h200x2"] and (df["num_gpus"] == 2).all()
    assert df["avg_power_w"].between(1180, 1220).all()  # 2 x 600 W under full load
    assert df.attrs["zeus_bench"]["distributed"]["world_size"] == 2
    assert (
        main(
            [
                "-q",
                "sweep",
                "--workload",
                "movielens-1m",
                "--backend",
                "fake",
                "--gpus",
                "0,1",
                "--batch-sizes",
                "7",
                "--observe",
                "--out",
                str(tmp_path / "x.parquet"),
            ]
        )
        == 2
    )


@pytest.mark.parametrize(
    ("changed", "key"),
    [
        (("--measure-iters", "4"), "measure_iters"),
        (("--seed", "5"), "seed"),
        (("--observe",), "mode"),
    ],
)
def test_resume_refuses_points_measured_otherwise(fake_env, tiny_workload, tmp_path, capsys, changed, key):
    """A shard measured with one setting is not completed with another (nothing is measured)."""
    out = tmp_path / "shard.parquet"
    limits = ("--power-limits", "700")
    assert sweep(out, "--batch-sizes", "4", *limits) == 0
    before = out.read_bytes()
    capsys.readouterr()
    now = ("--power-limits", "current") if "--observe" in changed else limits  # the limit in force: 700
    assert sweep(out, "--batch-sizes", "4,8", *now, *changed, "--resume") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"its points were measured with {key} " in err, err
    assert out.read_bytes() == before
    assert sweep(out, "--batch-sizes", "4,8", *limits, "--resume") == 0  # the same settings: resumed
    prov = read_table(out, "power").attrs["zeus_bench"]
    assert [p["batch_size"] for p in prov["reused_points"]] == [4]
    assert [p["batch_size"] for p in prov["points"]] == [8]
