"""Posterior arithmetic of the Gaussian arms, written once for floats and for arrays over seeds.

The batch-size optimizer (:mod:`zeus_bench.optimizers.bandit`) decides Thompson Sampling's draw
from approximate posteriors kept as running sums, certified against the exact ones (NumPy's
two-pass sums in its pairwise order, :func:`numpy_sum`); the replay's batched optimizer over seeds keeps
the same sums as arrays. :func:`add_reward`, :func:`approx_from_sums` and :func:`where` take
either Python floats (one arm) or NumPy arrays (one arm per element) and give the same doubles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zeus_bench.core.errors import ConfigError

__all__ = [
    "EPS",
    "PAIRWISE_BLOCK",
    "SAFETY",
    "add_reward",
    "approx_from_sums",
    "check_prior",
    "largest_sample",
    "numpy_sum",
    "posterior",
    "posterior_sample",
    "running_sums",
    "sum_and_variance",
    "where",
]

PAIRWISE_BLOCK = 8
"""NumPy's pairwise summation of float64 (``np.add.reduce``): fewer values than this are added one
after the other, more as this many running sums over blocks (:func:`numpy_sum`)."""
_PAIRWISE_LEAF = 128  # PAIRWISE_BLOCK running sums over blocks of at most this many values, halved above
_PYTHON_SUM_MAX = 24  # arms with more observations use NumPy itself (faster there)
EPS = 2.0**-52  # twice the unit roundoff of a double
SAFETY = 8.0  # margin on the error bounds of the approximate posteriors
_EPS3, _EPS4, _ONE_EPS4, _SAFETY_EPS3 = 3.0 * EPS, 4.0 * EPS, 1.0 + 4.0 * EPS, SAFETY * 3.0 * EPS
_INF = math.inf


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` holds, else ``b``: ``np.where`` on arrays, a conditional on a bool."""
    if cond is True:  # a comparison's own bools first: this runs several times per try
        return a
    if cond is False:
        return b
    if isinstance(cond, np.ndarray):
        return np.where(cond, a, b)
    return a if cond else b


def _pairwise(x: Sequence[float], lo: int, n: int) -> float:
    """Sum of ``x[lo:lo + n]`` in NumPy's pairwise order (``np.add.reduce`` of a float64 array)."""
    if n < PAIRWISE_BLOCK:
        total = -0.0
        for i in range(lo, lo + n):
            total += x[i]
        return total
    if n <= _PAIRWISE_LEAF:
        r = list(x[lo : lo + PAIRWISE_BLOCK])
        end = lo + n - n % PAIRWISE_BLOCK
        for i in range(lo + PAIRWISE_BLOCK, end, PAIRWISE_BLOCK):
            for j in range(PAIRWISE_BLOCK):
                r[j] += x[i + j]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(end, lo + n):
            total += x[i]
        return total
    half = n // 2
    half -= half % PAIRWISE_BLOCK
    return _pairwise(x, lo, half) + _pairwise(x, lo + half, n - half)


def numpy_sum(x: Sequence[float]) -> float:
    """``float(np.sum(np.asarray(x, dtype=float)))``, bit for bit, in plain Python."""
    return 0.0 + _pairwise(x, 0, len(x))


def sum_and_variance(x: Sequence[float]) -> tuple[float, float]:
    """Sum and population variance of ``x``, equal bit for bit to ``a.sum()`` and ``a.var()``."""
    n = len(x)
    if n > _PYTHON_SUM_MAX:
        a = np.array(x, dtype=float)
        total = float(np.add.reduce(a))
        d = a - total / n
        return total, float(np.add.reduce(d * d)) / n
    total = numpy_sum(x)
    mean = total / n
    return total, numpy_sum([(v - mean) * (v - mean) for v in x]) / n


def add_reward(n: Any, s1: Any, s2: Any, s_abs: Any, reward: Any) -> tuple[Any, Any, Any, Any]:
    """An arm's running sums (count, sum, sum of squares, sum of magnitudes) after one more reward.

    The additions are in the rewards' order, so the sums depend only on the rewards seen.
    """
    return n + 1.0, s1 + reward, s2 + reward * reward, s_abs + abs(reward)


def running_sums(rewards: Sequence[float], sums: Sequence[float] = (0.0, 0.0, 0.0, 0.0)) -> list[float]:
    """The running sums of an arm's rewards, from none or from ``sums`` (those of earlier rewards).

    :func:`add_reward` once per reward, in order (written out: the same operations on floats).
    """
    n, s1, s2, s_abs = sums
    for r in rewards:  # (one statement per sum: no tuple built per reward)
        n += 1.0
        s1 += r
        s2 += r * r
        s_abs += abs(r)
    return [n, s1, s2, s_abs]


def approx_from_sums(n: Any, s1: Any, s2: Any, s_abs: Any) -> tuple[Any, Any, Any, Any]:
    """``(mean, std, c0, c1)`` of an arm's posterior from its running sums, with error bounds.

    ``n`` observations, their sum ``s1``, sum of squares ``s2`` and sum of magnitudes ``s_abs``
    (floats, or arrays element by element). The exact posterior (:func:`posterior`) and the
    sample ``mean + std * z`` drawn from it lie within ``c0 + c1 * |z|`` of this one's; ``c0``
    is infinite (and the rest 0) when the figures are not finite. With u the unit roundoff, any
    summation order of n terms errs by at most (n - 1) u times the sum of their magnitudes; the
    two-pass variance lies within (n + 4) u (var + d^2) + d^2 of the true one (d: the mean's
    error) and the one-pass ``sum(x^2)/n - mean^2`` within (n + 4) u sum(x^2)/n + 2 |mean| d +
    d^2; square roots turn a variance error e into a std error of at most sqrt(e / n). The
    bounds take twice u per operation and multiply by :data:`SAFETY` on top.
    """
    sqrt = np.sqrt if isinstance(n, np.ndarray) else math.sqrt
    mean = s1 / n
    var = s2 / n - mean * mean
    var = where(var < 0.0, 0.0, var)  # NaN kept
    abs_mean = abs(mean)
    g = (n + 4.0) * EPS
    mean_err = SAFETY * (g * s_abs / n + _EPS3 * abs_mean)
    var_err = SAFETY * (g * s2 / n + 2.0 * abs_mean * mean_err + 3.0 * mean_err * mean_err)
    std = sqrt(var / n)
    std_err = sqrt(var_err / n) * _ONE_EPS4 + _SAFETY_EPS3 * std
    # Both samples' rounding (a product and a sum each) and the comparisons' add at most
    # 4 eps (|mean| + |std z|).
    c0 = mean_err + _EPS4 * abs_mean
    c1 = std_err + _EPS4 * std
    finite = (abs_mean < _INF) & (std < _INF) & (c0 < _INF)  # False for NaN too
    if isinstance(finite, np.ndarray):
        if finite.all():
            return mean, std, c0, c1
        return (
            where(finite, mean, 0.0),
            where(finite, std, 0.0),
            where(finite, c0, _INF),
            where(finite, c1, 0.0),
        )
    return (mean, std, c0, c1) if finite else (0.0, 0.0, _INF, 0.0)


def posterior(
    x: Sequence[float], prior_mean: float = 0.0, prior_precision: float = 0.0
) -> tuple[float, float]:
    """Posterior mean and standard deviation of an arm's mean reward from its rewards ``x``.

    Reward precision ``1 / var`` (population variance); the posterior precision is
    ``prior_precision + n / var`` and the mean ``(prior_precision x prior_mean + sum / var) /
    precision`` (with the default prior, precision 0, the sample mean); zero variance gives a
    point mass at the sample mean whatever the prior, as the paper's optimizer has it.
    """
    total, var = sum_and_variance(x)
    if var == 0.0:
        return (total / len(x), 0.0)
    reward_precision = 1.0 / var
    if prior_precision == 0.0 and prior_mean == 0.0:
        precision = len(x) * reward_precision
        return (reward_precision * total / precision, math.sqrt(1.0 / precision))
    precision = prior_precision + len(x) * reward_precision
    return ((prior_precision * prior_mean + reward_precision * total) / precision, math.sqrt(1.0 / precision))


def posterior_sample(mean: Any, std: Any, z: Any) -> Any:
    """The sample ``mean + std * z`` of a posterior (floats, or arrays over arms and seeds)."""
    return mean + std * z


def largest_sample(posteriors: Sequence[tuple[float, float]], z: Sequence[float]) -> int:
    """Index of the largest sample ``mean + std * z[i]`` (the first of equals; a NaN one wins)."""
    best, best_i = -math.inf, 0
    for i, (mean, std) in enumerate(posteriors):
        sample = posterior_sample(mean, std, z[i])
        if sample > best or (i == 0 and sample == best):
            best, best_i = sample, i
        elif math.isnan(sample):
            return i
    return best_i


def check_prior(mean: float, precision: float) -> None:
    """Refuse a Gaussian prior whose arithmetic would overflow and silently change the policy.

    The posterior computes ``precision x mean`` and ``sqrt(1 / precision)`` (and the batched
    rule ``precision x mean^2``): each must stay a finite number, so an extreme prior is refused
    here rather than turned into infinities (an arm sampled at +-inf, or NaN) in the replay.

    Raises:
        ConfigError: a non-finite value, a negative precision, or a product that overflows.
    """
    if not math.isfinite(mean):
        raise ConfigError(f"prior_mean must be a finite number, got {mean}")
    if not (math.isfinite(precision) and precision >= 0.0):
        raise ConfigError(f"prior_precision must be finite and >= 0, got {precision}")
    if precision > 0.0:
        with np.errstate(over="ignore", divide="ignore"):
            terms = (
                precision * abs(mean),
                precision * mean * mean,
                1.0 / precision,
                1.0 / math.sqrt(precision),
            )
        if not all(math.isfinite(float(t)) for t in terms):
            raise ConfigError(
                f"prior_mean {mean:g} with prior_precision {precision:g} overflows the posterior "
                "(precision x mean^2 or 1 / precision is not a finite number); use a milder prior"
            )
