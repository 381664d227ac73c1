"""Concurrent submissions from arrival tables, worked out by hand on the toy trace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sim_toy import toy_job

from zeus_bench.errors import TraceFormatError
from zeus_bench.sim.arrivals import ARRIVAL_COLUMNS, replay_group, synthetic_arrivals, validate_arrivals
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import RUN_FIELDS, JobModel


def _replay(starts, ends, ratios):
    rows = replay_group(
        JobModel(toy_job(), eta=1.0),
        get_policy("zeus"),
        1,
        2.0,
        np.array(starts, float),
        np.array(ends, float),
        np.array(ratios, float),
    )
    return [dict(zip(RUN_FIELDS, r, strict=True)) for r in rows]


def test_concurrent_job_uses_best_known_and_is_observed_at_its_end() -> None:
    rows = _replay([0, 5, 20], [10, 15, 30], [1.0, 2.0, 0.5])
    got = [(r["recurrence"], r["attempt"], r["batch_size"], r["energy_j"], r["profiled"]) for r in rows]
    assert got == [
        # Job 1 alone: the optimizer's b0 = 32, profiled (775 J).
        (1, 1, 32, 775.0, True),
        # Job 2 starts at 5 while job 1 runs and nothing has finished: the best known is still b0,
        # whose limit is not known yet (job 1 profiles it), so it profiles too; energy x ratio 2.
        (2, 1, 32, 1550.0, True),
        # Job 3 starts at 20, alone; jobs 1 and 2 were observed at 10 and 15 (job 2's 32 was not
        # the size pruning expected next, so only pruning's own 32 counted): pruning goes on to 16.
        (3, 1, 16, 625.0 * 0.5, True),
    ]
    assert [r["cost"] for r in rows] == [775.0, 1550.0, 312.5]


def test_failed_job_is_retried_at_its_end_for_the_same_duration() -> None:
    rows = _replay([0, 20, 40, 100], [10, 30, 50, 110], [1.0, 1.0, 1.0, 1.0])
    got = [(r["recurrence"], r["attempt"], r["batch_size"], r["epochs"], r["reached"]) for r in rows]
    assert got == [
        (1, 1, 32, 5.0, True),
        (2, 1, 16, 4.0, True),
        # 8 is early-stopped at (2 x 625) // 150 = 8 epochs, observed at 50 and retried at once
        # (nothing else runs): pruning turns upwards to 64, which reaches by 60.
        (3, 1, 8, 8.0, False),
        (3, 2, 64, 3.0, True),
        # Round 2 starts at the cheapest good size, 64, already profiled.
        (4, 1, 64, 3.0, True),
    ]


def test_best_known_configuration_after_a_success() -> None:
    # Job 3 starts while job 2 runs, after job 1 succeeded with 32 at 100 W: it runs that.
    rows = _replay([0, 20, 25], [10, 30, 35], [1.0, 1.0, 1.0])
    got = [(r["recurrence"], r["batch_size"], r["power_limit_w"], r["profiled"]) for r in rows]
    assert got == [(1, 32, 100.0, True), (2, 16, 100.0, True), (3, 32, 100.0, False)]


def test_validate_sorts_and_types() -> None:
    df = pd.DataFrame(
        {
            "group": ["b", "a", "a"],
            "start_time": ["3", 2, 1],
            "end_time": [4, 3, 2],
            "workload": ["w", "v", "v"],
            "runtime_ratio": [1, 1.5, 0.5],
        }
    )
    out = validate_arrivals(df)
    assert list(out.columns) == list(ARRIVAL_COLUMNS)
    assert out["group"].tolist() == ["a", "a", "b"]
    assert out["start_time"].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TraceFormatError, match="missing column"):
        validate_arrivals(df.drop(columns="group"))


def test_synthetic_arrivals() -> None:
    df = synthetic_arrivals(["squad", "imagenet"], 3, 40, np.random.default_rng(0), overlap=0.5)
    assert len(df) == 2 * 3 * 40 and df["group"].nunique() == 6
    assert (df["end_time"] > df["start_time"]).all()
    assert df.groupby("group")["runtime_ratio"].mean().round(9).eq(1.0).all()
    # Some jobs start while the previous one of their group still runs.
    prev_end = df.groupby("group")["end_time"].shift()
    overlap = (df["start_time"] < prev_end).mean()
    assert 0.1 < overlap < 0.9
    again = synthetic_arrivals(["squad", "imagenet"], 3, 40, np.random.default_rng(0), overlap=0.5)
    pd.testing.assert_frame_equal(df, again)
