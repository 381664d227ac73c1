"""``bo-ei``: Bayesian optimisation over batch size with expected improvement.

A small Gaussian process on ``log2`` batch size models a try's normalized cost (the shared
protocol of :class:`~zeus_bench.sim.policies.baselines.ArmBandit`: JIT power limit, b0 until the
first success, costs in units of the first successful try's, capped at ``beta``):

* constant prior mean (the mean of the tried batch sizes' mean costs), squared-exponential kernel
  of amplitude :data:`SIGNAL_STD` and length scale chosen among :data:`LENGTH_SCALES` (in
  doublings) by the largest marginal likelihood once three batch sizes were tried (one doubling
  before; re-chosen every :data:`REFIT_EVERY` tries and when a batch size is first tried), Gaussian observation noise of the pooled within-arm standard deviation;
* the process is conditioned on each tried batch size's mean cost with noise ``sigma^2 / n``,
  which gives exactly the posterior of conditioning on every try (the within-arm part of the
  likelihood does not depend on the kernel), so each step costs a K x K solve;
* the next try is the batch size of largest expected improvement (Jones, Schonlau and Welch
  1998; Snoek, Larochelle and Adams 2012) below the least posterior mean among tried batch
  sizes, with exploration margin :data:`XI`; when no batch size promises more than
  :data:`EI_MIN` (units of the first cost), the least posterior mean among those that reached
  the target runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.sim.policies.arm_faces import least_mean, pooled_stds
from zeus_bench.sim.policies.base import PolicyContext, horizon_blind, register_policy
from zeus_bench.sim.policies.baselines import ArmBandit
from zeus_bench.sim.policies.seed_arms import ArmArrays

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel

SIGNAL_STD = 0.5  # prior std of a batch size's normalized cost around the constant mean
LENGTH_SCALES = (0.5, 1.0, 2.0, 4.0)  # candidate length scales, in doublings of batch size
XI = 0.01  # exploration margin of the expected improvement (units of the first cost)
EI_MIN = 0.002  # below this expected improvement, exploit
REFIT_EVERY = 10  # tries between choices of the length scale (also re-chosen when a batch size is new)


def _kernel(x: np.ndarray, y: np.ndarray, length: float) -> np.ndarray:
    d = x[:, None] - y[None, :]
    return SIGNAL_STD**2 * np.exp(-0.5 * (d / length) ** 2)


def gp_posterior(
    x: np.ndarray, y: np.ndarray, noise: np.ndarray, grid: np.ndarray, length: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Posterior mean and std of the GP at ``grid``, and the log marginal likelihood of ``y``.

    Args:
        x: Inputs (log2 batch sizes) of the observations.
        y: Observed values (mean normalized costs).
        noise: Observation noise variance of each value.
        grid: Where to predict.
        length: Length scale of the kernel.
    """
    m = float(y.mean())
    k = _kernel(x, x, length) + np.diag(noise)
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y - m))
    ks = _kernel(grid, x, length)
    mean = m + ks @ alpha
    v = np.linalg.solve(chol, ks.T)
    var = np.maximum(SIGNAL_STD**2 - (v * v).sum(axis=0), 1e-12)
    loglik = (
        -0.5 * float((y - m) @ alpha)
        - float(np.log(np.diag(chol)).sum())
        - 0.5 * len(y) * math.log(2 * math.pi)
    )
    return mean, np.sqrt(var), loglik


def grid_kernels(grid: np.ndarray, lengths: Sequence[float]) -> np.ndarray:
    """The kernel between every two points of ``grid``, one ``(k, k)`` matrix per length scale.

    Element by element the IEEE operations of :func:`_kernel` (the same floats): a GP's kernels are
    gathered from it (:func:`stacked_kernels`).
    """
    d = grid[:, None] - grid[None, :]
    return np.stack([SIGNAL_STD**2 * np.exp(-0.5 * (d / length) ** 2) for length in lengths])


def stacked_kernels(table: np.ndarray, which: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernels of a stack of GPs on the grid, gathered from ``table`` (:func:`grid_kernels`).

    Row ``i`` observes the grid's points ``cols[i]`` (``t`` of them) with the length scale
    ``table[which[i]]``'s. Returns the kernels between its points ``(m, t, t)`` and from every
    grid point to them ``(m, k, t)``: those :func:`gp_posterior` computes (a new array each).
    """
    k = table.shape[1]
    base = (which * (k * k))[:, None, None]
    kxx = np.take(table, base + cols[:, :, None] * k + cols[:, None, :])
    kgx = np.take(table, base + np.arange(k)[None, :, None] * k + cols[:, None, :])
    return kxx, kgx


def gp_posteriors(
    x: np.ndarray,
    y: np.ndarray,
    noise: np.ndarray,
    grid: np.ndarray,
    length: np.ndarray,
    kernels: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`gp_posterior` of many GPs at once (rows of ``x``, ``y``, ``noise``; ``length`` one each).

    Every row's figures are those :func:`gp_posterior` gives it alone (the same LAPACK and BLAS
    calls, matrix by matrix). ``kernels``: the rows' kernels when ``x`` lies on ``grid``
    (:func:`stacked_kernels`; None: computed here). Returns the posterior means and stds at
    ``grid`` (a row each), and what the row's log marginal likelihood needs: the centred values
    and the weights (:func:`log_likelihoods`).
    """
    m = y.mean(axis=1)
    if kernels is None:
        ln = length[:, None, None]
        d = x[:, :, None] - x[:, None, :]
        k = SIGNAL_STD**2 * np.exp(-0.5 * (d / ln) ** 2)
        ds = grid[None, :, None] - x[:, None, :]
        ks = SIGNAL_STD**2 * np.exp(-0.5 * (ds / ln) ** 2)
    else:
        k, ks = kernels
    t = x.shape[1]
    diag = k.reshape(len(k), t * t)[:, :: t + 1]  # each kernel's diagonal, a view (k is a new array)
    diag += noise
    chol = np.linalg.cholesky(k)
    yc = y - m[:, None]
    inner = np.linalg.solve(chol, yc[:, :, None])
    alpha = np.linalg.solve(chol.transpose(0, 2, 1), inner)
    mean = m[:, None] + np.matmul(ks, alpha)[:, :, 0]
    v = np.linalg.solve(chol, ks.transpose(0, 2, 1))
    var = np.maximum(SIGNAL_STD**2 - (v * v).sum(axis=1), 1e-12)
    return mean, np.sqrt(var), yc, np.concatenate([alpha[:, :, 0], chol.diagonal(axis1=1, axis2=2)], axis=1)


def log_likelihood(yc: np.ndarray, weights: np.ndarray) -> float:
    """The log marginal likelihood of one row of :func:`gp_posteriors` (``yc``, ``weights`` its row)."""
    t = len(yc)
    alpha, diag = weights[:t], weights[t:]
    return -0.5 * float(yc @ alpha) - float(np.log(diag).sum()) - 0.5 * t * math.log(2 * math.pi)


def log_likelihoods(yc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`log_likelihood` of every row at once (the same floats: a stacked ``matmul`` is the rows' ``@``)."""
    t = yc.shape[1]
    alpha, diag = np.ascontiguousarray(weights[:, :t]), np.ascontiguousarray(weights[:, t:])
    fit = np.matmul(np.ascontiguousarray(yc)[:, None, :], alpha[:, :, None])[:, 0, 0]
    return -0.5 * fit - np.log(diag).sum(axis=1) - 0.5 * t * math.log(2 * math.pi)  # type: ignore[no-any-return]


def expected_improvement(
    mean: np.ndarray, std: np.ndarray, best: float | np.ndarray, xi: float = XI
) -> np.ndarray:
    """Expected improvement of a cost below ``best - xi`` under Gaussian beliefs (minimisation).

    Element by element: ``best`` may be an array that broadcasts against ``mean`` (one per row).
    """
    imp = best - xi - mean
    safe = np.where(std > 0.0, std, 1.0)
    z = imp / safe
    erf = np.fromiter(map(math.erf, (z / math.sqrt(2.0)).ravel().tolist()), float, z.size)
    cdf = 0.5 * (1.0 + erf.reshape(z.shape))
    pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    ei = np.where(std > 0.0, imp * cdf + std * pdf, imp)  # no uncertainty: the improvement itself
    return np.maximum(ei, 0.0)


@register_policy
@horizon_blind
class BayesOptEI(ArmBandit):
    """Bayesian optimisation over batch size (GP on log2 batch size, expected improvement)."""

    name = "bo-ei"
    description = "Bayesian optimisation over batch size: GP on log2 batch size, expected improvement"

    def __init__(self, ctx: PolicyContext) -> None:
        """Lay out the inputs: log2 of every batch size."""
        super().__init__(ctx)
        self.log_bs = np.log2(np.array(self.arms, dtype=float))
        self._length = 1.0
        self._fit_key: tuple[int, int] = (0, 0)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and std of every batch size's normalized cost."""
        tried = self.n > 0
        sigma2 = self.pooled_std(self.n, self.s1, self.s2) ** 2
        x = self.log_bs[tried]
        y = self.s1[tried] / self.n[tried]
        noise = sigma2 / self.n[tried]
        if int(tried.sum()) < 3:
            mean, std, _ = gp_posterior(x, y, noise, self.log_bs, 1.0)
            return mean, std
        key = (int(tried.sum()), self.tries // REFIT_EVERY)
        if key != self._fit_key:  # re-choose the length scale
            fits = [gp_posterior(x, y, noise, self.log_bs, length) for length in LENGTH_SCALES]
            best = max(range(len(fits)), key=lambda i: fits[i][2])
            self._length, self._fit_key = LENGTH_SCALES[best], key
            return fits[best][0], fits[best][1]
        mean, std, _ = gp_posterior(x, y, noise, self.log_bs, self._length)
        return mean, std

    def choose(self) -> int:
        """Largest expected improvement, or the least posterior mean once nothing promises enough."""
        mean, std = self.posterior()
        ei = expected_improvement(mean, std, float(mean[self.n > 0].min()))
        if float(ei.max()) >= EI_MIN:
            return self.arms[int(np.argmax(ei))]
        done = [b for b in self.arms if self.reached[b]]
        return min(done, key=lambda b: (float(mean[self.index[b]]), b != self.b0))

    @classmethod
    def array_face(cls, model: JobModel, policies: Sequence[ArmBandit]) -> ArmArrays:
        """Its face over seeds (:class:`BayesOptEIArrays`)."""
        return BayesOptEIArrays(model, policies)


class BayesOptEIArrays(ArmArrays):
    """``bo-ei``'s seeds on arrays: each seed's length scale and when it was chosen too."""

    def __init__(self, model: JobModel, policies: Sequence[ArmBandit]) -> None:
        """Every seed's length scale 1, never chosen."""
        super().__init__(model, policies)
        a = len(self.policies)
        self.log_bs = np.log2(np.array(self.arms, dtype=float))
        self.kernels = grid_kernels(self.log_bs, LENGTH_SCALES)  # every GP's kernels are gathered from it
        self.length = np.ones(a)
        self.fit_t = np.zeros(a, dtype=np.int64)  # the key of the last choice: batch sizes tried,
        self.fit_q = np.zeros(a, dtype=np.int64)  # and tries // REFIT_EVERY

    def choose(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`BayesOptEI.choose` of each: the GPs of as many seeds as have tried as many batch sizes at once."""
        n, s1 = self.n[rows], self.s1[rows]
        tried = n > 0
        counts = tried.sum(axis=1)
        sigma2 = pooled_stds(n, s1, self.s2[rows]) ** 2
        grid = self.log_bs
        k = len(self.arms)
        mean, std = np.empty((len(rows), k)), np.empty((len(rows), k))
        quarter = self.tries[rows] // REFIT_EVERY
        for t in np.unique(counts).tolist():
            at = np.flatnonzero(counts == t)
            cols = np.nonzero(tried[at])[1].reshape(len(at), t)
            nn = n[at[:, None], cols]
            x, y, noise = grid[cols], s1[at[:, None], cols] / nn, sigma2[at, None] / nn
            if t < 3:
                ones = np.full(len(at), _ONE)
                kernels = stacked_kernels(self.kernels, ones, cols)
                mean[at], std[at], _, _ = gp_posteriors(x, y, noise, grid, np.ones(len(at)), kernels)
                continue
            # one stack of GPs: the seeds keeping their length scale, then those choosing it
            # again once per candidate (each matrix's LAPACK calls as alone)
            seeds = rows[at]
            redo = (self.fit_t[seeds] != t) | (self.fit_q[seeds] != quarter[at])
            kept, again = np.flatnonzero(~redo), np.flatnonzero(redo)
            nk, m, nl = len(kept), len(again), len(LENGTH_SCALES)
            lengths = self.length[seeds[kept]]
            which = np.searchsorted(_SCALES, lengths)
            if m:
                src = np.concatenate([kept, np.tile(again, nl)])
                lengths = np.concatenate([lengths, np.repeat(LENGTH_SCALES, m)])
                which = np.concatenate([which, np.repeat(np.arange(nl), m)])
                x, y, noise, cols = x[src], y[src], noise[src], cols[src]
            kernels = stacked_kernels(self.kernels, which, cols)
            gm, gs, yc, weights = gp_posteriors(x, y, noise, grid, lengths, kernels)
            mean[at[kept]], std[at[kept]] = gm[:nk], gs[:nk]
            if m:
                # each seed's candidates' likelihoods (rows nk + j, nk + m + j, ...), the first largest
                liks = log_likelihoods(yc[nk:], weights[nk:]).reshape(nl, m).T.tolist()
                best = np.array([max(range(nl), key=lik.__getitem__) for lik in liks])
                fits = nk + best * m + np.arange(m)
                self.length[seeds[again]] = _SCALES[best]
                mean[at[again]], std[at[again]] = gm[fits], gs[fits]
                self.fit_t[seeds[again]], self.fit_q[seeds[again]] = t, quarter[at[again]]
        best_mean = np.where(tried, mean, np.inf).min(axis=1)
        ei = expected_improvement(mean, std, best_mean[:, None])
        explore = ei.max(axis=1) >= EI_MIN
        exploit = least_mean(np.where(self.reached[rows] > 0, mean, np.inf), self.b0)
        return np.where(explore, np.argmax(ei, axis=1), exploit)


_SCALES = np.array(LENGTH_SCALES)  # (ascending: a length scale's index by searchsorted)
_ONE = LENGTH_SCALES.index(1.0)  # the length scale before three batch sizes were tried
