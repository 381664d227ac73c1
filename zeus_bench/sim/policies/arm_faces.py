"""The bandit baselines' faces over seeds (:mod:`zeus_bench.sim.policies.baselines`), and what they share with the scalar rules.

Each face replays its policy's rules on arrays over the seeds (:class:`~zeus_bench.sim.policies.seed_arms.ArmArrays`),
each seed drawing from its own generator in its own order, bit-identical to the scalar face
(``tests/sim/test_sim_array_faces.py``, ``tests/sim/test_sim_arm_arrays.py``). The constants and the
order of untried arms are owned here and read by the scalar rules too.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zeus_bench.optimizers.posterior import PAIRWISE_BLOCK
from zeus_bench.sim.policies.seed_arms import ArmArrays, py_max, py_min
from zeus_bench.sim.policies.zeus_plus import baseline_ratio

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.seed_arms import ArmPolicy
    from zeus_bench.sim.policies.seeds import Tried

SIGMA_MIN = 0.02  # least noise std of a normalized cost (pooled estimates of one-path arms are 0)
TS_PRIOR_STD = 0.25  # sw-ts: std of an arm's prior (around its all-time mean, or 1 if never run)
# NumPy sums this many numbers or fewer one after the other (pairwise beyond)
SEQUENTIAL_SUM = PAIRWISE_BLOCK - 1
EPS_C = 1.0  # eps-greedy: eps_t = min(1, EPS_C * K / t) (Auer et al. 2002, c / d^2 = 1)


@functools.lru_cache(maxsize=64)
def unplayed_order(arms: tuple[int, ...], b0: int) -> tuple[int, ...]:
    """Arm indices nearest ``b0`` first in doublings, the larger of two equals first (kept per arm set)."""
    lb0 = math.log2(b0)
    return tuple(sorted(range(len(arms)), key=lambda i: (abs(math.log2(arms[i]) - lb0), -arms[i])))


def least_mean(means: np.ndarray, b0: int) -> np.ndarray:
    """Per row, the column of least mean, b0's column among ties, else the first (``min`` over the arms)."""
    least = means.min(axis=1)
    ties = means == least[:, None]
    return np.where(ties[:, b0], b0, np.argmax(ties, axis=1))


def pooled_stds(n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """:meth:`ArmBandit.pooled_std` of every row of the per-arm sums (the same sums, row by row).

    Each row's terms are summed in :meth:`ArmBandit.pooled_std`'s order: NumPy sums up to
    :data:`SEQUENTIAL_SUM` numbers from the first to the last, as a running sum over the row does
    (the other arms' zeros added exactly); a row of more terms is summed alone among those of
    as many (pairwise, as NumPy sums them).
    """
    many = n > 1
    dof = np.where(many, n - 1.0, 0.0).sum(axis=1)  # whole numbers: exact in any order
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = s2 - s1**2 / n
    counts = many.sum(axis=1)
    ss = np.cumsum(np.where(many, terms, 0.0), axis=1)[:, -1]
    if len(n) and int(counts.max()) > SEQUENTIAL_SUM:
        for c in np.unique(counts[counts > SEQUENTIAL_SUM]).tolist():
            rows = np.flatnonzero(counts == c)
            cols = np.nonzero(many[rows])[1].reshape(len(rows), c)
            ss[rows] = terms[rows[:, None], cols].sum(
                axis=1
            )  # each row's terms alone, as pooled_std sums them
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.maximum(np.sqrt(np.maximum(ss, 0.0) / dof), SIGMA_MIN)
    return np.where(dof > 0.0, sigma, SIGMA_MIN)


def first_unplayed(face: ArmArrays, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per seed (rows of ``n``, the counts): whether an arm is untried, and the column of the first.

    The first in :meth:`ArmBandit.ordered_unplayed`'s order.
    """
    order = np.array(unplayed_order(tuple(face.arms), face.arms[face.b0]))
    untried = (n == 0)[:, order]
    return untried.any(axis=1), order[np.argmax(untried, axis=1)]


class EpsilonGreedyArrays(ArmArrays):
    """``eps-greedy``'s seeds on arrays."""

    def choose(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`EpsilonGreedy.choose` of each: each seed's own draws, the greedy arms on arrays."""
        k = len(self.arms)
        greedy = least_mean(self.means(rows), self.b0).tolist()
        rngs, out = self.rngs, []
        for i, g, t in zip(rows.tolist(), greedy, self.tries[rows].tolist(), strict=True):
            rng = rngs[i]
            out.append(int(rng.integers(k)) if rng.random() < min(1.0, EPS_C * k / (t + 1)) else g)
        return np.array(out, dtype=np.intp)


class UCB1Arrays(ArmArrays):
    """``ucb1``'s seeds on arrays."""

    def choose(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`UCB1.choose` of each, on arrays over the seeds."""
        n = self.n[rows]
        untried, first = first_unplayed(self, n)
        log_t = np.array([math.log(t) if t > 0 else 0.0 for t in self.tries[rows].tolist()])
        index = 1.0 - self.means(rows) / self.cap + np.sqrt((2.0 * log_t)[:, None] / n)
        return np.where(untried, first, np.argmax(index, axis=1))


class NormalsAhead:
    """Each seed's standard normal draws, ``k`` at a time, drawn from its own generator in blocks.

    ``Generator.standard_normal(n)`` draws one normal after another from the generator's outputs,
    with no state besides the generator's, so a block of ``k x m`` draws holds the ``m`` draws of
    ``k`` that ``m`` calls would make, the same floats in the same order. A seed draws a new block
    when it has taken the last; :meth:`settle` puts each generator where those calls would have left
    it (its state before its last block, then the draws taken from that block).
    """

    def __init__(self, rngs: Sequence[np.random.Generator], k: int, per_block: int = 64) -> None:
        """No seed's block drawn yet; a block holds ``per_block`` draws of ``k``."""
        self.rngs, self.k, self.width = rngs, k, k * per_block
        a = len(rngs)
        self.block = np.zeros((a, self.width))
        self.pos = np.full(a, self.width, dtype=np.int64)  # each seed's next draw in its block
        self.states: dict[int, Any] = {}  # each seed's generator state before its last block

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The next ``k`` draws of each seed ``rows`` (distinct), a row each."""
        pos = self.pos[rows]
        spent = pos >= self.width  # (a block is taken k at a time: all of it, or k or more left)
        if spent.any():
            for i in rows[spent].tolist():
                rng = self.rngs[i]
                self.states[i] = rng.bit_generator.state
                self.block[i] = rng.standard_normal(self.width)
            pos[spent] = 0
        self.pos[rows] = pos + self.k
        return self.block[rows[:, None], pos[:, None] + np.arange(self.k)]

    def settle(self) -> None:
        """Each generator as the draws taken would have left it (none drawn ahead)."""
        for i, state in self.states.items():
            rng = self.rngs[i]
            rng.bit_generator.state = state
            rng.standard_normal(int(self.pos[i]))
        self.states = {}
        self.pos[:] = self.width


class SlidingWindowTSArrays(ArmArrays):
    """``sw-ts``'s seeds on arrays: each seed's window a ring of its last tries, its draws :class:`NormalsAhead`."""

    def __init__(self, model: JobModel, policies: Sequence[ArmPolicy]) -> None:
        """Every seed's window empty."""
        super().__init__(model, policies)
        self.normals = NormalsAhead(self.rngs, len(self.arms))
        self.window = w = cast(Any, policies[0]).window
        a, k = len(self.policies), len(self.arms)
        self.wn, self.w1, self.w2 = np.zeros((a, k)), np.zeros((a, k)), np.zeros((a, k))
        self.ring_col = np.zeros((a, w + 1), dtype=np.intp)  # the window's tries (one more, popped at once)
        self.ring_x = np.zeros((a, w + 1))
        self.head = np.zeros(a, dtype=np.int64)  # each ring's oldest
        self.size = np.zeros(a, dtype=np.int64)

    def record(self, rows: np.ndarray, col: np.ndarray, x: np.ndarray) -> None:
        """Also slide each seed's window (:meth:`SlidingWindowTS.record`)."""
        super().record(rows, col, x)
        cap = self.window + 1
        at = (self.head[rows] + self.size[rows]) % cap
        self.ring_col[rows, at], self.ring_x[rows, at] = col, x
        self.wn[rows, col] += 1.0
        self.w1[rows, col] += x
        self.w2[rows, col] += x * x
        self.size[rows] += 1
        full = self.size[rows] > self.window
        if full.any():
            out = rows[full]
            old = self.head[out]
            j, y = self.ring_col[out, old], self.ring_x[out, old]
            self.wn[out, j] -= 1.0
            self.w1[out, j] -= y
            self.w2[out, j] -= y * y
            self.head[out] = (old + 1) % cap
            self.size[out] -= 1

    def choose(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`SlidingWindowTS.choose` of each: the posteriors on arrays, each seed's own draws."""
        n, wn, w1 = self.n[rows], self.wn[rows], self.w1[rows]
        sigma2 = (pooled_stds(wn, w1, self.w2[rows]) ** 2)[:, None]
        prior_prec = 1.0 / TS_PRIOR_STD**2
        prior_mean = np.where(n > 0, self.s1[rows] / np.maximum(n, 1.0), 1.0)
        prec = prior_prec + wn / sigma2
        means, stds = (prior_prec * prior_mean + w1 / sigma2) / prec, np.sqrt(1.0 / prec)
        return np.argmin(means + stds * self.normals.take(rows), axis=1)

    def settle(self) -> None:
        """The end of a walk: each seed's generator where its draws end (:meth:`NormalsAhead.settle`)."""
        self.normals.settle()


class ConservativeUCBArrays(ArmArrays):
    """``conservative-ucb``'s seeds on arrays: each seed's baseline ratio and last batch size too."""

    def __init__(self, model: JobModel, policies: Sequence[ArmPolicy]) -> None:
        """Every seed's ratio 1 (until b0's profile), its last batch size b0."""
        super().__init__(model, policies)
        a = len(self.policies)
        self.alpha = float(cast(Any, policies[0]).alpha)
        self.ratio = np.ones(a)
        self.last = np.full(a, self.b0, dtype=np.intp)
        ctx = policies[0].ctx
        limit = float(np.asarray(ctx.job.power_limits, dtype=float)[self.jit_pj[self.b0]])
        self.b0_ratio = baseline_ratio(ctx.job, ctx.cost, limit)  # what b0's profile measures

    def decided(self, ids: np.ndarray, col: np.ndarray) -> None:
        """Remember each seed's batch size (b0 runs without early stop)."""
        self.last[ids] = col

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """No early stop for b0 (:meth:`ConservativeUCB.stop_cost`)."""
        return np.where(self.last[ids] == self.b0, math.inf, bound)

    def learn(self, ids: np.ndarray, tried: Tried) -> None:
        """b0's profile teaches the seed the baseline's epoch-cost ratio."""
        self.ratio[ids[tried.profiled & (tried.bi == self.b0)]] = self.b0_ratio

    def choose(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`ConservativeUCB.choose` of each, on arrays over the seeds."""
        n, i0 = self.n[rows], self.b0
        sigma = pooled_stds(n, self.s1[rows], self.s2[rows])[:, None]
        log_t = np.array([2.0 * math.log(max(t, 2)) for t in self.tries[rows].tolist()])[:, None]
        width = sigma * np.sqrt(log_t / n)
        means = self.means(rows)
        lo, hi = np.where(n > 0, means - width, -np.inf), np.where(n > 0, means + width, np.inf)
        scale = self.scale[rows]
        budget = (
            (1.0 + self.alpha)
            * (self.successes[rows] + 1)
            * py_max(lo[:, i0], 0.0)
            * self.ratio[rows]
            * scale
        )
        budget = budget - self.spent[rows]
        worst = self.beta * self.min_cost[rows] + hi[:, i0] * scale
        reached = self.reached[rows] > 0
        pessimistic = np.where(reached, py_min(hi * scale[:, None], worst[:, None]), worst[:, None])
        untried, first = first_unplayed(self, n)
        candidate = np.where(untried, first, least_mean(lo, i0))
        k = np.arange(len(rows))
        paid = (candidate == i0) | (pessimistic[k, candidate] <= budget)
        done = reached.copy()
        done[:, i0] = False
        safest = np.argmin(np.where(done, hi, np.inf), axis=1)
        safe = done.any(axis=1) & (pessimistic[k, safest] <= budget)
        return np.where(paid, candidate, np.where(safe, safest, i0))
