"""Every recurrence is a row of the ``runs`` table, and old tables upgrade to the ``ran`` column."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from zeus_bench.core.cost import Cost
from zeus_bench.sim.grid import Grid, ReplayOptions, plan, simulate
from zeus_bench.store import METADATA_KEY, read_table, write_table
from zeus_bench.traces.jobs import TraceSet


def test_a_recurrence_in_which_no_try_ran_is_one_row(zeus_traces: Path) -> None:
    # Grid search on V100 movielens-1m: in recurrence 2 the smallest batch size at the highest
    # limit cannot afford one epoch within 2 x the first recurrence's cost, 20 times.
    runs = simulate(
        plan(
            TraceSet(zeus_traces), "v100", Grid(["movielens-1m"], ["grid-search"], [1, 2], [Cost(0.5)], [2.0])
        )
    )
    assert (runs.groupby("seed")["recurrence"].nunique() == 182).all()
    missed = runs[~runs["ran"]]
    assert missed[["seed", "recurrence", "attempt", "batch_size", "reached", "epochs"]].values.tolist() == [
        [1, 2, 20, 16, False, 0.0],
        [2, 2, 20, 16, False, 0.0],
    ]
    assert (missed[["energy_j", "time_s", "cost"]] == 0.0).all().all()
    assert missed["power_limit_w"].notna().all()
    # Every other row is a try that ran.
    assert (runs.loc[runs["ran"], "epochs"] > 0).all()


def test_runs_tables_of_version_1_read_with_ran_true(zeus_traces: Path, tmp_path: Path) -> None:
    runs = simulate(
        plan(
            TraceSet(zeus_traces),
            "v100",
            Grid(["squad"], ["zeus"], [1], [Cost(0.5)], [2.0]),
            ReplayOptions(5),
        )
    )
    path = write_table(runs, tmp_path / "runs.parquet", "runs")
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    meta["schema_version"] = 1
    old = table.drop_columns(["ran"]).replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()})
    pq.write_table(old, tmp_path / "v1.parquet")
    upgraded = read_table(tmp_path / "v1.parquet", "runs")
    assert upgraded["ran"].tolist() == [True] * len(runs)
    assert upgraded.drop(columns="ran").equals(read_table(path, "runs").drop(columns="ran"))
