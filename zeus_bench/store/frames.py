"""Validated, versioned Parquet tables as pandas frames: one ``write_table`` / ``read_table`` pair.

Writing validates the frame against its kind (:mod:`zeus_bench.store.schema`), orders its columns,
stores ``schema_version``, the kind and the provenance (package version, git commit, creation
time, source checksums, anything the caller adds) as JSON under the Parquet metadata key
``zeus_bench``, and writes atomically (temporary file in the same folder, then rename). Reading
validates again and upgrades older versions. :func:`read_user_table` reads a table a user wrote by
hand (CSV or Parquet, no metadata) and validates it against a registered kind.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.core.faults import fault_point
from zeus_bench.core.fsutil import atomic_path
from zeus_bench.core.provenance import base_provenance
from zeus_bench.store.schema import (
    METADATA_KEY,
    Coded,
    Column,
    TableSchema,
    check_numbers,
    get_schema,
    numbers_pass,
)

if TYPE_CHECKING:  # pandas is imported where frames are handled: the simulator's path runs without it
    import pandas as pd

log = logging.getLogger(__name__)


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
    # Already numbers of the column's kind (what a table read back holds): kept without a copy
    # (``astype`` to the same dtype shares them, copy-on-write) when every check passes at once;
    # otherwise the path below finds the first bad row.
    kind = series.dtype.kind if isinstance(series.dtype, np.dtype) else ""
    same_kind = kind in ("i", "f") and (col.dtype == "int") == (kind == "i") and not col.nullable
    if same_kind and numbers_pass(series.to_numpy(), ~missing.to_numpy(), col):
        return series.astype(np.int64 if col.dtype == "int" else float)
    values = pd.to_numeric(series, errors="coerce")
    bad = values.isna() & ~missing
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise TraceFormatError(f"{where}: column {name!r} row {row}: not a number: {series.iloc[row]!r}")
    arr = values.to_numpy(dtype=float, na_value=np.nan)
    present = ~np.isnan(arr)
    check_numbers(arr, present, col, where)
    if col.dtype == "int":
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
    result = pd.DataFrame(out, index=index, copy=False)  # (each column is its own, or shared copy-on-write)
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


def read_checked(path: Path, kind: str) -> tuple[TableSchema, dict[str, Any], int]:
    """The schema, stored metadata and schema version of a ``kind`` table file (checked).

    Raises:
        TraceFormatError: the file is not a zeus-bench table of ``kind``, is newer than this
            version reads, or older than its schema's ``oldest``.
    """
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
    if version < schema.oldest:
        raise TraceFormatError(f"{path}: {kind} schema_version {version} is no longer read: {schema.refusal}")
    return schema, meta, version


def read_table(path: str | Path, kind: str) -> pd.DataFrame:
    """Read and validate a ``kind`` table, upgrading older schema versions.

    The metadata is available as ``df.attrs["zeus_bench"]``.
    """
    path = Path(path)
    schema, meta, version = read_checked(path, kind)
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


def read_user_file(path: str | Path, what: str) -> pd.DataFrame:
    """Read ``path`` as Parquet (``.parquet``) or CSV (anything else), without validation.

    Args:
        path: The file.
        what: What the table is, for messages (``"arrival table"``).

    Raises:
        TraceFormatError: the file is missing or cannot be read as a table (one line).
    """
    import pandas as pd

    path = Path(path)
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such {what}") from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise TraceFormatError(f"{path}: not a readable {what} ({exc})".splitlines()[0]) from None


def read_user_table(path: str | Path, kind: str) -> pd.DataFrame:
    """Read a table a user wrote by hand (CSV or Parquet) and validate it as a ``kind`` table.

    Unlike :func:`read_table`, the file needs no zeus-bench metadata: arrival and drift tables
    are written by people and other tools. The columns are typed, checked and ordered as
    :func:`validate` does; rules across rows stay with the table's reader.

    Raises:
        TraceFormatError: the file is missing or unreadable, or breaks the schema (one line naming
            the file and the column).
        KeyError: ``kind`` is not a registered kind (a programming error).
    """
    get_schema(kind)  # an unknown kind fails before the file is read
    df = read_user_file(path, f"{kind} table")
    return validate(df, kind, where=str(path))


class _Columns(Protocol):
    """What :func:`as_frame` reads of a :class:`~zeus_bench.store.columns.ColumnTable`."""

    @property
    def rows(self) -> int: ...
    @property
    def columns(self) -> Mapping[str, Any]: ...


def as_frame(table: _Columns) -> pd.DataFrame:
    """A :class:`~zeus_bench.store.columns.ColumnTable` as a frame (one array per column)."""
    import pandas as pd

    n = table.rows
    data = {
        name: v
        if isinstance(v, np.ndarray)
        else v.decoded()
        if isinstance(v, Coded)
        else np.full(n, v, dtype=object if isinstance(v, str) else None)
        for name, v in table.columns.items()
    }
    return pd.DataFrame(data)
