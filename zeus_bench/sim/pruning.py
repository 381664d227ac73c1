"""The lockstep's pruning phase, and the per-try bookkeeping and row assembly of both phases.

The batch-size optimizer's pruning draws nothing: each seed's next batch size follows from its
own outcomes, kept as arrays (:func:`prune_seeds`); a seed whose pruning ends with every arm
observed twice is handed over (:class:`Handover`) to the Thompson Sampling steps of
:mod:`zeus_bench.sim.lockstep`. The tries are :mod:`zeus_bench.sim.env`'s rules on arrays over
the seeds; :func:`bookkeeping` is :func:`~zeus_bench.sim.env.recurrence_step` over them and
:func:`assemble` turns the steps' rows into columns, seed by seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.optimizers.bandit import MIN_OBSERVATIONS, PRUNE_ROUNDS
from zeus_bench.optimizers.posterior import running_sums
from zeus_bench.optimizers.rng import MASK32, REJECT_SET_MAX_N
from zeus_bench.optimizers.seed_bandits import SeedPruning
from zeus_bench.sim.env import (
    draw_paths,
    early_stop_budget,
    recurrence_step,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.model import first_recurrence_error
from zeus_bench.sim.rules import seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel, Row

#: The try fields (RUN_FIELDS order) as the lockstep's columns hold them.
Columns = dict[str, np.ndarray]
#: One lockstep step's rows: seed positions, recurrence, attempt, batch-size index, epochs, energy,
#: time, cost, reached, ran, whether written, and profiled (None: none was).
Step = tuple[Any, ...]

_U32 = np.uint64(MASK32)
_SHIFT32 = np.uint64(32)
HANDOVER_OUTPUTS = 64  # environment outputs fetched per seed for its pruning


@dataclass
class Handover:
    """A seed at the end of its pruning, where its Thompson Sampling steps start (:func:`_run`).

    The recurrence bookkeeping, the arms (batch-size indices) with their running sums and
    rewards, the environment's words fetched but not used, and both generators (their raw
    outputs not yet taken; the optimizer holds no buffered 32-bit word).
    """

    recurrence: int
    attempt: int
    total: float
    ran: bool
    min_cost: float
    arms: list[int]
    sums: list[list[float]]
    rewards: list[list[float]]
    env_words: list[int]
    env_rng: np.random.Generator
    pol_rng: np.random.Generator
    pol_state: Any  # the policy generator's state here (before any output is fetched ahead)


def prune_seeds(
    model: JobModel, seeds: list[int], beta: float, recurrences: int, steps: list[Step]
) -> tuple[list[Handover], list[int], list[int]]:
    """Every seed's pruning in lockstep, from its first try to its Thompson Sampling's first.

    The batch-size optimizer's pruning (:class:`~zeus_bench.sim.policies.PruningThompsonSampling`)
    draws nothing: each seed's next batch size follows from its own outcomes. Per seed: the
    round, its candidates, the default, how far each direction has gone, the good batch sizes
    and the round's best. The tries are the steady steps' (with the profiling first epoch of a
    batch size's first try). Appends the rows to ``steps``.

    Returns:
        The :class:`Handover` of each seed whose pruning ended with every arm observed at least
        twice (so that its first prediction only draws, as a steady one), their positions among
        ``seeds``, and the positions of the seeds to prune in the scalar loop instead (an arm seen
        once, or more path draws than fetched).

    Raises:
        ConfigError: a try of the first recurrence does not reach the target.
    """
    configs = model.at_jit_limits()
    assert configs is not None
    n_b = len(configs)
    epoch_cost, e_ep, t_ep, prof_e, prof_t = (np.array([c[k] for c in configs]) for k in (2, 3, 4, 5, 6))
    n_paths = np.array([c[1] for c in configs], dtype=np.uint64)
    paths = np.full((n_b, int(n_paths.max())), math.inf)
    for k, c in enumerate(configs):
        paths[k, : c[1]] = c[0]
    eta = model.eta
    max_power_w = model.max_power_w
    max_epochs = float(model.max_epochs)
    inf = math.inf
    generators = [seed_generators(seed) for seed in seeds]
    raw = np.stack([env.bit_generator.random_raw(HANDOVER_OUTPUTS) for env, _ in generators])
    words = np.empty((len(seeds), 2 * HANDOVER_OUTPUTS), dtype=np.uint64)
    words[:, 0::2], words[:, 1::2] = raw & _U32, raw >> _SHIFT32  # low word, then high word
    a = len(seeds)
    ids = np.arange(a)
    env_pos = np.zeros(a, dtype=np.int64)
    env_len = np.full(a, 2 * HANDOVER_OUTPUTS, dtype=np.int64)
    rec = np.ones(a, dtype=np.int64)
    att = np.ones(a, dtype=np.int64)
    total: np.ndarray = np.zeros(a)
    ran = np.zeros(a, dtype=bool)
    min_cost: np.ndarray = np.full(a, inf)
    prune = SeedPruning(a, n_b, model.bs_index[int(model.job.b0)], PRUNE_ROUNDS)
    profiled_bs = np.zeros((a, n_b), dtype=bool)
    handovers: list[Handover] = []
    handed: list[int] = []
    again: list[int] = []
    while len(ids):
        rows = np.arange(len(ids))
        # --- pruning's batch size: down from the default while they reach, then up
        bi = prune.decide()
        # --- the try (as in _run, with the profiling first epoch of a batch size's first try)
        index, env_pos, short = draw_paths(
            words, env_pos, env_len, n_paths[bi], ~np.zeros(len(ids), dtype=bool)
        )
        target = paths[bi, index]
        budget = early_stop_budget(stop_bound(beta, min_cost), epoch_cost[bi], max_epochs)
        epochs, reached = try_epochs(target, budget)
        profiled = ~profiled_bs[rows, bi]
        energy, time = try_energy_time(epochs, e_ep[bi], t_ep[bi], profiled, prof_e[bi], prof_t[bi])
        cost = try_cost(energy, time, eta, max_power_w, budget, zero_budget_cost(min_cost, beta))
        profiled_bs[rows, bi] = True
        # --- pruning's observation (the one-seed optimizer's rule)
        prune.observe(bi, cost, reached)
        # --- the rows and the recurrence bookkeeping
        rec_before, att_before = rec, att
        rec, att, total, ran, min_cost, ran_try, emit = bookkeeping(
            model, (rec, att, total, ran, min_cost), bi, epochs, cost, reached, ~short
        )
        steps.append((ids, rec_before, att_before, bi, epochs, energy, time, cost, reached, ran_try, emit,
                      profiled & ran_try))  # fmt: skip
        finished = rec > recurrences
        pruned = prune.pruned() & ~finished & ~short
        again.extend(ids[short].tolist())
        for i in np.flatnonzero(pruned).tolist():
            pos = int(ids[i])
            arms, rewards = prune.arms(i)
            if min(map(len, rewards)) < MIN_OBSERVATIONS or len(arms) > REJECT_SET_MAX_N:
                again.append(pos)  # its first prediction explores: the scalar loop prunes it
                continue
            sums = []
            for r in rewards:
                sums.append(running_sums(r))  # in the rewards' order, as the optimizer's are made
            env, pol = generators[pos]
            state = (int(rec[i]), int(att[i]), float(total[i]), bool(ran[i]), float(min_cost[i]))
            left = words[i, env_pos[i] : env_len[i]].tolist()
            handovers.append(Handover(*state, arms, sums, rewards, left, env, pol, pol.bit_generator.state))
            handed.append(pos)
        keep = ~(finished | pruned | short)
        if not keep.all():
            kept_rows = np.flatnonzero(keep)
            ids, env_pos, env_len, words = (
                ids[kept_rows],
                env_pos[kept_rows],
                env_len[kept_rows],
                words[kept_rows],
            )
            rec, att, total, ran, min_cost = (v[kept_rows] for v in (rec, att, total, ran, min_cost))
            prune.take(kept_rows)
            profiled_bs = profiled_bs[kept_rows]
    return handovers, handed, again


def bookkeeping(
    model: JobModel,
    state: tuple[np.ndarray, ...],
    bi: np.ndarray,
    epochs: np.ndarray,
    cost: np.ndarray,
    reached: np.ndarray,
    valid: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """:func:`~zeus_bench.sim.env.recurrence_step` over the seeds; the first recurrence's failure raised.

    Returns the new state (recurrence, attempt, cost so far, a try ran, least cost), then
    whether each try ran and whether it is a row.

    Raises:
        ConfigError: a valid try of the first recurrence ran and did not reach the target.
    """
    rec, att, total, ran, min_cost = state
    *new, ran_try, emit, failed, _ = recurrence_step(
        rec, att, total, ran, min_cost, epochs, cost, reached, valid
    )
    if failed.any():
        raise first_recurrence_error(model, int(model.job.batch_sizes[bi[int(np.flatnonzero(failed)[0])]]))
    return (*new, ran_try, emit)


def assemble(
    model: JobModel,
    seeds: list[int],
    prefix: dict[int, list[Row]],
    steps: list[Step],
    pruned: int,
    drop_pruning: set[int],
    drop_steady: set[int],
) -> tuple[np.ndarray, Columns]:
    """Every seed's rows in order: scalar rows, then lockstep rows (pruning's, then the steady ones).

    ``steps[:pruned]`` are pruning's; the lockstep rows of seeds in ``drop_pruning`` (pruning's)
    and ``drop_steady`` (the steady ones) are replaced by their scalar rows in ``prefix``.
    """
    from zeus_bench.sim.model import RUN_FIELDS

    configs = model.at_jit_limits()
    assert configs is not None
    n_fields = len(RUN_FIELDS)
    order_pos = sorted(prefix)
    flat = [row for p in order_pos for row in prefix[p]]
    scalar = np.array(flat, dtype=float).reshape(len(flat), n_fields)
    parts: list[np.ndarray] = [scalar[:, k] for k in range(n_fields)]
    pos = np.repeat(np.array(order_pos, dtype=np.int64), [len(prefix[p]) for p in order_pos])
    if steps:
        ids, rec, att, bi, epochs, energy, time, cost, reached, ran, emit = (
            np.concatenate([s[k] for s in steps]) for k in range(11)
        )
        profiled = np.concatenate(
            [np.zeros(len(s[0]), dtype=bool) if s[11] is None else s[11] for s in steps]
        )
        in_pruning = np.repeat(np.arange(len(steps)) < pruned, [len(s[0]) for s in steps])
        if drop_pruning:
            emit &= ~(in_pruning & np.isin(ids, np.array(sorted(drop_pruning), dtype=np.int64)))
        if drop_steady:
            emit &= ~(~in_pruning & np.isin(ids, np.array(sorted(drop_steady), dtype=np.int64)))
        bi, ran = bi[emit], ran[emit]
        limit, exp_e, exp_t, exp_c = (np.array([c[k] for c in configs])[bi] for k in (7, 8, 9, 10))
        sizes = model.job.batch_sizes.astype(float)[bi]
        vec = [
            rec[emit].astype(float), att[emit].astype(float), sizes, limit,
            np.where(ran, epochs[emit], 0.0), np.where(ran, energy[emit], 0.0), np.where(ran, time[emit], 0.0),
            np.where(ran, cost[emit], 0.0), (reached[emit] & ran).astype(float), profiled[emit].astype(float),
            ran.astype(float), exp_e, exp_t, exp_c,
        ]  # fmt: skip
        parts = [np.concatenate([p, v]) for p, v in zip(parts, vec, strict=True)]
        pos = np.concatenate([pos, ids[emit]])
    order = np.argsort(pos, kind="stable")
    columns: Columns = {}
    for name, part in zip(RUN_FIELDS, parts, strict=True):
        col = part[order]
        if name in ("reached", "profiled", "ran"):
            columns[name] = col != 0.0
        elif name in ("recurrence", "attempt", "batch_size"):
            columns[name] = col.astype(np.int64)
        else:
            columns[name] = col
    return np.asarray(seeds, dtype=np.int64)[pos[order]], columns
