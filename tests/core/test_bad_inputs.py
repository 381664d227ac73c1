"""Bad inputs of issue 23, each class refused in one line with exit status 2 and nothing written."""

from __future__ import annotations

import shutil

import pytest

from zeus_bench.cli.main import main
from zeus_bench.store import read_table, write_table


def _refused(capsys: pytest.CaptureFixture[str], args: list[str], *expected: str) -> str:
    capsys.readouterr()
    assert main(args) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in expected:
        assert text in err, err
    return err


def test_empty_power_trace_given_to_potential(tiny_traces, tmp_path, capsys):
    traces = tmp_path / "traces"
    shutil.copytree(tiny_traces, traces)
    power = read_table(traces / "power-v100.parquet", "power")
    write_table(power.head(0), traces / "power-v100.parquet", "power")
    out = tmp_path / "p.csv"
    args = ["potential", "--traces", str(traces), "--gpu", "v100", "--format", "csv", "--out", str(out)]
    _refused(capsys, args, "power-v100.parquet", "nothing to analyse")
    assert not out.exists()


def test_duplicated_policies_in_simulate(tiny_traces, tmp_path, capsys):
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus,baseline,zeus"]
    _refused(capsys, [*args, "--seeds", "1", "--out", str(out)], "--policies: zeus listed twice")
    assert not out.exists()


def test_synth_arrivals_with_huge_counts_is_bounded(tmp_path, capsys):
    out = tmp_path / "arrivals.csv"
    args = ["synth-arrivals", "--workloads", "squad,cifar100", "--groups", "1000000"]
    _refused(capsys, [*args, "--jobs-per-group", "1000000", "--out", str(out)], "at most 5,000,000")
    assert not out.exists()


def test_help_of_synth_arrivals_and_sweep_merge_describe_them():
    from zeus_bench.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert "arrival table" in sub.choices["synth-arrivals"].description
    assert "shards" in sub.choices["sweep-merge"].description


def test_power_trace_mixing_gpus_given_to_pareto(tiny_traces, tmp_path, capsys):
    traces = tmp_path / "traces"
    shutil.copytree(tiny_traces, traces)
    power = read_table(traces / "power-v100.parquet", "power")
    power.loc[power.index[::2], "gpu"] = "a40"
    write_table(power, traces / "power-v100.parquet", "power")
    out = tmp_path / "pareto.csv"
    args = [
        "pareto",
        "--traces",
        str(traces),
        "--gpu",
        "v100",
        "--workload",
        "squad",
        "--all",
        "--out",
        str(out),
    ]
    _refused(capsys, args, "power-v100.parquet: column gpu holds a40 besides v100")
    assert not out.exists()


WORKLOAD = """workloads:
  mysquad:
    dataset: squad
    network: bert_base_uncased
    optimizer: adamw
    target_metric: 84.0
    metric: validation F1
    metric_direction: max
    default_batch_size: 32
    max_epochs: {epochs}
"""


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not a text (UTF-8 YAML) workload file"),
        (WORKLOAD.format(epochs=".inf").encode(), "max_epochs: must be an integer, got inf"),
        (WORKLOAD.format(epochs="1000000000").encode(), "max_epochs 1000000000 is above 100,000"),
    ],
)
def test_bad_workloads_file(tiny_traces, tmp_path, capsys, content, expected):
    path = tmp_path / "workloads.yaml"
    path.write_bytes(content)
    out = tmp_path / "p.csv"
    args = ["potential", "--traces", str(tiny_traces), "--gpu", "v100", "--workloads-file", str(path)]
    _refused(capsys, [*args, "--format", "csv", "--out", str(out)], str(path), expected)
    assert not out.exists()


def test_drift_table_may_name_a_workload_of_the_workloads_file(tiny_traces, tmp_path, capsys):
    workloads = tmp_path / "workloads.yaml"
    workloads.write_text(WORKLOAD.format(epochs=10))
    drift = tmp_path / "drift.csv"
    drift.write_text("workload,batch_size,recurrence,epoch_factor\nmysquad,32,2,1.5\n")
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--workloads", "mysquad"]
    args += ["--workloads-file", str(workloads), "--drift", str(drift), "--policies", "zeus,baseline"]
    assert main([*args, "--seeds", "1", "--out", str(out)]) == 0, capsys.readouterr().err
    assert read_table(out, "runs")["workload"].eq("mysquad").all()
    # A name in neither is still refused, naming the file.
    drift.write_text("workload,batch_size,recurrence,epoch_factor\nnosuch,32,2,1.5\n")
    out.unlink()
    _refused(capsys, [*args, "--seeds", "1", "--out", str(out)], str(drift), "unknown workload 'nosuch'")
    assert not out.exists()


def test_summarize_reads_every_format_simulate_writes(tiny_traces, tmp_path, capsys):
    tables = {}
    for suffix in (".parquet", ".csv"):
        runs = tmp_path / f"runs{suffix}"
        args = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus,baseline"]
        assert main([*args, "--seeds", "1-2", "--out", str(runs)]) == 0
        out = tmp_path / f"summary-from{suffix}.csv"
        assert main(["summarize", str(runs), "--format", "csv", "--out", str(out)]) == 0, (
            capsys.readouterr().err
        )
        tables[suffix] = out.read_text()
    assert tables[".csv"] == tables[".parquet"] and tables[".csv"].count("\n") > 2


def test_synth_arrivals_bound_admits_the_cluster_benchmark(tmp_path, capsys):
    """Issue 21's benchmark table (six workloads x 10,000 groups x 50 submissions = 3,000,000 rows) is within
    the bound, and the bound is on the product: each count within it, their product one row over, is refused."""
    from zeus_bench.cli.sim_args import MAX_SUBMISSIONS

    assert MAX_SUBMISSIONS >= 6 * 10_000 * 50
    out = tmp_path / "arrivals.csv"
    args = ["synth-arrivals", "--workloads", "squad", "--groups", str(MAX_SUBMISSIONS // 2 + 1)]
    _refused(capsys, [*args, "--jobs-per-group", "2", "--out", str(out)], "at most 5,000,000")
    assert not out.exists()
