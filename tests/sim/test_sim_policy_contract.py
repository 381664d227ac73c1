"""Contract tests, parametrized over every registered policy (researchers' policies included)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import POLICIES, Decision, Outcome, PolicyContext, get_policy
from zeus_bench.sim.replay import JobModel, replay

# Several paths per batch size, so that seeds matter.
NOISY = {
    8: [np.nan, 9.0, np.nan],
    16: [4.0, 5.0, 7.0],
    32: [5.0, 6.0, 4.0],
    64: [3.0, 8.0, 4.0],
    128: [9.0, np.nan, 6.0],
}


def _valid(job, decision: Decision) -> bool:
    if decision.batch_size not in set(job.batch_sizes.tolist()):
        return False
    return decision.power_limit_w is None or decision.power_limit_w in set(
        job.limits_of(decision.batch_size).tolist()
    )


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_returns_a_known_configuration_and_accepts_every_observation(name: str) -> None:
    job = toy_job(NOISY)
    policy = get_policy(name)(PolicyContext(job, Cost(0.5), 2.0, 0, np.random.default_rng(0)))
    assert _valid(job, policy.predict())
    assert _valid(job, policy.best())
    for b in job.batch_sizes.tolist():
        for p in job.limits_of(b).tolist():
            for reached in (True, False):
                for profiled in (True, False):
                    policy.observe(Outcome(b, p, 123.0 + b, reached, 3.0, 100.0, 2.0, profiled))
                    assert _valid(job, policy.predict())
    policy.observe(Outcome(16, 100.0, 1e9, False, 0.0, 0.0, 0.0, False))  # a zero-budget penalty
    assert _valid(job, policy.predict())
    assert _valid(job, policy.best())


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_same_seed_same_history(name: str) -> None:
    model = JobModel(toy_job(NOISY), cost=Cost(0.5))
    a = replay(model, get_policy(name), seed=3, beta=2.0, recurrences=40)
    b = replay(model, get_policy(name), seed=3, beta=2.0, recurrences=40)
    assert a == b
    assert len(a) >= 40


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_different_seeds_differ_where_the_policy_is_random(name: str) -> None:
    model = JobModel(toy_job(NOISY), cost=Cost(0.5))
    histories = {
        tuple((r[2], r[3]) for r in replay(model, get_policy(name), seed=s, beta=2.0, recurrences=40))
        for s in range(1, 6)
    }
    if get_policy(name).randomized:
        assert len(histories) > 1
    # Every policy's paths are sampled from the seed: the rows (epochs) differ across seeds.
    epochs = {
        tuple(r[4] for r in replay(model, get_policy(name), seed=s, beta=2.0, recurrences=40))
        for s in range(1, 6)
    }
    assert len(epochs) > 1


def test_registry_holds_the_papers_policies() -> None:
    assert {"zeus", "baseline", "max-batch", "oracle", "grid-search", "bs-only", "pl-only"} <= set(POLICIES)


def test_reference_policies_run_their_configuration() -> None:
    job = toy_job(NOISY)
    ctx = PolicyContext(job, Cost(0.5), 2.0, 0, np.random.default_rng(0))
    assert get_policy("baseline")(ctx).predict() == Decision(32, 200.0)
    # 64 is the largest batch size whose paths all converge (128 has a path that never does).
    assert get_policy("max-batch")(ctx).predict() == Decision(64, 200.0)
    assert get_policy("pl-only")(ctx).predict() == Decision(32, None)
    # Oracle: least expected cost among always-converging sizes: 64 at 4 2/3 epochs x cost/epoch.
    expected = job.configurations(Cost(0.5))
    feasible = expected[expected["feasible"]].sort_values("cost").iloc[0]
    assert get_policy("oracle")(ctx).predict() == Decision(
        int(feasible["batch_size"]), float(feasible["power_limit_w"])
    )


def test_grid_search_tries_every_configuration_once_then_keeps_the_best() -> None:
    job = toy_job(NOISY)
    rows = replay(
        JobModel(job, cost=Cost(0.5)), get_policy("grid-search"), seed=1, beta=np.inf, recurrences=30
    )
    tried = [(r[2], r[3]) for r in rows]
    n = sum(len(job.limits_of(int(b))) for b in job.batch_sizes)
    assert tried[0] == (32, 200.0)
    assert len(set(tried[:n])) == n
    assert len(set(tried[n:])) == 1
    best = min((r for r in rows[:n] if r[8]), key=lambda r: r[7])
    assert tried[n] == (best[2], best[3])


def test_adding_a_policy_in_a_few_lines() -> None:
    from zeus_bench.sim.policies.base import Policy, register_policy

    @register_policy
    class Second(Policy):
        name = "test-second"

        def predict(self) -> Decision:
            return Decision(int(self.ctx.job.batch_sizes[1]), None)

    try:
        rows = replay(
            JobModel(toy_job(NOISY), cost=Cost(0.5)),
            get_policy("test-second"),
            seed=1,
            beta=2.0,
            recurrences=3,
        )
        assert [r[2] for r in rows] == [16, 16, 16]
        assert [r[9] for r in rows] == [True, True, True]  # no memory: profiles every time
    finally:
        del POLICIES["test-second"]
