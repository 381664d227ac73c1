"""The ``zeus`` policy's arrival replay as one fused loop: the rows of :func:`arrivals.replay_group`, faster.

:func:`zeus_bench.sim.scenarios.arrivals.replay_group` runs any policy through
:class:`~zeus_bench.sim.executor.OneTry`, with a :class:`~zeus_bench.sim.policies.Decision` and an
:class:`~zeus_bench.sim.policies.Outcome` per try and the policy's, bandit's and executor's methods
in between. For ``zeus`` with the paper's knobs and no window this module runs the same rules
(documented in :mod:`zeus_bench.sim.scenarios.arrivals`) with those layers removed; the batch-size
optimizer is the real :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling`
(``concurrency=True``), each group's restarted from one made per job model
(:meth:`~zeus_bench.optimizers.bandit.PruningThompsonSampling.restarted`) and driven through its
public ``predict`` and ``feed``.

Every group of a table starts from the same seeded generators, so what a try draws and costs is
shared across groups (:class:`SharedTries`, made once per job model, seed and beta): the
environment's 32-bit words are fetched once; the path a draw at word position ``p`` picks is
computed once per number of paths and position; and a try's outcome, a function of its batch
size, path, whether it profiles and the group's least cost so far (the early-stop budget), is
computed once by the rules of :mod:`zeus_bench.sim.env` and looked up after. A group's replay is
then its event loop and its optimizer, and each of its rows one integer (which shared entry, which
attempt, which submission: :meth:`SharedTries.codes`), scaled by the submission's runtime ratio
when the rows are made (:meth:`SharedTries.rows`, or :meth:`SharedTries.columns` for a chunk of
groups at once with NumPy: the grid's path, no Python tuple per row).
``tests/sim/test_sim_arrivals_golden.py`` holds both loops to the original simulator and to each
other.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.optimizers.rng import emulated, word_stream
from zeus_bench.sim.env import (
    draw_path,
    early_stop_budget,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.model import RUN_FIELDS
from zeus_bench.sim.rules import MAX_SUBMISSION_TRIES, MAX_ZERO_BUDGET_TRIES, seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.replay import JobModel, Row

#: A try's outcome: (cost, reached, it ran (epochs > 0), its entry's code base, zero budget), unscaled.
Outcome = tuple[float, bool, bool, int, bool]
#: An unscaled row (:attr:`SharedTries.entries`).
Entry = tuple[int, float, float, float, float, float, bool, bool, bool, float, float, float]
#: A try's own fields of an entry: epochs, energy, time, cost, reached, profiled, ran.
TryFields = tuple[float, float, float, float, bool, bool, bool]
_MISSED: TryFields = (0.0, 0.0, 0.0, 0.0, False, False, False)  # a missed submission's
# A row's code: entry << _ENTRY_SHIFT | attempt << _ATTEMPT_SHIFT | submission (attempts are at
# most MAX_SUBMISSION_TRIES < 1024, submissions fewer than 2**32).
_ATTEMPT_SHIFT = 32
_ENTRY_SHIFT = 42
_SUB_MASK = (1 << _ATTEMPT_SHIFT) - 1
_ATTEMPT_MASK = (1 << (_ENTRY_SHIFT - _ATTEMPT_SHIFT)) - 1
_ONE_ATTEMPT = 1 << _ATTEMPT_SHIFT
_SCALED = frozenset(("energy_j", "time_s", "cost", "expected_energy_j", "expected_time_s", "expected_cost"))
_DTYPES: dict[str, type] = {"batch_size": np.int64, "reached": bool, "profiled": bool, "ran": bool}
#: The penalty the optimizer observes for a zero-budget try in this mode (the original's 0).
ZERO_BUDGET_PENALTY = 0.0


class SharedTries:
    """What every group's tries share under one job model, seed and beta (see the module doc).

    ``path(span, pos)`` is ``(index, next position)`` of the draw ``rng.integers(0, span)`` at
    the environment word ``pos`` (:func:`~zeus_bench.sim.env.draw_path`); ``outcome(bi, index,
    profiled, min_cost)`` is the try of batch-size index ``bi`` on path ``index``, by the rules
    of :mod:`zeus_bench.sim.env`; ``launch(bi, pos, profiled, min_cost)`` is both at once (a
    launch's outcome and next position). All are memoised (bounded: positions by the longest
    group, outcomes by the batch sizes, paths and distinct least costs).

    A group's rows are kept as one integer each (:meth:`codes`): the row's entry (one of
    :attr:`entries`: a try's fields, or a missed submission's, before scaling), its attempt and
    its submission; :meth:`rows` and :meth:`columns` scale them by the submission's
    ``runtime_ratio`` (the same multiplications, in Python or in NumPy).
    """

    def __init__(
        self, model: JobModel, configs: list[Any], env_rng: np.random.Generator, beta: float
    ) -> None:
        self.model = model
        self.configs = configs
        self.beta = beta
        self.batch_sizes = [int(b) for b in model.job.batch_sizes]
        self._stream = word_stream(env_rng)
        self.words: list[int] = []
        self.paths: dict[int, dict[int, tuple[int, int]]] = {c[1]: {} for c in configs}  # per span
        # Per least cost so far: outcome memo by (path index x batch sizes + bi) x 2 + profiled,
        # and a launch's (outcome, next word position) by (word position x batch sizes + bi) x 2 + profiled.
        self.by_cost: dict[float, dict[int, Outcome]] = {}
        self.by_pos: dict[float, dict[int, tuple[Outcome, int]]] = {}
        #: Unscaled rows: (batch size, limit, epochs, energy, time, cost, reached, profiled, ran,
        #: expected energy, time, cost); a row's code names one (see :func:`_code`).
        self.entries: list[Entry] = []
        self.missed = [self._entry(self.batch_sizes[bi], c, _MISSED)
                       for bi, c in enumerate(configs)]  # fmt: skip
        #: The optimizer every group's restarts from (:meth:`PruningThompsonSampling.restarted`).
        self.optimizer = PruningThompsonSampling(
            self.batch_sizes, model.job.b0, np.random.default_rng(0), concurrency=True
        )

    def _entry(self, b: int, config: Any, tried: TryFields) -> int:
        """A new entry's code base (its number, shifted above attempt and submission)."""
        limit, exp_e, exp_t, exp_c = config[7:]
        self.entries.append((b, limit, *tried, exp_e, exp_t, exp_c))
        eid = len(self.entries) - 1
        if eid >= 1 << (63 - _ENTRY_SHIFT):
            raise RuntimeError("too many distinct tries for the arrival replay's row codes")
        return eid << _ENTRY_SHIFT

    def path(self, span: int, pos: int) -> tuple[int, int]:
        """The draw at word ``pos`` (a memo miss: computed and kept)."""
        words = self.words
        taken = pos

        def next_word() -> int:
            nonlocal taken
            while taken >= len(words):
                words.extend(islice(self._stream, 1024))
            taken += 1
            return words[taken - 1]

        drawn = (draw_path(next_word, span), taken)
        self.paths[span][pos] = drawn
        return drawn

    def outcome(self, bi: int, index: int, profiled: bool, min_cost: float) -> Outcome:
        """The try's outcome (a memo miss: computed by the rules of :mod:`zeus_bench.sim.env`, and kept)."""
        model = self.model
        config = self.configs[bi]
        paths, _, epoch_cost, e_ep, t_ep, prof_e, prof_t, *_ = config
        budget = early_stop_budget(stop_bound(self.beta, min_cost), epoch_cost, float(model.max_epochs))
        epochs, reached = try_epochs(paths[index], budget)
        energy, time = try_energy_time(epochs, e_ep, t_ep, profiled, prof_e, prof_t)
        penalty = zero_budget_cost(min_cost, self.beta, ZERO_BUDGET_PENALTY)
        cost = try_cost(energy, time, model.cost, model.max_power_w, budget, penalty)
        cost, reached, epochs = float(cost), bool(reached), float(epochs)
        ran = epochs > 0.0
        base = self._entry(
            self.batch_sizes[bi], config, (epochs, float(energy), float(time), cost, reached, profiled, True)
        )
        done = (cost, reached, ran, base, bool(budget == 0.0))
        n = len(self.configs)
        self.by_cost.setdefault(min_cost, {})[(index * n + bi) * 2 + profiled] = done
        return done

    def launch(self, bi: int, pos: int, profiled: bool, min_cost: float) -> tuple[Outcome, int]:
        """A launch's outcome and the next word position: the path drawn at ``pos``, then its try.

        Memoised per least cost in :attr:`by_pos` (a memo miss: :meth:`path` and :meth:`outcome`).
        """
        span = self.configs[bi][1]
        if span == 1:  # rng.integers(0, 1) draws nothing
            index, after = 0, pos
        else:
            index, after = self.paths[span].get(pos) or self.path(span, pos)
        n = len(self.configs)
        memo = self.by_cost.get(min_cost)
        out = (memo or {}).get((index * n + bi) * 2 + profiled) or self.outcome(bi, index, profiled, min_cost)
        done = (out, after)
        self.by_pos.setdefault(min_cost, {})[(pos * n + bi) * 2 + profiled] = done
        return done

    def codes(self, seed: int, starts: np.ndarray, ends: np.ndarray) -> list[int]:
        """One group's rows as codes (:func:`_replay`; ``seed`` this one's)."""
        return _replay(self, seed, starts, ends)

    def replay(self, seed: int, starts: np.ndarray, ends: np.ndarray, ratios: np.ndarray) -> list[Row]:
        """Rows of ``replay_group(model, Zeus, seed, beta, starts, ends, ratios)`` (``seed`` this one's)."""
        return self.rows(self.codes(seed, starts, ends), ratios)

    def rows(self, codes: list[int], ratios: np.ndarray) -> list[Row]:
        """A group's rows from its codes, scaled by its submissions' ``ratios``."""
        entries = self.entries
        rs = ratios.tolist()
        rows: list[Row] = []
        for code in codes:
            sub = code & _SUB_MASK
            b, limit, epochs, energy, time, cost, reached, profiled, ran, exp_e, exp_t, exp_c = entries[
                code >> _ENTRY_SHIFT
            ]
            r = rs[sub - 1]
            rows.append(
                (
                    sub, (code >> _ATTEMPT_SHIFT) & _ATTEMPT_MASK, b, limit, epochs, energy * r, time * r,
                    cost * r, reached, profiled, ran, exp_e * r, exp_t * r, exp_c * r,
                )
            )  # fmt: skip
        return rows

    @staticmethod
    def submissions(codes: np.ndarray) -> np.ndarray:
        """Each row's submission number (from 1) in its group, from its code."""
        return codes & _SUB_MASK

    def columns(self, codes: np.ndarray, ratios: np.ndarray) -> dict[str, np.ndarray]:
        """Rows as columns (:data:`~zeus_bench.sim.replay.RUN_FIELDS`): ``codes`` (int64) and each row's ratio.

        The same values as :meth:`rows` gives, field by field (NumPy's float64 products are
        Python's).
        """
        table = list(zip(*self.entries, strict=True))
        eid = codes >> _ENTRY_SHIFT
        out: dict[str, np.ndarray] = {
            "recurrence": codes & _SUB_MASK,
            "attempt": (codes >> _ATTEMPT_SHIFT) & _ATTEMPT_MASK,
        }
        for k, name in enumerate(RUN_FIELDS[2:]):
            values = np.asarray(table[k], dtype=_DTYPES.get(name, float))[eid]
            out[name] = values * ratios if name in _SCALED else values
        return out


def shared_tries(model: JobModel, seed: int, beta: float) -> SharedTries | None:
    """The :class:`SharedTries` of (model, seed, beta), made once (kept on the model).

    None when this path does not apply (a JIT limit unmeasured, or generators whose draws
    :mod:`zeus_bench.optimizers.rng` does not reproduce): the caller runs the generic loop.
    """
    memo: dict[tuple[int, float], SharedTries | None] = model.__dict__.setdefault("_fastarrivals_tries", {})
    key = (seed, beta)
    if key not in memo:
        configs = model.at_jit_limits()
        env_rng, _ = seed_generators(seed)
        memo[key] = (
            None if configs is None or not emulated(env_rng) else SharedTries(model, configs, env_rng, beta)
        )
    return memo[key]


def _replay(shared: SharedTries, seed: int, starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """One group's event loop (the rules of :mod:`zeus_bench.sim.scenarios.arrivals`): its rows' codes, in order.

    One loop over the group's events, each a launch (a submission at its start, or a retry at
    its try's end, launched before anything else happens) or the observation of the job that
    ends first (before a submission that starts at or after its end).
    """
    configs = shared.configs
    generator = _policy_generator(seed)
    bandit = shared.optimizer.restarted(generator[0])
    predict = bandit.predict
    observe = bandit.feed  # (the outcomes' batch sizes are the bandit's, their costs floats)
    bs_index = shared.model.bs_index
    n_bs = len(configs)
    missed = shared.missed
    by_pos = shared.by_pos
    resolve = shared.launch
    pop, push = heappop, heappush
    one_attempt, max_zeros = _ONE_ATTEMPT, MAX_ZERO_BUDGET_TRIES
    last_key = MAX_SUBMISSION_TRIES << _ATTEMPT_SHIFT  # keys below it: attempts below the most
    known: set[int] = set()  # batch sizes whose JIT profile was launched
    min_cost = math.inf
    memo = by_pos.setdefault(min_cost, {})  # launches at the least cost so far
    best_b = bandit.default_batch_size
    pos = 0  # the group's position in the environment's words
    # Running jobs, a heap of (end, launch number, start, b, outcome, attempt << 32 | submission,
    # zero-budget tries in a row, a try of the submission ran): the first to end first, the
    # first launched among equal ends (the generic loop's order).
    running: list[tuple] = []  # type: ignore[type-arg]
    launches = 0
    codes: list[int] = []
    append = codes.append
    start_at = starts.tolist()
    end_at = ends.tolist()
    n_subs = len(start_at)
    start_at.append(math.inf)  # after the last submission: none starts
    sub = 0  # submissions launched
    next_start = start_at[0]
    while True:
        if running and running[0][0] <= next_start:  # the first to end, observed
            end, _, start, b, out, key, zeros, ran = pop(running)
            cost, reached, this_ran, base, _ = out
            observe(b, cost, reached)
            if this_ran:
                append(base | key)
            if reached:
                if cost < min_cost:
                    min_cost = cost
                    memo = by_pos.setdefault(cost, {})
                    best_b = b
                continue
            if zeros < max_zeros and key < last_key:  # a retry, launched at once
                start, end, key = end, end + (end - start), key + one_attempt
            else:
                if not ran:
                    append(missed[bs_index[b]] | key)
                continue
        elif sub < n_subs:  # the next submission
            start, end = next_start, end_at[sub]
            sub += 1
            key, zeros, ran = one_attempt | sub, 0, False
            next_start = start_at[sub]
        else:
            if bandit.pruning:  # it never drew: the generator is still in its seeded state
                generator[2] = False
            return codes
        launches += 1
        b = best_b if running else predict()
        bi = bs_index[b]
        profiled = b not in known
        if profiled:
            known.add(b)
        out, pos = memo.get((pos * n_bs + bi) * 2 + profiled) or resolve(bi, pos, profiled, min_cost)
        if out[4]:  # a zero budget: nothing ran
            push(running, (end, launches, start, b, out, key, zeros + 1, ran))
        else:
            push(running, (end, launches, start, b, out, key, 0, True))


_POLICY_GENERATORS: dict[int, list[Any]] = {}


def _policy_generator(seed: int) -> list[Any]:
    """``[generator, its seeded state, drawn]``: the policy generator of ``seed_generators(seed)`` in its seeded state.

    Made once per seed. Every group starts from the same seeded generator; setting a bit
    generator's state is much cheaper than seeding one (a cluster-scale table has tens of
    thousands of groups), and not setting it cheaper still: the state is set again only if the
    last group may have drawn from it. ``drawn`` is True from here on; a replay that ends with
    its optimizer still pruning (which draws nothing) sets it back to False. A group's replay is
    over before the next asks for it (one replay at a time in a process).
    """
    cached = _POLICY_GENERATORS.get(seed)
    if cached is None:
        _, pol = seed_generators(seed)
        cached = _POLICY_GENERATORS[seed] = [pol, pol.bit_generator.state, False]
    elif cached[2]:
        cached[0].bit_generator.state = cached[1]
    cached[2] = True
    return cached
