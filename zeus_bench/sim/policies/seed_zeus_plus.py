"""``zeus-plus``'s face over seeds: its optimizers asked straight from the executor's arrays.

:class:`ZeusPlusArrays` is what :meth:`ZeusPlus.batched
<zeus_bench.sim.policies.zeus_plus.ZeusPlus.batched>` (and ``zeus-plus-safe``'s) gives the
replay's executor (:mod:`zeus_bench.sim.executor`) through the array protocol
(:class:`~zeus_bench.sim.policies.seeds.SeedArrays`). Each seed keeps its own policy object and
its :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb` (the optimizer's rules branch on each
seed's own history: they stay stated once, there); the face takes away what the default face
(:class:`~zeus_bench.sim.policies.seeds.ScalarPolicies`) spends around them per seed and try:

* a decision is the optimizer's batch size and the seed's JIT limit of it (the configuration's
  indices kept per batch size and limit), with no :class:`~zeus_bench.sim.policies.seeds.Decision`
  made and looked up;
* an outcome not profiled goes to the optimizer through :meth:`ZeusPlus.feed
  <zeus_bench.sim.policies.zeus_plus.ZeusPlus.feed>` without an
  :class:`~zeus_bench.sim.policies.seeds.Outcome` (a profiled one, once per batch size and seed,
  through :meth:`~zeus_bench.sim.policies.zeus_plus.ZeusPlus.observe` as before);
* early stopping is the class's, for every seed at once.

The objects' state is the state the default face would leave, so no seed is ever reported gone;
``tests/sim/test_zeus_plus_arrays.py`` holds the rows to the scalar face's bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from zeus_bench.sim.policies.seeds import Decided, Decision, Outcome, ScalarPolicies, Tried, decision_indices

if TYPE_CHECKING:
    from zeus_bench.optimizers.hill_climb import SafeHillClimb
    from zeus_bench.sim.model import JobModel

__all__ = ["ClimbingPolicy", "ZeusPlusArrays"]


class ClimbingPolicy(Protocol):
    """What the face asks of a seed's policy object (a :class:`~zeus_bench.sim.policies.zeus_plus.ZeusPlus`)."""

    climber: SafeHillClimb
    jit_limits: dict[int, float]
    early_stopping: bool

    def predict(self) -> Decision:  # noqa: D102 (the policy's)
        ...

    def stop_cost(self, default: float, epoch_cost: float = ...) -> float:  # noqa: D102
        ...

    def observe(self, outcome: Outcome) -> None:  # noqa: D102
        ...

    def feed(self, batch_size: int, cost: float, reached: bool, epochs: float, extra: float = ...) -> None:  # noqa: D102
        ...


class ZeusPlusArrays:
    """The array face of ``zeus-plus`` objects (one per seed, one class): their optimizers asked directly."""

    def __init__(self, model: JobModel, policies: Sequence[ClimbingPolicy]) -> None:
        """Face ``policies`` (seed ``i``'s at position ``i``, all of one class) on ``model``."""
        self.model = model
        self.zp: list[ClimbingPolicy] = list(policies)
        self.stops = bool(type(self.zp[0]).early_stopping) if self.zp else True
        self.limits = np.asarray(model.job.power_limits, dtype=float)
        self.batch_sizes: list[int] = [int(b) for b in model.job.batch_sizes]
        self._config: dict[
            tuple[int, float | None], tuple[int, int, bool]
        ] = {}  # (batch size, limit) -> indices

    def _indices(self, b: int, limit: float | None) -> tuple[int, int, bool]:
        """:func:`decision_indices` of batch size ``b`` at ``limit`` (None: JIT), kept."""
        at = self._config.get((b, limit))
        if at is None:
            at = self._config[(b, limit)] = decision_indices(self.model, Decision(b, limit))
        return at

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """Each seed's optimizer's batch size at the seed's JIT limit of it, as configuration indices."""
        zp, at, indices = self.zp, self._config, self._indices
        out = []
        for i in ids.tolist():
            p = zp[i]
            b = p.climber.predict()
            limit = p.jit_limits.get(b)
            x = at.get((b, limit))
            out.append(indices(b, limit) if x is None else x)
        if not out:
            empty = np.empty(0, dtype=np.intp)
            return Decided(empty, empty, np.empty(0, dtype=bool))
        bi, pj, jit = zip(*out, strict=True)
        return Decided(np.array(bi, dtype=np.intp), np.array(pj, dtype=np.intp), np.array(jit, dtype=bool))

    def early_stopping(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The class's ``early_stopping``, for every seed."""
        return np.full(len(ids), self.stops)

    def stop_cost(
        self, ids: Sequence[int] | np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray
    ) -> np.ndarray:
        """Each seed's :meth:`ZeusPlus.stop_cost <zeus_bench.sim.policies.zeus_plus.ZeusPlus.stop_cost>`."""
        zp = self.zp
        ids = ids.tolist() if isinstance(ids, np.ndarray) else ids
        return np.array(
            [zp[i].stop_cost(b, c) for i, b, c in zip(ids, bound.tolist(), epoch_cost.tolist(), strict=True)],
            dtype=float,
        )

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Each seed's outcome: fed to its optimizer, or (profiled) observed by its object."""
        zp, bs, limits = self.zp, self.batch_sizes, self.limits
        cols = (
            ids.tolist(), tried.bi.tolist(), tried.cost.tolist(), tried.reached.tolist(), tried.epochs.tolist(),
            tried.profiled.tolist(),
        )  # fmt: skip
        for k, (i, b, c, r, e, prof) in enumerate(zip(*cols, strict=True)):
            if prof:
                pj = int(tried.pj[k])
                zp[i].observe(
                    Outcome(
                        bs[b],
                        float(limits[pj]),
                        c,
                        r,
                        e,
                        float(tried.energy_j[k]),
                        float(tried.time_s[k]),
                        True,
                    )
                )
            else:
                zp[i].feed(bs[b], c, r, e)

    def fallback(self, ids: Sequence[int]) -> ScalarPolicies:
        """Never asked (no seed goes): the objects' scalar face."""
        return ScalarPolicies(self.model, [self.zp[i] for i in ids], True)
