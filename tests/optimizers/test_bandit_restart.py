"""The batch-size optimizer's shortcuts for replays of many groups (issue #34).

``restarted`` must make what the constructor makes, and observations folded into the caches
when next read must decide as observations folded one at a time (the running sums resumed from
earlier ones equal the sums from scratch). Seen failing against a restart that kept the
template's rewards list (shared between optimizers) and against sums resumed from the wrong
reward.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.optimizers.posterior import running_sums

BATCH_SIZES = [8, 16, 32, 64, 128]
# Costs per batch size: 32 is cheapest, 128 never reaches the target.
COSTS = {8: 90.0, 16: 60.0, 32: 40.0, 64: 55.0, 128: 300.0}


def _drive(opt: PruningThompsonSampling, seed: int, steps: int) -> list[int]:
    """Predictions of ``steps`` runs, two launched before each pair is observed (overlapping)."""
    noise = np.random.default_rng(seed)
    picks = []
    for _ in range(steps):
        batch = [opt.predict() for _ in range(2)]
        picks += batch
        for b in batch:
            opt.observe(b, COSTS[b] * (1.0 + 0.2 * float(noise.standard_normal())), b != 128)
    return picks


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 40))
def test_restarted_optimizer_decides_as_a_new_one(seed: int, steps: int) -> None:
    template = PruningThompsonSampling(BATCH_SIZES, 32, np.random.default_rng(seed), concurrency=True)
    _drive(template, seed, 5)  # a used template: nothing of its run may leak into the restart
    fresh = PruningThompsonSampling(BATCH_SIZES, 32, np.random.default_rng(seed + 1), concurrency=True)
    restarted = template.restarted(np.random.default_rng(seed + 1))
    assert restarted.state_dict() == fresh.state_dict()
    assert _drive(restarted, seed, steps) == _drive(fresh, seed, steps)
    assert restarted.state_dict() == fresh.state_dict()
    assert len(template.history) == 10 and len(restarted.history) == 2 * steps  # no list shared


def test_restarted_optimizer_without_pruning_has_every_batch_size_as_an_arm() -> None:
    template = PruningThompsonSampling(BATCH_SIZES, 32, np.random.default_rng(0), prune_rounds=0)
    template.observe(8, 10.0, True)
    restarted = template.restarted(np.random.default_rng(0))
    assert restarted.arms == BATCH_SIZES
    assert restarted.state_dict()["rewards"] == [[b, []] for b in BATCH_SIZES]
    assert template.state_dict()["rewards"][0] == [8, [-10.0]]


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=40), st.integers(0, 40))
def test_running_sums_resumed_equal_the_sums_from_none(rewards: list[float], cut: int) -> None:
    cut = min(cut, len(rewards))
    resumed = running_sums(rewards[cut:], running_sums(rewards[:cut]))
    assert [repr(v) for v in resumed] == [repr(v) for v in running_sums(rewards)]
    assert resumed[0] == float(len(rewards))
