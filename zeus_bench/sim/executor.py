"""The replay's executor: the tries of one job's seeds, step by step, on arrays over the seeds.

Each step is the next try of every seed still replaying (the seeds' timelines are independent):

* the decisions of a policy's face over seeds
  (:class:`~zeus_bench.sim.policies.seeds.SeedPolicies`, from
  :meth:`Policy.batched <zeus_bench.sim.policies.Policy.batched>`; the default holds one scalar
  policy object per seed and asks each for its :meth:`~zeus_bench.sim.policies.Policy.predict`);
  a decision without a power limit profiles its batch size just in time (its JIT limit; the
  first epoch at the profile's figures);
* each seed's training path, drawn from its environment generator
  (:class:`~zeus_bench.optimizers.rng.PathDraws`, as ``rng.integers(0, n_paths)`` would), its
  target epoch scaled by the drift hook's factor (:mod:`zeus_bench.sim.drift`);
* the rules of :mod:`zeus_bench.sim.env` on the arrays: the early-stop budget (through the
  policy's ``stop_cost``), the epochs, the JIT first epoch, the cost or a zero budget's penalty;
* per-try noise on time and power from each seed's own noise generator (:func:`noisy`);
* the observation (:meth:`~zeus_bench.sim.policies.seeds.SeedPolicies.observe`), then the
  recurrence bookkeeping (:func:`~zeus_bench.sim.env.recurrence_step`) and the rows
  (:func:`try_row`, :func:`missed_row`).

:func:`execute` runs seeds to their last recurrence; :func:`zeus_bench.sim.replay.replay` is it
with one seed, :func:`~zeus_bench.sim.replay.replay_many` with many. :class:`OneTry` runs single
tries with the same rules (the arrival replay's generic path, whose tries overlap in time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from zeus_bench.optimizers.rng import PathDraws
from zeus_bench.sim import env
from zeus_bench.sim.model import JobModel, Row, first_recurrence_error
from zeus_bench.sim.policies.base import Policy, scalar_face
from zeus_bench.sim.policies.seeds import Decision, Outcome, SeedPolicies, decision_indices
from zeus_bench.sim.rules import NOISE_CLIP, ZERO_BUDGET_PENALTY

__all__ = ["OneTry", "execute", "missed_row", "noisy", "try_row"]

#: A drift hook: (recurrence, batch-size index) -> factor on the sampled path's target epoch.
DriftHook = Callable[[int, int], float]


def noisy(energy: float, time: float, noise: float, rng: np.random.Generator) -> tuple[float, float]:
    """Energy and time of a try whose time and average power are off by seeded factors.

    Each factor is ``1 + noise x z`` with ``z`` standard normal clipped at
    :data:`~zeus_bench.sim.rules.NOISE_CLIP`; the energy takes both (time x power).
    """
    z = np.clip(rng.standard_normal(2), -NOISE_CLIP, NOISE_CLIP)
    f_time = 1.0 + noise * float(z[0])
    f_power = 1.0 + noise * float(z[1])
    return energy * f_time * f_power, time * f_time


def try_row(m: JobModel, rec: int, att: int, out: Outcome, ratio: float = 1.0) -> Row:
    """The row of a try that ran; energy, time and cost scaled by ``ratio``."""
    bi = m.bs_index[out.batch_size]
    pj = m.limit_index[out.power_limit_w]
    return (
        rec, att, out.batch_size, out.power_limit_w, out.epochs, out.energy_j * ratio, out.time_s * ratio,
        out.cost * ratio, out.reached, out.profiled, True,
        m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
    )  # fmt: skip


def missed_row(m: JobModel, rec: int, attempts: int, last: Outcome, ratio: float = 1.0) -> Row:
    """The one row of a recurrence in which no try ran (every budget was zero).

    ``ran`` and ``reached`` False, no epochs, energy, time or cost; ``attempt`` is the number
    of tries attempted; the configuration is the last try's, with its expected figures.
    """
    bi = m.bs_index[last.batch_size]
    pj = m.limit_index[last.power_limit_w]
    return (
        rec, attempts, last.batch_size, last.power_limit_w, 0.0, 0.0, 0.0, 0.0, False, False, False,
        m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
    )  # fmt: skip


class _Tables:
    """A model's per-configuration figures as arrays (what a step gathers from)."""

    def __init__(self, m: JobModel) -> None:
        self.budget_epoch_cost = np.array(m.budget_epoch_cost)
        self.energy = np.array(m.energy_per_epoch_j)
        self.time = np.array(m.time_per_epoch_s)
        self.profile_energy = np.array(m.profile_energy_j)
        self.profile_time = np.array(m.profile_time_s)
        self.jit_limit = np.array(m.jit_limit_w)
        self.limits = np.asarray(m.job.power_limits, dtype=float)


def _tries(
    m: JobModel,
    t: _Tables,
    policies: SeedPolicies,
    ids: list[int],
    bi: np.ndarray,
    pj: np.ndarray,
    profiled: np.ndarray,
    target: np.ndarray,
    min_cost: np.ndarray,
    beta: float,
) -> tuple[np.ndarray, ...]:
    """The tries of seeds ``ids`` (the rules of :mod:`zeus_bench.sim.env`): budget, epochs, reached, energy, time."""
    epoch_cost = t.budget_epoch_cost[bi, pj]
    budget = np.full(len(ids), float(m.max_epochs))
    stops = policies.early_stopping(ids)
    if stops.any():
        cost_ub = policies.stop_cost(ids, env.stop_bound(beta, min_cost), epoch_cost)
        budget = np.where(stops, env.early_stop_budget(cost_ub, epoch_cost, float(m.max_epochs)), budget)
    epochs, reached = env.try_epochs(target, budget)
    energy, time = env.try_energy_time(
        epochs, t.energy[bi, pj], t.time[bi, pj], profiled, t.profile_energy[bi], t.profile_time[bi]
    )
    return budget, epochs, reached, energy, time


def _outcomes(
    m: JobModel,
    decisions: list[Decision],
    t: _Tables,
    bi: np.ndarray,
    pj: np.ndarray,
    profiled: np.ndarray,
    cost: np.ndarray,
    reached: np.ndarray,
    epochs: np.ndarray,
    energy: np.ndarray,
    time: np.ndarray,
) -> list[Outcome]:
    """The outcomes the policies observe (Python numbers, as a scalar policy expects them)."""
    limits = t.limits[pj].tolist()
    return [
        Outcome(d.batch_size, lim, c, r, e, en, ti, p)
        for d, lim, c, r, e, en, ti, p in zip(
            decisions, limits, cost.tolist(), reached.tolist(), epochs.tolist(), energy.tolist(), time.tolist(),
            profiled.tolist(), strict=True,
        )
    ]  # fmt: skip


def execute(
    model: JobModel,
    policies: SeedPolicies,
    env_rngs: Sequence[np.random.Generator],
    beta: float,
    recurrences: int,
    drift: DriftHook | None = None,
    noise: float = 0.0,
    noise_rngs: Sequence[np.random.Generator] | None = None,
    first: int = 1,
    least: float = math.inf,
) -> tuple[list[list[Row]], np.ndarray]:
    """Replay every seed (seed ``i``: ``policies``' seed ``i``, ``env_rngs[i]``) up to recurrence ``recurrences``.

    The replay starts at recurrence ``first`` with ``least`` the least recurrence cost so far
    (the defaults: the job's start). Returns each seed's rows in its replay's order (one per try
    that ran, and one per recurrence in which none ran: :func:`missed_row`) and each seed's least
    recurrence cost at the end.

    Raises:
        ConfigError: a try of the first recurrence does not reach the target, or a policy chose
            a configuration the trace does not have.
    """
    if noise > 0.0 and (noise_rngs is None or len(noise_rngs) != len(env_rngs)):
        raise ValueError("per-try noise needs a generator of its own per seed (noise_rngs)")
    m = model
    t = _Tables(m)
    a = len(env_rngs)
    draws = [PathDraws(r) for r in env_rngs]
    paths = m.paths
    rows: list[list[Row]] = [[] for _ in range(a)]
    ids = list(range(a)) if first <= recurrences else []
    rec = np.full(a, first, dtype=np.int64)
    att = np.ones(a, dtype=np.int64)
    total = np.zeros(a)
    ran = np.zeros(a, dtype=bool)
    min_cost = np.full(a, float(least))
    final = min_cost.copy()  # each seed's, written when it ends
    with np.errstate(all="ignore"):  # inf and NaN as the rules have them
        while ids:
            decisions, bi, pj, profiled = policies.decide(ids)
            # The path is drawn before the budget is known, as in the paper's simulator.
            bis = bi.tolist()
            target = [paths[b][draws[i](len(paths[b]))] for i, b in zip(ids, bis, strict=True)]
            if drift is not None:
                target = [x * drift(r, b) for x, r, b in zip(target, rec.tolist(), bis, strict=True)]
            budget, epochs, reached, energy, time = _tries(
                m, t, policies, ids, bi, pj, profiled, np.array(target), min_cost, beta
            )
            if noise > 0.0:
                for k in np.flatnonzero(budget != 0.0).tolist():
                    energy[k], time[k] = noisy(float(energy[k]), float(time[k]), noise, noise_rngs[ids[k]])  # type: ignore[index]
            cost = env.try_cost(
                energy, time, m.eta, m.max_power_w, budget, env.zero_budget_cost(min_cost, beta)
            )
            outcomes = _outcomes(m, decisions, t, bi, pj, profiled, cost, reached, epochs, energy, time)
            policies.observe(ids, outcomes)
            before, att_before = rec.tolist(), att.tolist()
            rec, att, total, ran, min_cost, ran_try, emit, failed, _ = env.recurrence_step(
                rec, att, total, ran, min_cost, epochs, cost, reached
            )
            if failed.any():
                raise first_recurrence_error(m, outcomes[int(np.flatnonzero(failed)[0])].batch_size)
            for k in np.flatnonzero(emit).tolist():
                make = try_row if ran_try[k] else missed_row
                rows[ids[k]].append(make(m, before[k], att_before[k], outcomes[k]))
            going = rec <= recurrences
            if not going.all():
                final[ids] = min_cost
                keep = np.flatnonzero(going)
                ids = [ids[k] for k in keep.tolist()]
                rec, att, total, ran, min_cost = (v[keep] for v in (rec, att, total, ran, min_cost))
    return rows, final


class OneTry:
    """Single tries of one seed under the executor's rules (tries that overlap in time: arrivals).

    ``min_cost`` is the caller's to keep (what the budget's bound follows); ``zero_budget_penalty``
    scales the cost a zero-budget try reports (``x beta x min_cost``).
    """

    def __init__(
        self,
        model: JobModel,
        policy: Policy,
        beta: float,
        env_rng: np.random.Generator,
        zero_budget_penalty: float = ZERO_BUDGET_PENALTY,
        min_cost: float = math.inf,
    ) -> None:
        """Tries of ``policy``'s decisions on ``model``, paths drawn from ``env_rng`` (owned from now on)."""
        self.model = model
        self.beta = beta
        self.penalty = zero_budget_penalty
        self.min_cost = min_cost
        self._policies = scalar_face(model, [policy])
        self._draw = PathDraws(env_rng)
        self._tables = _Tables(model)

    def run(self, decision: Decision) -> Outcome:
        """Run one try of ``decision`` on a sampled training path (``epochs == 0``: zero budget)."""
        m = self.model
        bi, pj, jit = decision_indices(m, decision)
        paths = m.paths[bi]
        target = np.array([paths[self._draw(len(paths))]])
        min_cost = np.array([self.min_cost])
        b, p, prof = np.array([bi]), np.array([pj]), np.array([jit])
        with np.errstate(all="ignore"):  # inf and NaN as the rules have them
            budget, epochs, reached, energy, time = _tries(
                m, self._tables, self._policies, [0], b, p, prof, target, min_cost, self.beta
            )
            penalty = env.zero_budget_cost(min_cost, self.beta, self.penalty)
            cost = env.try_cost(energy, time, m.eta, m.max_power_w, budget, penalty)
        return _outcomes(m, [decision], self._tables, b, p, prof, cost, reached, epochs, energy, time)[0]
