"""``zeus``'s face over seeds: its batch-size optimizer's two phases on arrays, the hand-over inside.

:class:`SeedZeus` is what :meth:`Zeus.batched <zeus_bench.sim.policies.builtin.Zeus.batched>`
gives the replay's executor (:mod:`zeus_bench.sim.executor`) through the array protocol
(:class:`~zeus_bench.sim.policies.seeds.SeedArrays`): every seed's try is a batch-size index at
its JIT limit (the batch size's first try profiles it), from one of the optimizer's two batched
phases, whose rules are stated once in :mod:`zeus_bench.optimizers.seed_bandits`:

* pruning (:class:`~zeus_bench.optimizers.seed_bandits.SeedPruning`) draws nothing: each seed's
  next batch size follows from its own outcomes;
* a seed whose pruning ends with every arm observed :data:`MIN_OBSERVATIONS` times and at most
  :data:`~zeus_bench.optimizers.rng.REJECT_SET_MAX_N` arms waits (its first prediction only
  draws) until no seed prunes; then every waiting seed goes over to Thompson Sampling
  (:class:`~zeus_bench.optimizers.seed_bandits.SeedThompson`: the draws from each seed's policy
  generator's raw outputs, the certified sample-and-pick, a near-tie from the exact posteriors);
* a seed it cannot continue exactly (an arm still to explore after pruning, more arms than the
  listed rejectable words cover, a rejectable visiting-order word, more draws than fetched) is
  reported ``gone``: the executor replays it from scratch with :meth:`SeedZeus.fallback` (one
  :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling` per seed, its generator back at
  its start).

The seeds' timelines are independent, so the seeds waiting for the hand-over simply skip steps;
each seed's rows are those of its replay alone (``tests/sim/test_sim_seed_zeus.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.optimizers.bandit import MIN_OBSERVATIONS, PRUNE_ROUNDS
from zeus_bench.optimizers.posterior import running_sums
from zeus_bench.optimizers.rng import REJECT_SET_MAX_N, emulated, normal_tables
from zeus_bench.optimizers.seed_bandits import SeedPruning, SeedThompson
from zeus_bench.sim.policies.base import Policy, scalar_face
from zeus_bench.sim.policies.seeds import Decided, ScalarPolicies, Tried

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel

__all__ = ["SeedZeus"]


@dataclass
class _Start:
    """Where a seed's Thompson Sampling starts (a :class:`~zeus_bench.optimizers.seed_bandits.SeedStart`)."""

    arms: list[int]
    sums: list[list[float]]
    rewards: list[list[float]]
    pol_rng: np.random.Generator
    pol_state: Any


class SeedZeus:
    """``zeus``'s seeds on arrays: pruning, the hand-over and Thompson Sampling (the array protocol).

    Seed ``i`` is ``policies[i]``'s: its context and generator (the objects themselves are asked
    nothing, unless the seed falls back to them).
    """

    #: Fewer seeds than this replay faster one object per seed (a step's array operations cost
    #: about as much as 12-16 scalar tries; the measurements are in docs/policies.md).
    MIN_SEEDS = 16

    def __init__(
        self, model: JobModel, policies: Sequence[Policy], limits: Sequence[float] | None = None
    ) -> None:
        """The seeds of ``policies`` (of a class with Zeus's rules) on ``model`` (:meth:`applies`).

        ``limits``: per batch size, the power limit every try of it runs at, never profiled
        (``bs-only``'s maximum limits); None: Zeus's JIT limits (a batch size's first try profiles it).
        """
        self.model = model
        self.policies = list(policies)
        self.starts = [p.ctx.rng.bit_generator.state for p in self.policies]
        a, n_b = len(self.policies), len(model.job.batch_sizes)
        self.profiles = limits is None
        chosen = model.jit_limit_w if limits is None else limits
        self.jit = np.array([model.limit_index[x] for x in chosen], dtype=np.intp)
        self.pruning = np.arange(a)  # the seeds pruning, one row each of prune and seen
        # one window and one number of pruning rounds for all the seeds (applies)
        first = self.policies[0].ctx if self.policies else None
        rounds = PRUNE_ROUNDS if first is None else first.prune_rounds
        self.prune = SeedPruning(a, n_b, model.bs_index[int(model.job.b0)], rounds)
        self.seen = np.zeros((a, n_b), dtype=bool)  # the batch sizes each has tried (profiled)
        self.waiting: dict[int, _Start] = {}  # pruned, waiting for the hand-over
        self.again: list[int] = []  # the seeds to report gone
        self.thompson: SeedThompson | None = None
        self.window = 0 if first is None else first.window
        self._live: np.ndarray | None = None  # the Thompson rows still replayed (None: all)
        self._asked = a  # how many seeds the last step asked about
        self._win = np.zeros(0, dtype=np.intp)  # each Thompson row's arm column this step
        self._tried: np.ndarray | None = None  # the Thompson rows that try (None: all)

    @staticmethod
    def applies(model: JobModel, policies: Sequence[Policy], jit: bool = True) -> bool:
        """Whether this face replays ``policies`` exactly, and pays.

        Exactly: no prior and no concurrency (the paper's), one number of pruning rounds for every
        seed (at least 1: with none, every batch size is an arm still to explore) and one window,
        none or at least :data:`MIN_OBSERVATIONS` (a shorter one explores at every prediction),
        every JIT limit measured (``jit``: the tries run at them), NumPy's normal draws the ones
        measured. Pays: at least :attr:`MIN_SEEDS` seeds.
        """
        if (
            len(policies) < SeedZeus.MIN_SEEDS
            or (jit and model.at_jit_limits() is None)
            or normal_tables() is None
        ):
            return False
        window, rounds = policies[0].ctx.window, policies[0].ctx.prune_rounds
        if 0 < window < MIN_OBSERVATIONS or rounds < 1:
            return False
        for p in policies:
            c = p.ctx
            plain = (
                c.window == window and c.prior_mean == 0.0 and c.prior_precision == 0.0 and not c.concurrent
            )
            if not plain or c.prune_rounds != rounds or not emulated(c.rng):
                return False
            if c.rng.bit_generator.state["has_uint32"]:
                return False
        return True

    # ------------------------------------------------------------------ the array protocol
    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """Each pruning seed's next batch size (the waiting ones skip), else each Thompson seed's."""
        if len(ids) != self._asked:
            self._keep(ids)
        gone = self._gone(ids)
        if self.thompson is None and not len(self.pruning) and self.waiting:
            order = sorted(self.waiting)
            self.thompson = SeedThompson([self.waiting[i] for i in order], order, self.window)
            self.waiting = {}
        if self.thompson is None:
            if not len(self.pruning):  # only seeds that go are left
                empty = np.zeros(0, dtype=np.intp)
                return Decided(empty, empty, np.zeros(0, dtype=bool), empty, gone)
            bi = self.prune.decide()
            profiled = ~self.seen[np.arange(len(bi)), bi] if self.profiles else np.zeros(len(bi), dtype=bool)
            step = None if len(self.pruning) == len(ids) else np.searchsorted(ids, self.pruning)
            return Decided(bi, self.jit[bi], profiled, step, gone)
        th = self.thompson
        live = self._live
        rows = None if live is None else np.flatnonzero(live)  # the Thompson rows of seeds in ids
        if rows is None:
            pos = None if len(th.ids) == len(ids) else np.searchsorted(ids, th.ids)
            lefts = left if pos is None else left[pos]
        else:
            pos = np.searchsorted(ids, th.ids[rows])
            lefts = np.ones(len(th.ids), dtype=np.int64)
            lefts[rows] = left[pos]
        win, bi, out = th.decide(True if live is None else live, lefts)  # type: ignore[arg-type]
        self._win, self._tried = win, None
        step = pos
        if rows is not None or out.any():
            every = np.arange(len(ids)) if pos is None else pos
            mine = np.arange(len(th.ids)) if rows is None else rows
            ok = ~out[mine]
            self._tried = mine[ok]
            step, bi = every[ok], bi[self._tried]
            if not ok.all():
                lost = every[~ok]
                gone = lost if gone is None else np.sort(np.concatenate([gone, lost]))
        return Decided(bi, self.jit[bi], np.zeros(len(bi), dtype=bool), step, gone)

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Every try stops at its cost bound."""
        return np.ones(len(ids), dtype=bool)

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """The bound itself (``beta x`` the best cost)."""
        return bound

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """The outcomes: pruning's transition (and the seeds whose pruning ends), or each arm's sums."""
        if self.thompson is not None:
            cost = tried.cost
            if self._tried is not None:  # the rows that did not try: any cost (they are dropped)
                cost = np.zeros(len(self.thompson.ids))
                cost[self._tried] = tried.cost
            self.thompson.observe(self._win, cost)
            return
        bi = tried.bi
        self.seen[np.arange(len(bi)), bi] = True
        self.prune.observe(bi, tried.cost, tried.reached)
        pruned = self.prune.pruned()
        if not pruned.any():
            return
        for i in np.flatnonzero(pruned).tolist():
            seed = int(self.pruning[i])
            arms, rewards = self.prune.arms(i)
            if min(map(len, rewards)) < MIN_OBSERVATIONS or len(arms) > REJECT_SET_MAX_N:
                self.again.append(seed)  # its first prediction explores: the scalar face prunes it
                continue
            rng = self.policies[seed].ctx.rng
            # the running sums in the rewards' order, as the optimizer makes them
            self.waiting[seed] = _Start(
                arms, [running_sums(r) for r in rewards], rewards, rng, self.starts[seed]
            )
        rows = np.flatnonzero(~pruned)
        self.prune.take(rows)
        self.seen, self.pruning = self.seen[rows], self.pruning[rows]

    def fallback(self, ids: Sequence[int]) -> ScalarPolicies:
        """The scalar face of seeds ``ids`` from their start (their generators put back there)."""
        for i in ids:
            self.policies[i].ctx.rng.bit_generator.state = self.starts[i]
        return scalar_face(self.model, [self.policies[i] for i in ids])

    # ------------------------------------------------------------------------- bookkeeping
    def _keep(self, ids: np.ndarray) -> None:
        """Forget the seeds that are not in ``ids`` any more (they ended, or went)."""
        self._asked = len(ids)
        if len(self.pruning):
            rows = np.flatnonzero(np.isin(self.pruning, ids))
            if len(rows) < len(self.pruning):
                self.prune.take(rows)
                self.seen, self.pruning = self.seen[rows], self.pruning[rows]
        if self.waiting:
            asked = set(ids.tolist())
            self.waiting = {i: s for i, s in self.waiting.items() if i in asked}
        if self.thompson is not None:  # its rows go once a quarter can (they hold outputs fetched ahead)
            live = np.isin(self.thompson.ids, ids)
            n = int(live.sum())
            if n <= 3 * len(live) // 4:
                self.thompson.keep(np.flatnonzero(live))
                self._live = None
            elif n < len(live):
                self._live = live

    def _gone(self, ids: np.ndarray) -> np.ndarray | None:
        """The positions in ``ids`` of the seeds to report gone (reported once)."""
        if not self.again:
            return None
        again, self.again = np.array(sorted(self.again), dtype=np.int64), []
        again = again[np.isin(again, ids)]
        return np.searchsorted(ids, again) if len(again) else None
