"""``simulate``'s streamed output: Parquet row groups or CSV by the suffix, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.grid import Grid, ReplayOptions, Task, iter_simulate, plan, simulate
from zeus_bench.store import TableWriter, read_table
from zeus_bench.traces.jobs import TraceSet


def _tasks(traces: Path) -> list[Task]:
    return plan(
        TraceSet(traces),
        "v100",
        Grid(None, ["zeus", "baseline"], range(1, 4), [Cost(0.5)], [2.0]),
        ReplayOptions(6),
    )


def test_streamed_frames_make_the_same_table(tiny_traces: Path, tmp_path: Path) -> None:
    tasks = _tasks(tiny_traces)
    whole = simulate(tasks)
    frames = list(iter_simulate(tasks, chunk_rows=5))  # a frame every few replays
    assert len(frames) > len(tasks)
    out = tmp_path / "runs.parquet"
    with TableWriter(out, "runs", {"command": "test"}) as writer:
        for frame in frames:
            writer.write(frame)
    assert writer.rows == len(whole)
    assert pq.ParquetFile(out).metadata.num_row_groups == len(frames)
    back = read_table(out, "runs")
    assert back.equals(read_table(_write_whole(whole, tmp_path / "whole.parquet"), "runs"))
    assert back.attrs["zeus_bench"]["command"] == "test"


def _write_whole(df: pd.DataFrame, path: Path) -> Path:
    from zeus_bench.store import write_table

    return write_table(df, path, "runs")


def test_csv_by_suffix(tiny_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    args = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--seeds", "1-2", "--recurrences", "4"]
    assert main([*args, "--out", str(out)]) == 0
    csv = pd.read_csv(out)
    assert main([*args, "--out", str(tmp_path / "runs.parquet")]) == 0
    parquet = read_table(tmp_path / "runs.parquet", "runs")
    assert len(csv) == len(parquet) > 0
    assert list(csv.columns) == list(parquet.columns)
    assert csv["cost"].tolist() == parquet["cost"].tolist()  # floats round-trip exactly


def test_other_suffix_refused_before_any_work(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "runs.json"
    rc = main(["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--seeds", "1", "--out", str(out)])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unsupported suffix '.json'" in err
    assert not out.parent.exists()
    with pytest.raises(ConfigError, match="unsupported output suffix"):
        TableWriter(tmp_path / "runs.txt", "runs")


def test_failure_midway_leaves_nothing(tiny_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    frames = iter_simulate(_tasks(tiny_traces), chunk_rows=5)
    with pytest.raises(RuntimeError, match="stop"), TableWriter(out, "runs") as writer:
        writer.write(next(frames))
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_stream_still_writes_a_readable_table(tmp_path: Path) -> None:
    with TableWriter(tmp_path / "runs.parquet", "runs"):
        pass
    assert read_table(tmp_path / "runs.parquet", "runs").empty
