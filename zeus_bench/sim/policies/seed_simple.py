"""Faces over seeds on arrays of the simple built-in policies: the fixed references, ``pl-only``, ``grid-search``.

Each is the array protocol (:class:`~zeus_bench.sim.policies.seeds.SeedArrays`) of its policy's
rules, stated on arrays over the seeds (no object asked per seed and try):

* :class:`FixedArrays`: one configuration for every try of every seed (``baseline``,
  ``max-batch``, ``oracle``), nothing learnt;
* :class:`JitB0Arrays`: b0 at its JIT limit, its first try profiling it (``pl-only``);
* :class:`GridArrays`: every configuration of the grid once in order, then the cheapest that
  reached the target (``grid-search``).

No seed is ever reported gone; the scalar faces stay (``tests/sim/test_sim_array_faces.py`` holds
these to them row by row).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.sim.policies.seeds import Decided, Decision, ScalarPolicies, Tried, decision_indices

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.base import Policy

__all__ = ["FixedArrays", "GridArrays", "JitB0Arrays"]


class _Face:
    """What the simple faces share: the seeds' objects (for the fallback), no early stopping rule of their own."""

    def __init__(self, model: JobModel, policies: Sequence[Policy], stops: bool) -> None:
        self.model = model
        self.policies = list(policies)
        self.stops = stops

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Whether each seed's try stops at its cost bound (the class's)."""
        return np.full(len(ids), self.stops)

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """The bound itself (``beta x`` the best cost)."""
        return bound

    def fallback(self, ids: Sequence[int]) -> ScalarPolicies:
        """Never asked (no seed goes): the objects' scalar face."""
        return ScalarPolicies(self.model, [self.policies[i] for i in ids], False)


class FixedArrays(_Face):
    """Every try of every seed at one configuration (a fixed reference policy)."""

    def __init__(self, model: JobModel, policies: Sequence[Policy], decision: Decision, stops: bool) -> None:
        """``decision``: every object's (they agree)."""
        super().__init__(model, policies, stops)
        self.at = decision_indices(model, decision)

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """The configuration, for every seed."""
        bi, pj, jit = self.at
        n = len(ids)
        return Decided(np.full(n, bi, dtype=np.intp), np.full(n, pj, dtype=np.intp), np.full(n, jit))

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Nothing to learn."""


class JitB0Arrays(_Face):
    """b0 at its JIT limit for every seed: profiled on the seed's first try that ran, at the limit after."""

    def __init__(self, model: JobModel, policies: Sequence[Policy], stops: bool) -> None:
        """Every seed unprofiled."""
        super().__init__(model, policies, stops)
        b0 = int(model.job.b0)
        self.bi, self.pj, _ = decision_indices(model, Decision(b0, None))
        self.limit = model.jit_limit_w[self.bi]
        self.learnt = np.zeros(len(self.policies), dtype=bool)  # per seed: the profile's limit known
        _, self.pj_at, _ = decision_indices(model, Decision(b0, self.limit))  # (JobModel.indices: measured)

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """b0, profiled where its limit is not known yet."""
        learnt = self.learnt[ids]
        pj = np.where(learnt, self.pj_at, self.pj).astype(np.intp)
        return Decided(np.full(len(ids), self.bi, dtype=np.intp), pj, ~learnt)

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """A profiled try teaches its seed the limit."""
        self.learnt[ids[tried.profiled]] = True


class GridArrays(_Face):
    """``grid-search`` on arrays: each seed's position in the grid, its cheapest configuration that reached."""

    def __init__(
        self, model: JobModel, policies: Sequence[Policy], grid: Sequence[tuple[int, float]], stops: bool
    ) -> None:
        """``grid``: the configurations in order (every object's)."""
        super().__init__(model, policies, stops)
        self.grid_bi = np.array([decision_indices(model, Decision(*g))[0] for g in grid], dtype=np.intp)
        self.grid_pj = np.array([decision_indices(model, Decision(*g))[1] for g in grid], dtype=np.intp)
        a = len(self.policies)
        self.next = np.zeros(a, dtype=np.int64)
        self.best_cost = np.full(a, math.inf)
        self.best_bi = np.full(a, self.grid_bi[0], dtype=np.intp)
        self.best_pj = np.full(a, self.grid_pj[0], dtype=np.intp)

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """The next configuration of the grid, or the seed's best once all were tried."""
        k = self.next[ids]
        inside = k < len(self.grid_bi)
        at = np.minimum(k, len(self.grid_bi) - 1)
        bi = np.where(inside, self.grid_bi[at], self.best_bi[ids])
        pj = np.where(inside, self.grid_pj[at], self.best_pj[ids])
        return Decided(bi, pj, np.zeros(len(ids), dtype=bool))

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Advance the seeds that tried their grid's next configuration; keep each one's cheapest that reached."""
        k = self.next[ids]
        inside = k < len(self.grid_bi)
        at = np.minimum(k, len(self.grid_bi) - 1)
        on_grid = inside & (tried.bi == self.grid_bi[at]) & (tried.pj == self.grid_pj[at])
        better = on_grid & tried.reached & (tried.cost < self.best_cost[ids])
        self.next[ids[on_grid]] += 1
        won = ids[better]
        self.best_cost[won] = tried.cost[better]
        self.best_bi[won], self.best_pj[won] = tried.bi[better], tried.pj[better]
