"""bo-ei's stacked GPs (issue 34): the kernels gathered from the grid's and every candidate's log likelihood at once.

:func:`~zeus_bench.sim.policies.bo.stacked_kernels` and :func:`~zeus_bench.sim.policies.bo.log_likelihoods`
must give the floats that :func:`~zeus_bench.sim.policies.bo.gp_posterior` gives each GP alone, bit for bit
(the replay's rows depend on them).
"""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.sim.policies.bo import (
    LENGTH_SCALES,
    gp_posterior,
    gp_posteriors,
    grid_kernels,
    log_likelihood,
    log_likelihoods,
    stacked_kernels,
)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=float).view(np.int64)


@pytest.mark.parametrize("t", [1, 2, 3, 5, 8])
def test_stacked_gps_are_each_gp_alone(t: int) -> None:
    rng = np.random.default_rng(t)
    grid = np.log2(np.array([8, 16, 24, 32, 64, 128, 256, 512, 1024], dtype=float))
    m = 40
    cols = np.sort(np.array([rng.choice(len(grid), t, replace=False) for _ in range(m)]), axis=1)
    which = rng.integers(0, len(LENGTH_SCALES), m)
    lengths = np.array(LENGTH_SCALES)[which]
    x, y = grid[cols], rng.uniform(0.5, 2.0, (m, t))
    noise = rng.uniform(1e-4, 0.2, (m, t))
    kernels = stacked_kernels(grid_kernels(grid, LENGTH_SCALES), which, cols)
    gathered = gp_posteriors(x, y, noise, grid, lengths, kernels)
    computed = gp_posteriors(x, y, noise, grid, lengths)
    for a, b in zip(gathered, computed, strict=True):
        assert np.array_equal(_bits(a), _bits(b))
    mean, std, yc, weights = gathered
    liks = log_likelihoods(yc, weights)
    for i in range(m):
        alone = gp_posterior(x[i], y[i], noise[i], grid, float(lengths[i]))
        assert np.array_equal(_bits(alone[0]), _bits(mean[i]))
        assert np.array_equal(_bits(alone[1]), _bits(std[i]))
        assert (
            _bits(np.array([alone[2], log_likelihood(yc[i], weights[i])])).tolist()
            == [_bits(liks[i : i + 1])[0]] * 2
        )
