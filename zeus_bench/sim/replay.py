"""The replay loop: run a recurring job's tries on its trace under a policy, one row per try.

Rules (``docs/policies.md``; the paper's are in ``zeus-replay-semantics.md``):

* Each recurrence runs tries until one reaches the target, at most :data:`MAX_TRIES`. Its cost
  is the sum of its tries' costs; a successful recurrence cheaper than ``min_cost`` lowers it.
* A try runs the policy's decision. A decision without a power limit profiles the batch size
  just in time: the limit of least epoch cost is chosen (ties to the higher limit) and the try's
  first epoch costs the mean energy and time per epoch over all limits of that batch size.
* The try samples one training path of its batch size uniformly at random (the environment's
  generator, ``integers(0, n_paths)`` per try, paths in trace order). With early stopping its epoch budget is ``max_epochs`` while ``min_cost`` is
  infinite, else ``min((beta x min_cost) // epoch cost, max_epochs)`` with the epoch cost's
  MAXPOWER that of the batch size (the paper's quirk). A zero budget means the try never runs:
  the policy observes cost ``100 x beta x min_cost``, not reached; no row is written, and the
  try counts towards the :data:`MAX_TRIES` of the recurrence. A recurrence in which no try ran
  still gets one row (:meth:`Runner.missed_row`: ``ran`` False, nothing consumed, ``attempt``
  the tries attempted, the last decision's configuration), so every recurrence is a row.
* The path reaches the target if its target epoch is within the budget; the try then ran that
  many epochs, else the whole budget. Its cost is :func:`zeus_bench.core.cost.zeus_cost` with the
  global MAXPOWER.
* In the first recurrence a try that does not reach the target is an error (b0 must converge).
  A recurrence whose 20 tries all fail is recorded as failed (the paper's code stops there).

Per (job, eta) the per-configuration figures are computed once (:class:`JobModel`); the inner
loop works on Python floats, no pandas. Each rule above is one function of
:mod:`zeus_bench.sim.env`, which the lockstep over seeds calls on arrays; :func:`replay_batched`
gives a policy's seeds to its batched replay (:meth:`~zeus_bench.sim.policies.Policy.batched`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from zeus_bench.core.cost import zeus_cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.bandit import BanditKnobs
from zeus_bench.optimizers.rng import PathDraws
from zeus_bench.sim import env
from zeus_bench.sim.model import (
    RUN_FIELDS,
    JitConfig,
    JobModel,
    Row,
    check_job,
    default_recurrences,
    first_recurrence_error,
)
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext
from zeus_bench.sim.rules import (
    KNOWN,
    MAX_TRIES,
    NOISE_CLIP,
    ZERO_BUDGET_PENALTY,
    Horizon,
    horizon_recurrences,
    noise_generator,
    seed_generators,
)

__all__ = [
    "KNOWN",
    "MAX_TRIES",
    "RUN_FIELDS",
    "BanditKnobs",
    "JitConfig",
    "JobModel",
    "Row",
    "Runner",
    "check_job",
    "default_recurrences",
    "replay",
    "replay_seeds",
    "seed_generators",
]


@dataclass
class Runner:
    """State of one recurring job under one policy: its policy, path generator and min cost."""

    model: JobModel
    policy: Policy
    beta: float
    env: np.random.Generator
    min_cost: float = math.inf
    drift: Callable[[int, int], float] | None = None  # (recurrence, bs index) -> epoch factor
    recurrence: int = 0
    noise: float = 0.0  # relative std of the per-try factors on time and power (0: none)
    noise_rng: np.random.Generator | None = None
    zero_budget_penalty: float = ZERO_BUDGET_PENALTY  # x beta x min_cost: a zero-budget try's cost

    def __post_init__(self) -> None:
        """Draw the paths from ``env`` (owned from now on) without NumPy's per-call overhead."""
        self._draw_path = PathDraws(self.env)
        if self.noise > 0.0 and self.noise_rng is None:
            raise ValueError("per-try noise needs its own generator (noise_rng)")

    def _noisy(self, energy: float, time: float) -> tuple[float, float]:
        """Energy and time of a try whose time and average power are off by seeded factors.

        Each factor is ``1 + noise x z`` with ``z`` standard normal clipped at
        :data:`~zeus_bench.sim.rules.NOISE_CLIP`; the energy takes both (time x power).
        """
        z = np.clip(self.noise_rng.standard_normal(2), -NOISE_CLIP, NOISE_CLIP)  # type: ignore[union-attr]
        f_time = 1.0 + self.noise * float(z[0])
        f_power = 1.0 + self.noise * float(z[1])
        return energy * f_time * f_power, time * f_time

    def run_try(self, decision: Decision) -> Outcome:
        """Run one try of ``decision`` on a sampled training path (``epochs == 0``: zero budget)."""
        m = self.model
        profiled = decision.power_limit_w is None
        bi = m.bs_index.get(decision.batch_size)
        if bi is None:
            raise ConfigError(f"policy chose an unknown batch size {decision.batch_size}")
        if profiled:
            limit = m.jit_limit_w[bi]
            pj = m.limit_index[limit]
        else:
            bi, pj = m.indices(decision)
            limit = float(decision.power_limit_w)  # type: ignore[arg-type]
        # The path is drawn before the budget is known, as in the paper's simulator.
        paths = m.paths[bi]
        target = paths[self._draw_path(len(paths))]
        if self.drift is not None:
            target *= self.drift(self.recurrence, bi)
        budget = float(m.max_epochs)
        epoch_cost = m.budget_epoch_cost[bi][pj]
        if self.policy.early_stopping:
            cost_ub = self.policy.stop_cost(env.stop_bound(self.beta, self.min_cost), epoch_cost)
            budget = env.early_stop_budget(cost_ub, epoch_cost, budget)
        if budget == 0.0:
            cost = env.zero_budget_cost(self.min_cost, self.beta, self.zero_budget_penalty)
            return Outcome(decision.batch_size, limit, cost, False, 0.0, 0.0, 0.0, profiled)
        epochs, reached = env.try_epochs(target, budget)
        energy, time = env.try_energy_time(
            epochs, m.energy_per_epoch_j[bi][pj], m.time_per_epoch_s[bi][pj], profiled,
            m.profile_energy_j[bi], m.profile_time_s[bi],
        )  # fmt: skip
        if self.noise > 0.0:
            energy, time = self._noisy(energy, time)
        cost = zeus_cost(energy, time, m.eta, m.max_power_w)  # the budget is not zero (above)
        return Outcome(decision.batch_size, limit, cost, reached, epochs, energy, time, profiled)

    def row(self, recurrence: int, attempt: int, out: Outcome, ratio: float = 1.0) -> Row:
        """The row of a try that ran; energy, time and cost scaled by ``ratio``."""
        m = self.model
        bi = m.bs_index[out.batch_size]
        pj = m.limit_index[out.power_limit_w]
        return (
            recurrence, attempt, out.batch_size, out.power_limit_w, out.epochs, out.energy_j * ratio,
            out.time_s * ratio, out.cost * ratio, out.reached, out.profiled, True,
            m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
        )  # fmt: skip

    def missed_row(self, recurrence: int, attempts: int, last: Outcome, ratio: float = 1.0) -> Row:
        """The one row of a recurrence in which no try ran (every budget was zero).

        ``ran`` and ``reached`` False, no epochs, energy, time or cost; ``attempt`` is the number
        of tries attempted; the configuration is the last try's, with its expected figures.
        """
        m = self.model
        bi = m.bs_index[last.batch_size]
        pj = m.limit_index[last.power_limit_w]
        return (
            recurrence, attempts, last.batch_size, last.power_limit_w, 0.0, 0.0, 0.0, 0.0, False, False, False,
            m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
        )  # fmt: skip

    def run_recurrence(self, recurrence: int, rows: list[Row]) -> float:
        """Run one recurrence's tries, appending rows; returns its summed cost (inf if failed).

        Raises:
            ConfigError: a try of the first recurrence fails (the default must converge).
        """
        policy = self.policy
        self.recurrence = recurrence
        rec, attempt, total, ran = recurrence, 1, 0.0, False
        while rec == recurrence:
            out = self.run_try(policy.predict())
            policy.observe(out)
            rec, next_attempt, total, ran, self.min_cost, ran_try, emit, failed, spent = env.recurrence_step(
                rec, attempt, total, ran, self.min_cost, out.epochs, out.cost, out.reached
            )
            if failed:
                raise first_recurrence_error(self.model, out.batch_size)
            if emit:
                row = self.row if ran_try else self.missed_row
                rows.append(row(recurrence, attempt, out))
            attempt = next_attempt
        return spent if ran_try and out.reached else math.inf


def replay(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    recurrences: int,
    window: int = 0,
    drift: Callable[[int, int], float] | None = None,
    horizon: Horizon = KNOWN,
    noise: float = 0.0,
    knobs: BanditKnobs | None = None,
) -> list[Row]:
    """Replay one recurring job for ``recurrences`` recurrences under one policy and seed.

    ``drift`` (:mod:`zeus_bench.sim.drift`) scales each sampled path's target epoch by a factor
    per (recurrence, batch-size index); the rows' expected columns stay the undrifted trace's.
    ``horizon`` says what the policy is told about the number of recurrences
    (:func:`~zeus_bench.sim.rules.horizon_recurrences`); ``noise`` > 0 scales every try's time
    and average power by seeded factors (:meth:`Runner._noisy`, a generator of its own).
    ``knobs``: the batch-size optimizer's prior and pruning rounds (default: the paper's).

    Returns:
        One row per try that ran (and one per recurrence in which none ran), fields as
        :data:`RUN_FIELDS`.
    """
    knobs = knobs or BanditKnobs()
    env_rng, pol_rng = seed_generators(seed)
    told = horizon_recurrences(horizon, recurrences)
    policy = policy_cls(PolicyContext(model.job, model.eta, beta, window, pol_rng, told, *knobs))
    runner = Runner(
        model, policy, beta, env_rng, drift=drift, noise=noise,
        noise_rng=noise_generator(seed) if noise > 0.0 else None,
    )  # fmt: skip
    rows: list[Row] = []
    for r in range(1, recurrences + 1):
        runner.run_recurrence(r, rows)
    return rows


def replay_seeds(
    model: JobModel,
    policy_cls: type[Policy],
    seeds: Sequence[int],
    beta: float,
    recurrences: int,
    window: int = 0,
) -> dict[int, list[Row]]:
    """:func:`replay` for each seed."""
    return {s: replay(model, policy_cls, s, beta, recurrences, window) for s in seeds}


def replay_batched(
    model: JobModel, policy_cls: type[Policy], seeds: Sequence[int], beta: float, recurrences: int
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The plain replay (no window, drift or noise; the paper's knobs) of many seeds at once.

    Asks the policy for its batched replay (:meth:`~zeus_bench.sim.policies.Policy.batched`),
    giving it :func:`replay` for the seeds it leaves; None when the policy has none (the caller
    then replays seed by seed: the per-seed face every policy has).

    Returns:
        ``(seed, columns)``: each row's seed and one array per field of :data:`RUN_FIELDS`, rows
        seed by seed in ``seeds`` order, each seed's as :func:`replay` gives them.
    """

    def one_seed(seed: int) -> list[Row]:
        return replay(model, policy_cls, seed, beta, recurrences)

    return policy_cls.batched(model, list(seeds), beta, recurrences, one_seed)
