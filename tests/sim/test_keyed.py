"""zeus_bench.sim.keyed: one sort key for several coded columns, runs of equal keys, pandas' first/last."""

from __future__ import annotations

import numpy as np
import pandas as pd

from zeus_bench.sim.keyed import first_valid, groups, key_codes, runs_of, sort_key


def test_the_sort_key_orders_as_the_tuples_also_beyond_int64() -> None:
    rng = np.random.default_rng(0)
    small = [rng.integers(0, 5, 400) for _ in range(3)]
    # four columns of ~2**20 codes each: their product is beyond int64, the key is then a rank
    large = [rng.integers(0, 2**20, 400) for _ in range(4)] + [np.full(400, 2**20)]
    for cols in (small, large):
        want = np.lexsort(cols[::-1])
        got = np.argsort(sort_key(cols), kind="stable")
        assert np.array_equal(got, want)
        tuples = list(zip(*(c.tolist() for c in cols), strict=True))
        key = sort_key(cols)
        assert all((key[i] == key[j]) == (tuples[i] == tuples[j]) for i, j in rng.integers(0, 400, (300, 2)))


def test_codes_rank_values_missing_last_and_groups_are_the_distinct_tuples() -> None:
    codes = key_codes(pd.Series([2.5, np.nan, 1.0, 2.5]))
    assert codes.tolist() == [1, 2, 0, 1]
    ids, first = groups(np.array([1, 0, 1, 0]), np.array([5, 5, 5, 6]))
    assert ids.tolist() == [2, 0, 2, 1] and first.tolist() == [
        1,
        3,
        0,
    ]  # (0,5), (0,6), (1,5): first seen at 1, 3, 0


def test_runs_and_first_and_last_valid_values() -> None:
    assert runs_of(np.array([3, 3, 4, 7, 7, 7])).tolist() == [0, 2, 3]
    x = np.array([np.nan, 1.0, 2.0, np.nan, np.nan, 5.0])
    starts, ends = np.array([0, 3, 4]), np.array([3, 4, 6])
    assert np.array_equal(first_valid(x, starts, ends), [1.0, np.nan, 5.0], equal_nan=True)
    assert np.array_equal(first_valid(x, starts, ends, last=True), [2.0, np.nan, 5.0], equal_nan=True)
