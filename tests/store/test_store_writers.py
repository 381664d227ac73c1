"""The store's writers, pinned before store.py splits (design §6.2: zeus_bench/store/).

Each test here was seen failing against a single-point bug: the column-table writer without the
missing-value check of non-nullable columns, ``write_table`` writing in place instead of through
a temporary file, a writer leaving its temporary file after a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import ColumnTable, TableWriter, read_columns, read_table, write_table


def power_columns(n: int = 3) -> dict[str, Any]:
    return {
        "gpu": "h200",
        "dataset": "imagenet",
        "network": "resnet50",
        "optimizer": "adadelta",
        "batch_size": np.array([64, 128, 256][:n], dtype=np.int64),
        "power_limit_w": 700.0,
        "time_per_epoch_s": np.array([400.0, 380.5, 370.25][:n]),
        "avg_power_w": np.array([600.0, 610.0, 650.5][:n]),
    }


def test_column_table_round_trip(tmp_path: Path) -> None:
    with TableWriter(tmp_path / "p.parquet", "power") as out:
        out.write(ColumnTable(3, power_columns()))
    df = read_table(tmp_path / "p.parquet", "power")
    assert df["batch_size"].tolist() == [64, 128, 256] and df["gpu"].tolist() == ["h200"] * 3
    assert df["avg_power_w"].tolist() == [600.0, 610.0, 650.5] and df["num_gpus"].isna().all()
    cols = read_columns(tmp_path / "p.parquet", "power", ["time_per_epoch_s", "power_limit_w"])
    assert cols["time_per_epoch_s"].tolist() == [400.0, 380.5, 370.25]
    assert cols["power_limit_w"].tolist() == [700.0] * 3


@pytest.mark.parametrize(
    ("column", "value", "row"),
    [
        ("avg_power_w", np.array([600.0, np.nan, 650.0]), 1),  # a NaN in a non-nullable float
        ("time_per_epoch_s", None, 0),  # a whole non-nullable column missing
        ("power_limit_w", float("nan"), 0),  # one missing value for every row
    ],
)
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_column_table_refuses_missing_values_of_non_nullable_columns(
    tmp_path: Path, column: str, value: Any, row: int, suffix: str
) -> None:
    columns = power_columns() | {column: value}
    path = tmp_path / f"p{suffix}"
    with (
        pytest.raises(TraceFormatError, match=rf"column '{column}' row {row}: missing value"),
        TableWriter(path, "power") as out,
    ):
        out.write(ColumnTable(3, columns))
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_column_table_accepts_missing_values_of_nullable_columns(tmp_path: Path) -> None:
    columns = power_columns() | {"samples_per_s": np.array([1.0, np.nan, 3.0]), "num_gpus": None}
    with TableWriter(tmp_path / "p.parquet", "power") as out:
        out.write(ColumnTable(3, columns))
    df = read_table(tmp_path / "p.parquet", "power")
    assert df["samples_per_s"].isna().tolist() == [False, True, False]


def power_frame(limit: float = 700.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "gpu": ["h200", "h200"],
            "dataset": ["imagenet", "imagenet"],
            "network": ["resnet50", "resnet50"],
            "optimizer": ["adadelta", "adadelta"],
            "batch_size": [128, 256],
            "power_limit_w": [limit, limit],
            "time_per_epoch_s": [410.5, 380.25],
            "avg_power_w": [612.0, 655.5],
        }
    )


def _failing_parquet_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make Parquet writes fail half-way: some bytes reach the file, then the disk fills."""

    def write_table(table: Any, where: Any, *args: Any, **kwargs: Any) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", write_table)


def test_write_table_failing_mid_write_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_table(power_frame(), tmp_path / "p.parquet", "power")
    before = path.read_bytes()
    _failing_parquet_write(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        write_table(power_frame(600.0), path, "power")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert read_table(path, "power")["power_limit_w"].tolist() == [700.0, 700.0]
    assert [p.name for p in tmp_path.iterdir()] == ["p.parquet"]


def test_write_table_failing_into_a_new_file_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_parquet_write(monkeypatch)
    with pytest.raises(OSError):
        write_table(power_frame(), tmp_path / "sub" / "p.parquet", "power")
    assert not (tmp_path / "sub").exists()  # nothing left: not the file, nor the folder it made


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_table_writer_failing_mid_stream_keeps_the_previous_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"p{suffix}"
    with TableWriter(path, "power") as out:
        out.write(power_frame())
    before = path.read_bytes()
    with pytest.raises(TraceFormatError, match="duplicate rows"), TableWriter(path, "power") as out:
        out.write(power_frame(600.0))  # a good frame reaches the temporary file...
        out.write(power_frame(600.0).assign(batch_size=[64, 64]))  # ...then a bad one
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("time_per_epoch_s", float("inf"), "non-finite value"),
        ("avg_power_w", 0.0, "must be > 0, got 0.0"),
        ("power_limit_w", -5.0, "must be > 0, got -5.0"),
        ("batch_size", 2.5, "must be an integer, got 2.5"),
        ("avg_power_uncertainty_w", -1.0, "must be >= 0, got -1.0"),
        ("avg_power_w", float("nan"), "missing value"),
    ],
)
@pytest.mark.parametrize("row", [1, 2])
def test_both_writers_name_the_row_of_a_bad_value(
    tmp_path: Path, column: str, value: float, words: str, row: int
) -> None:
    columns = power_columns() | {"avg_power_uncertainty_w": np.array([1.0, 2.0, 3.0])}
    columns = {c: (v.astype(float) if isinstance(v, np.ndarray) else v) for c, v in columns.items()}
    columns[column] = np.broadcast_to(np.array(columns[column], dtype=float), (3,)).copy()
    columns[column][row] = value
    message = f"column '{column}' row {row}: {words}".replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(TraceFormatError, match=message), TableWriter(tmp_path / "p.parquet", "power") as out:
        out.write(ColumnTable(3, columns))
    frame = pd.DataFrame({c: (v if isinstance(v, np.ndarray) else [v] * 3) for c, v in columns.items()})
    with pytest.raises(TraceFormatError, match=message):
        write_table(frame, tmp_path / "q.parquet", "power")
    assert list(tmp_path.iterdir()) == []


def test_arrow_number_helper_honours_slice_offsets() -> None:
    # read_columns reads numbers straight from Arrow buffers (no pandas): a sliced array's values
    # start at its offset (the Arrow helpers go to store/columns.py in the redesign)
    import pyarrow as pa

    from zeus_bench.store.columns import _numbers

    values = pa.array([1.0, 2.0, 3.0, 4.0, 5.0]).slice(2, 2)
    assert _numbers(values).tolist() == [3.0, 4.0]
    assert _numbers(pa.array([7, 8, 9], type=pa.int64()).slice(1)).tolist() == [8, 9]


def _power_frame() -> pd.DataFrame:
    columns = power_columns() | {"avg_power_uncertainty_w": np.array([1.0, 2.0, 3.0])}
    return pd.DataFrame({c: (v if isinstance(v, np.ndarray) else [v] * 3) for c, v in columns.items()})


def test_numbers_already_of_their_kind_are_kept_as_they_are() -> None:
    from zeus_bench.store.frames import validate

    frame = _power_frame()
    fast = validate(frame, "power")
    generic = validate(frame.astype(object), "power")  # every value through the generic path
    pd.testing.assert_frame_equal(fast, generic, check_exact=True)
    for name in ("batch_size", "time_per_epoch_s"):  # kept, not copied (copy-on-write)
        assert np.shares_memory(fast[name].to_numpy(), frame[name].to_numpy())
    fast.loc[0, "time_per_epoch_s"] = 1.0
    assert frame.loc[0, "time_per_epoch_s"] == 400.0  # the caller's frame untouched


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [("batch_size", -64, "must be > 0, got -64.0"), ("time_per_epoch_s", float("inf"), "non-finite value")],
)
def test_numbers_of_their_kind_that_fail_a_check_name_the_row_as_before(
    column: str, value: float, words: str
) -> None:
    from zeus_bench.store.frames import validate

    frame = _power_frame()
    frame.loc[2, column] = value
    assert frame[column].dtype.kind in "if"  # (the kept kind: int64 batch sizes, float times)
    with pytest.raises(TraceFormatError, match=f"column '{column}' row 2: {words}"):
        validate(frame, "power")
