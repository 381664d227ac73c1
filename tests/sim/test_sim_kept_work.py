"""Work the replay keeps instead of redoing it gives what redoing it gives.

max-batch's configuration per job, the bootstrap's resample indices per (n, reps, seed), the
scalar faces' decision indices per decision and the baselines' unplayed-arm order per arm set.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import BOOTSTRAP_REPS, BOOTSTRAP_SEED, bootstrap_indices
from zeus_bench.sim.policies import PolicyContext, get_policy
from zeus_bench.sim.policies.arm_faces import unplayed_order
from zeus_bench.sim.policies.builtin import max_batch_configuration, max_limit_w
from zeus_bench.sim.policies.seeds import Decision, ScalarPolicies, decision_indices
from zeus_bench.sim.replay import JobModel

SPREAD = {b: [2.0 + (k * b) % 7 for k in range(1, 6)] for b in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)}


def test_max_batch_configuration_is_the_jobs_and_asked_once() -> None:
    job = toy_job(SPREAD, b0=32)
    b = job.max_batch()
    assert max_batch_configuration(job) == (b, max_limit_w(job, b)) == (256, 200.0)
    hits = max_batch_configuration.cache_info().hits
    model = JobModel(job, Cost(0.5))
    cls = get_policy("max-batch")
    policies = [cls(PolicyContext(job, model.cost, 2.0, 0, np.random.default_rng(s))) for s in range(5)]
    assert {p.predict() for p in policies} == {Decision(256, 200.0)}
    assert max_batch_configuration.cache_info().hits == hits + 5


def test_bootstrap_indices_are_the_generators_draws_and_read_only() -> None:
    fresh = np.random.default_rng(BOOTSTRAP_SEED).integers(0, 17, size=(BOOTSTRAP_REPS, 17))
    kept = bootstrap_indices(17)
    assert kept.shape == (2000, 17)
    assert np.array_equal(kept, fresh)
    assert bootstrap_indices(17) is kept  # drawn once
    assert np.array_equal(
        bootstrap_indices(17, 50, 3), np.random.default_rng(3).integers(0, 17, size=(50, 17))
    )
    with pytest.raises(ValueError, match="read-only"):
        kept[0, 0] = 1


def test_decision_indices_kept_per_decision() -> None:
    model = JobModel(toy_job(), Cost(0.5))
    face = ScalarPolicies(model, [])
    for d in (Decision(32, None), Decision(32, 100.0), Decision(8, 200.0), Decision(32, None)):
        assert face.indices(d) == decision_indices(model, d)
    assert face.indices(Decision(32, None))[2] is True
    assert len(face._at) == 3
    with pytest.raises(ConfigError, match="unknown batch size 7"):
        face.indices(Decision(7, None))
    assert len(face._at) == 3  # an error is not kept


@pytest.mark.parametrize("b0", [4, 24, 32, 256])
def test_unplayed_order_is_nearest_b0_in_doublings_larger_first(b0: int) -> None:
    arms = (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)
    order = [arms[i] for i in unplayed_order(arms, b0)]
    key = [(abs(math.log2(b) - math.log2(b0)), -b) for b in order]
    assert key == sorted(key) and sorted(order) == list(arms)
    assert order[0] == b0
    if b0 == 32:
        assert order[:5] == [32, 24, 48, 64, 16]  # 64 and 16 a doubling away: the larger first
