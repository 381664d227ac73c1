"""The arrival loops' time boundaries and attempt bounds, hit exactly, in both loops.

Issue 36's slips: a job that ends exactly when a submission starts (observed first, or not), a
retry launched at the same instant as a submission (the retry first), and the two bounds of a
submission's tries (attempts and zero-budget tries in a row) at their limits. Each case runs the
fused loop (:mod:`zeus_bench.sim.scenarios.fastarrivals`) and the generic one
(:func:`zeus_bench.sim.scenarios.arrivals._replay_generic`) on the toy trace; the bounds are
lowered (monkeypatched in both modules) so that a limit is reached in a few tries, and each
expected row list differs from what the slip (``<=`` for ``<``, ``>=`` for ``>``) gives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import BanditKnobs, JobModel, Row
from zeus_bench.sim.scenarios import arrivals, fastarrivals

Loop = Callable[[JobModel, list[float], list[float]], list[Row]]
ZEUS = get_policy("zeus")


def _fused(model: JobModel, starts: list[float], ends: list[float]) -> list[Row]:
    assert arrivals.fused_tries(model, ZEUS, 1, 2.0, 0, BanditKnobs()) is not None  # the fused path
    return arrivals.replay_group(model, ZEUS, 1, 2.0, np.array(starts), np.array(ends), np.ones(len(starts)))


def _generic(model: JobModel, starts: list[float], ends: list[float]) -> list[Row]:
    group = (np.array(starts), np.array(ends), np.ones(len(starts)))
    return arrivals._replay_generic(model, ZEUS, 1, 2.0, group, 0, BanditKnobs())


LOOPS = pytest.mark.parametrize("loop", [_fused, _generic], ids=["fused", "generic"])


def _brief(rows: list[Row]) -> list[tuple[int, int, int, bool, bool]]:
    """(submission, attempt, batch size, reached, ran) per row."""
    return [(int(r[0]), int(r[1]), int(r[2]), bool(r[8]), bool(r[10])) for r in rows]


def _toy() -> JobModel:
    return JobModel(toy_job(), cost=Cost(1.0))


def _slow_eight() -> JobModel:
    """The toy with batch size 8 20x slower: after b0's 775 J, 8's budget (beta x 775 J) is zero."""
    job = toy_job()
    tpe = job.time_per_epoch_s.copy()
    tpe[0] *= 20.0
    return JobModel(dataclasses.replace(job, time_per_epoch_s=tpe), cost=Cost(1.0))


@LOOPS
def test_a_job_ending_exactly_at_a_start_is_observed_before_it(loop: Loop) -> None:
    # Job 1 (b0 = 32) ends at 10, job 2 starts at 10: job 1 is observed first, so job 2 runs
    # alone and asks the optimizer (pruning's next size, 16, profiled); job 3, also at 10,
    # starts while job 2 runs: the best known (32, no profiling).
    rows = loop(_toy(), [0.0, 10.0, 10.0], [10.0, 20.0, 25.0])
    assert _brief(rows) == [(1, 1, 32, True, True), (2, 1, 16, True, True), (3, 1, 32, True, True)]
    assert [bool(r[9]) for r in rows] == [True, True, False]  # profiled
    # A hair earlier, job 1 still runs when job 2 starts: job 2 takes the best known (32).
    early = loop(_toy(), [0.0, 10.0 - 1e-9], [10.0, 20.0])
    assert _brief(early) == [(1, 1, 32, True, True), (2, 1, 32, True, True)]


@LOOPS
def test_a_retry_is_launched_before_a_submission_at_the_same_instant(loop: Loop) -> None:
    # Job 3 (batch size 8, early-stopped) fails at 50 and is retried at once: alone, it asks the
    # optimizer (64). Job 4, submitted at 50 too, then starts beside it: the best known, 16.
    rows = loop(_toy(), [0.0, 20.0, 40.0, 50.0], [10.0, 30.0, 50.0, 60.0])
    assert _brief(rows) == [
        (1, 1, 32, True, True),
        (2, 1, 16, True, True),
        (3, 1, 8, False, True),
        (3, 2, 64, True, True),
        (4, 1, 16, True, True),
    ]
    # Job 4 a hair earlier: it starts beside job 3 (16), and the retry, beside job 4, takes 16 too.
    early = loop(_toy(), [0.0, 20.0, 40.0, 50.0 - 1e-9], [10.0, 30.0, 50.0, 60.0])
    assert _brief(early)[3:] == [(4, 1, 16, True, True), (3, 2, 16, True, True)]


@LOOPS
@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        # One try allowed: 8's failed try ends the submission (it ran, so no given-up row).
        (1, [(3, 1, 8, False, True), (4, 1, 64, True, True)]),
        # Two: the retry (64) reaches.
        (2, [(3, 1, 8, False, True), (3, 2, 64, True, True), (4, 1, 64, True, True)]),
    ],
)
def test_the_attempt_limit_is_the_number_of_tries(
    loop: Loop, limit: int, expected: list[tuple[int, int, int, bool, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrivals, "MAX_SUBMISSION_TRIES", limit)
    monkeypatch.setattr(fastarrivals, "MAX_SUBMISSION_TRIES", limit)
    rows = loop(_toy(), [0.0, 20.0, 40.0, 100.0], [10.0, 30.0, 50.0, 110.0])
    assert _brief(rows)[:2] == [(1, 1, 32, True, True), (2, 1, 16, True, True)]
    assert _brief(rows)[2:] == expected


@LOOPS
@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        # One zero-budget try in a row allowed: job 3 (8, budget zero) is given up with one row
        # for the try that did not run (attempt 1, ran false).
        (1, [(3, 1, 8, False, False)]),
        # Two: the retry (64) runs and reaches; no row for the try that never ran.
        (2, [(3, 2, 64, True, True)]),
    ],
)
def test_the_zero_budget_limit_counts_tries_in_a_row(
    loop: Loop, limit: int, expected: list[tuple[int, int, int, bool, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrivals, "MAX_ZERO_BUDGET_TRIES", limit)
    monkeypatch.setattr(fastarrivals, "MAX_ZERO_BUDGET_TRIES", limit)
    rows = loop(_slow_eight(), [0.0, 20.0, 40.0], [10.0, 30.0, 50.0])
    assert _brief(rows) == [(1, 1, 32, True, True), (2, 1, 16, True, True), *expected]
    given_up = [r for r in rows if not r[10]]
    assert all(r[4] == 0.0 and r[5] == 0.0 and r[7] == 0.0 for r in given_up)  # nothing spent


@LOOPS
def test_a_retry_lasts_as_long_as_the_try_it_repeats(loop: Loop) -> None:
    # Job 3 (8) runs [40, 47] and fails; its retry (64) runs [47, 54]: job 4 submitted at 53
    # starts beside it (the best known, 16), one submitted at 54 after it is observed (64, the
    # cheapest now, is what the optimizer picks).
    beside = loop(_toy(), [0.0, 20.0, 40.0, 53.0], [10.0, 30.0, 47.0, 60.0])
    after = loop(_toy(), [0.0, 20.0, 40.0, 54.0], [10.0, 30.0, 47.0, 60.0])
    assert _brief(beside)[3:] == [(3, 2, 64, True, True), (4, 1, 16, True, True)]
    assert _brief(after)[3:] == [(3, 2, 64, True, True), (4, 1, 64, True, True)]


@LOOPS
def test_jobs_are_observed_in_the_order_they_end_the_first_launched_first_on_a_tie(loop: Loop) -> None:
    # Job 1 runs [0, 30], job 2 (started beside it: best known, 32, not profiled) [5, 10]: job 2
    # ends first and is observed (its row) first.
    rows = loop(_toy(), [0.0, 5.0, 40.0], [30.0, 10.0, 50.0])
    assert [(int(r[0]), bool(r[9])) for r in rows] == [(2, False), (1, True), (3, True)]
    # Both end at 10: the first launched is observed first.
    tie = loop(_toy(), [0.0, 5.0, 40.0], [10.0, 10.0, 50.0])
    assert [(int(r[0]), bool(r[9])) for r in tie] == [(1, True), (2, False), (3, True)]


@LOOPS
def test_an_equal_cost_does_not_displace_the_best_known(loop: Loop) -> None:
    # 16 and 32 both reach in 5 epochs at the same cost (775 J, profiled): the first to reach
    # (32) stays the best known, which job 4, started beside job 3, and job 3's retry run.
    tie = JobModel(toy_job({8: [np.nan], 16: [5.0], 32: [5.0], 64: [3.0]}), cost=Cost(1.0))
    rows = loop(tie, [0.0, 20.0, 40.0, 45.0], [10.0, 30.0, 50.0, 55.0])
    assert [float(r[7]) for r in rows[:2]] == [775.0, 775.0]
    assert _brief(rows) == [
        (1, 1, 32, True, True),
        (2, 1, 16, True, True),
        (3, 1, 8, False, True),
        (4, 1, 32, True, True),
        (3, 2, 32, True, True),
    ]


def test_zero_budget_tries_count_in_a_row_a_try_that_ran_resets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # The generic loop, with a policy that asks, for job 2: 8 (zero budget), 16 (runs, fails), 8
    # (zero budget), 64 (reaches). With two zero-budget tries in a row allowed, job 2 gets there:
    # 16's try that ran resets the count.
    from zeus_bench.sim.policies import Decision, Policy, PolicyContext

    class Scripted(Policy):
        name = "scripted"

        def __init__(self, ctx: PolicyContext) -> None:
            super().__init__(ctx)
            self.script = iter([32, 8, 16, 8, 64])

        def predict(self) -> Decision:
            return Decision(next(self.script), 100.0)

    job = toy_job({8: [np.nan], 16: [np.nan], 32: [5.0], 64: [3.0]})
    tpe = job.time_per_epoch_s.copy()
    tpe[0] *= 20.0
    model = JobModel(dataclasses.replace(job, time_per_epoch_s=tpe), cost=Cost(1.0))
    monkeypatch.setattr(arrivals, "MAX_ZERO_BUDGET_TRIES", 2)
    rows = arrivals.replay_group(
        model, Scripted, 1, 2.0, np.array([0.0, 20.0]), np.array([10.0, 30.0]), np.ones(2)
    )
    assert _brief(rows) == [(1, 1, 32, True, True), (2, 2, 16, False, True), (2, 4, 64, True, True)]


@LOOPS
def test_the_job_that_ends_first_is_observed_before_a_later_start_while_a_longer_one_runs(loop: Loop) -> None:
    # Job 2 (16, 625 J: the new best) ends at 30 while job 3 (started beside it: 32) runs to 100:
    # job 4, submitted at 40 beside job 3, runs the best known after job 2 is observed, 16.
    rows = loop(_toy(), [0.0, 20.0, 22.0, 40.0], [10.0, 30.0, 100.0, 50.0])
    assert _brief(rows) == [
        (1, 1, 32, True, True),
        (2, 1, 16, True, True),
        (4, 1, 16, True, True),
        (3, 1, 32, True, True),
    ]
