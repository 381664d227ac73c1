"""The bandit baselines' array face (``seed_arms.ArmArrays``): its shared rules, figure for figure.

The rows of every policy's face are held to the scalar face in ``test_sim_array_faces.py``; here
the pooled noise on arrays is held to the scalar rule on adversarial sums (magnitudes far apart,
where the order of a sum shows), on rows of every number of arms with two observations or more.
"""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.sim.policies.arm_faces import SEQUENTIAL_SUM, SIGMA_MIN, pooled_stds
from zeus_bench.sim.policies.baselines import ArmBandit
from zeus_bench.sim.policies.seed_arms import py_max, py_min


def _sums(rng: np.random.Generator, rows: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = rng.integers(0, 5, size=(rows, k)).astype(float)
    n[rng.random((rows, k)) < 0.3] = rng.integers(2, 40)  # every number of arms of n > 1 turns up
    scale = 10.0 ** rng.integers(-8, 9, size=(rows, k))
    x = rng.standard_normal((rows, k)) * scale
    s1 = n * x
    s2 = n * x * x + np.abs(rng.standard_normal((rows, k))) * scale * (n > 1)
    return n, s1, s2


@pytest.mark.parametrize("k", [1, 3, 7, 8, 9, 10, 13, 15, 17])
def test_pooled_stds_are_pooled_std_row_by_row(k: int) -> None:
    rng = np.random.default_rng(k)
    n, s1, s2 = _sums(rng, 400, k)
    ours = pooled_stds(n, s1, s2)
    theirs = np.array([ArmBandit.pooled_std(a, b, c) for a, b, c in zip(n, s1, s2, strict=True)])
    assert ours.tobytes() == theirs.tobytes()
    counts = (n > 1).sum(axis=1)
    assert (counts > SEQUENTIAL_SUM).any() == (k > SEQUENTIAL_SUM)  # both ways of summing were asked
    assert (ours > SIGMA_MIN).sum() > 100  # not the floor alone


def test_the_running_sum_is_numpys_sum_of_few_numbers() -> None:
    rng = np.random.default_rng(7)
    for size in range(1, SEQUENTIAL_SUM + 1):
        for _ in range(300):
            x = rng.standard_normal(size) * 10.0 ** rng.integers(-12, 13, size=size)
            assert np.cumsum(x)[-1] == x.sum()
    more = np.array([1.0, 1e16, -1e16, 1.0, 1.0, 1.0, 1.0, 1.0])  # one more: pairwise
    assert len(more) == SEQUENTIAL_SUM + 1
    assert np.cumsum(more)[-1] != more.sum()


def test_python_min_and_max_keep_the_first_of_equals() -> None:
    a = np.array([0.0, -0.0, 1.0, np.nan, 2.0])
    b = np.array([-0.0, 0.0, 1.0, 1.0, np.nan])
    for ours, theirs in ((py_min(a, b), map(min, a, b)), (py_max(a, b), map(max, a, b))):
        assert ours.tobytes() == np.array(list(theirs)).tobytes()
