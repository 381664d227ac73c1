"""Moved to zeus_bench.optimizers.bandit; re-exported here for one release (a public import path)."""

from zeus_bench.optimizers.bandit import *  # noqa: F403
from zeus_bench.optimizers.bandit import (
    MIN_OBSERVATIONS,
    PRUNE_ROUNDS,
    STATE_VERSION,
    BanditKnobs,
    PruningThompsonSampling,
    approx_from_sums,
    largest_sample,
    numpy_sum,
    posterior,
    rng_from_state,
    rng_state,
    sum_and_variance,
)

__all__ = [
    "MIN_OBSERVATIONS",
    "PRUNE_ROUNDS",
    "STATE_VERSION",
    "BanditKnobs",
    "PruningThompsonSampling",
    "approx_from_sums",
    "largest_sample",
    "numpy_sum",
    "posterior",
    "rng_from_state",
    "rng_state",
    "sum_and_variance",
]
