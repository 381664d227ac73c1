"""The pandas-free path of the store: tables as NumPy columns, written and read through Arrow.

:class:`ColumnTable` holds rows as columns; :class:`TableWriter` streams frames or column tables
to Parquet (row groups) or CSV with :func:`~zeus_bench.store.frames.write_table`'s checks and
metadata; :func:`read_columns` reads some columns back as checked NumPy arrays. The simulator's
path (``zeus-bench simulate``) runs on these without importing pandas.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.core.fsutil import atomic_path
from zeus_bench.core.provenance import base_provenance
from zeus_bench.store.frames import read_checked, read_table, validate
from zeus_bench.store.schema import METADATA_KEY, Coded, Column, check_numbers, duplicate_row, get_schema

if TYPE_CHECKING:  # pandas is imported where frames are handled: the simulator's path runs without it
    import pandas as pd

log = logging.getLogger(__name__)


#: A column of a :class:`ColumnTable`: a value per row (array, :class:`Coded` text) or for every row.
ColumnValues = np.ndarray | Coded | str | int | float | bool | None

#: Writes Parquet row groups while the caller makes the next rows (Arrow releases the GIL).
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zeus-bench-parquet")
_EMPTY = {"str": object, "int": np.int64, "float": float, "bool": bool}
_ARROW_TYPES = {"str": pa.large_string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}


@dataclass(frozen=True)
class ColumnTable:
    """Rows as columns, without pandas: NumPy arrays, or one value for every row (``None``: missing).

    :class:`TableWriter` validates and writes it as it does a frame (the same checks); the
    simulator's ``runs`` rows take this form so that ``zeus-bench simulate`` need not import pandas.
    """

    rows: int
    columns: Mapping[str, ColumnValues]


def _validated_arrow(table: ColumnTable, kind: str, where: str) -> pa.Table:
    """Validate a :class:`ColumnTable` as :func:`validate` does a frame; returns it as Arrow columns."""
    schema = get_schema(kind)
    names = set(table.columns)
    missing = [c.name for c in schema.columns if c.required and c.name not in names]
    if missing:
        raise TraceFormatError(f"{where}: missing column(s) {', '.join(missing)} for a {kind} table")
    unknown = [c for c in table.columns if c not in schema.names]
    if unknown:
        raise TraceFormatError(f"{where}: unknown column(s) {', '.join(unknown)} for a {kind} table")
    n = table.rows
    arrays: list[pa.Array] = []
    keyed: list[np.ndarray] = []
    for col in schema.columns:
        value = table.columns.get(col.name)
        arrow_type = _ARROW_TYPES[col.dtype]
        if isinstance(value, Coded):  # distinct labels: equal codes, equal text
            codes, labels = value.checked(col.name, col.dtype, n, where)
            arrays.append(_arrow(labels, arrow_type).take(_arrow(codes, pa.int64())))
            keyed += [codes] if col.name in schema.key else []
            continue
        if value is None or not isinstance(value, np.ndarray):
            if value is None and not col.nullable and n:
                raise TraceFormatError(f"{where}: column {col.name!r} row 0: missing value")
            if value is not None:
                arrays.append(_repeated(_check_constant(value, col, where), n, arrow_type))
            else:
                arrays.append(pa.nulls(n, arrow_type))
            continue
        if len(value) != n:
            raise TraceFormatError(f"{where}: column {col.name!r} has {len(value)} rows, expected {n}")
        arrays.append(_arrow(_check_array(value, col, where), arrow_type))
        if col.name in schema.key:
            keyed.append(value)
    if schema.key and keyed:
        row = duplicate_row(keyed)
        if row is not None:
            shown = {c: table.columns[c] for c in schema.key if c in table.columns}
            key = ", ".join(
                f"{c}={v[row] if isinstance(v, np.ndarray | Coded) else v}" for c, v in shown.items()
            )
            raise TraceFormatError(f"{where}: duplicate rows for key ({key})")
    return pa.Table.from_arrays(arrays, names=schema.names)


def _check_constant(value: Any, col: Column, where: str) -> Any:
    """One value for a whole column, checked as the column's values are."""
    if col.dtype == "str":
        if not isinstance(value, str):
            raise TraceFormatError(f"{where}: column {col.name!r} must be text, got {value!r}")
        return value
    return _check_array(np.array([value]), col, where)[0].item()


def _check_array(values: np.ndarray, col: Column, where: str) -> np.ndarray:
    """A column's values checked and typed as :func:`_coerce` does a frame's (NumPy arrays)."""
    name = col.name
    if col.dtype == "str":
        if values.dtype.kind not in "OUT" or not all(isinstance(v, str) for v in values.tolist()):
            raise TraceFormatError(f"{where}: column {name!r} must be text")
        return values
    if col.dtype == "bool":
        if values.dtype != bool:
            raise TraceFormatError(f"{where}: column {name!r} must be boolean, got {values.dtype}")
        return values
    if values.dtype.kind not in "biuf":
        raise TraceFormatError(f"{where}: column {name!r} row 0: not a number: {values[:1].tolist()[0]!r}")
    arr = values.astype(float, copy=False)
    present = ~np.isnan(arr)
    if not col.nullable and not present.all():
        raise TraceFormatError(
            f"{where}: column {name!r} row {int(np.flatnonzero(~present)[0])}: missing value"
        )
    check_numbers(arr, present, col, where)
    if col.dtype == "int":
        return values.astype(np.int64) if values.dtype.kind in "biu" else arr.astype(np.int64)
    return arr


class TableWriter:
    """Write a ``kind`` table frame by frame: Parquet row groups, or CSV rows, by the suffix.

    ``with TableWriter(path, "runs", provenance) as out: out.write(frame)`` holds one frame in
    memory at a time. Each frame is validated as :func:`write_table` validates a table (key
    duplicates within the frame; frames of a stream must not share keys). The file is written
    under a temporary name beside ``path`` and renamed onto it when the block ends without an
    exception: on failure nothing is left, ``path`` included. A ``.parquet`` file carries the
    same metadata as :func:`write_table`'s and reads back with :func:`read_table`. Its row groups
    are written in a background thread, one at a time: a table's arrays must not change after it.

    Raises:
        ConfigError: ``path`` ends in neither ``.parquet`` nor ``.csv``.
    """

    SUFFIXES = (".parquet", ".csv")

    def __init__(self, path: str | Path, kind: str, provenance: Mapping[str, Any] | None = None) -> None:
        """Prepare to write ``path`` (nothing is created until the block is entered)."""
        from zeus_bench.core.errors import ConfigError

        self.path = Path(path)
        if self.path.suffix.lower() not in self.SUFFIXES:
            raise ConfigError(
                f"{self.path}: unsupported output suffix {self.path.suffix or '(none)'!r} (use .parquet or .csv)"
            )
        self.kind = kind
        self.schema = get_schema(kind)
        self.meta = {"kind": kind, "schema_version": self.schema.version, **base_provenance()}
        if provenance:
            self.meta.update(provenance)
        self.rows = 0
        self._atomic: Any = None
        self._tmp: Path | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._pending: Future[None] | None = None  # the row group being written
        self._arrow_schema: pa.Schema | None = None
        self._csv: Any = None

    def __enter__(self) -> TableWriter:
        """Open the temporary file."""
        self._atomic = atomic_path(self.path)
        self._tmp = self._atomic.__enter__()
        return self

    def write(self, df: pd.DataFrame | ColumnTable) -> None:
        """Validate one frame (or :class:`ColumnTable`) and append it (no rows only fix the columns)."""
        assert self._tmp is not None, "use TableWriter as a context manager"
        csv = self.path.suffix.lower() == ".csv"
        if isinstance(df, ColumnTable):
            table = _validated_arrow(df, self.kind, where=str(self.path))
            if not csv:
                self._write_parquet(table)
                return
            df = table.to_pandas()  # CSV text as pandas writes it, whatever the input
        table_df = validate(df, self.kind, where=str(self.path))
        if csv:
            if self._csv is None:
                self._csv = self._tmp.open("w", newline="")
                table_df.to_csv(self._csv, index=False, lineterminator="\n")
            elif len(table_df):
                table_df.to_csv(self._csv, index=False, header=False, lineterminator="\n")
            self.rows += len(table_df)
        else:
            self._write_parquet(
                pa.Table.from_pandas(table_df, schema=self._arrow_schema, preserve_index=False)
            )

    def _write_parquet(self, table: pa.Table) -> None:
        """Append validated rows as a row group (the first call fixes the file's schema and metadata)."""
        assert self._tmp is not None
        if self._parquet is None:
            existing = table.schema.metadata or {}
            meta = {**existing, METADATA_KEY: json.dumps(self.meta, default=str).encode()}
            self._arrow_schema = table.schema.with_metadata(meta)
            text = [c.name for c in self.schema.columns if c.dtype == "str"]  # dictionaries: text only (4x)
            self._parquet = pq.ParquetWriter(self._tmp, self._arrow_schema, use_dictionary=text)
            table = table.replace_schema_metadata(meta)
        if table.num_rows or self.rows == 0:
            if self._pending is not None:
                self._pending.result()  # the previous row group's failure, if any
            self._pending = _BACKGROUND.submit(self._parquet.write_table, table)
        self.rows += table.num_rows

    def _close(self, check: bool = True) -> None:
        """Wait for the last row group and close the file (``check``: raise a failed write's error)."""
        pending, self._pending = self._pending, None
        failed = None if pending is None else pending.exception()  # waits for it
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        if failed is not None and check:
            raise failed

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Finish the file and rename it onto ``path``; on an exception remove it."""
        if exc_type is not None:
            self._close(check=False)
            self._atomic.__exit__(exc_type, exc, tb)
            return
        try:
            if self.rows == 0 and self._parquet is None and self._csv is None:
                empty = {c.name: np.empty(0, _EMPTY[c.dtype]) for c in self.schema.columns if c.required}
                self.write(ColumnTable(0, empty))
            self._close()
        except BaseException as error:
            self._close(check=False)
            self._atomic.__exit__(type(error), error, error.__traceback__)
            raise
        self._atomic.__exit__(None, None, None)
        log.debug("wrote %d %s rows to %s", self.rows, self.kind, self.path)


def read_columns(path: str | Path, kind: str, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Some columns of a ``kind`` table as NumPy arrays, validated as :func:`read_table` does.

    Text comes as object arrays of ``str``; integers as ``int64``, or ``float64`` with NaN for
    missing values when the column is nullable; booleans as ``bool`` (nullable ones as objects,
    ``None`` for missing). A column the file lacks and the schema allows to be absent comes as
    missing values. A file of an older schema version is read through :func:`read_table` (its
    upgrades are written for frames). Without pandas.

    Raises:
        TraceFormatError: as :func:`read_table`; a name that is not a column of ``kind``.
    """
    path = Path(path)
    schema, _, version = read_checked(path, kind)
    unknown = [n for n in names if n not in schema.names]
    if unknown:
        raise TraceFormatError(f"{path}: unknown column(s) {', '.join(unknown)} for a {kind} table")
    if version < schema.version:
        df = read_table(path, kind)
        return {n: _column_values(pa.array(df[n]), schema.column(n)) for n in names}
    try:
        parquet = pq.ParquetFile(path)
        present = set(parquet.schema_arrow.names)
        unknown = [c for c in parquet.schema_arrow.names if c not in schema.names]
        if unknown:
            raise TraceFormatError(f"{path}: unknown column(s) {', '.join(unknown)} for a {kind} table")
        table = parquet.read(columns=[n for n in names if n in present])
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    out: dict[str, np.ndarray] = {}
    for name in names:
        col = schema.column(name)
        if name not in present:
            if col.required:
                raise TraceFormatError(f"{path}: missing column(s) {name} for a {kind} table")
            out[name] = _column_values(pa.nulls(table.num_rows, _ARROW_TYPES[col.dtype]), col)
            continue
        out[name] = _column_values(table.column(name).combine_chunks(), col, str(path))
    keyed = [out[k] for k in schema.key if k in out]
    if schema.key and len(keyed) == len(schema.key):
        row = duplicate_row(keyed)
        if row is not None:
            key = ", ".join(f"{k}={out[k][row]}" for k in schema.key)
            raise TraceFormatError(f"{path}: duplicate rows for key ({key})")
    return out


def _column_values(values: pa.Array, col: Column, where: str = "table") -> np.ndarray:
    """One Arrow column as a checked NumPy array (see :func:`read_columns`)."""
    nulls = values.null_count
    missing = _validity(values) if nulls else None
    if missing is not None and not col.nullable:
        raise TraceFormatError(
            f"{where}: column {col.name!r} row {int(np.flatnonzero(missing)[0])}: missing value"
        )
    everything_missing = nulls == len(values)
    if col.dtype == "str":
        if not (
            pa.types.is_string(values.type) or pa.types.is_large_string(values.type) or everything_missing
        ):
            raise TraceFormatError(f"{where}: column {col.name!r} must be text, got {values.type}")
        return np.array(values.to_pylist(), dtype=object)
    if col.dtype == "bool":
        if not (pa.types.is_boolean(values.type) or everything_missing):
            raise TraceFormatError(f"{where}: column {col.name!r} must be boolean, got {values.type}")
        return np.array(values.to_pylist(), dtype=object if nulls else bool)
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or everything_missing):
        raise TraceFormatError(f"{where}: column {col.name!r} row 0: not a number ({values.type})")
    if everything_missing:
        arr = np.full(len(values), np.nan)
    else:
        arr = _numbers(values).astype(float)
        if missing is not None:
            arr[missing] = np.nan
    present = ~np.isnan(arr)
    if not col.nullable and not present.all():
        raise TraceFormatError(
            f"{where}: column {col.name!r} row {int(np.flatnonzero(~present)[0])}: missing value"
        )
    check_numbers(arr, present, col, where)
    if col.dtype == "int" and present.all():
        return arr.astype(np.int64)
    return arr


# pyarrow's own NumPy conversions (pa.array, to_numpy) import pandas to check their input: the
# simulator's path moves numbers through Arrow buffers instead.
def _numbers(values: pa.Array) -> np.ndarray:
    """A numeric Arrow array's values (whatever they are where missing), from its data buffer."""
    dtype = np.dtype(values.type.to_pandas_dtype())
    data = values.buffers()[1]
    return np.frombuffer(data, dtype=dtype, count=len(values) + values.offset)[values.offset :]


def _validity(values: pa.Array) -> np.ndarray:
    """Whether each value of an Arrow array is missing (from its validity bitmap)."""
    bitmap = values.buffers()[0]
    if bitmap is None:
        return np.zeros(len(values), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return ~bits[values.offset : values.offset + len(values)].astype(bool)


def _arrow(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """A NumPy column (checked) as an Arrow array of ``arrow_type``, from its buffers."""
    n = len(values)
    if pa.types.is_large_string(arrow_type):
        encoded = [v.encode() for v in values.tolist()]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return pa.Array.from_buffers(
            arrow_type, n, [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
        )
    if pa.types.is_boolean(arrow_type):
        bits = np.packbits(values.astype(bool), bitorder="little")
        return pa.Array.from_buffers(arrow_type, n, [None, pa.py_buffer(bits)])
    dtype = np.int64 if pa.types.is_integer(arrow_type) else np.float64
    return pa.Array.from_buffers(
        arrow_type, n, [None, pa.py_buffer(np.ascontiguousarray(values, dtype=dtype))]
    )


def _repeated(value: Any, n: int, arrow_type: pa.DataType) -> pa.Array:
    """One value ``n`` times as an Arrow array (text without a copy per row)."""
    if pa.types.is_large_string(arrow_type):
        encoded = str(value).encode()
        offsets = np.arange(n + 1, dtype=np.int64) * len(encoded)
        return pa.Array.from_buffers(arrow_type, n, [None, pa.py_buffer(offsets), pa.py_buffer(encoded * n)])
    return _arrow(np.full(n, value), arrow_type)
