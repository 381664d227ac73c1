"""The recurrence bookkeeping and the anytime floor's filters, on data that tell each rule from its slip.

Issue 36: a recurrence of several tries (summed, not the last try), a failed recurrence (charged
the baseline, not the oracle), and the anytime floor's cheapest try (a path of exactly
``max_epochs`` epochs counts, a path that never reaches does not, b0's own paths do not).
Each expected value is worked by hand from the toy trace (``tests/helpers/sim_toy.py``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.model import RUN_FIELDS, SeedTries
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import JobModel
from zeus_bench.studies import recurrences
from zeus_bench.studies.recurrences import anytime_floor, recurrence_costs, references


def test_a_recurrence_of_several_tries_is_charged_their_sum() -> None:
    # zeus on the toy (eta 1, beta 2): 32 (775 J, profiled), 16 (625), then 8 early-stopped at
    # 8 epochs (1225 J) and retried with 64 (475 J) in recurrence 3: 1700; then 64 (450), 32 (750).
    spent, failed = recurrence_costs(JobModel(toy_job(), Cost(1.0)), get_policy("zeus"), [1], 2.0, 5)
    assert spent.tolist() == [[775.0, 625.0, 1225.0 + 475.0, 450.0, 750.0]]
    assert not failed.any()


def test_a_failed_recurrence_is_charged_its_tries_plus_the_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Injected rows (recurrence, ..., cost at 7, reached at 8): recurrence 1 fails then reaches
    # (100 + 200); recurrence 2's only try fails (50, plus the baseline's expected cost).
    # Each seed gets the same three rows (only the recurrence, cost and reached columns are read).
    def rows(_model: object, _cls: object, seeds: list[int], *_: object, **__: object) -> SeedTries:
        one = ((1, 100.0, False), (1, 200.0, True), (2, 50.0, False))
        k = len(seeds)
        columns = {name: np.zeros(3 * k) for name in RUN_FIELDS}
        columns["recurrence"] = np.tile([r for r, _, _ in one], k)
        columns["cost"] = np.tile([c for _, c, _ in one], k)
        columns["reached"] = np.tile([r for _, _, r in one], k)
        return SeedTries(k, np.repeat(np.arange(k), 3), columns)

    monkeypatch.setattr(recurrences, "replay_many", rows)
    model = JobModel(toy_job(), Cost(1.0))
    refs = references(model)
    assert refs.baseline != refs.oracle  # 32 at 200 W (1000 J) against 64 at 100 W (450 J)
    spent, failed = recurrence_costs(model, get_policy("zeus"), [7, 8], 2.0, 2)
    assert failed.tolist() == [[False, True], [False, True]]
    assert spent.tolist() == [[300.0, 50.0 + refs.baseline]] * 2


def _floor(model: JobModel, n: int, safety: float, x_min: float) -> float:
    """The anytime floor's formula given the cheapest try ``x_min`` (worked by hand in each test)."""
    refs = references(model)
    c0 = float(np.nanmin(model.expected_cost[model.job.bs_index(model.job.b0)]))
    waited = min(n, math.ceil(x_min / ((1.0 + safety) * refs.baseline - c0)) - 1)
    return 100.0 * waited * (c0 - refs.oracle) / (n * refs.oracle)


def test_a_path_of_exactly_max_epochs_funds_the_anytime_floors_try() -> None:
    # b0 = 16 needs 8 epochs (1600 at eta 0.5, its cheapest limit); 32's epochs cost 100 (half
    # the time) and its one path needs exactly max_epochs = 10: x_min = 1000, the oracle at 1000.
    # t* = ceil(1000 / 32) = 32: 31 recurrences of 600 too many over 40 x 1000 = 46.5 %.
    job = toy_job(targets={8: [np.nan], 16: [8.0, 8.0], 32: [10.0]}, b0=16)
    job = dataclasses.replace(job, time_per_epoch_s=job.time_per_epoch_s * np.array([[1.0], [1.0], [0.5]]))
    model = JobModel(job, Cost(0.5))
    assert references(model).oracle == pytest.approx(1000.0)
    assert anytime_floor(model, 40, 0.02) == pytest.approx(46.5)
    assert anytime_floor(model, 40, 0.02) == pytest.approx(_floor(model, 40, 0.02, 1000.0))


def test_a_path_that_never_reaches_is_no_cheapest_try() -> None:
    # 8's paths: 2 epochs or never (NaN): its 2 epochs (400) are the cheapest try, not 32's 3 (600).
    # t* = ceil(400 / 32) = 13: 12 recurrences of 800 too many over 40 x 800 = 30 %.
    model = JobModel(toy_job(targets={8: [2.0, np.nan], 16: [8.0, 8.0], 32: [3.0, 5.0]}, b0=16), Cost(0.5))
    assert anytime_floor(model, 40, 0.02) == pytest.approx(30.0)
    assert anytime_floor(model, 40, 0.02) == pytest.approx(_floor(model, 40, 0.02, 400.0))


def test_b0s_own_paths_are_not_the_try_of_another_batch_size() -> None:
    # b0 = 16 has a path of 4 epochs (800), cheaper than 32's 3 epochs of 400 (1200, 32's epochs
    # twice as long): the try is 32's. t* = ceil(1200 / 32) = 38: 37 x 400 / (40 x 1200).
    job = toy_job(targets={8: [np.nan], 16: [4.0, 12.0], 32: [3.0, 3.0]}, b0=16, max_epochs=12)
    job = dataclasses.replace(job, time_per_epoch_s=job.time_per_epoch_s * np.array([[1.0], [1.0], [2.0]]))
    model = JobModel(job, Cost(0.5))
    assert anytime_floor(model, 40, 0.02) == pytest.approx(100.0 * 37 * 400 / (40 * 1200))
    assert anytime_floor(model, 40, 0.02) == pytest.approx(_floor(model, 40, 0.02, 1200.0))


def test_a_replays_charge_adds_each_cells_costs_in_row_order() -> None:
    # Costs whose sum depends on the order (1e16 + 1 + 1 - 1e16): each (seed, recurrence) cell adds
    # its rows in row order, as a loop over the rows does; a cell no row reached fails.
    k = 3
    costs = np.array([1e16, 1.0, 1.0, -1e16, 5.0, 0.1, 0.2, 0.3] * k)
    recs = np.array([1, 1, 1, 1, 2, 1, 1, 2] * k)
    seed = np.repeat(np.arange(k), 8)
    reached = np.tile([False, False, False, True, False, True, False, False], k)
    columns = {name: np.zeros(len(costs)) for name in RUN_FIELDS}
    columns.update(recurrence=recs, cost=costs, reached=reached)
    model = JobModel(toy_job(), Cost(1.0))
    spent, failed = recurrences.tries_costs(model, SeedTries(k + 1, seed, columns), 2)
    by_loop = np.zeros((k + 1, 2))
    for s, r, c in zip(seed, recs, costs, strict=True):
        by_loop[s, r - 1] += c
    assert by_loop[0, 0] != math.fsum(
        [1e16, 1.0, 1.0, -1e16, 0.1, 0.2]
    )  # the order matters here (0.3 against 2.3)
    base = references(model).baseline
    assert failed.tolist() == [[False, True]] * k + [[True, True]]
    assert spent[:k, 0].tolist() == by_loop[:k, 0].tolist()
    assert spent[:k, 1].tolist() == [by_loop[0, 1] + base] * k  # failed: its tries plus the baseline
    assert spent[k].tolist() == [base, base]  # a seed without rows: both recurrences failed
