"""The ``zeus`` policy's replay as one fused loop: the same rows as :func:`replay.replay`, faster.

:func:`zeus_bench.sim.replay.replay` runs any policy through :class:`~zeus_bench.sim.replay.Runner`:
per try a :class:`~zeus_bench.sim.policies.Decision`, an :class:`~zeus_bench.sim.policies.Outcome`,
and a few layers of method calls (policy, bandit, runner). For the faithful ``zeus`` policy
(no window, no drift, no prior) this module runs the same algorithm with those layers inlined:

* the policy's limit for a batch size is always the JIT profile's (:attr:`JobModel.jit_limit_w`),
  so each batch size's figures at that limit are looked up once per job, not per try;
* the batch-size optimizer (:class:`~zeus_bench.sim.policies.bandit.PruningThompsonSampling`) is
  the real object, driven through its state: pruning and the exploration of the arms call its
  own methods; Thompson Sampling after exploration draws the same visiting order and samples and
  decides through its certified approximate posteriors, which are updated at each observation;
* the arithmetic is the Runner's, operation for operation (costs, budgets, penalties).

The golden tests replay through :func:`replay.replay`, which takes this path for ``zeus``;
``tests/sim/test_sim_fastzeus.py`` compares it with the generic loop. For many seeds at once the
grid runs :mod:`zeus_bench.sim.lockstep`, which falls back on this loop for a seed it cannot
replay in lockstep; this loop can stop at the start of a steady try and hand the seed over
(:class:`Handover`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from operator import add, length_hint, mul
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.errors import ConfigError
from zeus_bench.sim.draws import (
    LITTLE_ENDIAN,
    MASK32,
    REJECT_SET_MAX_N,
    emulated,
    rejectable_words,
    word_stream,
)
from zeus_bench.sim.env import (
    draw_path,
    early_stop_budget,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.policies.bandit import PruningThompsonSampling, approx_from_sums
from zeus_bench.sim.rules import MAX_TRIES, seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.replay import JobModel, Row

# Per batch-size index: paths, number of paths, budget epoch cost, energy and time per epoch,
# profile epoch's energy and time, limit, expected energy, time and cost (at the JIT limit).
_Config = tuple[list[float], int, float, float, float, float, float, float, float, float, float]


def _configs(model: JobModel) -> list[_Config] | None:
    """Per batch size, its figures at its JIT limit (cached on the model); None if one is unmeasured."""
    cached = model.__dict__.get("_fastzeus_configs", False)
    if cached is not False:
        return cached  # type: ignore[no-any-return]
    configs: list[_Config] | None = []
    for bi, limit in enumerate(model.jit_limit_w):
        pj = model.limit_index.get(limit)
        if pj is None or math.isnan(model.time_per_epoch_s[bi][pj]) or configs is None:
            configs = None  # the generic loop reports it (or never needs it)
            continue
        paths = model.paths[bi]
        configs.append(
            (
                paths, len(paths), model.budget_epoch_cost[bi][pj], model.energy_per_epoch_j[bi][pj],
                model.time_per_epoch_s[bi][pj], model.profile_energy_j[bi], model.profile_time_s[bi],
                limit, model.expected_energy_j[bi][pj], model.expected_time_s[bi][pj],
                model.expected_cost[bi][pj],
            )
        )  # fmt: skip
    model.__dict__["_fastzeus_configs"] = configs
    return configs


def supported(model: JobModel) -> bool:
    """Whether :func:`replay_zeus` can replay this job (every JIT limit measured)."""
    return _configs(model) is not None


def replay_zeus(model: JobModel, seed: int, beta: float, recurrences: int) -> list[Row] | None:
    """Rows of ``replay(model, Zeus, seed, beta, recurrences)``; None when this path does not apply.

    It does not apply (the caller runs the generic loop) when a JIT limit is unmeasured or the
    generators are not of the PCG64 family whose draws :mod:`zeus_bench.sim.draws` reproduces.

    Raises:
        ConfigError: a try of the first recurrence does not reach the target.
    """
    done = _replay(model, seed, beta, recurrences, False)
    return None if done is None else done[0]


@dataclass
class Handover:
    """A replay stopped at the start of a try once Thompson Sampling is steady (see :func:`_replay`).

    Everything :mod:`zeus_bench.sim.lockstep` needs to go on exactly where the loop stopped: the
    recurrence bookkeeping, the arms (batch-size indices) with their running sums and rewards,
    the environment's words fetched but not used, and both generators (their raw outputs not yet
    taken; the optimizer holds no buffered 32-bit word).
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


HANDOVER_OUTPUTS = 64  # environment outputs fetched ahead when the replay may be handed over


def _replay(
    model: JobModel, seed: int, beta: float, recurrences: int, handover: bool
) -> tuple[list[Row], Handover | None] | None:
    """The fused loop; with ``handover``, it stops at the first try of the steady state it can hand over.

    Returns None when the path does not apply (see :func:`replay_zeus`), else the rows and, if it
    stopped early, the :class:`Handover` (the rows are then those before it).
    """
    configs = _configs(model)
    env_rng, pol_rng = seed_generators(seed)
    if configs is None or not emulated(env_rng):
        return None
    job = model.job
    bandit = PruningThompsonSampling([int(b) for b in job.batch_sizes], job.b0, pol_rng)
    bs_index = model.bs_index
    if handover:  # words from a list whose unused rest can be handed over, then the stream
        block = env_rng.bit_generator.random_raw(HANDOVER_OUTPUTS)
        if LITTLE_ENDIAN:  # each output's low word, then its high word
            env_words = block.view(np.uint32).tolist()
        else:
            env_words = [w for r in block.tolist() for w in (r & MASK32, r >> 32)]
        words_left = iter(env_words)
        next_word = chain(words_left, word_stream(env_rng)).__next__
    else:
        next_word = word_stream(env_rng).__next__
    normal = pol_rng.standard_normal
    order = bandit._order_draws
    skip = order.skip
    raw_policy = pol_rng.bit_generator.random_raw
    rejectable: frozenset[int] | None = None
    post_cache = bandit._post_cache
    sums_of = bandit._sums
    rewards = bandit._rewards
    eta = model.eta
    max_power_w = model.max_power_w
    max_epochs = float(model.max_epochs)
    inf = math.inf
    uint32 = np.uint32
    profiled_bs: set[int] = set()
    arms: list[int] | None = None
    n_arms = 0
    # Thompson Sampling's steady state: every arm explored, approximate posteriors built.
    steady = False
    single = False  # the steady state of a single arm (b is that arm; nothing to update)
    means: list[float] = []
    stds: list[float] = []
    c0s: list[float] = []
    c1s: list[float] = []
    arm_pos: dict[int, int] = {}
    c0_max = c1_max = 0.0  # never below max(c0s), max(c1s): a larger bound is as certain
    min_cost = inf
    rows: list[Row] = []
    append = rows.append
    for recurrence in range(1, recurrences + 1):
        total = 0.0
        ran = False
        for attempt in range(1, MAX_TRIES + 1):
            if handover and (steady or single):
                stop = _handover(
                    bandit, arms, single, profiled_bs, bs_index, env_words, length_hint(words_left), env_rng,
                    pol_rng,
                )  # fmt: skip
                if stop is not None:
                    stop.recurrence, stop.attempt, stop.total, stop.ran = recurrence, attempt, total, ran
                    stop.min_cost = min_cost
                    return rows, stop
                handover = False  # it cannot be handed over: the loop runs to the end
            # --- the policy's prediction (PruningThompsonSampling.predict)
            if single:  # one arm: it wins every draw; its sample's draws are still made
                normal()
                b = arms[0]  # type: ignore[index]
            elif steady:
                # Scalar draws where they are cheaper than an array's: the same stream, the same values.
                if order._pending is None and rejectable is not None:
                    # ChoiceDraws.skip without its checks: n - 1 whole outputs are its words
                    if n_arms == 2:  # one output, two words, no span-2 word is ever rejected
                        raw_policy()
                    else:
                        words = raw_policy(n_arms - 1).view(uint32).tolist()
                        if not rejectable.isdisjoint(words):
                            order._permute(n_arms, words)
                else:
                    skip(n_arms)
                z = [normal(), normal()] if n_arms == 2 else normal(n_arms).tolist()
                samples = list(map(add, means, map(mul, stds, z)))
                best = max(samples)
                winner = samples.index(best)
                samples[winner] = -inf
                bound = c0_max + c1_max * max(map(abs, z))
                if best - bound > max(samples) + bound:  # noqa: SIM108 - the common case first
                    b = arms[winner]  # type: ignore[index]
                else:
                    b = bandit._exact_sample(arms, z)  # type: ignore[arg-type]
            elif arms is None and bandit._arms is None:
                b = bandit._down[0] if bandit._down else bandit._up[0]
            else:
                if arms is None:
                    arms = bandit._arms
                    rewards = bandit._rewards
                    n_arms = len(arms)  # type: ignore[arg-type]
                    if 1 < n_arms <= REJECT_SET_MAX_N and LITTLE_ENDIAN:
                        rejectable = rejectable_words(n_arms)
                b = bandit.predict()
                lists = bandit._approx_lists
                if n_arms == 1 and bandit._explored:
                    single = True  # from now on the optimizer's state is never read again
                elif bandit._explored and lists is not None and not bandit._dirty and order._loaded:
                    steady = True  # from now on the lists are kept current here
                    means, stds, c0s, c1s = lists
                    arm_pos = bandit._arm_pos
                    c0_max, c1_max = max(c0s), max(c1s)
            # --- the try (Runner.run_try at the JIT limit)
            paths, n_paths, epoch_cost, e_ep, t_ep, prof_e, prof_t, limit, exp_e, exp_t, exp_c = configs[
                bs_index[b]
            ]
            profiled = b not in profiled_bs
            target = paths[draw_path(next_word, n_paths)]
            budget = early_stop_budget(stop_bound(beta, min_cost), epoch_cost, max_epochs)
            epochs, reached = try_epochs(target, budget)
            energy, time = try_energy_time(epochs, e_ep, t_ep, profiled, prof_e, prof_t)
            cost = try_cost(energy, time, eta, max_power_w, budget, zero_budget_cost(min_cost, beta))
            if profiled:
                profiled_bs.add(b)
            # --- the optimizer's observation (PruningThompsonSampling.observe)
            if single:
                pass
            elif steady:  # the arm's running sums and approximate posterior, as _sampled_arm has them
                rewards[b].append(-cost)
                post_cache.pop(b, None)
                sums = sums_of[b]
                sums[0] += 1.0  # the order of the additions is the rewards' order
                sums[1] -= cost
                sums[2] += cost * cost
                sums[3] += abs(cost)
                i = arm_pos[b]
                means[i], stds[i], c0, c1 = approx_from_sums(*sums)
                c0s[i] = c0
                c1s[i] = c1
                if c0 > c0_max:  # noqa: PLR1730 - cheaper than max() in this loop
                    c0_max = c0
                if c1 > c1_max:  # noqa: PLR1730
                    c1_max = c1
            else:
                bandit.observe(b, cost, reached)
            # --- the row (Runner.run_recurrence)
            if epochs == 0.0:
                if attempt == MAX_TRIES and not ran:
                    append(
                        (
                            recurrence,
                            attempt,
                            b,
                            limit,
                            0.0,
                            0.0,
                            0.0,
                            0.0,
                            False,
                            False,
                            False,
                            exp_e,
                            exp_t,
                            exp_c,
                        )
                    )
                continue
            ran = True
            total += cost
            append(
                (
                    recurrence,
                    attempt,
                    b,
                    limit,
                    epochs,
                    energy,
                    time,
                    cost,
                    reached,
                    profiled,
                    True,
                    exp_e,
                    exp_t,
                    exp_c,
                )
            )
            if reached:
                min_cost = min(min_cost, total)
                break
            if recurrence == 1:
                raise ConfigError(
                    f"workload {job.workload.id!r} on {job.gpu!r}: batch size {b} did "
                    f"not reach the target in the first recurrence (the default must converge)"
                )
    return rows, None


def _handover(
    bandit: PruningThompsonSampling,
    arms: list[int] | None,
    single: bool,
    profiled_bs: set[int],
    bs_index: dict[int, int],
    env_words: list[int],
    env_left: int,
    env_rng: np.random.Generator,
    pol_rng: np.random.Generator,
) -> Handover | None:
    """The state to hand over, or None when the steady state is not one the lockstep replays.

    Not handed over: arms not all profiled yet, more arms than the listed rejectable words cover,
    a buffered 32-bit word in the optimizer (its visiting orders would not start on whole outputs),
    or every fetched environment word used (the stream's position is then not known here).
    """
    if arms is None or env_left == 0 or not profiled_bs.issuperset(arms):
        return None
    n = len(arms)
    if n > REJECT_SET_MAX_N or (not single and bandit._order_draws._pending is not None):
        return None
    sums = [list(bandit._sums.get(b, (0.0, 0.0, 0.0, 0.0))) for b in arms]
    return Handover(
        0, 0, 0.0, False, math.inf, [bs_index[b] for b in arms], sums, [list(bandit._rewards[b]) for b in arms],
        env_words[len(env_words) - env_left :], env_rng, pol_rng, pol_rng.bit_generator.state,
    )  # fmt: skip
