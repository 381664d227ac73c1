"""The bandit's posterior arithmetic (optimizers/posterior.py after the redesign), by Hypothesis.

numpy_sum and sum_and_variance must equal NumPy bit for bit (the replay's fidelity to the
original simulator rests on it), posterior is the Gaussian posterior of the rewards' mean,
approx_from_sums's error bounds cover the exact posterior, and largest_sample picks the first
of equal samples and any NaN one.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.posterior import (
    approx_from_sums,
    largest_sample,
    numpy_sum,
    posterior,
    sum_and_variance,
)

SETTINGS = settings(max_examples=150, deadline=None)
costs = st.floats(min_value=-1e7, max_value=1e7, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(st.lists(costs, min_size=0, max_size=400))
def test_numpy_sum_is_numpys_bit_for_bit(x: list[float]) -> None:
    expected = float(np.sum(np.asarray(x, dtype=float)))
    got = numpy_sum(x)
    assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)


@SETTINGS
@given(st.lists(costs, min_size=1, max_size=60))
def test_sum_and_variance_are_numpys_bit_for_bit(x: list[float]) -> None:
    a = np.asarray(x, dtype=float)
    assert sum_and_variance(x) == (float(a.sum()), float(a.var()))


@SETTINGS
@given(st.lists(st.floats(min_value=-1e4, max_value=-1e-2), min_size=1, max_size=40))
def test_posterior_is_the_sample_mean_and_its_standard_error(x: list[float]) -> None:
    mean, std = posterior(x)
    a = np.asarray(x, dtype=float)
    assert math.isclose(mean, a.mean(), rel_tol=1e-12)
    var = a.var()
    assert std == 0.0 if var == 0.0 else math.isclose(std, math.sqrt(var / len(x)), rel_tol=1e-12)


@SETTINGS
@given(st.lists(st.floats(min_value=-1e4, max_value=-1e-2), min_size=2, max_size=40))
def test_approx_from_sums_bounds_cover_the_exact_posterior(x: list[float]) -> None:
    n = float(len(x))
    s1 = s2 = s_abs = 0.0
    for r in x:
        s1, s2, s_abs = s1 + r, s2 + r * r, s_abs + abs(r)
    mean, std, c0, c1 = approx_from_sums(n, s1, s2, s_abs)
    exact_mean, exact_std = posterior(x)
    assert abs(mean - exact_mean) <= c0
    assert abs(std - exact_std) <= c1 + 1e-300
    # the mean's bound is rounding-sized (a few hundred ulps of the magnitudes), not a loose
    # cover; the deviation's is the square root of a rounding-sized variance
    scale = s_abs / n
    assert c0 <= 1e-11 * scale and c1 <= 1e-5 * scale + 1e-5 * std
    assert mean == s1 / n


def test_approx_from_sums_without_spread() -> None:
    mean, std, c0, c1 = approx_from_sums(4.0, -8.0, 16.0, 8.0)
    assert mean == -2.0 and std == 0.0 and 0.0 < c0 < 1e-13 and 0.0 <= c1 < 1e-6
    assert approx_from_sums(2.0, math.inf, math.inf, math.inf) == (0.0, 0.0, math.inf, 0.0)


def test_largest_sample_first_of_equals_and_nan_wins() -> None:
    post = [(-3.0, 1.0), (-2.0, 0.0), (-1.0, 1.0)]
    assert largest_sample(post, [0.0, 0.0, 0.0]) == 2
    assert largest_sample(post, [0.0, 0.0, -1.0]) == 1  # -3, -2, -2: the first largest
    assert largest_sample(post, [1.0, 0.0, -1.0]) == 0  # -2, -2, -2: ties go to the first
    assert largest_sample([(-1.0, 0.0), (math.nan, 1.0), (5.0, 0.0)], [0.0, 0.0, 0.0]) == 1
    assert largest_sample([(-math.inf, 0.0), (-math.inf, 0.0)], [0.0, 0.0]) == 0


def test_numpy_sum_across_the_pairwise_block_and_leaf_sizes() -> None:
    # NumPy's pairwise order changes at 8 (blocks) and 128 (leaves, halved above): every length
    # around those, and long ones, must give NumPy's bits
    rng = np.random.default_rng(25)
    for n in [
        *range(0, 20),
        127,
        128,
        129,
        135,
        136,
        200,
        255,
        256,
        257,
        263,
        300,
        511,
        512,
        513,
        1000,
        1500,
    ]:
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 8, n)).tolist()
        assert numpy_sum(x) == float(np.sum(np.asarray(x, dtype=float))), n


@SETTINGS
@given(st.lists(st.lists(costs, min_size=1, max_size=30), min_size=1, max_size=12))
def test_running_sums_and_approx_are_the_same_on_floats_and_arrays(arms: list[list[float]]) -> None:
    """One statement for both: array elements equal the float results, bit for bit (NaN, -0.0 by repr)."""
    from zeus_bench.optimizers.posterior import add_reward, running_sums

    width = max(map(len, arms))
    sums = np.zeros((4, len(arms)))
    floats = []
    for k in range(width):  # one reward per arm and step while it has one, as the batched optimizer adds them
        live = np.array([k < len(a) for a in arms])
        reward = np.array([a[k] if k < len(a) else 0.0 for a in arms])
        new = add_reward(*sums, reward)
        sums = np.where(live, np.stack(new), sums)
    for a in arms:
        floats.append(running_sums(a))
    assert [repr(v) for v in sums.T.ravel().tolist()] == [repr(v) for f in floats for v in f]
    ours = approx_from_sums(*sums)
    for i, f in enumerate(floats):
        assert [repr(float(v[i])) for v in ours] == [repr(v) for v in approx_from_sums(*f)]
    bad = approx_from_sums(np.array([1.0, 2.0]), np.array([math.inf, -3.0]), np.array([1.0, 5.0]), np.ones(2))
    assert [float(v[0]) for v in bad] == [0.0, 0.0, math.inf, 0.0]
    assert [float(v[1]) for v in bad] == list(approx_from_sums(2.0, -3.0, 5.0, 1.0))
