"""Fixed rules of the replay shared by its loops (:mod:`zeus_bench.sim.replay`, :mod:`zeus_bench.sim.fastzeus`).

:mod:`zeus_bench.sim.replay` documents them and re-exports these names.
"""

from __future__ import annotations

import numpy as np

MAX_TRIES = 20  # tries per recurrence
ZERO_BUDGET_PENALTY = 100.0  # a zero-budget try is observed at this x beta x min_cost


def seed_generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Environment (path sampling) and policy generators of a seed.

    Each is ``numpy.random.default_rng(seed)``, as the paper's simulator seeds its own and its
    optimizer's generators; they are separate objects, so the policy's draws never shift the
    paths sampled (the same seed samples the same paths under every policy).
    """
    seeds = np.random.SeedSequence(seed)  # what default_rng(seed) hashes the seed with, once for both
    return np.random.Generator(np.random.PCG64(seeds)), np.random.Generator(np.random.PCG64(seeds))
