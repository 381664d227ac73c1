"""The ``zeus`` policy's arrival replay as one fused loop: the rows of :func:`arrivals.replay_group`, faster.

:func:`zeus_bench.sim.arrivals.replay_group` runs any policy through
:class:`~zeus_bench.sim.executor.OneTry`, with a :class:`~zeus_bench.sim.policies.Decision` and an
:class:`~zeus_bench.sim.policies.Outcome` per try and the policy's, bandit's and executor's methods
in between. For ``zeus`` with the paper's knobs and no window this module runs the same rules
(documented in :mod:`zeus_bench.sim.arrivals`) with those layers removed; the batch-size
optimizer is the real :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling`
(``concurrency=True``), driven through its public ``predict`` and ``observe``.

Every group of a table starts from the same seeded generators, so what a try draws and costs is
shared across groups (:class:`SharedTries`, made once per job model, seed and beta): the
environment's 32-bit words are fetched once; the path a draw at word position ``p`` picks is
computed once per number of paths and position; and a try's outcome, a function of its batch
size, path, whether it profiles and the group's least cost so far (the early-stop budget), is
computed once by the rules of :mod:`zeus_bench.sim.env` and looked up after. A group's replay is
then its event loop and its optimizer. ``tests/sim/test_sim_arrivals_golden.py`` holds both loops
to the original simulator and to each other.
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
from zeus_bench.sim.rules import MAX_SUBMISSION_TRIES, MAX_ZERO_BUDGET_TRIES, seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.replay import JobModel, Row

#: A try's outcome: (cost, reached, epochs, energy J, time s, zero budget: it never ran), unscaled.
Outcome = tuple[float, bool, float, float, float, bool]
#: The penalty the optimizer observes for a zero-budget try in this mode (the original's 0).
ZERO_BUDGET_PENALTY = 0.0


class SharedTries:
    """What every group's tries share under one job model, seed and beta (see the module doc).

    ``path(span, pos)`` is ``(index, next position)`` of the draw ``rng.integers(0, span)`` at
    the environment word ``pos`` (:func:`~zeus_bench.sim.env.draw_path`); ``outcome(bi, index,
    profiled, min_cost)`` is the try of batch-size index ``bi`` on path ``index``, by the rules
    of :mod:`zeus_bench.sim.env`. Both are memoised (bounded: positions by the longest group,
    outcomes by the batch sizes, paths and distinct least costs).
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
        self.outcomes: dict[tuple[int, int, bool, float], Outcome] = {}

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
        paths, _, epoch_cost, e_ep, t_ep, prof_e, prof_t, *_ = self.configs[bi]
        budget = early_stop_budget(stop_bound(self.beta, min_cost), epoch_cost, float(model.max_epochs))
        epochs, reached = try_epochs(paths[index], budget)
        energy, time = try_energy_time(epochs, e_ep, t_ep, profiled, prof_e, prof_t)
        penalty = zero_budget_cost(min_cost, self.beta, ZERO_BUDGET_PENALTY)
        cost = try_cost(energy, time, model.eta, model.max_power_w, budget, penalty)
        done = (float(cost), bool(reached), float(epochs), float(energy), float(time), bool(budget == 0.0))
        self.outcomes[bi, index, profiled, min_cost] = done
        return done

    def replay(self, seed: int, starts: np.ndarray, ends: np.ndarray, ratios: np.ndarray) -> list[Row]:
        """Rows of ``replay_group(model, Zeus, seed, beta, starts, ends, ratios)`` (``seed`` this one's)."""
        return _replay(self, seed, starts, ends, ratios)


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


def replay_group_zeus(
    model: JobModel, seed: int, beta: float, starts: np.ndarray, ends: np.ndarray, ratios: np.ndarray
) -> list[Row] | None:
    """Rows of ``replay_group(model, Zeus, seed, beta, starts, ends, ratios)``.

    None when this path does not apply (see :func:`shared_tries`): the caller runs the generic
    loop.
    """
    shared = shared_tries(model, seed, beta)
    return None if shared is None else shared.replay(seed, starts, ends, ratios)


def _replay(
    shared: SharedTries, seed: int, starts: np.ndarray, ends: np.ndarray, ratios: np.ndarray
) -> list[Row]:
    """One group's event loop (the rules of :mod:`zeus_bench.sim.arrivals`): :meth:`SharedTries.replay`."""
    model = shared.model
    configs = shared.configs
    job = model.job
    bandit = PruningThompsonSampling(shared.batch_sizes, job.b0, _policy_generator(seed), concurrency=True)
    predict = bandit.predict
    observe = bandit.observe
    bs_index = model.bs_index
    path_memo = shared.paths
    outcome_memo = shared.outcomes
    draw = shared.path
    compute = shared.outcome
    inf = math.inf
    known: set[int] = set()  # batch sizes whose JIT profile was launched
    min_cost = inf
    best_b = int(job.b0)
    pos = 0  # the group's position in the environment's words
    # Running jobs, a heap of (end, launch number, start, ratio, b, outcome, profiled, submission,
    # attempt, zero-budget tries in a row, a try of the submission ran): the first to end first,
    # the first launched among equal ends (the generic loop's order).
    running: list[tuple] = []  # type: ignore[type-arg]
    launches = 0
    rows: list[Row] = []
    append = rows.append

    def launch(start: float, end: float, ratio: float, sub: int, attempt: int, zeros: int, ran: bool) -> None:
        nonlocal launches, pos
        launches += 1
        b = best_b if running else predict()
        bi = bs_index[b]
        span = configs[bi][1]
        if span == 1:  # rng.integers(0, 1) draws nothing
            index = 0
        else:
            drawn = path_memo[span].get(pos) or draw(span, pos)
            index, pos = drawn
        profiled = b not in known
        if profiled:
            known.add(b)
        out = outcome_memo.get((bi, index, profiled, min_cost)) or compute(bi, index, profiled, min_cost)
        if out[5]:  # a zero budget: nothing ran
            heappush(running, (end, launches, start, ratio, b, out, profiled, sub, attempt, zeros + 1, ran))
        else:
            heappush(running, (end, launches, start, ratio, b, out, profiled, sub, attempt, 0, True))

    def reap(now: float) -> None:
        nonlocal min_cost, best_b
        while running and running[0][0] <= now:
            end, _, start, ratio, b, out, profiled, sub, attempt, zeros, ran = heappop(running)
            cost, reached, epochs, energy, time, _ = out
            observe(b, cost, reached)
            if epochs > 0.0:
                limit, exp_e, exp_t, exp_c = configs[bs_index[b]][7:]
                append(
                    (
                        sub, attempt, b, limit, epochs, energy * ratio, time * ratio, cost * ratio, reached,
                        profiled, True, exp_e * ratio, exp_t * ratio, exp_c * ratio,
                    )
                )  # fmt: skip
            if reached:
                if cost < min_cost:
                    min_cost = cost
                    best_b = b
            elif zeros < MAX_ZERO_BUDGET_TRIES and attempt < MAX_SUBMISSION_TRIES:
                launch(end, end + (end - start), ratio, sub, attempt + 1, zeros, ran)
            elif not ran:
                limit, exp_e, exp_t, exp_c = configs[bs_index[b]][7:]
                append(
                    (
                        sub, attempt, b, limit, 0.0, 0.0, 0.0, 0.0, False, False, False, exp_e * ratio,
                        exp_t * ratio, exp_c * ratio,
                    )
                )  # fmt: skip

    for sub, (start, end, ratio) in enumerate(
        zip(starts.tolist(), ends.tolist(), ratios.tolist(), strict=True), 1
    ):
        if running and running[0][0] <= start:
            reap(start)
        launch(start, end, ratio, sub, 1, 0, False)
    reap(inf)
    return rows


_POLICY_GENERATORS: dict[int, tuple[np.random.Generator, Any]] = {}


def _policy_generator(seed: int) -> np.random.Generator:
    """The policy generator of ``seed_generators(seed)``, reset to its seeded state (made once per seed).

    Every group starts from the same seeded generator; setting a bit generator's state is much
    cheaper than seeding one (a cluster-scale table has tens of thousands of groups). A group's
    replay is over before the next asks for it (one replay at a time in a process).
    """
    cached = _POLICY_GENERATORS.get(seed)
    if cached is None:
        _, pol = seed_generators(seed)
        cached = (pol, pol.bit_generator.state)
        _POLICY_GENERATORS[seed] = cached
    pol, state = cached
    pol.bit_generator.state = state
    return pol
