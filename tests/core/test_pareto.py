"""Pareto frontier on hand-made points."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from zeus_bench.traces.pareto import pareto_frontier, pareto_mask


def test_hand_made_points() -> None:
    # (time, energy): A(1,10) B(2,5) C(3,6) dominated by B, D(4,1), E(2,7) dominated by B
    t = [1, 2, 3, 4, 2]
    e = [10, 5, 6, 1, 7]
    assert pareto_mask(t, e).tolist() == [True, True, False, True, False]


def test_ties_and_duplicates() -> None:
    # same time, lower energy wins; exact duplicates of a frontier point are both kept
    assert pareto_mask([1, 1, 2, 2], [5, 4, 3, 3]).tolist() == [False, True, True, True]
    # same energy, later time is dominated
    assert pareto_mask([1, 2], [3, 3]).tolist() == [True, False]


def test_nan_never_on_frontier_and_empty() -> None:
    assert pareto_mask([np.nan, 2.0], [1.0, 3.0]).tolist() == [False, True]
    assert pareto_mask([], []).tolist() == []
    with pytest.raises(ValueError):
        pareto_mask([1, 2], [1])


def test_frontier_drops_infeasible_and_sorts() -> None:
    df = pd.DataFrame(
        {"tta_s": [3.0, 1.0, 2.0, 0.5], "eta_j": [1.0, 9.0, 4.0, 0.1], "feasible": [True, True, True, False]}
    )
    front = pareto_frontier(df)
    assert front["tta_s"].tolist() == [1.0, 2.0, 3.0]
    assert front["eta_j"].tolist() == [9.0, 4.0, 1.0]
