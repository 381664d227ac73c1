"""Reading result files: CSV, zeus-bench Parquet tables (validated) and plain Parquet."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

import zeus_bench.catalog  # noqa: F401  (registers every kind: a file is read by the kind in its metadata)
from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import read_metadata, read_table


def load(path: str | Path) -> pd.DataFrame:
    """Read one results file.

    A ``.csv`` is read as is. A Parquet file written by ``write_table`` is read and validated
    with its registered kind; any other Parquet file is read as is. The frame comes without
    ``attrs`` (the analysis does not use the file's metadata, and pandas deep-copies ``attrs``
    into the result of every operation: a sweep trace's list of shards made each one milliseconds).
    """
    path = Path(path)
    if path.suffix == ".csv":
        return pd.read_csv(path)
    try:
        kind = read_metadata(path).get("kind")
    except TraceFormatError:
        kind = None
    df = None
    if isinstance(kind, str):
        with contextlib.suppress(KeyError):  # a kind this installation does not register
            df = read_table(path, kind)
    if df is None:
        df = pd.read_parquet(path)
    df.attrs = {}
    return df


def load_all(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Read and concatenate several results files of the same shape."""
    frames = [load(p) for p in paths]
    if not frames:
        raise ValueError("no input files")
    return pd.concat(frames, ignore_index=True)
