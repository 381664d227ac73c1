"""Arrival tables' checks and the synthetic generator's shape (sim/scenarios/arrivals.py after the redesign)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.scenarios.arrivals import ARRIVAL_COLUMNS, synthetic_arrivals, validate_arrivals


def test_the_first_mixed_group_is_named() -> None:
    rows = [
        ("b", 0.0, 1.0, "imagenet", 1.0),
        ("a", 0.0, 1.0, "imagenet", 1.0),
        ("b", 2.0, 3.0, "cifar100", 1.0),
        ("a", 2.0, 3.0, "squad", 1.0),
    ]
    with pytest.raises(TraceFormatError, match=r"t\.csv: group 'a' has more than one workload"):
        validate_arrivals(pd.DataFrame(rows, columns=list(ARRIVAL_COLUMNS)), "t.csv")


@pytest.mark.parametrize("overlap", [0.0, 0.3, 0.8])
def test_synthetic_gaps_and_runtimes_follow_the_overlap(overlap: float) -> None:
    table = synthetic_arrivals(
        ["imagenet"], 1, 4000, np.random.default_rng(3), mean_runtime_s=100.0, overlap=overlap
    )
    starts = table["start_time"].to_numpy()
    runtime = (table["end_time"] - table["start_time"]).to_numpy()
    # gaps: exponential with mean 100 x (1 - overlap); runtimes: mean 100, ratio = runtime / 100
    assert np.diff(starts).mean() == pytest.approx(100.0 * max(1.0 - overlap, 1e-3), rel=0.06)
    assert runtime.mean() == pytest.approx(100.0, rel=1e-9)
    np.testing.assert_allclose(table["runtime_ratio"].to_numpy(), runtime / 100.0, rtol=1e-12)


@pytest.mark.parametrize("ratio", [0.0, -0.5, 2e6])
def test_a_runtime_ratio_outside_its_range_is_named(ratio: float) -> None:
    rows = [("a", 0.0, 1.0, "imagenet", 1.0), ("a", 2.0, 3.0, "imagenet", ratio)]
    with pytest.raises(
        TraceFormatError, match=r"t\.csv: column 'runtime_ratio' row 1: .* is outside \(0, 1e\+06\]"
    ):
        validate_arrivals(pd.DataFrame(rows, columns=list(ARRIVAL_COLUMNS)), "t.csv")
    ok = validate_arrivals(pd.DataFrame(rows[:1], columns=list(ARRIVAL_COLUMNS)), "t.csv")
    assert ok["runtime_ratio"].tolist() == [1.0]
