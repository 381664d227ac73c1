"""The arrival table (kind ``arrivals``): read, validated and generated.

The table's columns and value checks are its schema's (:mod:`zeus_bench.sim.scenarios.arrivals_schema`);
this module reads a file (a Parquet file slice by slice, its text columns as dictionaries: a
table of millions of submissions holds no Python string per row), applies the schema's column
checks on NumPy arrays, and the rules across rows (end after start, one workload per group). The
replay of a table is :mod:`zeus_bench.sim.scenarios.arrivals`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.scenarios.arrivals_schema import ARRIVALS, MAX_RUNTIME_RATIO, check_number_column
from zeus_bench.store.frames import read_user_file

if TYPE_CHECKING:  # pandas is imported where tables are read or built
    import pandas as pd

__all__ = [
    "ARRIVAL_COLUMNS",
    "MAX_RUNTIME_RATIO",
    "ArrivalColumns",
    "read_arrival_columns",
    "read_arrivals",
    "synthetic_arrivals",
    "validate_arrivals",
]

ARRIVAL_COLUMNS = tuple(ARRIVALS.names)
_NUMBER_COLUMNS = ("start_time", "end_time", "runtime_ratio")
_LABEL_COLUMNS = ("group", "workload")
_SLICE_ROWS = 1 << 18  # rows of a Parquet file read at a time


@dataclass(frozen=True)
class ArrivalColumns:
    """A validated arrival table as NumPy arrays, its rows in (group, start_time) order.

    What :func:`read_arrivals` returns as a frame (:meth:`frame`), without pandas: the replay
    of ``simulate --arrivals`` reads a table this way (pandas' import alone is about 0.4 s).
    ``group`` and ``workload`` are codes (``int32``) into ``group_names`` and ``workload_names``,
    each sorted, so that the codes follow the names' order.
    """

    group: np.ndarray
    group_names: list[str]
    workload: np.ndarray
    workload_names: list[str]
    start_time: np.ndarray
    end_time: np.ndarray
    runtime_ratio: np.ndarray

    def __len__(self) -> int:
        """The number of submissions (rows)."""
        return len(self.start_time)

    @classmethod
    def of(cls, table: ArrivalColumns | pd.DataFrame, where: str = "arrival table") -> ArrivalColumns:
        """``table`` as columns: itself, or a frame validated (:func:`validate_arrivals`'s rules)."""
        if isinstance(table, ArrivalColumns):
            return table
        _check_shape(list(table.columns), len(table), where)
        return _validated(
            {c: table[c] for c in _NUMBER_COLUMNS}, {c: _labels(table[c]) for c in _LABEL_COLUMNS}, where
        )

    def workloads(self) -> list[str]:
        """The workloads of the rows, in order of first appearance."""
        codes, first = np.unique(self.workload, return_index=True)
        return [self.workload_names[int(c)] for c in codes[np.argsort(first, kind="stable")]]

    def of_workload(self, name: str) -> ArrivalColumns:
        """The rows of workload ``name`` (in the same order; every name list kept)."""
        if name not in self.workload_names:
            rows = np.zeros(len(self), dtype=bool)
        else:
            rows = self.workload == self.workload_names.index(name)
        return ArrivalColumns(
            self.group[rows], self.group_names, self.workload[rows], self.workload_names,
            self.start_time[rows], self.end_time[rows], self.runtime_ratio[rows],
        )  # fmt: skip

    def frame(self) -> pd.DataFrame:
        """The table as :func:`read_arrivals` returns it: ``group`` and ``workload`` categorical."""
        import pandas as pd

        def labels(codes: np.ndarray, names: list[str]) -> pd.Categorical:
            return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))

        return pd.DataFrame(
            {
                "group": labels(self.group, self.group_names),
                "start_time": self.start_time,
                "end_time": self.end_time,
                "workload": labels(self.workload, self.workload_names),
                "runtime_ratio": self.runtime_ratio,
            },
            copy=False,  # the arrays as they are (one column each), not copied into one block
        )


def read_arrivals(path: str | Path) -> pd.DataFrame:
    """Read and validate an arrival table (``.csv`` or ``.parquet``): :func:`read_arrival_columns` as a frame.

    Raises:
        TraceFormatError: unreadable file, missing columns, bad values, or a group with more
            than one workload.
    """
    return read_arrival_columns(path).frame()


def read_arrival_columns(path: str | Path) -> ArrivalColumns:
    """Read and validate an arrival table (``.csv`` or ``.parquet``) as :class:`ArrivalColumns`.

    A Parquet file is read column by column, its text columns as dictionaries (a code per row):
    a table of millions of submissions holds no Python string per row, and pandas is not
    imported.

    Raises:
        TraceFormatError: unreadable file, missing columns, bad values, or a group with more
            than one workload.
    """
    path = Path(path)
    if path.suffix != ".parquet":
        return ArrivalColumns.of(read_user_file(path, "arrival table"), str(path))
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
            return ArrivalColumns.of(pf.read(columns=columns).to_pandas(), str(path))
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
                    numbers[c][at : at + size] = _values(batch.column(0))
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
        indices = values.indices
        if indices.null_count:  # missing names: code -1 (local's last entry)
            indices = indices.fill_null(-1)
        self.codes[at : at + len(values)] = local[_values(indices).astype(np.int64)]

    def sorted(self) -> tuple[np.ndarray, list[str]]:
        """(codes, names) with the names sorted (:func:`_sorted_codes`)."""
        return _sorted_codes(self.codes, list(self._index))


def _values(array: Any) -> np.ndarray:
    """An Arrow array of numbers as NumPy: its buffer, read-only, when it has no null (else NaN or -1 filled by Arrow).

    Arrow's own conversion imports pandas (about 0.4 s), which the replay of a table does not
    otherwise need.
    """
    import pyarrow as pa

    kind = array.type
    if array.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        width = kind.bit_width // 8
        code = "f" if pa.types.is_floating(kind) else "i" if pa.types.is_signed_integer(kind) else "u"
        dtype = np.dtype(f"{code}{width}")  # (native order, as Arrow keeps it)
        return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * width)
    return np.asarray(array.to_numpy(zero_copy_only=False))


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
    return ArrivalColumns.of(df, where).frame()


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
) -> ArrivalColumns:
    """The table from its number columns as read and its text columns' (codes, sorted names)."""
    numbers = {}
    for col in _NUMBER_COLUMNS:
        numbers[col] = _numbers(raw[col])
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
    return ArrivalColumns(group, group_names, workload, workload_names, starts, ends, ratios)


def _numbers(values: Any) -> np.ndarray:
    """A number column as floats, NaN where a value is not a number (pandas only for other types)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return values.astype(float, copy=False)
    import pandas as pd

    return np.asarray(pd.to_numeric(values, errors="coerce"), dtype=float)


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
    text = [str(u) for u in uniques]
    names = sorted(set(text))  # (sorted as np.unique sorts them: by Python's order of str)
    rank = {name: i for i, name in enumerate(names)}
    inverse = np.fromiter((rank[t] for t in text), dtype=np.intp, count=len(text))
    present = codes >= 0
    if present.all():  # (as almost always) no missing value
        mapped = inverse[codes]
        counts = np.bincount(mapped, minlength=len(names))
    else:
        mapped = np.where(present, inverse[np.where(present, codes, 0)] if len(inverse) else -1, -1)
        counts = np.bincount(mapped[present], minlength=len(names))
    used = np.flatnonzero(counts)
    if len(used) < len(names):  # categories no row uses
        names = [names[i] for i in used.tolist()]
        mapped = np.where(present, np.searchsorted(used, mapped), -1)
    return mapped.astype(np.int32), names


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
