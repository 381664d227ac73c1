"""Versioned, validated Parquet tables: one ``write_table`` / ``read_table`` pair for everything.

Each table *kind* (``train``, ``power``, ``runs`` ...) has a :class:`TableSchema`: its columns in
order (identity columns first, then parameters, then metrics), with type, unit and constraints.
Writing validates the frame, orders its columns, stores ``schema_version``, the kind and the
provenance (package version, git commit, creation time, source checksums, anything the caller
adds) as JSON under the Parquet metadata key ``zeus_bench``, and writes atomically (temporary
file in the same folder, then rename). Reading validates again and upgrades older versions.

Other modules register their own kinds with :func:`register_schema`.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from zeus_bench.errors import TraceFormatError
from zeus_bench.faults import fault_point
from zeus_bench.fsutil import atomic_path
from zeus_bench.provenance import base_provenance

if TYPE_CHECKING:  # pandas is imported where frames are handled: the simulator's path runs without it
    import pandas as pd

log = logging.getLogger(__name__)

METADATA_KEY = b"zeus_bench"

DType = Literal["int", "float", "str", "bool"]
Check = Literal["positive", "nonnegative", "finite"]


@dataclass(frozen=True)
class Column:
    """One column of a table schema.

    Attributes:
        name: Column name; carries its unit as a suffix (``_w``, ``_j``, ``_s``) where it has one.
        dtype: Logical type: ``int``, ``float``, ``str`` or ``bool``.
        description: What the column holds (rendered into ``results/README.md``).
        unit: Unit in words (``W``, ``J``, ``s``) or ``""`` for none.
        example: An example value, for documentation.
        nullable: Whether missing values are allowed (integers become pandas ``Int64``).
        checks: Value constraints applied to non-missing values.
        required: Whether the column must be present; optional columns are added as missing.
    """

    name: str
    dtype: DType
    description: str
    unit: str = ""
    example: str = ""
    nullable: bool = False
    checks: tuple[Check, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class TableSchema:
    """A named, versioned table layout."""

    kind: str
    version: int
    columns: tuple[Column, ...]
    description: str
    key: tuple[str, ...] = ()
    upgrades: Mapping[int, Callable[[pd.DataFrame], pd.DataFrame]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Column names in schema order."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """Return the column called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


_SCHEMAS: dict[str, TableSchema] = {}
# Modules that define table kinds; imported on first lookup so any reader finds every kind.
SCHEMA_MODULES: tuple[str, ...] = (
    "zeus_bench.traces.schema",
    "zeus_bench.device.schema",
    "zeus_bench.sim.schema",
)


def register_schema(schema: TableSchema) -> TableSchema:
    """Register a table kind so that ``write_table``/``read_table`` know it; returns it."""
    _SCHEMAS[schema.kind] = schema
    return schema


def get_schema(kind: str) -> TableSchema:
    """Return the schema of a registered kind."""
    if kind not in _SCHEMAS:
        for module in SCHEMA_MODULES:
            importlib.import_module(module)
    try:
        return _SCHEMAS[kind]
    except KeyError:
        raise KeyError(f"unknown table kind {kind!r}; known: {sorted(_SCHEMAS)}") from None


def schemas() -> dict[str, TableSchema]:
    """All registered schemas, by kind."""
    for module in SCHEMA_MODULES:
        importlib.import_module(module)
    return dict(_SCHEMAS)


def _coerce(series: pd.Series, col: Column, where: str) -> pd.Series:
    """Coerce a column to its logical type, raising a one-line error that names it."""
    import pandas as pd

    name = col.name
    missing = series.isna()
    if missing.any() and not col.nullable:
        row = int(np.flatnonzero(missing.to_numpy())[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: missing value")
    if col.dtype == "str":
        return series.astype("string") if col.nullable else series.astype(str)
    if col.dtype == "bool":
        present_values = series[~missing]
        if series.dtype != bool and not all(isinstance(v, (bool, np.bool_)) for v in present_values):
            raise TraceFormatError(f"{where}: column {name!r} must be boolean, got {series.dtype}")
        return series.astype("boolean") if col.nullable else series.astype(bool)
    values = pd.to_numeric(series, errors="coerce")
    bad = values.isna() & ~missing
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: not a number: {series.iloc[row]!r}")
    arr = values.to_numpy(dtype=float, na_value=np.nan)
    present = ~np.isnan(arr)
    _check_numbers(arr, present, col, where)
    if col.dtype == "int":
        if col.nullable:
            ints = pd.arrays.IntegerArray(np.where(present, arr, 0).astype(np.int64), ~present)
            return pd.Series(ints, index=series.index, name=name)
        return pd.Series(arr.astype(np.int64), index=series.index, name=name)
    return pd.Series(arr, index=series.index, name=name)


def _check_numbers(arr: np.ndarray, present: np.ndarray, col: Column, where: str) -> None:
    """The value checks of a numeric column (``arr`` as floats, ``present``: not missing)."""
    name = col.name
    if not np.isfinite(arr[present]).all() and ("finite" in col.checks or col.dtype == "int"):
        row = int(np.flatnonzero(present & ~np.isfinite(arr))[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: non-finite value")
    if "positive" in col.checks and (arr[present] <= 0).any():
        row = int(np.flatnonzero(present & (arr <= 0))[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: must be > 0, got {arr[row]}")
    if "nonnegative" in col.checks and (arr[present] < 0).any():
        row = int(np.flatnonzero(present & (arr < 0))[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: must be >= 0, got {arr[row]}")
    if col.dtype == "int":
        frac = present & (np.mod(np.where(present, arr, 0.0), 1.0) != 0)
        if frac.any():
            row = int(np.flatnonzero(frac)[0])
            raise TraceFormatError(f"{where}: column {name!r} row {row}: must be an integer, got {arr[row]}")


#: A column of a :class:`ColumnTable`: one value per row, or one value for every row.
ColumnValues = np.ndarray | str | int | float | bool | None

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
        row = _duplicate_row(keyed)
        if row is not None:
            shown = {c: table.columns[c] for c in schema.key if c in table.columns}
            key = ", ".join(f"{c}={v[row] if isinstance(v, np.ndarray) else v}" for c, v in shown.items())
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
    _check_numbers(arr, present, col, where)
    if col.dtype == "int":
        return values.astype(np.int64) if values.dtype.kind in "biu" else arr.astype(np.int64)
    return arr


def validate(df: pd.DataFrame, kind: str, where: str = "table") -> pd.DataFrame:
    """Validate ``df`` against ``kind``'s schema; return a copy with typed, ordered columns.

    Raises:
        TraceFormatError: a required column is missing, an unknown column is present, a value
            has the wrong type or breaks a constraint, or key rows are duplicated.
    """
    import pandas as pd

    schema = get_schema(kind)
    missing = [c.name for c in schema.columns if c.required and c.name not in df.columns]
    if missing:
        raise TraceFormatError(f"{where}: missing column(s) {', '.join(missing)} for a {kind} table")
    unknown = [c for c in df.columns if c not in schema.names]
    if unknown:
        raise TraceFormatError(
            f"{where}: unknown column(s) {', '.join(map(str, unknown))} for a {kind} table"
        )
    out: dict[str, Any] = {}
    index = pd.RangeIndex(len(df))
    for col in schema.columns:
        if col.name in df.columns:
            s = df[col.name].reset_index(drop=True)
        else:
            s = pd.Series([pd.NA] * len(df), index=index, dtype="object")
            if not col.nullable:
                raise TraceFormatError(f"{where}: missing column {col.name!r} for a {kind} table")
        out[col.name] = _coerce(s, col, where)
    result = pd.DataFrame(out, index=index)
    if schema.key:
        dup = result.duplicated(list(schema.key), keep=False)
        if dup.any():
            row = int(np.flatnonzero(dup.to_numpy())[0])
            key = ", ".join(f"{k}={result[k].iloc[row]}" for k in schema.key)
            raise TraceFormatError(f"{where}: duplicate rows for key ({key})")
    return result


def write_table(
    df: pd.DataFrame,
    path: str | Path,
    kind: str,
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Validate ``df`` as a ``kind`` table and write it to ``path`` atomically.

    Args:
        df: The rows to write.
        path: Destination ``.parquet`` file; its folder is created if needed.
        kind: A registered table kind.
        provenance: Extra provenance merged into the stored metadata (e.g. ``sources`` with
            sha256 checksums, ``gpu_name``, ``driver``).

    Returns:
        The path written.
    """
    schema = get_schema(kind)
    path = Path(path)
    table_df = validate(df, kind, where=str(path))
    meta = {"kind": kind, "schema_version": schema.version, **base_provenance()}
    if provenance:
        meta.update(provenance)
    table = pa.Table.from_pandas(table_df, preserve_index=False)
    existing = table.schema.metadata or {}
    table = table.replace_schema_metadata({**existing, METADATA_KEY: json.dumps(meta, default=str).encode()})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
        fault_point("write")
    log.debug("wrote %d %s rows to %s", len(table_df), kind, path)
    return path


class TableWriter:
    """Write a ``kind`` table frame by frame: Parquet row groups, or CSV rows, by the suffix.

    ``with TableWriter(path, "runs", provenance) as out: out.write(frame)`` holds one frame in
    memory at a time. Each frame is validated as :func:`write_table` validates a table (key
    duplicates within the frame; frames of a stream must not share keys). The file is written
    under a temporary name beside ``path`` and renamed onto it when the block ends without an
    exception: on failure nothing is left, ``path`` included. A ``.parquet`` file carries the
    same metadata as :func:`write_table`'s and reads back with :func:`read_table`.

    Raises:
        ConfigError: ``path`` ends in neither ``.parquet`` nor ``.csv``.
    """

    SUFFIXES = (".parquet", ".csv")

    def __init__(self, path: str | Path, kind: str, provenance: Mapping[str, Any] | None = None) -> None:
        """Prepare to write ``path`` (nothing is created until the block is entered)."""
        from zeus_bench.errors import ConfigError

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
            self._parquet = pq.ParquetWriter(self._tmp, self._arrow_schema)
            table = table.replace_schema_metadata(meta)
        if table.num_rows or self.rows == 0:
            self._parquet.write_table(table)
        self.rows += table.num_rows

    def _close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        if self._csv is not None:
            self._csv.close()
            self._csv = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Finish the file and rename it onto ``path``; on an exception remove it."""
        if exc_type is not None:
            self._close()
            self._atomic.__exit__(exc_type, exc, tb)
            return
        try:
            if self.rows == 0 and self._parquet is None and self._csv is None:
                empty = {
                    c.name: np.array([], dtype=_EMPTY[c.dtype]) for c in self.schema.columns if c.required
                }
                self.write(ColumnTable(0, empty))
            self._close()
        except BaseException as error:
            self._close()
            self._atomic.__exit__(type(error), error, error.__traceback__)
            raise
        self._atomic.__exit__(None, None, None)
        log.debug("wrote %d %s rows to %s", self.rows, self.kind, self.path)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """Return the zeus-bench metadata stored in a Parquet file (kind, version, provenance)."""
    path = Path(path)
    try:
        schema = pq.read_schema(path)
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such file") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise TraceFormatError(f"{path}: not a zeus-bench table (no '{METADATA_KEY.decode()}' metadata)")
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError:
        raise TraceFormatError(f"{path}: corrupt zeus-bench metadata") from None
    if not isinstance(meta, dict):
        raise TraceFormatError(f"{path}: corrupt zeus-bench metadata")
    return meta


def _read_checked(path: Path, kind: str) -> tuple[TableSchema, dict[str, Any], int]:
    """The schema, stored metadata and schema version of a ``kind`` table (checked)."""
    schema = get_schema(kind)
    meta = read_metadata(path)
    if meta.get("kind") != kind:
        raise TraceFormatError(f"{path}: is a {meta.get('kind')!r} table, expected {kind!r}")
    version = meta.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise TraceFormatError(f"{path}: bad schema_version {version!r}")
    if version > schema.version:
        raise TraceFormatError(
            f"{path}: schema_version {version} is newer than this zeus-bench reads "
            f"({schema.version}); upgrade zeus-bench"
        )
    return schema, meta, version


def read_table(path: str | Path, kind: str) -> pd.DataFrame:
    """Read and validate a ``kind`` table, upgrading older schema versions.

    The metadata is available as ``df.attrs["zeus_bench"]``.
    """
    path = Path(path)
    schema, meta, version = _read_checked(path, kind)
    try:
        df = pq.ParquetFile(path).read().to_pandas()  # one file: no pyarrow.dataset (slow import)
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    while version < schema.version:
        upgrade = schema.upgrades.get(version)
        if upgrade is None:
            raise TraceFormatError(f"{path}: no upgrade from schema_version {version} of {kind}")
        df = upgrade(df)
        version += 1
    df = validate(df, kind, where=str(path))
    df.attrs["zeus_bench"] = meta
    return df


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
    schema, _, version = _read_checked(path, kind)
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
        row = _duplicate_row(keyed)
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
    _check_numbers(arr, present, col, where)
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


def _duplicate_row(keyed: list[np.ndarray]) -> int | None:
    """A row whose values in every one of ``keyed`` (equal-length arrays) repeat another row's."""
    n = len(keyed[0])
    if n < 2:
        return None
    codes = [np.unique(k, return_inverse=True)[1] if k.dtype == object else k for k in keyed]
    order = np.lexsort(codes[::-1])
    same = np.ones(n - 1, dtype=bool)
    for k in codes:
        ordered = k[order]
        same &= ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    return int(order[int(np.flatnonzero(same)[0]) + 1])
