"""The arena's bootstrap statistics computed without the draws (issue 34): the floats of the draws' own.

:func:`~zeus_bench.sim.two_stage.two_stage_percentiles` reads a draw's percentile off the sorted seeds and
the draw's counts of each; :func:`~zeus_bench.sim.two_stage.two_stage_resamples` gathers by a flat take laid
out as ``rec[:, indices]``. Both must give what the draws themselves give, bit for bit (ties, zeros of
either sign, replicate shifts, percentiles at the ends).
"""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.sim.metrics import bootstrap_indices
from zeus_bench.sim.two_stage import two_stage_percentiles, two_stage_resamples


def _as_indexed(rec: np.ndarray, replicates: np.ndarray | None) -> np.ndarray:
    """The two-stage draws as fancy indexing gives them (the layout the means were summed in)."""
    out = rec[:, bootstrap_indices(rec.shape[1])]
    if replicates is not None and replicates.shape[1] >= 2:
        means = replicates.mean(axis=2)
        dev = means - means.mean(axis=1, keepdims=True)
        pick = np.random.default_rng(20230417 + 1).integers(0, means.shape[1], size=2000)
        out = out + dev[:, pick, None]
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=float).view(np.int64)


@pytest.mark.parametrize("trial", range(40))
def test_draw_statistics_without_the_draws_are_the_draws_own(trial: int) -> None:
    rng = np.random.default_rng(trial)
    n, m = int(rng.choice([1, 2, 5, 50, 51])), int(rng.integers(1, 5))
    rec = rng.standard_normal((m, n)) * 10 ** rng.uniform(-3, 3)
    if trial % 4 == 1:
        rec = np.round(rec, 1)  # ties, and zeros of both signs
    elif trial % 4 == 2:
        rec = rng.integers(0, 3, (m, n)).astype(float)
    r = int(rng.choice([0, 1, 2, 3]))
    replicates = rng.standard_normal((m, r, 2)) if r else None
    draws = _as_indexed(rec, replicates)
    resampled = two_stage_resamples(rec, replicates)
    assert np.array_equal(_bits(resampled.mean(axis=2)), _bits(draws.mean(axis=2)))
    for q in (95.0, 50.0, 0.0, 100.0, 2.5, 97.5, 33.3):
        expected = np.percentile(draws, q, axis=2)
        assert np.array_equal(_bits(two_stage_percentiles(rec, replicates, q)), _bits(expected)), q


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 16, 50, 51, 100])
def test_several_policies_stacked_sum_each_row_as_alone(n: int) -> None:
    """A part's policies resampled as one stack (4 quantities each): each row's means as its policy's alone."""
    rng = np.random.default_rng(n)
    for policies in (1, 3, 11, 16):
        rec = rng.standard_normal((4 * policies, n)) * 10 ** rng.uniform(-3, 3, (4 * policies, 1))
        replicates = rng.standard_normal((4 * policies, 2, 2)) if policies % 2 else None
        stacked = two_stage_resamples(rec, replicates).mean(axis=2)
        for i in range(policies):
            rows = slice(4 * i, 4 * i + 4)
            alone = two_stage_resamples(rec[rows], None if replicates is None else replicates[rows]).mean(
                axis=2
            )
            assert np.array_equal(_bits(stacked[rows]), _bits(alone))


@pytest.mark.parametrize("n", [1, 2, 5, 6, 7, 8, 9, 50])
def test_two_stage_means_are_the_draws_means(n: int) -> None:
    """The means without the draws (fewer seeds than NumPy's pairwise block) are the draws' own, bit for bit.

    Zeros of both signs, infinities and NaN among the values; every path draw, with and without replicates.
    """
    from zeus_bench.sim.two_stage import two_stage_means

    rng = np.random.default_rng(100 + n)
    for trial in range(12):
        m = int(rng.integers(1, 9))
        rec = rng.standard_normal((m, n)) * 10 ** rng.uniform(-6, 6, (m, 1))
        if trial % 4 == 1:
            rec = rng.integers(-1, 2, (m, n)) * rng.choice([0.0, -0.0, 1.0], (m, n))
        elif trial % 4 == 2:
            rec[rng.random((m, n)) < 0.2] = rng.choice([np.inf, -np.inf, np.nan])
        elif trial % 4 == 3:
            rec = np.full((m, n), -0.0)
        replicates = rng.standard_normal((m, int(rng.choice([2, 4])), 2)) if trial % 3 else None
        for draw in ("pick", "normal", "t"):
            expected = two_stage_resamples(rec, replicates, path_draw=draw).mean(axis=2)
            assert np.array_equal(_bits(two_stage_means(rec, replicates, path_draw=draw)), _bits(expected)), (
                trial,
                draw,
            )
