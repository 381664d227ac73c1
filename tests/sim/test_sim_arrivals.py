"""Concurrent submissions from arrival tables, worked out by hand on the toy trace."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext, get_policy
from zeus_bench.sim.replay import RUN_FIELDS, JobModel
from zeus_bench.sim.scenarios.arrivals import (
    ARRIVAL_COLUMNS,
    MAX_ZERO_BUDGET_TRIES,
    replay_group,
    synthetic_arrivals,
    validate_arrivals,
)
from zeus_bench.traces.jobs import JobTrace


def _replay(starts, ends, ratios):
    rows = replay_group(
        JobModel(toy_job(), cost=Cost(1.0)),
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
        # whose limit is known from the moment job 1 was launched (its first epoch profiled): 100 W,
        # no profiling again (the paper's JIT); 5 epochs x 150 J x ratio 2.
        (2, 1, 32, 1500.0, False),
        # Job 3 starts at 20, alone; jobs 1 and 2 were observed at 10 and 15 (job 2's 32 was not
        # the size pruning expected next, so only pruning's own 32 counted): pruning goes on to 16.
        (3, 1, 16, 625.0 * 0.5, True),
    ]
    assert [r["cost"] for r in rows] == [775.0, 1500.0, 312.5]


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


def test_pruning_takes_only_the_result_it_asked_for_since_its_last_prediction() -> None:
    # Round 1 alone: 32 (0-10), 16 (20-30), 8 (40-50, early-stopped), its retry 64 (50-60, the
    # cheapest: round 2 will start at 64). Job 4 starts at 52 beside the retry: best known 16, ends
    # at 70. Job 5 starts at 62 beside job 4: best known now 64, ends at 65. Pruning's last report
    # (64 at 60) reset what it expects until the next prediction, so job 5's 64 at 65 is history
    # only (the original's `expecting`); job 6 at 80, alone, is round 2's first try: 64 again.
    # (Taking job 5's result as round 2's 64 would have moved on to 32.)
    rows = _replay([0, 20, 40, 52, 62, 80], [10, 30, 50, 70, 65, 90], [1.0] * 6)
    assert [(r["recurrence"], r["attempt"], r["batch_size"], r["profiled"]) for r in rows] == [
        (1, 1, 32, True), (2, 1, 16, True), (3, 1, 8, True), (3, 2, 64, True), (5, 1, 64, False),
        (4, 1, 16, False), (6, 1, 64, False),
    ]  # fmt: skip


def _slow_eight() -> JobTrace:
    """The toy job with batch size 8's epochs 20 times as long (3000 J at the 100 W JIT limit)."""
    job = toy_job()
    tpe = job.time_per_epoch_s.copy()
    tpe[0] *= 20.0
    return dataclasses.replace(job, time_per_epoch_s=tpe)


def test_a_zero_budget_try_is_observed_at_cost_zero_and_retried() -> None:
    # After 32 (775 J) reached, batch size 8's first epoch (3000 J) exceeds beta x min cost
    # (1550 J): its budget is 0, it never runs, the policy observes cost 0 (the original's
    # zeus_cost(0, 0)), not reached, and the job is retried at once: pruning turns upwards (64).
    seen: list[tuple[int, float, bool, float]] = []

    class Recording(get_policy("zeus")):  # type: ignore[misc,valid-type]
        def observe(self, outcome: Outcome) -> None:
            seen.append((outcome.batch_size, outcome.cost, outcome.reached, outcome.epochs))
            super().observe(outcome)

    model = JobModel(_slow_eight(), cost=Cost(1.0))
    rows = replay_group(
        model, Recording, 1, 2.0, np.array([0.0, 20.0, 40.0]), np.array([10.0, 30.0, 50.0]), np.ones(3)
    )
    assert seen == [
        (32, 775.0, True, 5.0),
        (16, 625.0, True, 4.0),
        (8, 0.0, False, 0.0),
        (64, 475.0, True, 3.0),
    ]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (1, 1, 32),
        (2, 1, 16),
        (3, 2, 64),
    ]  # no row for the try that never ran


def test_a_submission_is_given_up_after_the_zero_budget_bound() -> None:
    # A policy that asks for 8 after b0: every retry has a zero budget. The original retries such a
    # job forever; the replay gives it up after MAX_ZERO_BUDGET_TRIES in a row, with one row.
    class EightAfterB0(Policy):
        name = "eight-after-b0"

        def __init__(self, ctx: PolicyContext) -> None:
            super().__init__(ctx)
            self.tries = 0

        def predict(self) -> Decision:
            self.tries += 1
            return Decision(32 if self.tries == 1 else 8, 100.0)

    model = JobModel(_slow_eight(), cost=Cost(1.0))
    rows = replay_group(
        model, EightAfterB0, 1, 2.0, np.array([0.0, 20.0]), np.array([10.0, 30.0]), np.ones(2)
    )
    got = [dict(zip(RUN_FIELDS, r, strict=True)) for r in rows]
    assert [(r["recurrence"], r["attempt"], r["ran"], r["batch_size"]) for r in got] == [
        (1, 1, True, 32),
        (2, MAX_ZERO_BUDGET_TRIES, False, 8),
    ]


def test_replay_group_refuses_noise_horizon_and_unknown_options() -> None:
    model, zeus = JobModel(toy_job(), cost=Cost(1.0)), get_policy("zeus")
    group = (np.array([0.0, 5.0]), np.array([10.0, 15.0]), np.ones(2))
    assert replay_group(model, zeus, 1, 2.0, *group, window=0) == replay_group(model, zeus, 1, 2.0, *group)
    with pytest.raises(ValueError, match="no --horizon or --noise"):
        replay_group(model, zeus, 1, 2.0, *group, noise=0.05)
    with pytest.raises(ValueError, match="no --horizon or --noise"):
        replay_group(model, zeus, 1, 2.0, *group, horizon="unknown")
    with pytest.raises(TypeError, match="windw"):
        replay_group(model, zeus, 1, 2.0, *group, windw=1)
