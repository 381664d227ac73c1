"""The arrival table as a schema kind, read from Parquet slice by slice (sim/scenarios/arrival_table.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.scenarios import arrival_table
from zeus_bench.sim.scenarios.arrivals import (
    ARRIVAL_COLUMNS,
    read_arrivals,
    synthetic_arrivals,
    validate_arrivals,
)
from zeus_bench.store import get_schema


def test_the_schema_kind_states_the_columns_and_their_checks() -> None:
    schema = get_schema("arrivals")
    assert tuple(schema.names) == ARRIVAL_COLUMNS
    checks = {c.name: c.checks for c in schema.columns}
    assert checks["runtime_ratio"] == ("finite", "positive")
    assert checks["start_time"] == checks["end_time"] == ("finite",)
    assert {c.name: c.dtype for c in schema.columns}["group"] == "str"


def _shuffled(seed: int) -> pd.DataFrame:
    table = synthetic_arrivals(["imagenet", "squad"], 7, 9, np.random.default_rng(seed), overlap=0.6)
    plain = table.astype({"group": str, "workload": str})
    return plain.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def test_parquet_in_many_slices_reads_as_the_frame_validates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = _shuffled(4)
    path = tmp_path / "a.parquet"
    # Small row groups and slices: each slice has its own dictionary, in its own order.
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=10)
    monkeypatch.setattr(arrival_table, "_SLICE_ROWS", 7)
    got = read_arrivals(path)
    want = validate_arrivals(df)
    assert got["group"].tolist() == want["group"].tolist() == sorted(want["group"].tolist(), key=str)
    for col in ARRIVAL_COLUMNS:
        assert got[col].astype(object).tolist() == want[col].astype(object).tolist(), col
    # Sorted by (group, start_time), equal to the plain-pandas sort of the input.
    ref = df.sort_values(["group", "start_time"], kind="stable").reset_index(drop=True)
    assert got["start_time"].tolist() == ref["start_time"].tolist()
    assert got["runtime_ratio"].tolist() == ref["runtime_ratio"].tolist()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.drop(columns=["workload"]), "missing column(s) workload"),
        (lambda d: d.assign(start_time=np.where(d.index == 5, np.inf, d["start_time"])), "column 'start_time' row 5: not a finite number"),
        (lambda d: d.assign(end_time=np.where(d.index == 3, d["start_time"], d["end_time"])), "row 3: end_time must be after start_time"),
        (lambda d: d.assign(runtime_ratio=np.where(d.index == 8, 0.0, d["runtime_ratio"])), "column 'runtime_ratio' row 8: 0 is outside (0, 1e+06]"),
        (lambda d: d.assign(group=np.where(d.index == 2, None, d["group"])), "missing group or workload"),
        (lambda d: d.iloc[:0], "no rows"),
    ],
)  # fmt: skip
def test_a_bad_parquet_table_is_one_line_naming_file_and_column(
    tmp_path: Path, change: Callable[[pd.DataFrame], pd.DataFrame], message: str
) -> None:
    path = tmp_path / "bad.parquet"
    change(_shuffled(2)).to_parquet(path, index=False)
    with pytest.raises(TraceFormatError) as err:
        read_arrivals(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_mixed_group_in_parquet_is_named(tmp_path: Path) -> None:
    df = _shuffled(3)
    first = df["group"].iloc[0]
    other = "squad" if df["workload"].iloc[0] == "imagenet" else "imagenet"
    rows = df.index[df["group"] == first]
    df.loc[rows[-1], "workload"] = other
    path = tmp_path / "mixed.parquet"
    df.to_parquet(path, index=False)
    with pytest.raises(TraceFormatError, match=f"group '{first}' has more than one workload"):
        read_arrivals(path)


def test_numeric_group_ids_read_as_text(tmp_path: Path) -> None:
    rows = [(7, 0.0, 1.0, "squad", 1.0), (12, 0.0, 1.0, "squad", 1.0), (7, 2.0, 3.0, "squad", 1.0)]
    path = tmp_path / "n.parquet"
    pd.DataFrame(rows, columns=list(ARRIVAL_COLUMNS)).to_parquet(path, index=False)
    got = read_arrivals(path)
    assert got["group"].tolist() == ["12", "7", "7"]  # text order, as sort_values on str
    assert got["start_time"].tolist() == [0.0, 0.0, 2.0]


def test_columns_are_the_frame_and_a_workloads_rows_in_order(tmp_path: Path) -> None:
    df = _shuffled(5)
    path = tmp_path / "a.parquet"
    df.to_parquet(path, index=False)
    table = arrival_table.read_arrival_columns(path)
    pd.testing.assert_frame_equal(table.frame(), read_arrivals(path))
    assert len(table) == len(df)
    # The workloads in order of first appearance (rows in group order: imagenet's groups first).
    frame = table.frame()
    assert table.workloads() == list(frame["workload"].unique()) == ["imagenet", "squad"]
    squad = table.of_workload("squad")
    want = frame[frame["workload"] == "squad"]
    assert squad.start_time.tolist() == want["start_time"].tolist()
    assert [squad.group_names[c] for c in squad.group] == want["group"].astype(str).tolist()
    assert len(table.of_workload("cifar100")) == 0
    # A frame becomes columns through the same checks (a frame's unsorted rows sorted).
    assert arrival_table.ArrivalColumns.of(df).start_time.tolist() == table.start_time.tolist()


def test_reading_a_parquet_table_as_columns_imports_no_pandas(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "a.parquet"
    table = _shuffled(6)
    # Integer start times and float32 ratios: read from their buffers too, converted to floats.
    table = table.assign(
        start_time=table["start_time"].round().astype("int64"), end_time=table["end_time"] + 10.0
    )
    table.assign(runtime_ratio=table["runtime_ratio"].astype("float32")).to_parquet(path, index=False)
    code = (
        "import sys; from zeus_bench.sim.scenarios.arrival_table import read_arrival_columns; "
        f"t = read_arrival_columns({str(path)!r}); assert 'pandas' not in sys.modules, 'pandas imported'; "
        "print(len(t), t.start_time.dtype, float(t.start_time.sum()), float(t.runtime_ratio.sum()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    got = read_arrivals(path)
    assert out == [
        str(len(table)),
        "float64",
        repr(float(got["start_time"].sum())),
        repr(float(got["runtime_ratio"].sum())),
    ]
    assert set(got["start_time"].tolist()) == {float(v) for v in table["start_time"]}
