"""The batch-size optimizer over many seeds at once, and its two decision rules, stated once.

:class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling` (one seed: the online optimizer,
the executor, the arrival replays) and the replay's batched Zeus (:class:`SeedPruning`,
:class:`SeedThompson`; the face of :mod:`zeus_bench.sim.policies.seed_zeus`) call these rules on one seed or arrays.

* **The pruning transition** (:class:`Pruning`, :func:`prune_choice`, :func:`prune_observe`):
  the state of each seed's pruning, over the batch sizes' indices in ascending order: the round,
  its candidates, the round's default ``d``, the next batch size downwards (the largest candidate
  ``<= down``; none: that direction is over) and upwards (the smallest candidate ``>= up``), the
  good batch sizes of the round and its best (cheapest good) one. A round goes down from ``d``
  while batch sizes reach the target, then up from ``d + 1``; one that does not reach ends its
  direction. When both are over the round ends: the good batch sizes (none: the round's best)
  become the candidates, the best one the next round's default.
* **The certified sample-and-pick** (:func:`certified_pick`): the arm of largest sample from the
  approximate posteriors, certain when it beats the second by twice their error bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from zeus_bench.optimizers.posterior import (
    add_reward,
    approx_from_sums,
    largest_sample,
    posterior,
    posterior_sample,
    running_sums,
    where,
)
from zeus_bench.optimizers.rng import normal_tables, rejectable_words, strip_densities
from zeus_bench.optimizers.streams import PolicyStreams

__all__ = [
    "Pruning",
    "SeedStart",
    "SeedThompson",
    "certified_pick",
    "next_round",
    "prune_choice",
    "prune_observe",
    "prune_step",
]

_INF = math.inf


class Pruning(NamedTuple):
    """Each seed's pruning state: arrays over seeds, or Python numbers for one seed.

    For many seeds every field is an array with one element (or, for the masks, one row over the
    batch sizes) per seed; for one seed (:meth:`one`) the fields are Python numbers and the masks
    Python ints, bit ``i`` for batch size ``i``. The rules below take either (their few mask
    operations, :func:`_last_at_most` and its kin, have one form for each).

    Attributes:
        n: The number of batch sizes.
        rounds: Rounds completed.
        candidates: The round's candidates (a mask).
        default: The round's default (where it started).
        down: The next batch size downwards is the largest candidate ``<= down``.
        up: The next batch size upwards is the smallest candidate ``>= up``.
        good: The round's batch sizes that reached the target (a mask).
        best: The round's cheapest good batch size (its default before any).
        best_cost: Its cost (``inf`` before any).
    """

    n: int
    rounds: Any
    candidates: Any
    default: Any
    down: Any
    up: Any
    good: Any
    best: Any
    best_cost: Any

    @classmethod
    def start(cls, seeds: int, n_batch_sizes: int, default: int) -> Pruning:
        """Round 1 of ``seeds`` seeds: every batch size a candidate, from the default's index."""
        d = np.full(seeds, default, dtype=np.int64)
        return cls(
            n_batch_sizes, np.zeros(seeds, dtype=np.int64), np.ones((seeds, n_batch_sizes), dtype=bool), d, d.copy(),
            d + 1, np.zeros((seeds, n_batch_sizes), dtype=bool), d.copy(), np.full(seeds, _INF),
        )  # fmt: skip

    @classmethod
    def one(cls, n_batch_sizes: int, default: int) -> Pruning:
        """Round 1 of one seed (Python numbers)."""
        return cls(
            n_batch_sizes, 0, (1 << n_batch_sizes) - 1, default, default, default + 1, 0, default, _INF
        )

    def take(self, rows: np.ndarray) -> Pruning:
        """The state of the seed rows ``rows`` only (many seeds)."""
        return Pruning(self.n, *(v[rows] for v in self[1:]))


def _last_at_most(mask: Any, k: Any, n: int) -> Any:
    """The largest index ``<= k`` in ``mask``, or -1."""
    if isinstance(mask, int):
        return (mask & ((2 << k) - 1)).bit_length() - 1 if k >= 0 else -1
    below = mask & (np.arange(n)[None, :] <= k[:, None])
    return np.where(below.any(axis=1), n - 1 - below[:, ::-1].argmax(axis=1), -1)


def _first_at_least(mask: Any, k: Any, n: int) -> Any:
    """The smallest index ``>= k`` in ``mask``, or ``n``."""
    if isinstance(mask, int):
        above = mask >> k << k
        return (above & -above).bit_length() - 1 if above else n
    above = mask & (np.arange(n)[None, :] >= k[:, None])
    return np.where(above.any(axis=1), above.argmax(axis=1), n)


def _with(mask: Any, i: Any, flag: Any) -> Any:
    """``mask`` with index ``i`` added where ``flag``."""
    if isinstance(mask, int):
        return mask | (flag << i)
    out = mask.copy()
    out[np.arange(len(i)), i] |= flag
    return out


def _mask_where(cond: Any, a: Any, b: Any) -> Any:
    """Mask ``a`` where ``cond``, else ``b`` (per seed)."""
    return np.where(cond[:, None], a, b) if isinstance(cond, np.ndarray) else (a if cond else b)


def _only(i: Any, n: int) -> Any:
    """The mask of index ``i`` alone."""
    return 1 << i if isinstance(i, int) else np.arange(n)[None, :] == i[:, None]


def _some(mask: Any) -> Any:
    """Whether the mask holds any index (per seed)."""
    return mask != 0 if isinstance(mask, int) else mask.any(axis=1)


def prune_choice(p: Pruning) -> Any:
    """The batch-size index pruning tries next: downwards while any is left, then upwards."""
    down = _last_at_most(p.candidates, p.down, p.n)
    return where(down >= 0, down, _first_at_least(p.candidates, p.up, p.n))


def prune_observe(p: Pruning, bi: Any, cost: Any, reached: Any) -> Pruning:
    """The pruning after the outcome of the batch size it asked for (:func:`prune_choice`).

    ``bi`` is that batch size's index, ``cost`` its try's cost and ``reached`` whether it reached
    the target. A round whose directions are both over ends here (``rounds`` one more).
    """
    return next_round(*prune_step(p, bi, cost, reached))


def prune_step(p: Pruning, bi: Any, cost: Any, reached: Any) -> tuple[Pruning, Any]:
    """The outcome's effect within the round (:func:`prune_observe`), and whether the round is over."""
    n = p.n
    in_down = _last_at_most(p.candidates, p.down, n) >= 0
    better = reached & (cost < p.best_cost)
    down = where(in_down, where(reached, bi - 1, -1), p.down)
    up = where(in_down, p.up, where(reached, bi + 1, n))
    over = (_last_at_most(p.candidates, down, n) < 0) & (_first_at_least(p.candidates, up, n) >= n)
    good = _with(p.good, bi, reached)
    best, best_cost = where(better, bi, p.best), where(better, cost, p.best_cost)
    return Pruning(n, p.rounds, p.candidates, p.default, down, up, good, best, best_cost), over


def next_round(p: Pruning, over: Any) -> Pruning:
    """The next round where the round is ``over``: the good ones (else the best) from the best."""
    if not (over.any() if isinstance(over, np.ndarray) else over):
        return p
    kept = _mask_where(_some(p.good), p.good, _only(p.best, p.n))
    return Pruning(
        p.n, p.rounds + over, _mask_where(over, kept, p.candidates), where(over, p.best, p.default),
        where(over, p.best, p.down), where(over, p.best + 1, p.up), _mask_where(over, 0 if isinstance(p.good, int) else False, p.good),
        p.best, where(over, _INF, p.best_cost),
    )  # fmt: skip


def _row_max(x: np.ndarray) -> np.ndarray:
    """Each row's largest element of a ``(seeds, arms)`` array (arms few)."""
    return np.ascontiguousarray(x.T).max(axis=0)  # type: ignore[no-any-return]


def certified_pick(
    mean: Any, std: Any, c0: Any, c1: Any, z: Any, valid: Any = None, single: Any = None
) -> tuple[Any, Any]:
    """The arm (column) of largest :func:`~zeus_bench.optimizers.posterior.posterior_sample`, and if it is certain.

    One seed (``valid`` None): ``mean``, ``std``, ``z`` floats over the arms, ``c0``, ``c1`` floats;
    many: ``(seeds, arms)`` arrays (padding: ``valid`` False, ``mean`` -inf, ``std`` 0) and
    ``(seeds,)`` arrays. ``c0`` and ``c1`` bound the errors of every arm's approximate posterior
    (:func:`~zeus_bench.optimizers.posterior.approx_from_sums`; their largest over the arms):
    every approximate sample lies within ``B = c0 + c1 * max |z|`` of the exact one, so when the
    largest exceeds the second by more than ``2 B`` the exact samples have the same, unique,
    largest. One arm is always certain (many seeds: ``single``, the rows of one arm, if known). Where not certain (near-ties, non-finite bounds) the
    caller decides from the exact posteriors. The samples are finite (the approximate posteriors
    of non-finite sums are 0 with an infinite ``c0``), so the first largest is the same whichever
    way it is found: in Python for one seed, over the array's rows for many.
    """
    if valid is None:
        values = list(map(posterior_sample, mean, std, z))
        best: Any = max(values)
        win: Any = values.index(best)
        values[win] = -_INF
        second: Any = max(values)
        z_max: Any = max(map(abs, z))
        one: Any = len(values) == 1
    else:
        samples = posterior_sample(mean, std, z)
        win = samples.argmax(axis=1)
        at = np.arange(0, samples.size, samples.shape[1]) + win  # the winners' flat positions
        best = samples.take(at)
        samples.put(at, -_INF)
        # Each row's largest over the arms: over the transposed copy's rows (a few times faster
        # than along the short rows themselves; exact either way).
        second = _row_max(samples)
        z_max = _row_max(np.where(valid, np.abs(z), 0.0))
        one = np.count_nonzero(valid, axis=1) == 1 if single is None else single
    bound = c0 + c1 * z_max
    return where(one, 0, win), (best - bound > second + bound) | one


def arm_rewards(history: Iterable[tuple[int, float]], arms: Sequence[int]) -> list[list[float]]:
    """Each arm's rewards when Thompson Sampling starts: every observation of its batch size so far.

    ``history`` holds (batch size, cost) in observation order, pruning's included.
    """
    out: dict[int, list[float]] = {arm: [] for arm in arms}
    for b, c in history:
        rewards = out.get(b)
        if rewards is not None:
            rewards.append(-c)
    return [out[arm] for arm in arms]


class SeedPruning:
    """The batch-size optimizer's pruning for many seeds at once (:class:`Pruning` and its rules).

    The batched face of :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling` while it
    prunes: each seed's next batch size (index) follows from its own outcomes. Seed rows are
    dropped with :meth:`take` as they finish or end their pruning.
    """

    def __init__(self, seeds: int, n_batch_sizes: int, default: int, prune_rounds: int) -> None:
        """Round 1 of ``seeds`` seeds over ``n_batch_sizes`` batch sizes, from index ``default``."""
        self.state = Pruning.start(seeds, n_batch_sizes, default)
        self.prune_rounds = prune_rounds
        self.history: list[list[tuple[int, float]]] = [[] for _ in range(seeds)]

    def decide(self) -> np.ndarray:
        """Each seed's batch-size index to try (:func:`prune_choice`)."""
        return prune_choice(self.state)

    def observe(self, bi: np.ndarray, cost: np.ndarray, reached: np.ndarray) -> None:
        """Each seed's try of ``bi`` (:func:`prune_observe`), kept in its history."""
        for history, b, c in zip(self.history, bi.tolist(), cost.tolist(), strict=True):
            history.append((b, c))
        self.state = prune_observe(self.state, bi, cost, reached)

    def pruned(self) -> np.ndarray:
        """The seeds whose pruning is over."""
        return self.state.rounds >= self.prune_rounds  # type: ignore[no-any-return]

    def arms(self, i: int) -> tuple[list[int], list[list[float]]]:
        """Seed row ``i``'s arms once its pruning is over, and each arm's rewards (:func:`arm_rewards`)."""
        arms = np.flatnonzero(self.state.candidates[i]).tolist()
        return arms, arm_rewards(self.history[i], arms)

    def take(self, rows: np.ndarray) -> None:
        """Keep only the seed rows ``rows``."""
        self.state = self.state.take(rows)
        self.history = [self.history[i] for i in rows.tolist()]


class SeedStart(Protocol):
    """Where a seed's Thompson Sampling starts: the end of its pruning (the replay's handover)."""

    arms: list[int]  # batch-size indices, ascending
    sums: list[list[float]]  # each arm's running sums (add_reward)
    rewards: list[list[float]]  # each arm's rewards so far
    pol_rng: np.random.Generator  # the optimizer's generator, no output fetched ahead
    pol_state: Any  # its bit generator's state there


class SeedThompson(PolicyStreams):
    """The batch-size optimizer's Thompson Sampling for many seeds at once, one array row per seed.

    The batched face of :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling` once every
    arm has its :data:`~zeus_bench.optimizers.bandit.MIN_OBSERVATIONS` (window 0, no prior): each
    prediction skips the visiting order's words and draws one normal per arm from the seed's
    generator's raw outputs (:class:`~zeus_bench.optimizers.streams.PolicyStreams`); the winner is
    :func:`certified_pick`'s, a near-tie decided from the exact posteriors of the arm's rewards.
    A seed whose visiting order holds a rejectable word, or whose draws need more outputs than
    fetched, is ``gone`` (its caller replays it otherwise).

    ``window`` (the optimizer's; 0: every reward, else at least
    :data:`~zeus_bench.optimizers.bandit.MIN_OBSERVATIONS`, so that an arm explored stays
    explored: the caller's to check): the posteriors use each arm's last ``window`` rewards. Their
    sums are then made anew from a ring of those rewards at each observation (a sum that
    subtracts the reward leaving would carry its rounding, and an infinity, for ever), and a
    seed's error bounds are its arms' current ones.
    """

    def __init__(self, starts: list[SeedStart], ids: list[int], window: int = 0) -> None:
        """The seeds' Thompson Sampling from their ``starts``; ``ids`` name the seeds (their positions)."""
        tables = normal_tables()
        assert tables is not None
        self.widths, self.thresholds = tables
        self.window = int(window)
        a = len(starts)
        self.ids = np.array(ids, dtype=np.int64)
        self.handovers = starts
        n_arms = np.array([len(s.arms) for s in starts], dtype=np.int64)
        width = int(n_arms.max())
        self.n_arms = n_arms
        self.cols = np.arange(width)
        valid = self.cols[None, :] < n_arms[:, None]
        self.valid = valid
        self.one = n_arms == 1  # the rows of one arm (always certain)
        self.arm = np.zeros((a, width), dtype=np.intp)
        sums = np.zeros((4, a, width))
        sums[0] = 1.0  # padding: harmless values (its samples are forced to -inf)
        w = self.window
        self.ring = np.zeros((a, width, w))  # windowed: each arm's last rewards (zeros: none yet)
        self.count = np.zeros((a, width), dtype=np.int64)  # and how many it has had
        for i, s in enumerate(starts):
            self.arm[i, : len(s.arms)] = s.arms
            for j, arm_sums in enumerate(s.sums):
                if w:
                    last = s.rewards[j][-w:]
                    self.ring[i, j, : len(last)] = last
                    self.count[i, j] = len(last)
                sums[:, i, j] = running_sums(last) if w else arm_sums
        self.sums = sums
        mean, std, c0, c1 = approx_from_sums(*sums)
        self.mean = np.where(valid, mean, -_INF)
        self.std = np.where(valid, std, 0.0)
        self.arm_c0, self.arm_c1 = np.where(valid, c0, 0.0), np.where(valid, c1, 0.0)
        self.c0 = self.arm_c0.max(axis=1)  # bounds over the arms (as large as needed)
        self.c1 = self.arm_c1.max(axis=1)
        # Policy outputs: raw, the normal each makes alone, whether it does, rejectable words.
        self.pol_pos = np.zeros(a, dtype=np.int64)
        self.twins: dict[int, list[Any]] = {}  # seed id -> [PCG64, Generator, output position]
        self.made: dict[tuple[int, int], tuple[float, int]] = {}  # NumPy's draws at (seed id, output)
        self.pol_base = 0  # outputs dropped before column 0
        self.densities = strip_densities(self.widths)
        self.pol_raw = np.zeros((a, 0), dtype=np.uint64)
        self.rejectable = {
            n: np.array(sorted(rejectable_words(n)), dtype=np.uint64)
            for n in set(n_arms.tolist())
            if rejectable_words(n)
        }
        self.left = np.ones(a, dtype=np.int64)  # per seed, a bound on the recurrences left
        self._per_row()
        self.log: list[tuple[np.ndarray, ...]] = []  # per step: ids, arm column, cost (exact fallback)

    def _remaining(self) -> np.ndarray:
        return self.left

    def _per_row(self) -> None:
        """What each step reads per seed row, kept while the rows are: positions, words, outputs asked."""
        self.rows = np.arange(len(self.ids))
        self.words = self.n_arms - 1  # the visiting order's words before the normals
        self.need = 2 * self.n_arms + 8  # outputs a prediction may take past the position (refill_policy)
        self.sums = np.ascontiguousarray(self.sums)
        self.flat_sums = self.sums.reshape(4, -1)  # a view: (sums, seeds x arms)
        if self.window:
            self.ring, self.count = np.ascontiguousarray(self.ring), np.ascontiguousarray(self.count)
            self.arm_c0, self.arm_c1 = np.ascontiguousarray(self.arm_c0), np.ascontiguousarray(self.arm_c1)
            self.flat_ring = self.ring.reshape(-1, self.window)  # views: (seeds x arms, window)
            self.flat_count = self.count.reshape(-1)
        self._arm_rows = self.rows * self.mean.shape[1]  # each row's first flat position in (seeds, arms)
        self._width = -1  # the outputs' width the next two are for (set at the first step)
        self._z_rows = self._cum_rows = self.rows

    def _row_starts(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Each row's first flat position in the outputs' row-major arrays of ``width`` columns (z) and ``width + 1`` (slow_cum)."""
        if width != self._width:
            self._width = width
            self._z_rows, self._cum_rows = self.rows[:, None] * width, self.rows * (width + 1)
        return self._z_rows, self._cum_rows

    def decide(self, live: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each seed's prediction: its arm column, batch-size index, and whether it is gone.

        ``live``: the seeds still replayed (the others' draws are not resolved); ``left``: per
        seed, a bound on the recurrences left (how many outputs to fetch ahead).
        """
        self.left = left
        rows = self.rows
        n = self.n_arms
        self.refill_policy(self.need)
        # The visiting order's words (n - 1 outputs: a rejectable one makes the seed go), then one
        # normal per arm.
        first = self.pol_pos + self.words
        if self.reject_cum is None:  # no rejectable word fetched (the rule: one in some 10**8)
            gone = np.zeros(len(rows), dtype=bool)
        else:
            gone = self.reject_cum[rows, first] != self.reject_cum[rows, self.pol_pos]
        width = self.pol_raw.shape[1]
        # Flat positions in the row-major arrays of width columns (z) and width + 1 (slow_cum).
        z_rows, cum_rows = self._row_starts(width)
        z = self.z.take(np.minimum(first[:, None] + self.cols, width - 1) + z_rows)
        self.pol_pos = first + n
        at = first + cum_rows
        slow = np.flatnonzero(self.slow_cum.take(at + n) != self.slow_cum.take(at))
        if len(slow):
            z[slow], self.pol_pos[slow], ok = self.slow_draws(slow, first[slow], z[slow])
            gone[slow[~ok]] = True
        gone &= live
        win, certain = certified_pick(self.mean, self.std, self.c0, self.c1, z, self.valid, self.one)
        if not certain.all():  # near-ties (rare): the exact posteriors decide
            for i in np.flatnonzero(~certain & live & ~gone).tolist():
                win[i] = self.exact_winner(i, z[i, : n[i]].tolist())
        return win, self.arm[rows, win], gone

    def observe(self, win: np.ndarray, cost: np.ndarray) -> None:
        """Each seed's arm ``win`` (column) observed at ``cost``: its running sums and posterior."""
        at = self._arm_rows + win  # flat positions in (seeds, arms)
        if self.window:
            arm_sums = self._window_sums(at, -cost)
        else:
            count, total, squares, magnitudes = self.flat_sums[:, at]
            arm_sums = add_reward(count, total, squares, magnitudes, -cost)
        self.flat_sums[:, at] = arm_sums
        mean, std, c0, c1 = approx_from_sums(*arm_sums)
        self.mean.put(at, mean)
        self.std.put(at, std)
        if self.window:  # the arms' current bounds (an old reward's left the window)
            self.arm_c0.put(at, c0)
            self.arm_c1.put(at, c1)
            self.c0, self.c1 = self.arm_c0.max(axis=1), self.arm_c1.max(axis=1)
        else:
            self.c0 = np.maximum(self.c0, c0)
            self.c1 = np.maximum(self.c1, c1)
        self.log.append((self.ids, win, cost))

    def _window_sums(self, at: np.ndarray, reward: np.ndarray) -> tuple[np.ndarray, ...]:
        """The running sums of the arms at flat positions ``at`` over their window, ``reward`` added last.

        Made anew from the ring (in its order, which the error bounds of :func:`approx_from_sums`
        allow: they hold for any order of the terms; the zeros of a ring not yet full add nothing).
        """
        w = self.window
        k = self.flat_count[at]
        self.flat_ring[at, k % w] = reward
        self.flat_count[at] = k + 1
        ring = self.flat_ring[at]
        n = np.minimum(k + 1, w).astype(float)
        return n, ring.sum(axis=1), (ring * ring).sum(axis=1), np.abs(ring).sum(axis=1)

    def rewards(self, i: int, k: int) -> list[float]:
        """Every reward so far of arm column ``k`` of seed row ``i`` (exact posteriors' input)."""
        seed_id = self.ids[i]
        out = list(self.handovers[i].rewards[k])
        if self.log:
            ids, arm, cost = (np.concatenate([step[f] for step in self.log]) for f in range(3))
            out.extend((-cost[(ids == seed_id) & (arm == k)]).tolist())
        return out[-self.window :] if self.window else out

    def exact_winner(self, i: int, z: list[float]) -> int:
        """Arm column of seed row ``i``'s largest sample from the exact posteriors (a near-tie)."""
        n = int(self.n_arms[i])
        return largest_sample([posterior(self.rewards(i, k)) for k in range(n)], z)

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the seed rows ``rows`` (the others finished or left)."""
        for name in (
            "ids", "n_arms", "valid", "one", "arm", "mean", "std", "c0", "c1", "pol_pos", "pol_raw", "z", "slow",
            "slow_cum", "res_val", "res_next", "left",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name)[rows])
        if self.reject_cum is not None:
            self.reject_cum = self.reject_cum[rows]
        self.sums = self.sums[:, rows]
        if self.window:
            self.ring, self.count = self.ring[rows], self.count[rows]
            self.arm_c0, self.arm_c1 = self.arm_c0[rows], self.arm_c1[rows]
        self.handovers = [self.handovers[i] for i in rows.tolist()]
        self._per_row()
