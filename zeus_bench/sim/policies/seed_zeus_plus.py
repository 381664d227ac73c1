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
* early stopping is the class's, for every seed at once;
* a quiet seed (its optimizer would only run its incumbent) runs on arrays without its objects
  (:class:`~zeus_bench.optimizers.climb_arrays.QuietClimbs`, in faces of at least
  :attr:`ZeusPlusArrays.MIN_QUIET_SEEDS` seeds), and wakes, its objects brought up to date, when
  a step is not certain.

The objects' state, once every seed woke at the end of the walk (:meth:`ZeusPlusArrays.settle`),
is the state the default face would leave, so no seed is ever reported gone;
``tests/sim/test_zeus_plus_arrays.py`` holds the rows to the scalar face's bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from zeus_bench.optimizers.climb_arrays import QuietClimbs
from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.sim.policies.seeds import Decided, Decision, Outcome, ScalarPolicies, Tried, decision_indices

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.base import PolicyContext

__all__ = ["ClimbingPolicy", "ZeusPlusArrays"]


class ClimbingPolicy(Protocol):
    """What the face asks of a seed's policy object (a :class:`~zeus_bench.sim.policies.zeus_plus.ZeusPlus`)."""

    climber: SafeHillClimb
    jit_limits: dict[int, float]
    early_stopping: bool
    ctx: PolicyContext

    def predict(self) -> Decision:  # noqa: D102 (the policy's)
        ...

    def stop_cost(self, default: float, epoch_cost: float = ...) -> float:  # noqa: D102
        ...

    def observe(self, outcome: Outcome) -> None:  # noqa: D102
        ...

    def feed(self, batch_size: int, cost: float, reached: bool, epochs: float, extra: float = ...) -> None:  # noqa: D102
        ...


class ZeusPlusArrays:
    """The array face of ``zeus-plus`` objects (one per seed, one class): their optimizers asked directly.

    Quiet seeds (:mod:`zeus_bench.optimizers.climb_arrays`) run their incumbent on arrays without
    their objects, which are brought up to date when the seed wakes and when the walk ends
    (:meth:`settle`).
    """

    #: Least seeds for the quiet seeds' arrays: a step's arrays cost about 0.2 ms whatever their
    #: rows, a seed's step on its object about 12 us (the study's faces of a few seeds ran 25 %
    #: slower on arrays; the arena's of 50 and more, 20 % faster).
    MIN_QUIET_SEEDS = 24

    def __init__(self, model: JobModel, policies: Sequence[ClimbingPolicy]) -> None:
        """Face ``policies`` (seed ``i``'s at position ``i``; of one class, or of one face family) on ``model``."""
        self.model = model
        self.zp: list[ClimbingPolicy] = list(policies)
        # each seed's class's (a face may serve several classes: ZeusPlus.face_family)
        self.stops = np.array([bool(type(p).early_stopping) for p in self.zp], dtype=bool)
        self.limits = np.asarray(model.job.power_limits, dtype=float)
        self.batch_sizes: list[int] = [int(b) for b in model.job.batch_sizes]
        self._config: dict[
            tuple[int, float | None], tuple[int, int, bool]
        ] = {}  # (batch size, limit) -> indices
        a = len(self.zp)
        # Quiet seeds on arrays, where every optimizer follows the class's own rules.
        own = a >= max(1, self.MIN_QUIET_SEEDS) and all(type(p.climber) is SafeHillClimb for p in self.zp)
        self.quiet = QuietClimbs(sorted(self.batch_sizes), a) if own else None
        col = {} if self.quiet is None else self.quiet.col
        self.model_col = np.array([col.get(b, -1) for b in self.batch_sizes], dtype=np.intp)
        self.decided = np.zeros((a, 3), dtype=np.intp)  # a quiet seed's try: bi, pj, jit
        self.wait = np.zeros(a, dtype=np.int64)  # tries before a seed may turn quiet again
        self.backoff = np.ones(a, dtype=np.int64)
        self.calm = np.zeros(a, dtype=bool)  # decided on arrays since it turned quiet

    def _quiet_at(self, ids: np.ndarray) -> np.ndarray:
        """The positions in ``ids`` of the quiet seeds."""
        return np.flatnonzero(self.quiet.quiet[ids]) if self.quiet is not None else np.empty(0, dtype=np.intp)

    def _indices(self, b: int, limit: float | None) -> tuple[int, int, bool]:
        """:func:`decision_indices` of batch size ``b`` at ``limit`` (None: JIT), kept."""
        at = self._config.get((b, limit))
        if at is None:
            at = self._config[(b, limit)] = decision_indices(self.model, Decision(b, limit))
        return at

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """Each seed's optimizer's batch size at the seed's JIT limit of it, as configuration indices.

        A quiet seed whose rules certainly run its incumbent (no probe due, or none its funds pay
        for) does without asking its object; one not certain wakes, and its object decides.
        """
        calm = np.zeros(len(ids), dtype=bool)
        at = self._quiet_at(ids)
        if len(at):
            rows = ids[at]
            sure = self.quiet.idle(rows)  # type: ignore[union-attr]
            calm[at[sure]] = True
            self.calm[rows[sure]] = True
            for i in rows[~sure].tolist():
                self._wake(i, failed=not self.calm[i])
        bi = np.empty(len(ids), dtype=np.intp)
        pj = np.empty(len(ids), dtype=np.intp)
        jit = np.empty(len(ids), dtype=bool)
        if calm.any():
            known = self.decided[ids[calm]]
            bi[calm], pj[calm], jit[calm] = known[:, 0], known[:, 1], known[:, 2] != 0
        asked = np.flatnonzero(~calm)
        if len(asked):
            zp, at_config, indices = self.zp, self._config, self._indices
            out = []
            for i in ids[asked].tolist():
                p = zp[i]
                b = p.climber.predict()
                limit = p.jit_limits.get(b)
                x = at_config.get((b, limit))
                out.append(indices(b, limit) if x is None else x)
            b_, p_, j_ = zip(*out, strict=True)
            bi[asked], pj[asked], jit[asked] = b_, p_, j_
        return Decided(bi, pj, jit)

    def early_stopping(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Each seed's class's ``early_stopping``."""
        return self.stops[np.asarray(ids, dtype=np.intp)]

    def stop_cost(
        self, ids: Sequence[int] | np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray
    ) -> np.ndarray:
        """Each seed's :meth:`ZeusPlus.stop_cost <zeus_bench.sim.policies.zeus_plus.ZeusPlus.stop_cost>` (a quiet seed's on arrays)."""
        zp = self.zp
        ids = np.asarray(ids, dtype=np.intp)
        out = np.empty(len(ids))
        quiet = np.zeros(len(ids), dtype=bool)
        at = self._quiet_at(ids)
        if len(at):
            quiet[at] = True
            out[at] = self.quiet.stop_cost(ids[at], bound[at], epoch_cost[at])  # type: ignore[union-attr]
        rest = np.flatnonzero(~quiet)
        if len(rest):
            cols = (ids[rest].tolist(), bound[rest].tolist(), epoch_cost[rest].tolist())
            out[rest] = [zp[i].stop_cost(b, c) for i, b, c in zip(*cols, strict=True)]
        return out

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Each seed's outcome: taken on arrays (quiet), fed to its optimizer, or (profiled) observed by its object."""
        scalar = np.ones(len(ids), dtype=bool)
        at = self._quiet_at(ids)
        if len(at):
            rows = ids[at]
            reached = tried.reached[at] & ~tried.profiled[at]
            taken = self.quiet.observe(  # type: ignore[union-attr]
                rows, self.model_col[tried.bi[at]], tried.cost[at], reached, tried.epochs[at]
            )
            scalar[at[taken]] = False
            for i in rows[~taken].tolist():
                self._wake(i)
        rest = np.flatnonzero(scalar)
        if len(rest):
            self._observe_objects(ids[rest], Tried(*(x[rest] for x in tried)))

    def _observe_objects(self, ids: np.ndarray, tried: Tried) -> None:
        """The outcomes of seeds ``ids`` told to their objects; then those that may turn quiet do."""
        zp, bs, limits, q = self.zp, self.batch_sizes, self.limits, self.quiet
        cols = (
            ids.tolist(), tried.bi.tolist(), tried.cost.tolist(), tried.reached.tolist(), tried.epochs.tolist(),
            tried.profiled.tolist(),
        )  # fmt: skip
        for k, (i, b, c, r, e, prof) in enumerate(zip(*cols, strict=True)):
            p = zp[i]
            if prof:
                pj = int(tried.pj[k])
                energy, time = float(tried.energy_j[k]), float(tried.time_s[k])
                p.observe(Outcome(bs[b], float(limits[pj]), c, r, e, energy, time, True))
                continue
            p.feed(bs[b], c, r, e)
            if q is None or not r:
                continue
            if self.wait[i]:
                self.wait[i] -= 1
            elif q.eligible(p.climber):
                self._enter(i)

    def _enter(self, i: int) -> None:
        """Seed ``i`` turns quiet, its try (the incumbent at its JIT limit) kept."""
        assert self.quiet is not None
        p = self.zp[i]
        cl = p.climber
        self.quiet.enter(i, cl, float(p.ctx.beta))
        b = cl.incumbent()
        self.decided[i] = self._indices(b, p.jit_limits.get(b))
        self.calm[i] = False

    def _wake(self, i: int, failed: bool = False) -> None:
        """Seed ``i`` wakes, its object brought up to date; ``failed``: at its first decision (it waits longer each time)."""
        assert self.quiet is not None
        self.quiet.wake(i, self.zp[i].climber)
        if failed:
            self.wait[i] = self.backoff[i]
            self.backoff[i] = min(2 * self.backoff[i], 64)
        elif self.calm[i]:
            self.backoff[i] = 1

    def settle(self) -> None:
        """Wake every quiet seed: each object then holds what the scalar face would leave it."""
        if self.quiet is not None:
            for i in np.flatnonzero(self.quiet.quiet).tolist():
                self._wake(i)

    def fallback(self, ids: Sequence[int]) -> ScalarPolicies:
        """Never asked (no seed goes): the objects' scalar face."""
        self.settle()
        return ScalarPolicies(self.model, [self.zp[i] for i in ids], True)
