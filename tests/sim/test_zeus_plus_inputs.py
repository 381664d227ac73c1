"""Drift tables and cross-GPU priors: semantics, and bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import JobModel, replay
from zeus_bench.sim.scenarios.drift import Drift, optimum_shift, oracle_cost_by_recurrence, validate_drift
from zeus_bench.sim.scenarios.warmstart import PRIOR_SEED, observed_tries, prior_for
from zeus_bench.store import read_table, write_table
from zeus_bench.traces.jobs import TraceSet


def _fails(args: list[str], capsys: pytest.CaptureFixture[str], message: str, out: Path) -> None:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err, err
    assert not out.exists()


def _table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "drift.csv"
    path.write_text(text)
    return path


def test_drift_interpolates_steps_and_morphs(zeus_traces: Path) -> None:
    job = TraceSet(zeus_traces).job("v100", "imagenet")
    rows = validate_drift(
        pd.DataFrame(
            {
                "workload": ["imagenet"] * 4,
                "batch_size": [256, 256, 360, 360],
                "recurrence": [9, 10, 10, 20],
                "epoch_factor": [1.0, 2.0, 1.0, 1.5],
            }
        )
    )
    d = Drift(rows, job)
    i256, i360, i192 = job.bs_index(256), job.bs_index(360), job.bs_index(192)
    assert [d(r, i256) for r in (1, 9, 10, 50)] == [1.0, 1.0, 2.0, 2.0]
    assert [d(r, i360) for r in (5, 10, 15, 20, 30)] == [1.0, 1.0, 1.25, 1.5, 1.5]
    assert d(15, i192) == 1.0


def test_no_drift_replays_identically_and_a_step_moves_the_optimum(zeus_traces: Path) -> None:
    job = TraceSet(zeus_traces).job("v100", "imagenet")
    model = JobModel(job, Cost(0.5))
    none = Drift(
        validate_drift(
            pd.DataFrame(
                {"workload": ["imagenet"], "batch_size": [256], "recurrence": [1], "epoch_factor": [1.0]}
            )
        ),
        job,
    )
    for name in ("zeus", "zeus-plus"):
        plain = np.array(replay(model, get_policy(name), 3, 2.0, 30), dtype=float)
        np.testing.assert_array_equal(
            plain, np.array(replay(model, get_policy(name), 3, 2.0, 30, drift=none), dtype=float)
        )
    step = Drift(optimum_shift(job, Cost(0.5), "step", 20, 2.0), job)
    oracle = oracle_cost_by_recurrence(job, Cost(0.5), step, 40)
    assert np.all(oracle[:19] == oracle[0]) and np.all(oracle[19:] > oracle[0])
    rows = replay(model, get_policy("oracle"), 3, 2.0, 40, drift=step)
    epochs = {r[0]: r[4] for r in rows}
    assert max(epochs[r] for r in range(1, 20)) * 2 >= min(epochs[r] for r in range(20, 41))
    assert min(epochs[r] for r in range(20, 41)) >= 2 * min(epochs[r] for r in range(1, 20))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workload,batch\nimagenet,256\n", "missing column(s) batch_size, recurrence, epoch_factor"),
        ("workload,batch_size,recurrence,epoch_factor\n", "no rows"),
        (
            "workload,batch_size,recurrence,epoch_factor,note\nimagenet,256,3,1.5,x\n",
            "unknown column(s) note",
        ),
        ("workload,batch_size,recurrence,epoch_factor\nimagenet,256,x,1.5\n", "column 'recurrence'"),
        (
            "workload,batch_size,recurrence,epoch_factor\nimagenet,256,3,0\n",
            "column 'epoch_factor' row 0: must be > 0",
        ),
        ("workload,batch_size,recurrence,epoch_factor\nimagenet,256,3,inf\n", "non-finite"),
        (
            "workload,batch_size,recurrence,epoch_factor\nimagenet,256,2.5,1\n",
            "column 'recurrence' row 0: must be an integer",
        ),
        (
            "workload,batch_size,recurrence,epoch_factor\nimagenet,256,0,1\n",
            "column 'recurrence' row 0: must be > 0",
        ),
        (
            "workload,batch_size,recurrence,epoch_factor\nimagenet,256,3,1\nimagenet,256,3,2\n",
            "duplicate rows for key (workload=imagenet, batch_size=256, recurrence=3)",
        ),
        ("workload,batch_size,recurrence,epoch_factor\nnosuch,256,3,1.5\n", "unknown workload 'nosuch'"),
        (
            "workload,batch_size,recurrence,epoch_factor\nimagenet,4096,3,1.5\n",
            "batch size 4096 of 'imagenet' is not in the 'v100' trace",
        ),
        ('"unterminated\n', "drift table"),
    ],
)
def test_bad_drift_table(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(zeus_traces), "--gpu", "v100", "--workloads", "imagenet"]
    args += [
        "--policies",
        "zeus-plus",
        "--seeds",
        "1",
        "--drift",
        str(_table(tmp_path, text)),
        "--out",
        str(out),
    ]
    _fails(args, capsys, message, out)


def test_missing_drift_table_and_with_arrivals(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    base = [
        "simulate",
        "--traces",
        str(zeus_traces),
        "--gpu",
        "v100",
        "--policies",
        "zeus-plus",
        "--out",
        str(out),
    ]
    _fails([*base, "--drift", str(tmp_path / "none.csv")], capsys, "no such drift table", out)
    drift = _table(tmp_path, "workload,batch_size,recurrence,epoch_factor\nsquad,32,3,1.5\n")
    arrivals = tmp_path / "arr.csv"
    assert (
        main(["synth-arrivals", "--workloads", "squad", "--jobs-per-group", "5", "--out", str(arrivals)]) == 0
    )
    _fails([*base, "--drift", str(drift), "--arrivals", str(arrivals)], capsys, "cannot be combined", out)


def test_simulate_with_drift_and_prior(zeus_traces: Path, tmp_path: Path) -> None:
    drift = _table(tmp_path, "workload,batch_size,recurrence,epoch_factor\nsquad,32,10,1\nsquad,32,11,1.25\n")
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(zeus_traces), "--gpu", "a40", "--workloads", "squad"]
    args += [
        "--policies",
        "zeus-plus,baseline",
        "--seeds",
        "1-2",
        "--recurrences",
        "20",
        "--drift",
        str(drift),
    ]
    args += ["--prior-traces", str(zeus_traces), "--prior-gpu", "v100", "--out", str(out)]
    assert main(args) == 0
    runs = read_table(out, "runs")
    base = runs[runs.policy == "baseline"].groupby("recurrence")["epochs"].mean()
    assert base.loc[11:].mean() == pytest.approx(1.25 * base.loc[:10].mean(), rel=0.15)  # b0 = 32 drifts
    plus = runs[(runs.policy == "zeus-plus") & (runs.seed == 1)].sort_values(["recurrence", "attempt"])
    prior = prior_for(TraceSet(zeus_traces).job("a40", "squad"), TraceSet(zeus_traces), "v100", Cost(0.5))
    assert plus["batch_size"].iloc[1] == prior.best_batch_size  # the prior's best is probed first


def test_prior_picks_the_other_gpus_best_among_the_batch_sizes_its_replay_saw_reach(
    zeus_traces: Path,
) -> None:
    ts = TraceSet(zeus_traces)
    job = ts.job("a40", "cifar100")
    prior = prior_for(job, ts, "v100", Cost(0.5))
    tries = observed_tries(ts.job("v100", "cifar100"), Cost(0.5), 2.0, PRIOR_SEED)
    reached = {t.batch_size for t in tries if t.reached}
    assert prior.gpu == "v100" and prior.best_batch_size in reached
    assert {b for b, _ in prior.relative_cost} == reached & set(job.batch_sizes.tolist())
    assert set(prior.ruled_out) == {t.batch_size for t in tries} - reached - {job.b0}
    assert dict(prior.relative_cost)[prior.best_batch_size] == 1.0


def _prior_folder(tmp_path: Path, zeus_traces: Path, keep: set[int] | None, name: str = "x") -> Path:
    folder = tmp_path / "prior"
    folder.mkdir()
    shutil.copy(zeus_traces / "train.parquet", folder / "train.parquet")
    power = read_table(zeus_traces / "power-v100.parquet", "power")
    if keep is not None:
        power = power[(power["dataset"] != "imagenet") | power["batch_size"].isin(keep)]
    power["gpu"] = name  # a trace holds one GPU kind, named as its file is (TraceSet checks it)
    write_table(power, folder / f"power-{name}.parquet", "power")
    return folder


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("unknown-gpu", "--prior-gpu 'p100': no power trace"),
        ("no-overlap", "share no converging batch size"),
        ("malformed", "prior"),
        ("alone", "go together"),
    ],
)
def test_bad_prior(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(zeus_traces), "--gpu", "a40", "--workloads", "imagenet"]
    args += ["--policies", "zeus-plus", "--seeds", "1", "--out", str(out)]
    if case == "unknown-gpu":
        args += ["--prior-traces", str(zeus_traces), "--prior-gpu", "p100"]
    elif case == "no-overlap":
        # imagenet on the prior GPU only at 64, which never converges: nothing to learn from.
        args += ["--prior-traces", str(_prior_folder(tmp_path, zeus_traces, {64})), "--prior-gpu", "x"]
    elif case == "malformed":
        folder = _prior_folder(tmp_path, zeus_traces, None)
        (folder / "power-x.parquet").write_bytes(b"not parquet")
        args += ["--prior-traces", str(folder), "--prior-gpu", "x"]
    else:
        args += ["--prior-gpu", "v100"]
    _fails(args, capsys, message, out)


def test_prior_without_the_workload(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _prior_folder(tmp_path, zeus_traces, None)
    power = read_table(folder / "power-x.parquet", "power")
    write_table(power[power["dataset"] != "imagenet"], folder / "power-x.parquet", "power")
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(zeus_traces), "--gpu", "a40", "--workloads", "imagenet"]
    args += ["--policies", "zeus-plus", "--seeds", "1", "--prior-traces", str(folder), "--prior-gpu", "x"]
    _fails([*args, "--out", str(out)], capsys, "has no runs of 'imagenet' on 'x'", out)
