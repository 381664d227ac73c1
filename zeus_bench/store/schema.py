"""Table kinds: the schema registry of every table this project writes or reads.

Each table *kind* (``train``, ``power``, ``runs`` ...) has a :class:`TableSchema`: its columns in
order (identity columns first, then parameters, then metrics), with type, unit and constraints.
Each writer registers its own kinds with :func:`register_schema` when its schema module is imported.
The store never imports upward: :mod:`zeus_bench.catalog` (a floor above every writer) imports every
built-in schema module, so that a reader of any kind (``traces validate``, the results README)
imports it first; :func:`get_schema` names it when a kind is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from zeus_bench.core.errors import TraceFormatError

if TYPE_CHECKING:  # pandas is imported where frames are handled: the simulator's path runs without it
    import pandas as pd

METADATA_KEY = b"zeus_bench"

DType = Literal["int", "float", "str", "bool"]
Check = Literal["positive", "nonnegative", "finite"]


@dataclass(frozen=True)
class Coded:
    """Text as codes into distinct ``labels`` (row ``i``: ``labels[codes[i]]``), written as the strings."""

    codes: np.ndarray
    labels: Sequence[str]

    def __getitem__(self, row: int) -> str:
        """Row ``row``'s text."""
        return self.labels[int(self.codes[row])]

    def decoded(self) -> np.ndarray:
        """The column as an object array of strings."""
        return np.array(list(self.labels), dtype=object)[self.codes]

    def checked(self, name: str, dtype: str, rows: int, where: str) -> tuple[np.ndarray, np.ndarray]:
        """(codes, labels as an object array), checked as column ``name`` of ``rows`` rows of ``dtype``.

        Raises:
            TraceFormatError: not a text column, not ``rows`` integer codes, codes outside the
                labels, labels repeated or not all text (one line naming the column).
        """
        codes, labels = np.asarray(self.codes), np.array(list(self.labels), dtype=object)
        size = len(labels)
        text = dtype == "str" and all(isinstance(v, str) for v in labels.tolist())
        ok = text and len(codes) == rows and codes.dtype.kind in "iu" and len(set(labels.tolist())) == size
        if not ok or (rows and not 0 <= codes.min() <= codes.max() < size):
            raise TraceFormatError(f"{where}: column {name!r}: expected {rows} codes of distinct text labels")
        return codes, labels


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
    oldest: int = 1
    """The oldest version read: an older file is refused with ``refusal`` (why it cannot be upgraded)."""
    refusal: str = ""

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


def register_schema(schema: TableSchema) -> TableSchema:
    """Register a table kind so that ``write_table``/``read_table`` know it; returns it."""
    _SCHEMAS[schema.kind] = schema
    return schema


def get_schema(kind: str) -> TableSchema:
    """Return the schema of a registered kind.

    Raises:
        KeyError: the kind is not registered (its schema module, or :mod:`zeus_bench.catalog` for
            every built-in kind, was not imported).
    """
    try:
        return _SCHEMAS[kind]
    except KeyError:
        raise KeyError(f"unknown table kind {kind!r}; known: {sorted(_SCHEMAS)}") from None


def schemas() -> dict[str, TableSchema]:
    """Every registered schema, by kind (import :mod:`zeus_bench.catalog` first for all built-in kinds)."""
    return dict(_SCHEMAS)


def numbers_pass(arr: np.ndarray, present: np.ndarray, col: Column) -> bool:
    """Whether ``col``'s checks all pass on a column without missing values, in a few passes (no copies).

    False also where it cannot tell at once (a missing or infinite value): :func:`check_numbers`
    then checks it value by value, naming the first bad row.
    """
    if not len(arr) or not present.all():
        return False
    lo, hi = float(arr.min()), float(arr.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False
    if ("positive" in col.checks and lo <= 0) or ("nonnegative" in col.checks and lo < 0):
        return False
    return col.dtype != "int" or arr.dtype.kind in "iu" or bool((np.mod(arr, 1.0) == 0).all())


def check_numbers(arr: np.ndarray, present: np.ndarray, col: Column, where: str) -> None:
    """Apply ``col``'s value checks to a numeric column (``arr`` as floats, ``present``: not missing).

    Raises:
        TraceFormatError: one line naming ``where``, the column, the first bad row and the value.
    """
    if numbers_pass(arr, present, col):
        return
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


def _ascending(keyed: list[np.ndarray]) -> bool:
    """Whether the rows are in strictly ascending order of ``keyed`` (numeric arrays), then none repeats.

    The tables written row by row mostly are (a replay's rows by seed, recurrence and attempt): a
    pass over neighbouring rows, without sorting.
    """
    if any(k.dtype.kind not in "biuf" for k in keyed):
        return False
    rising = np.zeros(len(keyed[0]) - 1, dtype=bool)  # ascending at an earlier key
    tied = np.ones(len(rising), dtype=bool)  # equal at every key so far
    for k in keyed:
        before, after = k[:-1], k[1:]
        rising |= tied & (after > before)
        tied &= after == before
    return bool(rising.all())


def duplicate_row(keyed: list[np.ndarray]) -> int | None:
    """A row whose values in every one of ``keyed`` (equal-length arrays) repeat another row's."""
    n = len(keyed[0])
    if n < 2 or _ascending(keyed):
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
