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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from zeus_bench.errors import TraceFormatError
from zeus_bench.fsutil import atomic_path
from zeus_bench.provenance import base_provenance

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
        if col.nullable:
            ints = pd.arrays.IntegerArray(np.where(present, arr, 0).astype(np.int64), ~present)
            return pd.Series(ints, index=series.index, name=name)
        return pd.Series(arr.astype(np.int64), index=series.index, name=name)
    return pd.Series(arr, index=series.index, name=name)


def validate(df: pd.DataFrame, kind: str, where: str = "table") -> pd.DataFrame:
    """Validate ``df`` against ``kind``'s schema; return a copy with typed, ordered columns.

    Raises:
        TraceFormatError: a required column is missing, an unknown column is present, a value
            has the wrong type or breaks a constraint, or key rows are duplicated.
    """
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

    def write(self, df: pd.DataFrame) -> None:
        """Validate one frame and append it (an empty frame only fixes the columns)."""
        assert self._tmp is not None, "use TableWriter as a context manager"
        table_df = validate(df, self.kind, where=str(self.path))
        if self.path.suffix.lower() == ".csv":
            if self._csv is None:
                self._csv = self._tmp.open("w", newline="")
                table_df.to_csv(self._csv, index=False, lineterminator="\n")
            elif len(table_df):
                table_df.to_csv(self._csv, index=False, header=False, lineterminator="\n")
        else:
            if self._parquet is None:
                table = pa.Table.from_pandas(table_df, preserve_index=False)
                existing = table.schema.metadata or {}
                meta = {**existing, METADATA_KEY: json.dumps(self.meta, default=str).encode()}
                self._arrow_schema = table.schema.with_metadata(meta)
                self._parquet = pq.ParquetWriter(self._tmp, self._arrow_schema)
                table = table.replace_schema_metadata(meta)
            else:
                table = pa.Table.from_pandas(table_df, schema=self._arrow_schema, preserve_index=False)
            if len(table_df) or self.rows == 0:
                self._parquet.write_table(table)
        self.rows += len(table_df)

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
                self.write(pd.DataFrame({c.name: [] for c in self.schema.columns if c.required}))
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


def read_table(path: str | Path, kind: str) -> pd.DataFrame:
    """Read and validate a ``kind`` table, upgrading older schema versions.

    The metadata is available as ``df.attrs["zeus_bench"]``.
    """
    path = Path(path)
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
