"""The batch-size optimizer's two decision rules, stated once on arrays over seeds.

:class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling` (one seed: the online optimizer,
the generic replay loop, the arrival replays) and the replay's batched Zeus over seeds
(:mod:`zeus_bench.sim.pruning`, :mod:`zeus_bench.sim.lockstep`) both call these functions: the
one-seed object with one row, the replay with one row per seed.

* **The pruning transition** (:class:`Pruning`, :func:`prune_choice`, :func:`prune_observe`):
  the state of each seed's pruning, over the batch sizes' indices in ascending order: the round,
  its candidates, the round's default ``d``, the next batch size downwards (the largest candidate
  ``<= down``; none: that direction is over) and upwards (the smallest candidate ``>= up``), the
  good batch sizes of the round and its best (cheapest good) one. A round goes down from ``d``
  while batch sizes reach the target, then up from ``d + 1``; one that does not reach ends its
  direction. When both are over the round ends: the good batch sizes become the candidates (none
  good: the round's best so far, its default), the best one the next round's default.
* **The certified sample-and-pick** (:func:`certified_pick`): the arm of largest sample
  ``mean + std * z`` from the approximate posteriors (running sums,
  :func:`~zeus_bench.optimizers.posterior.approx_from_sums`), certified when it beats the second
  largest by more than twice the error bound ``c0 + c1 * max |z|``; a near-tie is left to the
  exact posteriors (the caller's).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from zeus_bench.optimizers.posterior import where

__all__ = ["Pruning", "certified_pick", "next_round", "prune_choice", "prune_observe", "prune_step"]

_INF = math.inf


class Pruning(NamedTuple):
    """Each seed's pruning state, one array element (or row, over batch sizes) per seed.

    Attributes:
        rounds: Rounds completed.
        candidates: ``(seeds, batch sizes)`` bools: the round's candidates.
        default: The round's default (where it started).
        down: The next batch size downwards is the largest candidate ``<= down``.
        up: The next batch size upwards is the smallest candidate ``>= up``.
        good: ``(seeds, batch sizes)`` bools: the round's batch sizes that reached the target.
        best: The round's cheapest good batch size (its default before any).
        best_cost: Its cost (``inf`` before any).
    """

    rounds: np.ndarray
    candidates: np.ndarray
    default: np.ndarray
    down: np.ndarray
    up: np.ndarray
    good: np.ndarray
    best: np.ndarray
    best_cost: np.ndarray

    @classmethod
    def start(cls, seeds: int, n_batch_sizes: int, default: int) -> Pruning:
        """Round 1 of ``seeds`` seeds: every batch size a candidate, from the default's index."""
        d = np.full(seeds, default, dtype=np.int64)
        return cls(
            np.zeros(seeds, dtype=np.int64), np.ones((seeds, n_batch_sizes), dtype=bool), d, d.copy(), d + 1,
            np.zeros((seeds, n_batch_sizes), dtype=bool), d.copy(), np.full(seeds, _INF),
        )  # fmt: skip

    def take(self, rows: np.ndarray) -> Pruning:
        """The state of the seed rows ``rows`` only."""
        return Pruning(*(v[rows] for v in self))

    def downward(self) -> np.ndarray:
        """``(seeds, batch sizes)``: the candidates left downwards."""
        cols = np.arange(self.candidates.shape[1])
        return self.candidates & (cols[None, :] <= self.down[:, None])  # type: ignore[no-any-return]


def prune_choice(p: Pruning) -> np.ndarray:
    """Each seed's batch-size index pruning tries next: downwards while any is left, then upwards."""
    n_b = p.candidates.shape[1]
    downward = p.downward()
    cols = np.arange(n_b)
    return np.where(  # type: ignore[no-any-return]
        downward.any(axis=1),
        n_b - 1 - downward[:, ::-1].argmax(axis=1),
        (p.candidates & (cols[None, :] >= p.up[:, None])).argmax(axis=1),
    )


def prune_observe(p: Pruning, bi: np.ndarray, cost: np.ndarray, reached: np.ndarray) -> Pruning:
    """Each seed's pruning after the outcome of the batch size it asked for (:func:`prune_choice`).

    ``bi`` is that batch size's index, ``cost`` its try's cost and ``reached`` whether it reached
    the target. A round whose directions are both over ends here (``rounds`` one more).
    """
    return next_round(*prune_step(p, bi, cost, reached))


def prune_step(
    p: Pruning, bi: np.ndarray, cost: np.ndarray, reached: np.ndarray
) -> tuple[Pruning, np.ndarray]:
    """The outcome's effect within the round (:func:`prune_observe`), and whether the round is over."""
    rows = np.arange(len(bi))
    n_b = p.candidates.shape[1]
    cols = np.arange(n_b)
    in_down = p.downward().any(axis=1)
    good = p.good.copy()
    good[rows, bi] |= reached
    better = reached & (cost < p.best_cost)
    best = np.where(better, bi, p.best)
    best_cost = np.where(better, cost, p.best_cost)
    down = np.where(in_down, np.where(reached, bi - 1, -1), p.down)
    up = np.where(in_down, p.up, np.where(reached, bi + 1, n_b))
    left = p.candidates & ((cols[None, :] <= down[:, None]) | (cols[None, :] >= up[:, None]))
    over = np.count_nonzero(left, axis=1) == 0
    return Pruning(p.rounds, p.candidates, p.default, down, up, good, best, best_cost), over


def next_round(p: Pruning, over: np.ndarray) -> Pruning:
    """The next round of the seeds whose round is ``over``: the good ones (else the best) from the best."""
    if not over.any():
        return p
    cols = np.arange(p.candidates.shape[1])
    any_good = np.count_nonzero(p.good, axis=1) > 0
    kept = np.where(any_good[:, None], p.good, cols[None, :] == p.best[:, None])
    return Pruning(
        p.rounds + over, np.where(over[:, None], kept, p.candidates), np.where(over, p.best, p.default),
        np.where(over, p.best, p.down), np.where(over, p.best + 1, p.up), np.where(over[:, None], False, p.good),
        p.best, np.where(over, _INF, p.best_cost),
    )  # fmt: skip


def certified_pick(
    mean: np.ndarray, std: np.ndarray, c0: Any, c1: Any, z: np.ndarray, valid: np.ndarray | None = None
) -> tuple[Any, Any]:
    """The arm (column) of largest sample ``mean + std * z``, and whether it is certain.

    One seed: ``mean``, ``std`` and ``z`` are ``(arms,)`` arrays and ``c0``, ``c1`` floats; many:
    ``(seeds, arms)`` arrays (padding columns: ``valid`` False, ``mean`` -inf, ``std`` 0) and
    ``(seeds,)`` arrays. ``c0`` and ``c1`` bound the errors of every arm's approximate posterior
    (:func:`~zeus_bench.optimizers.posterior.approx_from_sums`; their largest over the arms):
    every approximate sample lies within ``B = c0 + c1 * max |z|`` of the exact one, so when the
    largest exceeds the second largest by more than ``2 B`` the exact samples have the same,
    unique, largest. One arm is always certain. Where not certain (near-ties, non-finite bounds)
    the caller decides from the exact posteriors. The samples are finite (the approximate
    posteriors of non-finite sums are 0 with an infinite ``c0``), so the first largest is the
    same whichever way it is found: in Python for one seed (faster on a few arms), over the
    array's rows for many.
    """
    samples = mean + std * z
    if samples.ndim == 1:
        values = samples.tolist()
        best = max(values)
        win: Any = values.index(best)
        values[win] = -_INF
        second: Any = max(values)
        z_max: Any = max(map(abs, z.tolist()))
        one: Any = len(values) == 1
    else:
        rows = np.arange(len(samples))
        win = samples.argmax(axis=1)
        best = samples[rows, win]
        samples[rows, win] = -_INF
        second = samples.max(axis=1)
        assert valid is not None
        z_max = np.where(valid, np.abs(z), 0.0).max(axis=1)
        one = np.count_nonzero(valid, axis=1) == 1
    bound = c0 + c1 * z_max
    return where(one, 0, win), (best - bound > second + bound) | one
