"""Pandas-free table helpers of the trace loader: joins and group statistics on NumPy columns.

The simulator's path loads traces as NumPy columns (:func:`~zeus_bench.store.read_columns`) and
joins and groups them here with the same rows, order and floating-point results as the pandas
operations they stand in for (``merge(how="inner")``, ``groupby().mean()``, ``Series.mean()``),
so that a job built from columns equals one built from frames bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zeus_bench.core.errors import ConfigError

Columns = Mapping[str, Any]


def inner_join(left: Columns, right: Columns, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """Inner join of two column tables on ``keys``, rows in pandas' ``merge(how="inner")`` order.

    Each left row in order, then its matching right rows in their order (the left keys' order,
    as pandas keeps it). Columns other than the keys must not be in both tables.
    """
    n_left = len(left[keys[0]])
    codes_left, codes_right = key_codes(
        [np.asarray(left[k]) for k in keys], [np.asarray(right[k]) for k in keys]
    )
    order = np.argsort(codes_right, kind="stable")
    sorted_codes = codes_right[order]
    start = np.searchsorted(sorted_codes, codes_left, side="left")
    stop = np.searchsorted(sorted_codes, codes_left, side="right")
    counts = stop - start
    left_rows = np.repeat(np.arange(n_left), counts)
    offsets = np.repeat(start - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    right_rows = order[np.arange(len(left_rows)) + offsets]
    out = {k: np.asarray(v)[left_rows] for k, v in left.items()}
    for k, v in right.items():
        if k in keys:
            continue
        if k in out:
            raise ConfigError(f"inner_join: column {k!r} is in both tables")
        out[k] = np.asarray(v)[right_rows]
    return out


def key_codes(left: list[np.ndarray], right: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One integer per row of each table; equal codes for equal key tuples (across both)."""
    n = len(left[0])
    code_l = np.zeros(n, dtype=np.int64)
    code_r = np.zeros(len(right[0]), dtype=np.int64)
    for a, b in zip(left, right, strict=True):
        both = np.concatenate([a, b])
        if both.dtype == object:
            _, inverse = np.unique(both.astype(str), return_inverse=True)
        else:
            _, inverse = np.unique(both, return_inverse=True)
        size = int(inverse.max()) + 1 if len(inverse) else 1
        code_l = code_l * size + inverse[:n]
        code_r = code_r * size + inverse[n:]
        _, packed = np.unique(np.concatenate([code_l, code_r]), return_inverse=True)
        code_l, code_r = packed[:n].astype(np.int64), packed[n:].astype(np.int64)
    return code_l, code_r


def floats(table: Columns, name: str) -> np.ndarray:
    """A numeric column as floats (missing values NaN), from a frame or a mapping of arrays."""
    values = table[name]
    if hasattr(values, "to_numpy"):
        return np.asarray(values.to_numpy(dtype=float, na_value=np.nan))
    return np.asarray(values, dtype=float)


def group_first(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct code (sorted), the first non-missing value in row order: (codes, values)."""
    ok = ~np.isnan(values)
    uniq, first = np.unique(codes[ok], return_index=True)
    return uniq, values[ok][first]


def group_mean(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct code (sorted), the mean of its non-missing values as pandas' groupby mean has it.

    pandas sums each group in row order with Kahan's compensation, then divides by the count.
    """
    uniq, inverse = np.unique(codes, return_inverse=True)
    sums = [0.0] * len(uniq)
    comp = [0.0] * len(uniq)
    counts = [0] * len(uniq)
    for g, v in zip(inverse.tolist(), values.tolist(), strict=True):
        if math.isnan(v):
            continue
        counts[g] += 1
        y = v - comp[g]
        t = sums[g] + y
        c = t - sums[g] - y
        comp[g] = 0.0 if math.isnan(c) else c
        sums[g] = t
    means = np.array([s / c if c else math.nan for s, c in zip(sums, counts, strict=True)])
    return uniq, means


def series_mean(values: np.ndarray) -> float:
    """The mean as pandas' ``Series.mean()`` has it: pairwise sum of the non-missing values / count."""
    ok = ~np.isnan(values)
    count = int(ok.sum())
    if count == 0:
        return math.nan
    return float(np.where(ok, values, 0.0).sum()) / count
