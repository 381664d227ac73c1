"""Text columns given as codes (store.Coded): written as the same strings, checked, keyed by code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import Coded, ColumnTable, ColumnValues, TableWriter, read_columns, read_table

N = 12
LABELS = ["g-b", "g-a", "g-c"]  # not sorted: a code is an index, not a rank
CODES = np.array([0, 0, 1, 1, 1, 2, 2, 0, 1, 2, 2, 0])


def _runs(group: ColumnValues) -> dict[str, ColumnValues]:
    return {
        "gpu": "v100", "workload": "squad", "policy": "zeus", "seed": 1, "eta": 0.5, "beta": 2.0,
        "recurrence": np.arange(1, N + 1), "attempt": np.ones(N, dtype=np.int64), "batch_size": np.full(N, 32),
        "power_limit_w": np.full(N, 250.0), "epochs": np.linspace(1.0, 9.0, N), "energy_j": np.linspace(1.0, 2.0, N),
        "time_s": np.full(N, 3.0), "cost": np.full(N, 4.0), "reached": np.arange(N) % 2 == 0,
        "profiled": np.zeros(N, dtype=bool), "ran": np.ones(N, dtype=bool), "expected_energy_j": np.full(N, np.nan),
        "expected_time_s": np.full(N, 1.0), "expected_cost": np.full(N, 1.0), "window": 0, "num_gpus": 1,
        "max_power_w": 250.0, "group": group,
    }  # fmt: skip


def _write(path: Path, group: ColumnValues) -> None:
    with TableWriter(path, "runs") as out:
        out.write(ColumnTable(N, _runs(group)))


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_coded_text_writes_what_strings_write(tmp_path: Path, suffix: str) -> None:
    strings = np.array(LABELS, dtype=object)[CODES]
    _write(tmp_path / f"coded{suffix}", Coded(CODES, LABELS))
    _write(tmp_path / f"plain{suffix}", strings)
    if suffix == ".csv":
        assert (tmp_path / "coded.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
        return
    coded = pq.read_table(tmp_path / "coded.parquet")
    assert coded.schema.field("group").type == pa.large_string()  # the schema's text type, not a dictionary
    assert coded.column("group").to_pylist() == strings.tolist()
    frame = read_table(tmp_path / "coded.parquet", "runs")
    assert frame["group"].tolist() == strings.tolist()
    assert frame.equals(read_table(tmp_path / "plain.parquet", "runs"))
    assert pd.read_parquet(tmp_path / "coded.parquet")["group"].tolist() == strings.tolist()
    assert read_columns(tmp_path / "coded.parquet", "runs", ["group"])["group"].tolist() == strings.tolist()
    # Dictionary pages for text, plain pages for numbers.
    chunks = pq.ParquetFile(tmp_path / "coded.parquet").metadata.row_group(0)
    encodings = {
        chunks.column(i).path_in_schema: chunks.column(i).encodings for i in range(chunks.num_columns)
    }
    assert "RLE_DICTIONARY" in encodings["group"]
    assert "RLE_DICTIONARY" not in encodings["energy_j"]


def test_a_duplicate_key_in_coded_rows_names_the_text(tmp_path: Path) -> None:
    columns = _runs(Coded(np.zeros(N, dtype=np.int64), LABELS))
    columns["recurrence"] = np.ones(N, dtype=np.int64)
    match = r"duplicate rows for key \(.*group=g-b, recurrence=1"
    with pytest.raises(TraceFormatError, match=match), TableWriter(tmp_path / "r.parquet", "runs") as out:
        out.write(ColumnTable(N, columns))
    # Distinct labels at distinct codes are distinct keys.
    _write(tmp_path / "ok.parquet", Coded(np.arange(N) % 2, ["x", "y"]))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("group", Coded(CODES, ["g-b", "g-b", "g-c"]), "distinct text labels"),
        ("group", Coded(CODES + 1, LABELS), "distinct text labels"),
        ("group", Coded(CODES - 1, LABELS), "distinct text labels"),
        ("group", Coded(CODES.astype(float), LABELS), "distinct text labels"),
        ("group", Coded(CODES[:5], LABELS), "expected 12 codes"),
        ("group", Coded(CODES, ["a", 2, "c"]), "distinct text labels"),  # type: ignore[list-item]
        ("batch_size", Coded(CODES, LABELS), "distinct text labels"),
    ],
)
def test_bad_codes_are_one_error_naming_the_column(
    tmp_path: Path, column: str, value: Coded, message: str
) -> None:
    columns = {**_runs(Coded(CODES, LABELS)), column: value}
    with (
        pytest.raises(TraceFormatError, match=message) as info,
        TableWriter(tmp_path / "r.parquet", "runs") as out,
    ):
        out.write(ColumnTable(N, columns))
    assert repr(column) in str(info.value)
    assert not (tmp_path / "r.parquet").exists()


@pytest.mark.parametrize("failing", [1, 2, 3])  # seen at the next write, or at the end of the block (3)
def test_a_row_group_failing_in_the_background_fails_the_block_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    real = pq.ParquetWriter.write_table
    calls: list[int] = []

    def flaky(self: pq.ParquetWriter, table: pa.Table, *args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == failing:
            raise OSError("disk full")
        real(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", flaky)
    with pytest.raises(OSError, match="disk full"), TableWriter(tmp_path / "r.parquet", "runs") as out:
        for seed in (1, 2, 3):
            out.write(ColumnTable(N, {**_runs(Coded(CODES, LABELS)), "seed": seed}))
    assert list(tmp_path.iterdir()) == []
    assert len(calls) == failing  # nothing written after a failure is seen
