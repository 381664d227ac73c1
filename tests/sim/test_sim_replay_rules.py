"""The replay rules, pinned on a hand-made trace where every try can be worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.executor import OneTry, Run, execute
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext, get_policy, jit_power_limit
from zeus_bench.sim.policies.base import scalar_face
from zeus_bench.sim.replay import MAX_TRIES, RUN_FIELDS, JobModel, replay
from zeus_bench.sim.rules import ReplayOptions


def rows_as_dicts(rows):
    return [dict(zip(RUN_FIELDS, r, strict=True)) for r in rows]


def test_zeus_first_six_recurrences_by_hand() -> None:
    job = toy_job()
    rows = rows_as_dicts(
        replay(JobModel(job, cost=Cost(1.0)), get_policy("zeus"), seed=1, beta=2.0, recurrences=6)
    )
    got = [
        (
            r["recurrence"],
            r["attempt"],
            r["batch_size"],
            r["power_limit_w"],
            r["epochs"],
            r["energy_j"],
            r["reached"],
            r["profiled"],
        )
        for r in rows
    ]
    assert got == [
        # Pruning round 1 from b0 = 32, downwards: 32 profiles (175 + 4 x 150 J), min_cost 775.
        (1, 1, 32, 100.0, 5.0, 775.0, True, True),
        # 16: budget min(1550 // 150, 10) = 10 >= 4 -> reached, 175 + 3 x 150 = 625; min_cost 625.
        (2, 1, 16, 100.0, 4.0, 625.0, True, True),
        # 8 never converges: early-stopped at 1250 // 150 = 8 epochs; the direction ends and the
        # same recurrence goes on upwards with 64 (175 + 2 x 150 = 475).
        (3, 1, 8, 100.0, 8.0, 1225.0, False, True),
        (3, 2, 64, 100.0, 3.0, 475.0, True, True),
        # Round 2 from the cheapest good size, 64, over {16, 32, 64}: 64, 32, 16, no profiling.
        (4, 1, 64, 100.0, 3.0, 450.0, True, False),
        (5, 1, 32, 100.0, 5.0, 750.0, True, False),
        (6, 1, 16, 100.0, 4.0, 600.0, True, False),
    ]


def test_bandit_arms_after_pruning_hold_the_pruning_history() -> None:
    job = toy_job()
    model = JobModel(job, cost=Cost(1.0))

    def run(recurrences: int) -> tuple[object, list, float]:
        env, pol = np.random.default_rng(0), np.random.default_rng(0)
        policy = get_policy("zeus")(PolicyContext(job, Cost(1.0), 2.0, 0, pol))
        # the scalar face: the policy object itself is asked and told (its bandit is inspected)
        (rows,), least = execute(model, scalar_face(model, [policy]), [env], Run(2.0, recurrences))
        return policy, rows, float(least[0])

    policy, _, least = run(6)
    bandit = policy.bandit  # type: ignore[attr-defined]
    assert not bandit.pruning
    assert bandit.arms == [16, 32, 64]
    assert bandit._rewards == {16: [-625.0, -600.0], 32: [-775.0, -750.0], 64: [-475.0, -450.0]}
    assert least == 450.0
    # From now on 64 (mean cost 462.5, sd of mean 6.25) is far cheaper: TS exploits it (the
    # same generators: the first 6 recurrences as above).
    _, rows, _ = run(11)
    assert [row[2] for row in rows[-5:]] == [64] * 5


class _Fixed(Policy):
    name = "test-fixed"

    def __init__(self, ctx: PolicyContext, decision: Decision, early_stopping: bool = True) -> None:
        super().__init__(ctx)
        self.decision = decision
        self.early_stopping = early_stopping  # type: ignore[misc]
        self.seen: list[Outcome] = []

    def predict(self) -> Decision:
        return self.decision

    def observe(self, outcome: Outcome) -> None:
        self.seen.append(outcome)


def _policy(decision: Decision, early_stopping: bool = True, beta: float = 2.0) -> _Fixed:
    return _Fixed(
        PolicyContext(toy_job(), Cost(1.0), beta, 0, np.random.default_rng(0)), decision, early_stopping
    )


def _one_try(decision: Decision, min_cost: float, beta: float = 2.0) -> OneTry:
    """Single tries of ``decision`` with the least recurrence cost ``min_cost`` so far."""
    policy = _policy(decision, beta=beta)
    return OneTry(
        JobModel(toy_job(), cost=Cost(1.0)), policy, beta, np.random.default_rng(0), min_cost=min_cost
    )


def _recurrence(
    decision: Decision, recurrence: int, min_cost: float, early_stopping: bool = True
) -> tuple[list, _Fixed, float]:
    """The executor's rows of recurrence ``recurrence`` alone, from ``min_cost``; the policy; the least cost after."""
    policy = _policy(decision, early_stopping)
    model = JobModel(toy_job(), cost=Cost(1.0))
    run = Run(2.0, recurrence, first=recurrence, least=min_cost)
    (rows,), least = execute(model, type(policy).batched(model, [policy]), [np.random.default_rng(0)], run)
    return rows, policy, float(least[0])


def test_zero_budget_try_is_observed_counts_as_a_try_and_a_recurrence_without_a_run_is_one_row() -> None:
    # min_cost 100 J: beta x min_cost = 200 J buys 200 // 150 = 1 epoch at 100 W ...
    assert _one_try(Decision(16, 100.0), 100.0).run(Decision(16, 100.0)).epochs == 1.0
    # ... and 0 below 75 J: the try never runs; the policy sees 100 x beta x min_cost, not reached.
    out = _one_try(Decision(16, 100.0), 70.0).run(Decision(16, 100.0))
    assert (out.epochs, out.energy_j, out.reached, out.cost) == (0.0, 0.0, False, 100 * 2.0 * 70.0)
    rows, policy, _ = _recurrence(Decision(16, 100.0), 2, 70.0)
    assert not any(r[8] for r in rows)  # the recurrence failed
    assert len(policy.seen) == MAX_TRIES  # each of the 20 tries was observed ...
    # ... and the recurrence is one row: nothing ran, nothing consumed, 20 tries attempted, the
    # last decision's configuration with its expected figures (16 at 100 W: 4 epochs x 150 J).
    (row,) = rows_as_dicts(rows)
    assert row == {
        "recurrence": 2, "attempt": MAX_TRIES, "batch_size": 16, "power_limit_w": 100.0, "epochs": 0.0,
        "energy_j": 0.0, "time_s": 0.0, "cost": 0.0, "reached": False, "profiled": False, "ran": False,
        "expected_energy_j": 600.0, "expected_time_s": 6.0, "expected_cost": 600.0,
    }  # fmt: skip
    # A recurrence in which one try ran has no such row: only the rows of its tries that ran.
    rows, _, _ = _recurrence(Decision(16, 100.0), 3, 100.0)
    assert not any(r[8] for r in rows)  # failed
    assert [(r["attempt"], r["ran"], r["epochs"]) for r in rows_as_dicts(rows)] == [
        (a, True, 1.0) for a in range(1, MAX_TRIES + 1)
    ]


def test_twenty_try_limit_and_failed_recurrence() -> None:
    # No early stopping: the budget stays max_epochs whatever min_cost.
    rows, _, least = _recurrence(Decision(8, 200.0), 2, 1.0, early_stopping=False)
    assert [r[1] for r in rows] == list(range(1, MAX_TRIES + 1))
    assert all(r[4] == 10.0 and not r[8] for r in rows)  # 10 epochs each, never reached
    assert least == 1.0


def test_first_recurrence_must_converge() -> None:
    job = toy_job(b0=8)
    with pytest.raises(ConfigError, match="never reaches the target"):
        JobModel(job, cost=Cost(0.5))
    with pytest.raises(ConfigError, match="first recurrence"):
        _recurrence(Decision(8, 200.0), 1, math.inf)


def test_beta_inf_turns_early_stopping_off() -> None:
    assert _one_try(Decision(8, 100.0), 1.0, beta=math.inf).run(Decision(8, 100.0)).epochs == 10.0


def test_jit_ties_go_to_the_higher_limit_and_nan_is_skipped() -> None:
    limits = np.array([100.0, 150.0, 200.0])
    # Equal epoch cost at 150 and 200 W; 100 W unmeasured.
    tpe = np.array([np.nan, 2.0, 1.5])
    pw = np.array([np.nan, 150.0, 200.0])
    assert jit_power_limit(limits, tpe, pw, Cost(1.0), 200.0) == 200.0
    assert jit_power_limit(limits[::-1], tpe[::-1], pw[::-1], Cost(1.0), 200.0) == 200.0
    # eta = 0 (time only): the fastest limit.
    assert (
        jit_power_limit(limits, np.array([3.0, 2.0, 1.5]), np.array([90.0, 150.0, 200.0]), Cost(0.0), 200.0)
        == 200.0
    )
    with pytest.raises(ValueError, match="no measured"):
        jit_power_limit(limits, np.full(3, np.nan), np.full(3, np.nan), Cost(0.5), 200.0)


def test_window_reaches_the_bandit() -> None:
    job = toy_job()
    policy = get_policy("zeus")(PolicyContext(job, Cost(0.5), 2.0, 7, np.random.default_rng(0)))
    assert policy.bandit.window == 7  # type: ignore[attr-defined]


def test_policy_choosing_an_unmeasured_configuration_is_refused() -> None:
    one = _one_try(Decision(16, 125.0), math.inf)
    with pytest.raises(ConfigError, match="unmeasured configuration"):
        one.run(Decision(16, 125.0))
    with pytest.raises(ConfigError, match="unknown batch size"):
        one.run(Decision(12, None))
    with pytest.raises(ConfigError, match="unmeasured configuration"):  # in the step loop too
        _recurrence(Decision(16, 125.0), 2, math.inf)


def test_window_in_the_replay() -> None:
    # After the six pruning recurrences (worked out above) 64 is far cheaper than 16 and 32.
    model = JobModel(toy_job(), cost=Cost(1.0))
    unbounded = replay(model, get_policy("zeus"), seed=2, beta=2.0, recurrences=36)
    assert {r[2] for r in unbounded[7:]} == {64}
    # A window of 1 leaves every arm with fewer than 2 observations in its window: the bandit
    # keeps exploring in random order instead of exploiting.
    windowed = replay(model, get_policy("zeus"), seed=2, beta=2.0, recurrences=36, window=1)
    assert [r[:10] for r in windowed[:7]] == [r[:10] for r in unbounded[:7]]
    assert {r[2] for r in windowed[7:]} == {16, 32, 64}


def test_policy_batched_default_wraps_one_policy_per_seed_and_the_replay_asks_it() -> None:
    """``Policy.batched`` is the face over seeds: its default asks each seed's object; an override is used."""
    from zeus_bench.sim.policies.seeds import ScalarPolicies
    from zeus_bench.sim.replay import replay_many

    job = toy_job()
    model = JobModel(job, cost=Cost(1.0))
    base = get_policy("baseline")

    class Plain(base):  # type: ignore[valid-type,misc]
        """The baseline without its array face: a user policy that offers only predict/observe."""

        name = "plain-baseline"
        batched = classmethod(Policy.batched.__func__)  # type: ignore[attr-defined]

    policies = [Plain(PolicyContext(job, Cost(1.0), 2.0, 0, np.random.default_rng(s))) for s in (1, 2)]
    face = Plain.batched(model, policies)
    assert isinstance(face, ScalarPolicies) and face.policies == policies
    assert not isinstance(base.batched(model, policies), ScalarPolicies)  # the built-in's array face
    assert replay_many(model, Plain, [1, 2, 3], 2.0, 6) == replay_many(model, base, [1, 2, 3], 2.0, 6)
    asked: list[int] = []

    class Counted(base):  # type: ignore[valid-type,misc]
        name = "counted-baseline"

        @classmethod
        def batched(cls, model, policies):  # type: ignore[no-untyped-def]
            asked.append(len(policies))
            return super().batched(model, policies)

    assert replay_many(model, Counted, [1, 2, 3], 2.0, 6) == replay_many(model, base, [1, 2, 3], 2.0, 6)
    assert asked == [3]


def test_replay_options_as_an_object_or_as_keywords_give_the_same_rows() -> None:
    model = JobModel(toy_job(), cost=Cost(1.0))
    zeus = get_policy("zeus")
    options = ReplayOptions(window=2, horizon="unknown", noise=0.05)

    def rows(**kw: Any) -> str:  # repr: the toy job's expected columns are NaN
        return repr(replay(model, zeus, 4, 2.0, 12, **kw))

    by_object = rows(options=options)
    assert by_object == rows(window=2, horizon="unknown", noise=0.05)
    assert by_object != rows()  # the noise reached the rows
    # a field named overrides the object's
    assert rows(options=options, noise=0.0, window=0, horizon="known") == rows()
    with pytest.raises(TypeError, match="windw"):
        replay(model, zeus, 4, 2.0, 12, windw=2)
    with pytest.raises(TypeError):
        replay(model, zeus, 4, 2.0, 12, 2)  # type: ignore[misc,arg-type]  # window is keyword-only
