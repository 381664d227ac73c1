"""The ``zeus`` policy's arrival replay as one fused loop: the rows of :func:`arrivals.replay_group`, faster.

:func:`zeus_bench.sim.arrivals.replay_group` runs any policy through
:class:`~zeus_bench.sim.replay.Runner`, with a :class:`~zeus_bench.sim.policies.Decision` and an
:class:`~zeus_bench.sim.policies.Outcome` per try and the policy's, bandit's and runner's methods
in between. For ``zeus`` with the paper's knobs and no window this module runs the same rules
(documented in :mod:`zeus_bench.sim.arrivals`) with those layers inlined, as
:mod:`zeus_bench.sim.fastzeus` does for a single job: each batch size's figures at its JIT limit
are looked up once per job, the paths are drawn from the environment's words as
:class:`~zeus_bench.sim.draws.PathDraws` draws them, and the batch-size optimizer is the real
:class:`~zeus_bench.sim.policies.bandit.PruningThompsonSampling` (``concurrency=True``). The
arithmetic is the Runner's, operation for operation. ``tests/sim/test_sim_arrivals_golden.py``
holds both loops to the original simulator and to each other.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.sim.draws import MASK32, emulated, word_stream
from zeus_bench.sim.fastzeus import _configs
from zeus_bench.sim.policies.bandit import PruningThompsonSampling
from zeus_bench.sim.rules import MAX_SUBMISSION_TRIES, MAX_ZERO_BUDGET_TRIES, seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.replay import JobModel, Row


def replay_group_zeus(
    model: JobModel, seed: int, beta: float, starts: np.ndarray, ends: np.ndarray, ratios: np.ndarray
) -> list[Row] | None:
    """Rows of ``replay_group(model, Zeus, seed, beta, starts, ends, ratios)``.

    None when this path does not apply (a JIT limit unmeasured, or generators whose draws
    :mod:`zeus_bench.sim.draws` does not reproduce): the caller runs the generic loop.
    """
    configs = _configs(model)
    env_rng, pol_rng = _generators(seed)
    if configs is None or not emulated(env_rng):
        return None
    job = model.job
    bandit = PruningThompsonSampling([int(b) for b in job.batch_sizes], job.b0, pol_rng, concurrency=True)
    predict = bandit.predict
    observe = bandit.observe
    bs_index = model.bs_index
    next_word = word_stream(env_rng).__next__
    eta = model.eta
    k_time = (1.0 - eta) * model.max_power_w  # zeus_cost's (1 - eta) * MAXPOWER, then x time
    max_epochs = float(model.max_epochs)
    inf = math.inf
    known: set[int] = set()  # batch sizes whose JIT profile was launched
    min_cost = inf
    best_b = int(job.b0)
    # Running jobs, a heap of (end, launch number, start, ratio, b, cost, reached, epochs, energy,
    # time, profiled, submission, attempt, zeros in a row, a try of the submission ran): the
    # first to end first, the first launched among equal ends (the generic loop's order).
    running: list[tuple] = []  # type: ignore[type-arg]
    launches = 0
    rows: list[Row] = []
    append = rows.append

    def launch(start: float, end: float, ratio: float, sub: int, attempt: int, zeros: int, ran: bool) -> None:
        nonlocal launches
        launches += 1
        b = best_b if running else predict()
        paths, n_paths, epoch_cost, e_ep, t_ep, prof_e, prof_t, _, _, _, _ = configs[bs_index[b]]
        profiled = b not in known
        if n_paths == 1:  # rng.integers(0, 1) draws nothing
            target = paths[0]
        else:  # rng.integers(0, n_paths): Lemire's method, as PathDraws
            m = next_word() * n_paths
            if (m & MASK32) < n_paths:
                threshold = (1 << 32) % n_paths
                while (m & MASK32) < threshold:
                    m = next_word() * n_paths
            target = paths[m >> 32]
        budget = max_epochs
        cost_ub = beta * min_cost
        if cost_ub != inf:  # budget = min(cost_ub // epoch_cost, budget), NaN first as min has it
            floor_epochs = cost_ub // epoch_cost
            if not budget < floor_epochs:
                budget = floor_epochs
        if profiled:
            known.add(b)
        if budget == 0.0:
            job_ = (
                end,
                launches,
                start,
                ratio,
                b,
                0.0,
                False,
                0.0,
                0.0,
                0.0,
                profiled,
                sub,
                attempt,
                zeros + 1,
                ran,
            )
            heappush(running, job_)
            return
        reached = target <= budget
        epochs = target if reached else budget
        if profiled:
            energy = prof_e + (epochs - 1.0) * e_ep
            time = prof_t + (epochs - 1.0) * t_ep
        else:
            energy = epochs * e_ep
            time = epochs * t_ep
        cost = eta * energy + k_time * time
        job_ = (
            end,
            launches,
            start,
            ratio,
            b,
            cost,
            reached,
            epochs,
            energy,
            time,
            profiled,
            sub,
            attempt,
            0,
            True,
        )
        heappush(running, job_)

    def reap(now: float) -> None:
        nonlocal min_cost, best_b
        while running and running[0][0] <= now:
            job_ = heappop(running)
            (
                end,
                _,
                start,
                ratio,
                b,
                cost,
                reached,
                epochs,
                energy,
                time,
                profiled,
                sub,
                attempt,
                zeros,
                ran,
            ) = job_
            observe(b, cost, reached)
            if epochs > 0.0:
                _, _, _, _, _, _, _, limit, exp_e, exp_t, exp_c = configs[bs_index[b]]
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
                _, _, _, _, _, _, _, limit, exp_e, exp_t, exp_c = configs[bs_index[b]]
                append(
                    (
                        sub, attempt, b, limit, 0.0, 0.0, 0.0, 0.0, False, False, False, exp_e * ratio,
                        exp_t * ratio, exp_c * ratio,
                    )
                )  # fmt: skip

    starts_l, ends_l, ratios_l = starts.tolist(), ends.tolist(), ratios.tolist()
    for k in range(len(starts_l)):
        reap(starts_l[k])
        launch(starts_l[k], ends_l[k], ratios_l[k], k + 1, 1, 0, False)
    reap(inf)
    return rows


_GENERATORS: dict[int, tuple[np.random.Generator, np.random.Generator, Any, Any]] = {}


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """``seed_generators(seed)``, reset to their seeded state (made once per seed, per process).

    Every group starts from the same seeded generators; setting a bit generator's state is much
    cheaper than seeding one (a cluster-scale table has tens of thousands of groups). A group's
    replay is over before the next asks for them (one replay at a time in a process).
    """
    cached = _GENERATORS.get(seed)
    if cached is None:
        env, pol = seed_generators(seed)
        cached = (env, pol, env.bit_generator.state, pol.bit_generator.state)
        _GENERATORS[seed] = cached
    env, pol, env_state, pol_state = cached
    env.bit_generator.state = env_state
    pol.bit_generator.state = pol_state
    return env, pol
