"""``zeus-bench simulate`` / ``summarize`` / ``synth-arrivals``: outputs and bad input."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.cli.main import main
from zeus_bench.store import read_metadata, read_table

RUN_COLUMNS = [
    "gpu", "workload", "policy", "seed", "eta", "beta", "recurrence", "attempt", "batch_size",
    "power_limit_w", "epochs", "energy_j", "time_s", "cost", "reached", "profiled",
]  # fmt: skip


def sim_args(traces: Path, *extra: str) -> list[str]:
    return ["simulate", "--traces", str(traces), "--gpu", "v100", *extra]


def test_simulate_then_summarize(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    args = sim_args(zeus_traces, "--workloads", "squad,sentiment140")
    args += ["--seeds", "1-3", "--recurrences", "25", "--out", str(out)]
    assert main(args) == 0
    runs = read_table(out, "runs")
    assert list(runs.columns[: len(RUN_COLUMNS)]) == RUN_COLUMNS
    assert set(runs["policy"]) == {
        "zeus",
        "baseline",
        "max-batch",
        "oracle",
        "grid-search",
        "bs-only",
        "pl-only",
        "zeus-plus",
        "zeus-plus-safe",
        "eps-greedy",
        "ucb1",
        "sw-ts",
        "conservative-ucb",
        "bo-ei",
    }
    assert set(runs["workload"]) == {"squad", "sentiment140"}
    assert sorted(runs["seed"].unique()) == [1, 2, 3]
    per = runs.groupby(["workload", "policy", "seed"])["recurrence"].agg(["min", "max"])
    assert (per["min"] == 1).all() and (per["max"] == 25).all()
    assert runs["reached"].any() and runs["profiled"].any()
    assert read_metadata(out)["policies"][0] == "zeus"

    csv = tmp_path / "summary.csv"
    capsys.readouterr()
    assert main(["summarize", str(out), "--out", str(csv)]) == 0
    printed = capsys.readouterr().out
    assert "E% all" in printed and "E% vs mb" in printed and "regret %" in printed
    assert max(len(line) for line in printed.splitlines()) <= 100
    summary = pd.read_csv(csv)
    assert len(summary) == 2 * 14  # two workloads x every registered policy
    zeus = summary[(summary.policy == "zeus") & (summary.workload == "sentiment140")].iloc[0]
    assert zeus["seeds"] == 3 and zeus["recurrences"] == 25
    assert 0 < zeus["energy_savings_vs_baseline_cum_pct_mean"] < 40
    pq = tmp_path / "summary.parquet"
    assert main(["summarize", str(out), "--out", str(pq), "--format", "csv"]) == 0
    assert len(read_table(pq, "sim_summary")) == 2 * 14


def test_same_command_same_table_and_jobs_agree(zeus_traces: Path, tmp_path: Path) -> None:
    base = sim_args(zeus_traces, "--workloads", "imagenet", "--policies", "zeus,pl-only")
    base += ["--seeds", "1,5", "--eta", "0.5,1", "--beta", "2,inf", "--window", "5"]
    assert main([*base, "--out", str(tmp_path / "a.parquet")]) == 0
    assert main([*base, "--jobs", "2", "--out", str(tmp_path / "b.parquet")]) == 0
    a, b = read_table(tmp_path / "a.parquet", "runs"), read_table(tmp_path / "b.parquet", "runs")
    pd.testing.assert_frame_equal(a, b)
    assert set(a["eta"]) == {0.5, 1.0} and set(a["beta"]) == {2.0, float("inf")} and set(a["window"]) == {5}
    # beta = inf: no early stopping, so a try that did not reach ran the full 100 epochs.
    off = a[(a.beta == float("inf")) & ~a.reached]
    assert (off["epochs"] == 100).all()
    on = a[(a.beta == 2.0) & ~a.reached]
    assert len(on) > 0 and (on["epochs"] < 100).all()


def test_arrivals_end_to_end(zeus_traces: Path, tmp_path: Path) -> None:
    table = tmp_path / "arrivals.csv"
    assert (
        main(
            [
                "synth-arrivals",
                "--workloads",
                "sentiment140,squad",
                "--groups",
                "2",
                "--jobs-per-group",
                "30",
                "--out",
                str(table),
            ]
        )
        == 0
    )
    out = tmp_path / "runs.parquet"
    args = sim_args(zeus_traces, "--arrivals", str(table), "--seeds", "1-2")
    assert main([*args, "--policies", "zeus,baseline,max-batch,oracle", "--out", str(out)]) == 0
    runs = read_table(out, "runs")
    assert set(runs["group"]) == {"sentiment140-0", "sentiment140-1", "squad-0", "squad-1"}
    assert runs.groupby(["group", "policy", "seed"])["recurrence"].max().eq(30).all()
    assert main(["summarize", str(out)]) == 0


def _fails(args: list[str], capsys: pytest.CaptureFixture[str], message: str, out: Path) -> None:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workloads", "nosuch"], "unknown workload 'nosuch'"),
        (["--gpu", "h100"], "unknown GPU 'h100'"),
        (["--policies", "zeus,magic"], "unknown policy 'magic'"),
        (["--eta", "1.5"], "eta must lie in [0, 1]"),
        (["--eta", "-0.1"], "eta must lie in [0, 1]"),
        (["--beta", "0"], "beta must be > 0"),
        (["--beta", "-2"], "beta must be > 0"),
        (["--seeds", "5-3"], "empty range"),
        (["--seeds", ","], "empty range"),
        (["--recurrences", "0"], "recurrences must be in [1, 100000], got 0"),
        (["--window", "-1"], "window must be in [0, 100000], got -1"),
        (["--window", "1"], "window 1 makes every choice random"),
        (["--prior-precision", "-1"], "--prior-precision must be a finite number >= 0"),
        (["--prior-mean", "nan"], "--prior-mean must be a finite number"),
        (["--prune-rounds", "-1"], "--prune-rounds must be in [0, 100], got -1"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "runs.parquet"
    args = sim_args(tiny_traces, "--seeds", "1", "--recurrences", "3", "--out", str(out))
    # Later options win in argparse: the bad value overrides the good default above.
    _fails([*args, *extra], capsys, message, out)


WORKLOAD_YAML = """\
workloads:
  {id}:
    dataset: cifar100
    network: shufflenetv2
    optimizer: adadelta
    target_metric: 0.6
    metric: top-1 validation accuracy
    metric_direction: max
    max_epochs: {max_epochs}
    default_batch_size: {b0}
"""


@pytest.mark.parametrize(
    ("max_epochs", "b0", "message"),
    [
        (100, 100, "default batch size 100 is not in the traces"),
        (1, 1024, "never reaches the target within 1 epochs"),
    ],
)
def test_bad_workload_b0(
    tiny_traces: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    max_epochs: int,
    b0: int,
    message: str,
) -> None:
    wf = tmp_path / "w.yaml"
    wf.write_text(WORKLOAD_YAML.format(id="toy100", max_epochs=max_epochs, b0=b0))
    out = tmp_path / "runs.parquet"
    args = sim_args(tiny_traces, "--workloads-file", str(wf), "--workloads", "toy100")
    _fails([*args, "--seeds", "1", "--out", str(out)], capsys, message, out)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("group,start_time,end_time,workload\ng,0,1,squad\n", "missing column(s) runtime_ratio"),
        (
            "group,start_time,end_time,workload,runtime_ratio\ng,5,1,squad,1\n",
            "end_time must be after start_time",
        ),
        ("group,start_time,end_time,workload,runtime_ratio\ng,0,1,squad,0\n", "column 'runtime_ratio' row 0"),
        (
            "group,start_time,end_time,workload,runtime_ratio\ng,0,1,squad,1e300\n",
            "column 'runtime_ratio' row 0: 1e+300 is outside (0, 1e+06]",
        ),
        ("group,start_time,end_time,workload,runtime_ratio\ng,x,1,squad,1\n", "column 'start_time' row 0"),
        (
            "group,start_time,end_time,workload,runtime_ratio\ng,0,1,squad,1\ng,1,2,imagenet,1\n",
            "more than one workload",
        ),
        ("group,start_time,end_time,workload,runtime_ratio\n", "no rows"),
        ("group,start_time,end_time,workload,runtime_ratio\ng,0,1,nosuch,1\n", "unknown workload 'nosuch'"),
    ],
)
def test_malformed_arrival_tables(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    table = tmp_path / "arrivals.csv"
    table.write_text(content)
    out = tmp_path / "runs.parquet"
    args = sim_args(tiny_traces, "--arrivals", str(table), "--seeds", "1")
    _fails([*args, "--out", str(out)], capsys, message, out)


def test_missing_arrival_table_and_runs_table(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    args = sim_args(tiny_traces, "--arrivals", str(tmp_path / "none.csv"))
    _fails([*args, "--out", str(out)], capsys, "no such arrival table", out)
    summary = tmp_path / "s.csv"
    _fails(
        ["summarize", str(tmp_path / "none.parquet"), "--out", str(summary)], capsys, "no such file", summary
    )
    _fails(
        ["summarize", str(tiny_traces / "train.parquet"), "--out", str(summary)],
        capsys,
        "expected 'runs'",
        summary,
    )


USER_POLICY = """\
from zeus_bench.sim.policies import Decision, Outcome, Policy, register_policy


@register_policy
class EpsilonGreedy(Policy):
    name = "test-eps-greedy"
    randomized = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.costs = {}  # batch size -> costs of successful tries
        self.limits = {}  # batch size -> JIT limit

    def predict(self):
        sizes = [int(b) for b in self.ctx.job.batch_sizes]
        tried = {b: sum(c) / len(c) for b, c in self.costs.items() if c}
        if not tried or self.ctx.rng.random() < 0.1:
            b = sizes[int(self.ctx.rng.integers(len(sizes)))] if tried else self.ctx.job.b0
        else:
            b = min(tried, key=tried.get)
        return Decision(b, self.limits.get(b))

    def observe(self, outcome):
        if outcome.profiled:
            self.limits[outcome.batch_size] = outcome.power_limit_w
        if outcome.reached:
            self.costs.setdefault(outcome.batch_size, []).append(outcome.cost)
"""


def test_user_policy_module(tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "my_policies.py"
    module.write_text(USER_POLICY)
    out = tmp_path / "runs.parquet"
    args = sim_args(tiny_traces, "--workloads", "squad", "--seeds", "1-2")
    args += ["--policy-module", str(module), "--policies", "test-eps-greedy,baseline", "--jobs", "2"]
    assert main([*args, "--out", str(out)]) == 0
    runs = read_table(out, "runs")
    mine = runs[runs.policy == "test-eps-greedy"]
    assert mine["recurrence"].max() == 2 * 3 * 2 and mine["batch_size"].nunique() > 1  # 2 x |B| x |P|
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    other = tmp_path / "other.parquet"
    _fails(
        [*args[:-6], "--policy-module", str(bad), "--out", str(other)],
        capsys,
        "failed to import: RuntimeError: boom",
        other,
    )
    _fails(
        [*args[:-6], "--policy-module", "no_such_module_xyz", "--out", str(other)],
        capsys,
        "No module named",
        other,
    )


def test_summarize_prints_the_settings_of_each_row(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    args = sim_args(
        tiny_traces, "--workloads", "squad", "--policies", "zeus,baseline,oracle", "--seeds", "1-2"
    )
    assert main([*args, "--eta", "0.25,1", "--beta", "2,inf", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["summarize", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "E% all" in line)
    assert "eta" in header.split() and "beta" in header.split() and "failed" in header.split()
    zeus = [line.split() for line in lines if " zeus " in f" {line} "]
    settings = {(cells[3], cells[4]) for cells in zeus}
    assert settings == {("0.25", "2"), ("0.25", "inf"), ("1", "2"), ("1", "inf")}


def test_bandit_knobs_reach_the_replay_and_the_provenance(zeus_traces: Path, tmp_path: Path) -> None:
    base = sim_args(zeus_traces, "--workloads", "squad", "--policies", "zeus", "--seeds", "1-3")
    assert main([*base, "--out", str(tmp_path / "a.parquet")]) == 0
    knobs = [
        "--prior-mean=-2e5",
        "--prior-precision",
        "1e-9",
        "--prune-rounds",
        "3",
    ]  # = for a negative value
    assert main([*base, *knobs, "--out", str(tmp_path / "b.parquet")]) == 0
    a, b = read_table(tmp_path / "a.parquet", "runs"), read_table(tmp_path / "b.parquet", "runs")
    assert a["batch_size"].tolist() != b["batch_size"].tolist()
    assert read_metadata(tmp_path / "b.parquet")["bandit_knobs"] == {
        "prior_mean": -2e5, "prior_precision": 1e-9, "prune_rounds": 3,
    }  # fmt: skip


def test_summarize_shows_regret_in_percent_with_the_oracle_at_zero(
    zeus_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    args = sim_args(zeus_traces, "--workload", "squad", "--policies", "zeus,oracle", "--seeds", "1-3")
    assert main([*args, "--out", str(out)]) == 0  # --workload: an alias of --workloads
    capsys.readouterr()
    assert main(["summarize", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("regret %" in line for line in lines)
    rows = {line.split()[2]: line.split() for line in lines if line.startswith("v100")}
    # Percent of the oracle's expected cost, the oracle's own 0 (not a negative number of joules).
    assert next(cell for cell in rows["oracle"] if "±" in cell).startswith("0.0±")
    summary = main(["summarize", str(out), "--format", "csv"])
    assert summary == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    zeus = table[table.policy == "zeus"].iloc[0]
    regret = f"{zeus['regret_vs_oracle_cum_pct_mean']:.1f}±"
    assert zeus["regret_vs_oracle_cum_pct_mean"] > 0
    assert next(cell for cell in rows["zeus"] if "±" in cell).startswith(regret)
