"""Properties of the table store (Hypothesis): any valid table round-trips through both writers;
any one invalid value is refused and nothing is written (a previous file stays as it was)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import ColumnTable, TableWriter, read_table, write_table

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

TEXT = ("gpu", "dataset", "network", "optimizer")
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
positive = st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False)


@st.composite
def power_tables(draw: Any) -> pd.DataFrame:
    """A valid ``power`` table: distinct keys, positive finite numbers, some optional columns."""
    sizes = draw(st.lists(st.integers(1, 2**20), min_size=0, max_size=8, unique=True))
    n = len(sizes)
    col = {
        "gpu": draw(st.lists(text, min_size=n, max_size=n)),
        "dataset": [draw(text)] * n,
        "network": ["net"] * n,
        "optimizer": ["sgd"] * n,
        "batch_size": sizes,
        "power_limit_w": draw(st.lists(positive, min_size=n, max_size=n)),
        "time_per_epoch_s": draw(st.lists(positive, min_size=n, max_size=n)),
        "avg_power_w": draw(st.lists(positive, min_size=n, max_size=n)),
    }
    if draw(st.booleans()):
        col["samples_per_s"] = draw(st.lists(st.one_of(st.none(), positive), min_size=n, max_size=n))
    if draw(st.booleans()):
        col["observe_mode"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    df = pd.DataFrame(col)
    df["batch_size"] = df["batch_size"].astype("int64")
    for c in ("power_limit_w", "time_per_epoch_s", "avg_power_w", "samples_per_s"):
        if c in df:
            df[c] = df[c].astype(float)
    return df


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        x, y = a[c].tolist(), b[c].tolist()
        assert len(x) == len(y)
        for u, v in zip(x, y, strict=True):
            assert (pd.isna(u) and pd.isna(v)) or u == v, (c, u, v)


@SETTINGS
@given(power_tables())
def test_any_valid_table_round_trips_through_both_writers(tmp_path: Path, df: pd.DataFrame) -> None:
    expected = read_table(write_table(df, tmp_path / "a.parquet", "power"), "power")
    assert len(expected) == len(df)
    assert expected["batch_size"].tolist() == df["batch_size"].tolist()
    assert expected["avg_power_w"].tolist() == df["avg_power_w"].tolist()
    assert expected["gpu"].tolist() == df["gpu"].tolist()
    columns: dict[str, Any] = {}
    for c in df.columns:
        if c in TEXT:
            columns[c] = np.array(df[c].tolist(), dtype=object)
        elif c == "observe_mode":
            columns[c] = np.array(df[c].tolist(), dtype=bool)
        elif c == "batch_size":
            columns[c] = np.array(df[c].tolist(), dtype=np.int64)
        else:
            columns[c] = df[c].to_numpy(dtype=float, na_value=np.nan)
    with TableWriter(tmp_path / "b.parquet", "power") as out:
        out.write(ColumnTable(len(df), columns))
    _same(read_table(tmp_path / "b.parquet", "power"), expected)


#: One bad value: (column, value, the message's words)
BAD = [
    ("avg_power_w", 0.0, "must be > 0"),
    ("avg_power_w", -1.5, "must be > 0"),
    ("time_per_epoch_s", math.inf, "non-finite"),
    ("power_limit_w", math.nan, "missing value"),
    ("batch_size", 0, "must be > 0"),
    ("batch_size", 2.5, "must be an integer"),
    ("samples_per_s", -3.0, "must be > 0"),
    ("gpu", None, "missing value"),
]


@SETTINGS
@given(power_tables().filter(lambda d: len(d) > 0), st.sampled_from(BAD), st.data())
def test_any_invalid_value_is_refused_and_nothing_written(
    tmp_path: Path, df: pd.DataFrame, bad: tuple[str, Any, str], data: Any
) -> None:
    column, value, words = bad
    row = data.draw(st.integers(0, len(df) - 1))
    broken = df.copy()
    if column not in broken:
        broken[column] = 1.0
    broken[column] = broken[column].astype(object)
    broken.loc[row, column] = value
    folder = tmp_path / f"case-{column}-{row}"
    path = folder / "p.parquet"
    previous = write_table(df, path, "power").read_bytes()
    with pytest.raises(TraceFormatError, match=f"column '{column}' row {row}: {words}"):
        write_table(broken, path, "power")
    assert path.read_bytes() == previous and [p.name for p in folder.iterdir()] == ["p.parquet"]
    if column == "gpu":
        return  # a text column of a ColumnTable has no missing value to hold
    arrays = {
        c: np.array(broken[c].tolist(), dtype=object) if c in TEXT else broken[c].to_numpy(dtype=float)
        for c in broken.columns
        if c != "observe_mode"
    }
    with (
        pytest.raises(TraceFormatError, match=f"column '{column}' row {row}: {words}"),
        TableWriter(path, "power") as out,
    ):
        out.write(ColumnTable(len(broken), arrays))
    assert path.read_bytes() == previous and [p.name for p in folder.iterdir()] == ["p.parquet"]
