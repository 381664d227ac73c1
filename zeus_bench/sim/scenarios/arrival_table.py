"""The arrival table (kind ``arrivals``): read, validated and generated.

The table's columns and value checks are its schema's (:mod:`zeus_bench.sim.scenarios.arrivals_schema`);
this module reads a file (a Parquet file slice by slice, its text columns as dictionaries: a
table of millions of submissions holds no Python string per row), applies the schema's column
checks on NumPy arrays, and the rules across rows (end after start, one workload per group). The
replay of a table is :mod:`zeus_bench.sim.scenarios.arrivals`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.scenarios.arrivals_schema import ARRIVALS, MAX_RUNTIME_RATIO, check_number_column
from zeus_bench.store.frames import read_user_file

if TYPE_CHECKING:  # pandas is imported where tables are read or built
    import pandas as pd

__all__ = ["ARRIVAL_COLUMNS", "MAX_RUNTIME_RATIO", "read_arrivals", "synthetic_arrivals", "validate_arrivals"]

ARRIVAL_COLUMNS = tuple(ARRIVALS.names)
_NUMBER_COLUMNS = ("start_time", "end_time", "runtime_ratio")
_LABEL_COLUMNS = ("group", "workload")
_SLICE_ROWS = 1 << 18  # rows of a Parquet file read at a time


def read_arrivals(path: str | Path) -> pd.DataFrame:
    """Read and validate an arrival table (``.csv`` or ``.parquet``).

    A Parquet file is read column by column, its text columns as dictionaries (a code per row):
    a table of millions of submissions holds no Python string per row.

    Raises:
        TraceFormatError: unreadable file, missing columns, bad values, or a group with more
            than one workload.
    """
    path = Path(path)
    if path.suffix != ".parquet":
        return validate_arrivals(read_user_file(path, "arrival table"), str(path))
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
        columns = [c for c in ARRIVAL_COLUMNS if c in schema.names]
        _check_shape(columns, pf.metadata.num_rows, str(path))
        text = [c for c in _LABEL_COLUMNS if _is_text(schema.field(c).type)]
        if len(text) < len(_LABEL_COLUMNS) or not all(
            pa.types.is_floating(schema.field(c).type) or pa.types.is_integer(schema.field(c).type)
            for c in _NUMBER_COLUMNS
        ):  # not the usual types: the whole table, for the messages to quote its values
            return validate_arrivals(pf.read(columns=columns).to_pandas(), str(path))
        n = pf.metadata.num_rows
        numbers = {c: np.empty(n) for c in _NUMBER_COLUMNS}
        labels = {c: _Dictionary(n) for c in _LABEL_COLUMNS}
        pf = pq.ParquetFile(path, read_dictionary=text, pre_buffer=False)
        pool = pa.default_memory_pool()
        for c in columns:  # one column at a time, one slice at a time: Arrow's buffers stay small
            at = 0
            for batch in pf.iter_batches(_SLICE_ROWS, columns=[c], use_threads=False):
                size = batch.num_rows
                if c in numbers:
                    numbers[c][at : at + size] = batch.column(0).to_numpy(zero_copy_only=False)
                else:
                    labels[c].add(batch.column(0), at)
                at += size
            pool.release_unused()  # the pool's freed pages back to the system before the next column
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such arrival table") from None
    except (ValueError, OSError, pa.ArrowException) as exc:
        raise TraceFormatError(f"{path}: not a readable arrival table ({exc})".splitlines()[0]) from None
    return _validated(numbers, {c: d.sorted() for c, d in labels.items()}, str(path))


class _Dictionary:
    """A text column read slice by slice as dictionary arrays: one code per row, one name list."""

    def __init__(self, rows: int) -> None:
        self.codes = np.empty(rows, dtype=np.int32)
        self._index: dict[str, int] = {}
        self._last: tuple[Any, np.ndarray] | None = None  # the last slice's dictionary and its codes

    def add(self, values: Any, at: int) -> None:
        """Codes of one slice (a ``pyarrow.DictionaryArray``), from row ``at``.

        Slices of one Parquet column chunk share its dictionary (a table written from a
        categorical column: all its names): mapped to codes once.
        """
        index = self._index
        if self._last is not None and values.dictionary.equals(self._last[0]):
            local = self._last[1]
        else:
            local = np.array(
                [index.setdefault(v, len(index)) for v in values.dictionary.to_pylist()] + [-1],
                dtype=np.int32,
            )
            self._last = (values.dictionary, local)
        self.codes[at : at + len(values)] = local[np.asarray(values.indices.fill_null(-1), dtype=np.int64)]

    def sorted(self) -> tuple[np.ndarray, list[str]]:
        """(codes, names) with the names sorted (:func:`_sorted_codes`)."""
        return _sorted_codes(self.codes, list(self._index))


def _is_text(arrow_type: object) -> bool:
    """Whether a Parquet column holds text (plain or dictionary-encoded)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type  # type: ignore[attr-defined]
    return bool(pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))


def validate_arrivals(df: pd.DataFrame, where: str = "arrival table") -> pd.DataFrame:
    """Validate an arrival table; return it typed, sorted by (group, start_time).

    The column checks are the ``arrivals`` schema's (:mod:`zeus_bench.sim.scenarios.arrivals_schema`);
    the rules across rows (end after start, one workload per group) are this function's.
    ``group`` and ``workload`` come back categorical (their names as text, in sorted order).
    """
    _check_shape(list(df.columns), len(df), where)
    numbers = {c: df[c] for c in _NUMBER_COLUMNS}
    return _validated(numbers, {c: _labels(df[c]) for c in _LABEL_COLUMNS}, where)


def _check_shape(columns: list[str], rows: int, where: str) -> None:
    missing = [c for c in ARRIVAL_COLUMNS if c not in columns]
    if missing:
        raise TraceFormatError(
            f"{where}: missing column(s) {', '.join(missing)} (need {', '.join(ARRIVAL_COLUMNS)})"
        )
    if rows == 0:
        raise TraceFormatError(f"{where}: no rows")


def _validated(
    raw: dict[str, Any], labels: dict[str, tuple[np.ndarray, list[str]]], where: str
) -> pd.DataFrame:
    """The table from its number columns as read and its text columns' (codes, sorted names)."""
    import pandas as pd

    numbers = {}
    for col in _NUMBER_COLUMNS:
        numbers[col] = np.asarray(pd.to_numeric(raw[col], errors="coerce"), dtype=float)
        check_number_column(numbers[col], raw[col], col, where, ("finite",))
    if any((codes < 0).any() for codes, _ in labels.values()):
        raise TraceFormatError(f"{where}: missing group or workload")
    starts, ends = numbers["start_time"], numbers["end_time"]
    bad = np.flatnonzero(ends <= starts)
    if len(bad):
        raise TraceFormatError(f"{where}: row {int(bad[0])}: end_time must be after start_time")
    ratios = numbers["runtime_ratio"]
    check_number_column(ratios, raw["runtime_ratio"], "runtime_ratio", where, ("positive",))
    del raw, numbers
    (group, group_names), (workload, workload_names) = labels["group"], labels["workload"]
    step = np.diff(group)
    if (step < 0).any() or (np.diff(starts)[step == 0] < 0).any():  # not yet in (group, start) order
        order = np.argsort(starts, kind="stable")
        order = order[np.argsort(group[order], kind="stable")]
        group, workload, starts, ends, ratios = (a[order] for a in (group, workload, starts, ends, ratios))
        step = np.diff(group)
    first = np.concatenate(([0], np.flatnonzero(step) + 1))
    mixed = np.flatnonzero(np.maximum.reduceat(workload, first) != np.minimum.reduceat(workload, first))
    if len(mixed):
        raise TraceFormatError(
            f"{where}: group {group_names[group[first[mixed[0]]]]!r} has more than one workload"
        )
    return pd.DataFrame(
        {
            "group": pd.Categorical.from_codes(group, categories=pd.Index(group_names, dtype=object)),
            "start_time": starts,
            "end_time": ends,
            "workload": pd.Categorical.from_codes(
                workload, categories=pd.Index(workload_names, dtype=object)
            ),
            "runtime_ratio": ratios,
        },
        copy=False,  # the arrays as they are (one column each), not copied into one block
    )


def _labels(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A text column as (code per row, -1 where missing; its distinct values as ``str``, sorted)."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        return _sorted_codes(series.cat.codes.to_numpy(), list(series.cat.categories))
    codes, uniques = pd.factorize(series)
    return _sorted_codes(codes, list(uniques))


def _sorted_codes(codes: np.ndarray, uniques: list[Any]) -> tuple[np.ndarray, list[str]]:
    """Codes into ``uniques`` (-1: missing) as codes into the sorted ``str`` of the values in use.

    Values are compared as ``str`` (a group 7 and a group "7" are one group) and names no row
    uses are dropped, so that the codes follow the names' order.
    """
    names, inverse = np.unique(np.array([str(u) for u in uniques], dtype=object), return_inverse=True)
    present = codes >= 0
    mapped = np.where(present, inverse[np.where(present, codes, 0)] if len(inverse) else -1, -1)
    used = np.flatnonzero(np.bincount(mapped[present], minlength=len(names)))
    if len(used) < len(names):  # categories no row uses
        names = names[used]
        mapped = np.where(present, np.searchsorted(used, mapped), -1)
    return mapped.astype(np.int32), [str(n) for n in names]


def synthetic_arrivals(
    workloads: list[str],
    groups_per_workload: int,
    jobs_per_group: int,
    rng: np.random.Generator,
    mean_runtime_s: float = 3600.0,
    overlap: float = 0.3,
    ratio_sigma: float = 0.25,
) -> pd.DataFrame:
    """Generate a synthetic arrival table for tests and examples.

    Within a group, gaps between submissions are exponential with mean ``mean_runtime_s x (1 -
    overlap)``, so that about ``overlap`` of the jobs start while the previous one still runs;
    runtimes are log-normal around ``mean_runtime_s`` (log-standard deviation ``ratio_sigma``;
    1.0 spreads ``runtime_ratio`` over about 0.1-10) and ``runtime_ratio`` is runtime / mean.
    Per group, ``jobs_per_group`` log-normal then as many exponential draws (the last unused).
    """
    import pandas as pd

    n, k = groups_per_workload, jobs_per_group
    gap = mean_runtime_s * max(1.0 - overlap, 1e-3)
    ratio: np.ndarray = np.empty((len(workloads), n, k))
    start: np.ndarray = np.empty((len(workloads), n, k))
    for w in range(len(workloads)):
        for g in range(n):
            runtimes = rng.lognormal(0.0, ratio_sigma, size=k)
            ratio[w, g] = runtimes / runtimes.mean()
            start[w, g, 0] = 0.0
            start[w, g, 1:] = np.cumsum(rng.exponential(gap, size=k)[:-1])  # a left-to-right sum
    ratio, start = ratio.ravel(), start.ravel()
    names = [f"{w}-{g}" for w in workloads for g in range(n)]
    table = {
        "group": pd.Categorical.from_codes(np.repeat(np.arange(len(names)), k), categories=names),
        "start_time": start,
        "end_time": start + ratio * mean_runtime_s,
        "workload": pd.Categorical.from_codes(
            np.repeat(np.arange(len(workloads)), n * k), categories=workloads
        ),
        "runtime_ratio": ratio,
    }
    return validate_arrivals(pd.DataFrame(table), "synthetic arrivals")
