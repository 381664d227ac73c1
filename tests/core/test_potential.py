"""Potential savings on the published V100 and A40 traces, checked against an independent
computation straight from the CSV files (plain pandas, no zeus_bench code), and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.cli.main import main

JOBS = {  # workload: (optimizer, target, max_epochs, b0) as in the paper's table
    "cifar100": ("adadelta", 0.6, 100, 1024),
    "imagenet": ("adadelta", 0.65, 100, 256),
    "squad": ("adamw", 84.0, 6, 32),
    "librispeech": ("adamw", 40.0, 16, 256),
    "movielens-1m": ("adam", 0.41, 100, 1024),
    "sentiment140": ("adamw", 0.84, 10, 128),
}


def independent_potential(csv_dir: Path, gpu: str, eta: float) -> pd.DataFrame:
    train = pd.read_csv(csv_dir / "summary_train.csv")
    power = pd.read_csv(csv_dir / f"summary_power_{gpu}.csv")
    joined = train.merge(power, on=["dataset", "network", "batch_size", "optimizer"])
    maxpower = joined["power_limit"].max()
    rows = []
    for wl, (opt, target, max_ep, b0) in JOBS.items():
        b0 = min(b0, power.loc[power.dataset == wl, "batch_size"].max())
        j = joined[
            (joined.dataset == wl) & (joined.optimizer == opt) & (joined.target_metric == target)
        ].copy()
        j["ok"] = j.target_epoch.notna() & (j.target_epoch <= max_ep)
        j["tta"] = j.target_epoch * j.time_per_epoch
        j["eta"] = j.tta * j.average_power
        g = j.groupby(["batch_size", "power_limit"])
        conf = pd.DataFrame({"feasible": g.ok.all(), "eta": g.eta.mean(), "tta": g.tta.mean()}).reset_index()
        conf["cost"] = eta * conf.eta + (1 - eta) * maxpower * conf.tta
        base = conf[(conf.batch_size == b0)].sort_values("power_limit").iloc[-1]
        feas = conf[conf.feasible]
        maxb = feas.batch_size.max()
        mb = conf[conf.batch_size == maxb].sort_values("power_limit").iloc[-1]
        e = feas.loc[feas.eta.idxmin()]
        c = feas.loc[feas.cost.idxmin()]
        rows.append(
            {
                "workload": wl,
                "baseline_eta_j": base.eta,
                "baseline_tta_s": base.tta,
                "min_energy_bs": e.batch_size,
                "min_energy_pl_w": e.power_limit,
                "min_energy_saving_pct": 100 * (1 - e.eta / base.eta),
                "min_energy_time_saving_pct": 100 * (1 - e.tta / base.tta),
                "min_cost_bs": c.batch_size,
                "min_cost_energy_saving_pct": 100 * (1 - c.eta / base.eta),
                "maxbatch_bs": maxb,
                "min_energy_saving_vs_maxbatch_pct": 100 * (1 - e.eta / mb.eta),
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("gpu", ["v100", "a40"])
def test_potential_matches_independent_computation(
    gpu: str, zeus_traces: Path, zeus_csv_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["potential", "--traces", str(zeus_traces), "--gpu", gpu, "--format", "json"]) == 0
    ours = pd.DataFrame(json.loads(capsys.readouterr().out)).set_index("workload")
    ref = independent_potential(zeus_csv_dir, gpu, 0.5).set_index("workload")
    assert list(ours.index) == list(JOBS)
    for col in ref.columns:
        assert ours[col].to_numpy() == pytest.approx(ref[col].to_numpy(dtype=float), rel=1e-9), col


def test_v100_least_energy_range_matches_paper(zeus_traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The paper's introduction: 23.8 % (imagenet) to 74.7 % (cifar100) on the V100."""
    assert main(["potential", "--traces", str(zeus_traces), "--gpu", "v100", "--format", "csv"]) == 0
    from io import StringIO

    df = pd.read_csv(StringIO(capsys.readouterr().out)).set_index("workload")
    assert df["min_energy_saving_pct"].min() == pytest.approx(23.8, abs=0.05)
    assert df["min_energy_saving_pct"].idxmin() == "imagenet"
    assert df["min_energy_saving_pct"].max() == pytest.approx(74.7, abs=0.05)
    assert df["min_energy_saving_pct"].idxmax() == "cifar100"
    # b0 is capped at the GPU's largest traced batch size (librispeech: 256 -> 192 on the V100)
    assert df.loc["librispeech", "b0"] == 192


def test_potential_csv_has_required_columns(zeus_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "pot.csv"
    assert (
        main(
            [
                "potential",
                "--traces",
                str(zeus_traces),
                "--gpu",
                "a40",
                "--eta",
                "1",
                "--format",
                "csv",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    cols = set(pd.read_csv(out).columns)
    required = "workload, b0, max_power_w, baseline_eta_j, baseline_tta_s, min_energy_bs, min_energy_pl_w, min_energy_saving_pct, min_energy_time_saving_pct, min_cost_bs, min_cost_pl_w, min_cost_energy_saving_pct, min_cost_time_saving_pct, maxbatch_bs, maxbatch_eta_j, maxbatch_tta_s, min_energy_saving_vs_maxbatch_pct, min_cost_energy_saving_vs_maxbatch_pct"
    assert set(required.split(", ")) <= cols
    df = pd.read_csv(out)
    # eta = 1 optimises energy only: the least-cost configuration is the least-energy one
    assert (df.min_cost_bs == df.min_energy_bs).all() and (df.min_cost_pl_w == df.min_energy_pl_w).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "h100"], "unknown GPU 'h100'"),
        (["--gpu", "v100", "--eta", "1.5"], "eta must lie in [0, 1]"),
        (["--gpu", "v100", "--format", "xml"], "invalid choice"),
    ],
)
def test_potential_bad_input(
    tiny_traces: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["potential", "--traces", str(tiny_traces), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_pareto_cli(zeus_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "front.csv"
    assert (
        main(
            [
                "pareto",
                "--traces",
                str(zeus_traces),
                "--gpu",
                "v100",
                "--workload",
                "librispeech",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    front = pd.read_csv(out)
    assert front["feasible"].all() and front["on_frontier"].all()
    assert front["tta_s"].is_monotonic_increasing and front["eta_j"].is_monotonic_decreasing
    # the least-energy configuration (32 at 100 W on the V100) is the frontier's slowest point
    assert tuple(front.iloc[-1][["batch_size", "power_limit_w"]]) == (32, 100.0)


def test_pareto_unknown_workload(tiny_traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pareto", "--traces", str(tiny_traces), "--gpu", "v100", "--workload", "mnist"]) == 2
    err = capsys.readouterr().err
    assert "unknown workload 'mnist'" in err and len(err.strip().splitlines()) == 1


def test_table_fits_a_terminal(zeus_traces, capsys):
    assert main(["potential", "--traces", str(zeus_traces), "--gpu", "v100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    row = next(line.split() for line in lines if line.split()[:1] == ["cifar100"])
    # cifar100 on V100: least energy at 128 @ 100 W, 74.7 % less energy than b0 at the max limit (paper).
    assert row[:4] == ["cifar100", "1024", "128@100", "74.7"]


def test_pareto_prints_a_table_that_fits_and_takes_several_workloads(
    zeus_traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["pareto", "--traces", str(zeus_traces), "--gpu", "v100"]
    assert main([*base, "--workloads", "librispeech,squad"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in table) <= 100
    assert table[1].split() == [
        "workload",
        "batch_size",
        "power_limit_w",
        "tta_s",
        "eta_j",
        "cost",
        "feasible",
        "on_frontier",
    ]
    assert {line.split()[0] for line in table[2:]} == {"librispeech", "squad"}
    assert main([*base, "--workload", "librispeech", "--format", "json"]) == 0  # the alias, every column
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len([line for line in table[2:] if line.split()[0] == "librispeech"])
    assert (rows[-1]["batch_size"], rows[-1]["power_limit_w"]) == (32, 100.0)
