"""The replay's environment rules, each stated once, on Python floats and on arrays over seeds.

Every executor of the replay (:mod:`zeus_bench.sim.executor`'s step loop over seeds and its
single tries, the arrival replays) calls these functions instead of writing the rules out. Each takes either Python floats (one try) or NumPy arrays with a leading batch axis (one
try of each seed or group: element ``i`` is seed ``i``'s), and gives the same doubles either
way: the operations are the same IEEE operations in the same order (``docs/policies.md``; the
golden tests hold them to the original simulator bit for bit).

The rules:

* the training path a try samples: ``rng.integers(0, n_paths)`` by Lemire's method on the
  environment generator's 32-bit words (:func:`draw_path`; over seeds :func:`draw_paths`, on the
  words :class:`EnvWords` fetches in blocks);
* the early-stop budget: ``min(cost_ub // epoch_cost, max_epochs)`` once a cost bound is known,
  NaN first as ``min`` has it (:func:`early_stop_budget`; ``cost_ub`` is ``beta x min_cost``,
  :func:`stop_bound`, or what a policy's ``stop_cost`` makes of it);
* a zero budget: the try never runs, and the policy observes :func:`zero_budget_cost`;
* the epochs run and whether the target was reached (:func:`try_epochs`);
* the JIT profiling first epoch: a batch size's first try spends its first epoch at the
  profile's mean energy and time over all limits (:func:`try_energy_time`);
* the try's cost through :meth:`zeus_bench.core.cost.Cost.zeus_cost` with the global MAXPOWER, or the
  penalty of a zero budget (:func:`try_cost`);
* the recurrence bookkeeping (:func:`recurrence_step`): a recurrence runs tries until one
  reaches the target, at most ``MAX_TRIES``; a zero-budget try is no row, unless it is the
  last and none ran (the missed row); a successful recurrence cheaper than ``min_cost`` lowers
  it; in the first recurrence a try that runs and does not reach the target is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from zeus_bench.core.cost import Cost
from zeus_bench.optimizers.posterior import where
from zeus_bench.optimizers.rng import MASK32, emulated, lemire_accept
from zeus_bench.sim.rules import MAX_TRIES, ZERO_BUDGET_PENALTY

__all__ = [
    "MASK32",
    "EnvWords",
    "draw_path",
    "draw_paths",
    "early_stop_budget",
    "lemire_accept",
    "negate",
    "recurrence_step",
    "stop_bound",
    "try_cost",
    "try_energy_time",
    "try_epochs",
    "where",
    "zero_budget_cost",
]

_U32 = np.uint64(MASK32)
_SHIFT32 = np.uint64(32)
_INF = math.inf

ArrayF = npt.NDArray[np.float64]
#: A float (one try) or an array over a leading batch axis (one try per seed or group).
F = TypeVar("F", float, ArrayF)


# ------------------------------------------------------------------------------- the path draw
def draw_path(next_word: Callable[[], int], span: int) -> int:
    """One ``rng.integers(0, span)`` from the generator's 32-bit words (a span of 1 takes none)."""
    if span == 1:
        return 0
    return lemire_accept(next_word() * span, span, next_word) >> 32


def draw_paths(
    words: np.ndarray,
    pos: np.ndarray,
    length: np.ndarray,
    span: np.ndarray,
    live: np.ndarray | bool,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`draw_path` for each row, from its 32-bit ``words`` (uint64) at ``pos``.

    ``rows``: the rows of ``words`` that draw (default: every row, in order; ``pos``, ``length``,
    ``span`` and ``live`` are theirs). Rows not ``live`` are not redrawn after a rejection.
    Returns the values, the positions after them, and the rows whose redraws ran past their
    ``length`` words (their values are not drawn).
    """
    rows = np.arange(len(pos)) if rows is None else rows
    multi = span > 1
    short = multi & (pos >= length)
    m = words[rows, np.minimum(pos, words.shape[1] - 1)] * span
    pos = pos + multi
    for i in np.flatnonzero(multi & ((m & _U32) < span) & live & ~short).tolist():
        left = words[rows[i], pos[i] : length[i]].tolist()
        taken = 0

        def word(left: list[int] = left) -> int:
            nonlocal taken
            taken += 1
            return left[taken - 1]  # IndexError: the words ran out

        try:
            m[i] = lemire_accept(int(m[i]), int(span[i]), word)
        except IndexError:
            short[i] = True
            taken -= 1
        pos[i] += taken
    return np.where(multi, m >> _SHIFT32, 0).astype(np.intp), pos, short


class EnvWords:
    """Each seed's environment words, fetched in blocks: what :func:`draw_paths` draws from.

    Row ``i`` holds the 32-bit words of generator ``i``'s raw 64-bit outputs (low word, then
    high: the order of NumPy's buffered ``integers``), so that its draws are
    ``rng.integers(0, span)``'s one after the other. The generators are owned from now on
    (PCG64-family ones, without a buffered word). Rows go with :meth:`keep`.
    """

    _AHEAD = 4  # a row with fewer words left than this is refilled before a draw

    def __init__(self, rngs: Sequence[np.random.Generator]) -> None:
        """Words of ``rngs`` (none fetched yet).

        Raises:
            ValueError: a generator whose ``integers`` this does not reproduce.
        """
        for rng in rngs:
            if not emulated(rng) or rng.bit_generator.state["has_uint32"]:
                raise ValueError("the path draws need PCG64-family generators without a buffered word")
        self.rngs = list(rngs)
        a = len(self.rngs)
        self.words = np.zeros((a, 0), dtype=np.uint64)
        self.pos = np.zeros(a, dtype=np.int64)
        self.length = np.zeros(a, dtype=np.int64)
        self._rows = np.arange(a)

    def draw(self, rows: np.ndarray | None, span: np.ndarray, outputs: Callable[[], int]) -> np.ndarray:
        """One ``integers(0, span)`` of each row ``rows`` (None: every row); ``outputs()`` per refill."""
        pos, length = (self.pos, self.length) if rows is None else (self.pos[rows], self.length[rows])
        if (pos + self._AHEAD > length).any():
            self._refill(outputs())
            pos, length = (self.pos, self.length) if rows is None else (self.pos[rows], self.length[rows])
        r = self._rows if rows is None else rows
        multi = span > 1
        m = self.words[r, pos] * span
        if (multi & ((m & _U32) < span)).any():  # a word Lemire's method may reject: the full rule
            index, after, short = draw_paths(self.words, pos, length, span, True, r)
            while short.any():  # a run of rejected words past the fetched ones: fetch more, draw again
                self._refill(outputs())
                r = self._rows if rows is None else rows
                s = np.flatnonzero(short)
                index[s], after[s], short[s] = draw_paths(
                    self.words, self.pos[r[s]], self.length[r[s]], span[s], True, r[s]
                )
        else:  # every word accepted: its high half (one word each, none for a span of 1)
            index, after = np.where(multi, m >> _SHIFT32, 0).astype(np.intp), pos + multi
        if rows is None:
            self.pos = after
        else:
            self.pos[rows] = after
        return index

    def _refill(self, outputs: int) -> None:
        """Drop the words drawn, and append ``outputs`` fresh outputs' words to every row."""
        a = len(self.rngs)
        kept = self.length - self.pos
        width = int(kept.max()) if a else 0
        fresh = np.stack([g.bit_generator.random_raw(outputs) for g in self.rngs])
        words = np.zeros((a, width + 2 * outputs), dtype=np.uint64)
        rows = np.arange(a)[:, None]
        if width:
            src = np.minimum(self.pos[:, None] + np.arange(width)[None, :], self.words.shape[1] - 1)
            words[:, :width] = self.words[rows, src]
        new = np.empty((a, 2 * outputs), dtype=np.uint64)
        new[:, 0::2], new[:, 1::2] = fresh & _U32, fresh >> _SHIFT32
        words[rows, kept[:, None] + np.arange(2 * outputs)[None, :]] = new
        self.words, self.pos, self.length = words, np.zeros(a, dtype=np.int64), kept + 2 * outputs

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the rows ``rows`` (the others' seeds ended)."""
        self.rngs = [self.rngs[i] for i in rows.tolist()]
        self.words, self.pos, self.length = self.words[rows], self.pos[rows], self.length[rows]
        self._rows = np.arange(len(rows))


# ---------------------------------------------------------------------------- budget and try
def stop_bound(beta: F | float, min_cost: F) -> F:
    """The early-stop cost bound ``beta x min_cost`` (``inf`` before any recurrence succeeded)."""
    return beta * min_cost  # type: ignore[return-value]


def early_stop_budget(cost_ub: F, epoch_cost: F | float, max_epochs: float) -> F:
    """Epochs a try may run: ``min(cost_ub // epoch_cost, max_epochs)``, or ``max_epochs`` unbounded.

    ``cost_ub`` is the bound at which the try stops (``inf``: none yet). As the paper's code,
    ``min`` keeps its first argument unless the second is smaller, so a NaN quotient is kept.
    ``epoch_cost`` is the cost of one epoch of the try's configuration with the batch size's
    MAXPOWER (:attr:`~zeus_bench.sim.replay.JobModel.budget_epoch_cost`).
    """
    floor_epochs = cost_ub // epoch_cost
    nan = floor_epochs != floor_epochs  # noqa: PLR0124 - the NaN test of floats and arrays alike
    capped = (cost_ub != _INF) & ((floor_epochs <= max_epochs) | nan)
    return where(capped, floor_epochs, max_epochs)  # type: ignore[no-any-return]


def zero_budget_cost(min_cost: F, beta: float, penalty: float = ZERO_BUDGET_PENALTY) -> F:
    """What the policy observes for a try whose budget was zero: ``penalty x beta x min_cost``."""
    return penalty * beta * min_cost  # type: ignore[return-value]


def try_epochs(target: F, budget: F) -> tuple[F, Any]:
    """Epochs a try runs and whether it reaches the target: its path's target epoch if within the budget.

    ``target`` is the sampled path's target epoch (``inf``: never). A zero budget runs no epoch.
    Returns ``(epochs, reached)`` (a bool, or a bool array).
    """
    reached = (target <= budget) & (budget != 0.0)
    return where(reached, target, budget), reached  # a zero budget: its (+0.0) epochs


def try_energy_time(
    epochs: F,
    energy_per_epoch_j: F | float,
    time_per_epoch_s: F | float,
    profiled: Any,
    profile_energy_j: F | float,
    profile_time_s: F | float,
) -> tuple[F, F]:
    """Energy and time of a try of ``epochs`` epochs (none: 0 and 0).

    A try that profiles its batch size just in time (``profiled``) spends its first epoch at the
    profile's energy and time (the mean over every limit of the batch size), the rest at the
    chosen limit's figures per epoch.
    """
    if profiled is False:  # (over seeds: none of the tries profiles) every epoch at the figures per epoch
        return epochs * energy_per_epoch_j, epochs * time_per_epoch_s  # type: ignore[return-value]
    first = profiled & (epochs != 0.0)  # no epoch: 0 x the (finite) figures per epoch, 0.0
    energy = where(first, profile_energy_j + (epochs - 1.0) * energy_per_epoch_j, epochs * energy_per_epoch_j)
    time = where(first, profile_time_s + (epochs - 1.0) * time_per_epoch_s, epochs * time_per_epoch_s)
    return energy, time


def try_cost(
    energy_j: F,
    time_s: F,
    cost: Cost,
    max_power_w: float,
    budget: F,
    penalty_cost: F | float,
    when_s: F | None = None,
) -> F:
    """The try's cost: :meth:`Cost.zeus_cost <zeus_bench.core.cost.Cost.zeus_cost>` (global MAXPOWER; ``when_s``: its place in time, for the cost's terms), or ``penalty_cost`` for a zero budget."""
    return where(budget == 0.0, penalty_cost, cost.zeus_cost(energy_j, time_s, max_power_w, when_s))  # type: ignore[no-any-return,arg-type]


# ------------------------------------------------------------------------ the bookkeeping
def negate(x: Any) -> Any:
    """Logical not of a bool or of a bool array."""
    return ~x if isinstance(x, np.ndarray) else not x


def recurrence_step(
    rec: Any,
    att: Any,
    total: Any,
    ran: Any,
    min_cost: Any,
    epochs: Any,
    cost: Any,
    reached: Any,
) -> tuple[Any, ...]:
    """One try's effect on its recurrence (ints, floats and bools, or arrays over seeds).

    The state is the recurrence, the attempt (from 1), the cost so far, whether a try of the
    recurrence ran, and the least recurrence cost so far.

    Returns:
        ``(rec, att, total, ran, min_cost, ran_try, emit, failed, spent)``: the state for the
        next try (a new recurrence once this one ends), whether this try ran, whether it is a
        row (a try that ran, or the missed row), whether it is the first recurrence's failure
        (an error for the caller), and the recurrence's cost with this try.
    """
    # ``x ^ True`` is "not x" for a bool and for a bool array alike (no call: this runs per try).
    ran_try = epochs != 0.0
    emit = ran_try | ((att == MAX_TRIES) & (ran ^ True))
    spent = where(ran_try, total + cost, total)
    done = ran_try & reached
    failed = ran_try & (reached ^ True) & (rec == 1)
    min_cost = where(done & (spent < min_cost), spent, min_cost)
    end = done | (att == MAX_TRIES)
    return (
        rec + end, where(end, 1, att + 1), where(end, 0.0, spent), (end ^ True) & (ran | ran_try),
        min_cost, ran_try, emit, failed, spent,
    )  # fmt: skip
