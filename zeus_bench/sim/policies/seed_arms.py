"""The bandit baselines' face over seeds on arrays: their shared protocol stated once for every seed.

:class:`ArmArrays` is the array protocol (:class:`~zeus_bench.sim.policies.seeds.SeedArrays`) of
:class:`~zeus_bench.sim.policies.baselines.ArmBandit`'s rules: each seed's arm statistics (count,
sum and sum of squares of its normalized costs), its successes, money spent, least recurrence cost
and JIT limits learnt are rows of arrays over the seeds, so a step decides and observes every
seed with a few array operations and no object per seed and try. Each policy's face (a subclass,
beside its policy class) states its ``choose`` on those rows; every seed's draws come from its own
generator (its policy object's), in its own order.

Each element is computed by the same IEEE operations as the scalar code (``min`` and ``max`` of
two numbers as Python's, which keeps the first of two equals), so a seed's rows are those of its
object asked alone (``tests/sim/test_sim_array_faces.py``, bit for bit). No seed is ever
reported gone; the objects themselves are asked nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from zeus_bench.sim.policies.base import Policy, PolicyContext
from zeus_bench.sim.policies.seeds import Decided, Outcome, ScalarPolicies, Tried
from zeus_bench.sim.policies.zeus_plus import profiling_overhead

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel

__all__ = ["ArmArrays", "ArmPolicy", "py_max", "py_min"]


class ArmPolicy(Protocol):
    """What the face reads of a seed's policy object (an :class:`~zeus_bench.sim.policies.baselines.ArmBandit`)."""

    ctx: PolicyContext
    arms: list[int]
    index: dict[int, int]
    b0: int
    cap: float


def py_min(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Python's ``min(a, b)`` element by element: ``a`` unless ``b < a``."""
    return np.where(b < a, b, a)


def py_max(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Python's ``max(a, b)`` element by element: ``a`` unless ``b > a``."""
    return np.where(b > a, b, a)


class ArmArrays:
    """:class:`~zeus_bench.sim.policies.baselines.ArmBandit`'s protocol for every seed on arrays.

    Seed ``i`` is ``policies[i]``'s (its generator; the constants come from the first object,
    which :meth:`applies` checks the others share). Subclasses implement :meth:`choose`, and may
    extend :meth:`record` (what an observation adds to a seed's statistics), :meth:`learn` (what
    an outcome teaches besides) and :meth:`decided` (what a decision is remembered for).
    """

    def __init__(self, model: JobModel, policies: Sequence[ArmPolicy]) -> None:
        """Every seed with no observation (:meth:`applies` holds)."""
        p = policies[0]
        self.model = model
        self.policies = [cast("Policy", q) for q in policies]  # ArmBandit objects
        self.cls = type(self.policies[0])
        self.rngs = [q.ctx.rng for q in policies]
        self.arms = list(p.arms)
        self.b0 = p.index[p.b0]  # b0's column
        self.cap = p.cap
        self.beta = p.ctx.beta
        job, cost = p.ctx.job, p.ctx.cost
        self.jit_pj = np.array([model.limit_index[x] for x in model.jit_limit_w], dtype=np.intp)
        limits = np.asarray(job.power_limits, dtype=float)
        #: per arm: what its profiled try's first epoch cost more than one at its JIT limit (J)
        self.overhead = np.array(
            [
                profiling_overhead(job, cost, Outcome(b, float(limits[j]), 0.0, True, 0.0, 0.0, 0.0, True))
                for b, j in zip(self.arms, self.jit_pj.tolist(), strict=True)
            ]
        )
        a, k = len(policies), len(self.arms)
        self.n, self.s1, self.s2 = np.zeros((a, k)), np.zeros((a, k)), np.zeros((a, k))
        self.reached = np.zeros((a, k), dtype=np.int64)  # tries of each arm that reached the target
        self.learnt = np.zeros((a, k), dtype=bool)  # the arm's JIT limit known (profiled)
        self.tries = np.zeros(a, dtype=np.int64)  # observations recorded
        self.successes = np.zeros(a, dtype=np.int64)
        self.scale = np.full(a, math.nan)  # J: the first successful try's cost (profiling extra left out)
        self.spent = np.zeros(a)  # J actually spent
        self.current = np.zeros(a)  # J spent in the current recurrence
        self.min_cost = np.full(a, math.inf)  # least recurrence total so far

    @staticmethod
    def applies(model: JobModel, policies: Sequence[ArmPolicy]) -> bool:
        """Whether the face replays ``policies`` exactly: one context but the generator, the model's arms, every JIT limit measured."""
        if model.at_jit_limits() is None:
            return False
        p = policies[0]
        c = p.ctx
        if p.arms != [int(b) for b in model.job.batch_sizes] or c.job is not model.job:
            return False
        same = (c.job, c.cost, c.beta, c.window, c.recurrences)
        return all(
            (q.ctx.job, q.ctx.cost, q.ctx.beta, q.ctx.window, q.ctx.recurrences) == same for q in policies
        )

    # ------------------------------------------------------------------ the array protocol
    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """b0 until a seed's try has reached the target, then its :meth:`choose`, at the JIT limit."""
        col = np.full(len(ids), self.b0, dtype=np.intp)
        pending = self.successes[ids] > 0
        if pending.any():
            col[pending] = self.choose(ids[pending])
        self.decided(ids, col)
        return Decided(col, self.jit_pj[col], ~self.learnt[ids, col])

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Whether each seed's try stops at its cost bound (the class's)."""
        return np.full(len(ids), bool(self.cls.early_stopping))

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """The bound itself (``beta x`` the best cost)."""
        return bound

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """:meth:`ArmBandit.observe <zeus_bench.sim.policies.baselines.ArmBandit.observe>` of every seed that tried."""
        col, cost, profiled = tried.bi, tried.cost, tried.profiled
        if profiled.any():
            self.learnt[ids[profiled], col[profiled]] = True
            self.learn(ids, tried)
        ran = tried.epochs > 0.0
        if ran.all():
            self.spent[ids] += cost
            self.current[ids] += cost
        else:
            at, paid = ids[ran], cost[ran]
            self.spent[at] += paid
            self.current[at] += paid
        x = np.full(len(ids), self.cap)  # a try that did not reach the target counts as the cap
        ok = tried.reached
        if ok.any():
            won, c, cols = ids[ok], cost[ok], col[ok]
            on = profiled[ok]
            extra = np.where(on, self.overhead[cols], 0.0) if on.any() else 0.0  # the JIT profile's extra
            c = c - py_min(extra, c)
            first = self.successes[won] == 0
            if first.any():
                self.scale[won[first]] = np.where(c[first] > 0.0, c[first], 1.0)
            x[ok] = py_min(c / self.scale[won], self.cap)
            self.successes[won] += 1
            self.reached[won, cols] += 1
            self.min_cost[won] = py_min(self.min_cost[won], self.current[won])
            self.current[won] = 0.0
        learning = np.isfinite(self.scale[ids])  # no unit before the first success: nothing to learn
        if learning.all():
            self.record(ids, col, x)
        elif learning.any():
            self.record(ids[learning], col[learning], x[learning])

    def fallback(self, ids: Sequence[int]) -> ScalarPolicies:
        """Never asked (no seed goes): the objects' scalar face."""
        return ScalarPolicies(
            self.model, [self.policies[i] for i in ids], Policy.stop_cost is not self.cls.stop_cost
        )

    # ------------------------------------------------------------------ the rules' hooks
    def choose(self, rows: np.ndarray) -> np.ndarray:
        """The column of each seed ``rows``' next batch size (after a success)."""
        raise NotImplementedError

    def record(self, rows: np.ndarray, col: np.ndarray, x: np.ndarray) -> None:
        """Add normalized costs ``x`` to arms ``col`` of seeds ``rows`` (one each)."""
        self.n[rows, col] += 1.0
        self.s1[rows, col] += x
        self.s2[rows, col] += x * x
        self.tries[rows] += 1

    def learn(self, ids: np.ndarray, tried: Tried) -> None:
        """What the outcomes teach besides the statistics, asked when a try profiled (default: nothing)."""

    def decided(self, ids: np.ndarray, col: np.ndarray) -> None:
        """Each seed's decision (default: nothing to remember)."""

    # ------------------------------------------------------------------ what the rules read
    def means(self, rows: np.ndarray) -> np.ndarray:
        """Mean normalized cost of every arm of seeds ``rows`` (inf before any observation)."""
        n = self.n[rows]
        return np.where(n > 0, self.s1[rows] / np.maximum(n, 1.0), np.inf)
