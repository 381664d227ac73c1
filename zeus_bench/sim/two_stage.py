"""The arena's two-stage bootstrap: training paths (replicate traces), then seeds.

An interval over the recorded training paths and the seeds (:func:`two_stage_resamples`): each
draw resamples the seeds replayed on the recorded paths with replacement and shifts them by a
path-level deviation made from replicate traces (:func:`path_shifts`: ``pick``, ``normal`` or
``t``). :func:`two_stage_means` and :func:`two_stage_percentiles` give the draws' means and
percentiles over the seeds without the draws, bit for bit. The one-stage bootstrap over seeds,
its constants and the percentile intervals are :mod:`zeus_bench.sim.metrics`'.
"""

from __future__ import annotations

import functools

import numpy as np

from zeus_bench.optimizers.posterior import PAIRWISE_BLOCK
from zeus_bench.sim.metrics import BOOTSTRAP_REPS, BOOTSTRAP_SEED, bootstrap_indices

__all__ = [
    "PATH_DRAWS",
    "TWO_STAGE",
    "check_path_draw",
    "path_shifts",
    "two_stage_means",
    "two_stage_method",
    "two_stage_percentiles",
    "two_stage_resamples",
]


_PATH_SHIFT_TEXT = {
    "pick": "a draw adds the deviation of one replicate picked at random from the replicates' mean",
    "normal": "a draw adds a Gaussian deviation with the replicates' covariance",
    "t": "a draw adds a Student-t deviation (R - 1 degrees of freedom) with the replicates' covariance",
}


def two_stage_method(path_draw: str = "pick") -> str:
    """How the arena's intervals are computed with the path draw ``path_draw`` (:func:`path_shifts`): the tables' ``interval_method``."""
    return (
        "two-stage percentile bootstrap (2,000 draws, fixed generators): level 1, the training paths: "
        "replicate traces, each batch size's judged paths redrawn with replacement, replayed on the first "
        f"seed(s), {_PATH_SHIFT_TEXT[path_draw]}; "
        "deviations scaled by sqrt(n / (n - 1)), n the job's median paths per batch size (a rescaled bootstrap); "
        "level 2, the seeds of the replay on the recorded paths resampled with replacement"
    )


TWO_STAGE = two_stage_method()
"""How every interval of the arena's tables is computed with the default path draw (:func:`two_stage_resamples`)."""


def two_stage_resamples(
    recorded: np.ndarray,
    replicates: np.ndarray | None,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
    path_draw: str = "pick",
) -> np.ndarray:
    """Two-stage bootstrap resamples of per-replay quantities: training paths, then seeds.

    Args:
        recorded: Shape ``(m, N)``: ``m`` per-replay quantities (e.g. a policy's regret and
            Zeus's) on each of ``N`` seeds replayed on the recorded paths.
        replicates: Shape ``(m, R, S)``: the same quantities replayed on ``R`` replicate traces
            (each batch size's paths redrawn with replacement) with ``S`` seeds each; None or
            ``R < 2``: the seed level alone.
        reps: Draws.
        seed: Seed of the draws' generators (seeds: ``seed``; replicates: ``seed + 1``).
        path_draw: How a draw's path-level shift is made from the replicates' deviations
            (:func:`path_shifts`; :data:`PATH_DRAWS`).

    Returns:
        Shape ``(m, reps, N)``: per draw, the recorded seeds resampled with replacement (the same
        indices for every quantity: paired), each shifted by a path-level deviation (with
        ``pick``: the deviation of one replicate picked at random, the same replicate for every
        quantity, from the replicates' mean). A statistic of the draws (a mean, a ratio of means, a percentile over the last
        axis) gives its percentile interval with :func:`percentile_ci`.
    """
    rec = np.asarray(recorded, dtype=float)
    m, n = rec.shape
    # ``rec[:, indices]`` by one flat take of the seeds' rows, laid out as that indexing lays it out
    # (quantities innermost: a mean over the seeds then sums in the same order, bit for bit).
    out = np.take(rec.T, _flat_indices(n, reps, seed), axis=0).reshape(reps, n, m).transpose(2, 0, 1)
    dev = _replicate_deviations(replicates)
    if dev is not None:
        out = out + path_shifts(dev, reps, seed + 1, path_draw)[:, :, None]
    return out


def two_stage_means(
    recorded: np.ndarray,
    replicates: np.ndarray | None,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
    path_draw: str = "pick",
) -> np.ndarray:
    """``two_stage_resamples(...).mean(axis=2)``, the same floats: shape ``(m, reps)``.

    With fewer seeds than :data:`~zeus_bench.optimizers.posterior.PAIRWISE_BLOCK`, NumPy's mean
    adds a draw's seeds one after the other onto zero, whatever the draws' layout, then divides by
    their number: here the same additions without the draws, a seed position at a time over
    ``(m, reps)`` planes (each the values at the draws' indices of that position, shifted as the
    draws are). With more, the order of NumPy's sum depends on the draws' layout: the draws' own mean.
    """
    rec = np.asarray(recorded, dtype=float)
    m, n = rec.shape
    if n >= PAIRWISE_BLOCK:
        return two_stage_resamples(rec, replicates, reps, seed, path_draw).mean(axis=2)  # type: ignore[no-any-return]
    idx = _flat_indices(n, reps, seed).reshape(reps, n)
    dev = _replicate_deviations(replicates)
    shift = None if dev is None else path_shifts(dev, reps, seed + 1, path_draw)
    total = np.zeros((m, reps))
    for j in range(n):
        plane = np.take(rec, idx[:, j], axis=1)
        if shift is not None:
            plane += shift
        total += plane
    return total / n  # type: ignore[no-any-return]


PATH_DRAWS = ("pick", "normal", "t")
"""How :func:`path_shifts` turns the replicates' deviations into one shift per draw."""


def path_shifts(dev: np.ndarray, reps: int, seed: int, path_draw: str = "pick") -> np.ndarray:
    """Per draw, the path-level shift of each quantity: shape ``(m, reps)`` from deviations ``(m, R)``.

    ``pick``: one replicate's deviation, picked at random (``R`` possible shifts: with few
    replicates the tails of the path level are never reached, the largest of 4 deviations is about
    one standard deviation). ``normal``: a Gaussian with the replicates' covariance,
    ``dev @ g / sqrt(R - 1)`` with ``g`` standard normal (the quantities stay jointly drawn: paired).
    ``t``: the ``normal`` shift divided by ``sqrt(chi2 / (R - 1))`` with ``R - 1`` degrees of freedom
    (a Student-t shift: the replicates' variance is itself an estimate from ``R`` values).

    Raises:
        ConfigError: an unknown ``path_draw`` (:func:`check_path_draw`).
    """
    if path_draw == "pick":
        return dev[:, _picks(dev.shape[1], reps, seed)]  # type: ignore[no-any-return]
    check_path_draw(path_draw)
    r = dev.shape[1]
    normal, chi = _path_draws(r, reps, seed, path_draw)
    out = dev @ normal / np.sqrt(r - 1.0)
    if chi is not None:
        out = out / np.sqrt(chi / (r - 1.0))
    return out  # type: ignore[no-any-return]


def check_path_draw(path_draw: str) -> str:
    """``path_draw`` if it is one of :data:`PATH_DRAWS`.

    Raises:
        ConfigError: another (one line naming the known ones).
    """
    if path_draw not in PATH_DRAWS:
        from zeus_bench.core.errors import ConfigError

        raise ConfigError(f"unknown path draw {path_draw!r}; known: {', '.join(PATH_DRAWS)}")
    return path_draw


@functools.lru_cache(maxsize=8)
def _path_draws(
    replicates: int, reps: int, seed: int, path_draw: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`path_shifts`' standard normals ``(R, reps)`` and (``t``) chi-square draws ``(reps,)``, drawn once, read-only."""
    rng = np.random.default_rng([seed, PATH_DRAWS.index(path_draw)])
    normal = rng.standard_normal((replicates, reps))
    normal.setflags(write=False)
    if path_draw != "t":
        return normal, None
    chi = rng.chisquare(replicates - 1.0, size=reps)
    chi.setflags(write=False)
    return normal, chi


def _replicate_deviations(replicates: np.ndarray | None) -> np.ndarray | None:
    """Each replicate trace's mean over the seeds less the replicates' mean (None: fewer than two)."""
    if replicates is None or replicates.shape[1] < 2:
        return None
    means = np.asarray(replicates, dtype=float).mean(axis=2)
    return means - means.mean(axis=1, keepdims=True)  # type: ignore[no-any-return]


def two_stage_percentiles(
    recorded: np.ndarray,
    replicates: np.ndarray | None,
    q: float,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
    path_draw: str = "pick",
) -> np.ndarray:
    """``np.percentile(two_stage_resamples(...), q, axis=2)``, the same floats, without the draws.

    A draw's ``q``-th percentile interpolates two order statistics of its resampled seeds (NumPy's
    ``linear`` method): they are read off each quantity's sorted seeds by the draw's counts of
    each seed (kept per generator), and shifted by the draw's replicate deviation (rounding is
    monotone: the shifted order statistics are the order statistics of the shifted values); the
    interpolation is NumPy's own arithmetic (``_lerp``). Values not finite, or a -0.0 (tied with
    0.0: the sort picks one): the draws themselves.

    Returns:
        Shape ``(m, reps)``.
    """
    rec = np.asarray(recorded, dtype=float)
    dev = _replicate_deviations(replicates)
    signed_zero = bool(np.signbit(rec[rec == 0.0]).any())  # -0.0 ties 0.0: which one ranks is the sort's
    if signed_zero or not np.isfinite(rec).all() or (dev is not None and not np.isfinite(dev).all()):
        return np.percentile(two_stage_resamples(rec, replicates, reps, seed, path_draw), q, axis=2)  # type: ignore[no-any-return]
    m, n = rec.shape
    virtual = (n - 1) * np.true_divide(q, 100)  # as np.percentile finds the two order statistics
    prev = np.floor(virtual)
    above = prev + 1
    if virtual >= n - 1:
        prev = above = np.float64(n - 1)
    gamma = virtual - prev
    order = np.argsort(rec, axis=1, kind="stable")
    ranked = np.take_along_axis(rec, order, axis=1)
    # The order statistics' ranks: how many of a draw's sorted seeds' running counts are at most
    # ``prev`` (``above``). Whole numbers, summed one sorted position at a time over (reps, m) planes.
    counts = _counts(n, reps, seed)
    cum = np.zeros((reps, m), dtype=counts.dtype)
    rank_lo = np.zeros((reps, m), dtype=np.intp)
    rank_hi = np.zeros((reps, m), dtype=np.intp)
    for j in range(n):
        cum += counts[:, order[:, j]]
        rank_lo += cum <= prev
        rank_hi += cum <= above
    rows = np.arange(m)[None, :]
    lo = ranked[rows, rank_lo].T  # (m, reps)
    hi = ranked[rows, rank_hi].T
    if dev is not None:
        shift = path_shifts(dev, reps, seed + 1, path_draw)
        lo, hi = lo + shift, hi + shift
    diff = hi - lo  # NumPy's _lerp(lo, hi, gamma)
    return hi - diff * (1 - gamma) if gamma >= 0.5 else lo + diff * gamma  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=8)
def _counts(n: int, reps: int, seed: int) -> np.ndarray:
    """How many times each of ``n`` seeds is drawn in each of :func:`bootstrap_indices`' rows: ``(reps, n)``, kept read-only."""
    idx = bootstrap_indices(n, reps, seed)
    out = np.bincount((idx + n * np.arange(reps)[:, None]).ravel(), minlength=reps * n).reshape(reps, n)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=8)
def _flat_indices(n: int, reps: int, seed: int) -> np.ndarray:
    """:func:`bootstrap_indices` flattened (row after row), kept read-only."""
    return bootstrap_indices(n, reps, seed).ravel()


@functools.lru_cache(maxsize=8)
def _picks(replicates: int, reps: int, seed: int) -> np.ndarray:
    """The replicate of each of ``reps`` draws (one fresh generator of ``seed``), drawn once and kept read-only."""
    out = np.random.default_rng(seed).integers(0, replicates, size=reps)
    out.setflags(write=False)
    return out
