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
  many epochs, else the whole budget. Cost = eta x energy + (1 - eta) x MAXPOWER x time with
  the global MAXPOWER.
* In the first recurrence a try that does not reach the target is an error (b0 must converge).
  A recurrence whose 20 tries all fail is recorded as failed (the paper's code stops there).

Per (job, eta) the per-configuration figures are computed once (:class:`JobModel`); the inner
loop works on Python floats, no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from zeus_bench.cost import zeus_cost
from zeus_bench.errors import ConfigError
from zeus_bench.jobs import JobTrace
from zeus_bench.sim import env
from zeus_bench.sim.draws import PathDraws
from zeus_bench.sim.fastzeus import replay_zeus
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext
from zeus_bench.sim.policies.bandit import PRUNE_ROUNDS
from zeus_bench.sim.policies.builtin import Zeus
from zeus_bench.sim.policies.jit import jit_power_limit
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

# Row layout of a try (see RUN_FIELDS); identity columns are added per block.
RUN_FIELDS = (
    "recurrence",
    "attempt",
    "batch_size",
    "power_limit_w",
    "epochs",
    "energy_j",
    "time_s",
    "cost",
    "reached",
    "profiled",
    "ran",
    "expected_energy_j",
    "expected_time_s",
    "expected_cost",
)
Row = tuple[int, int, int, float, float, float, float, float, bool, bool, bool, float, float, float]


class BanditKnobs(NamedTuple):
    """Knobs of the batch-size optimizer the paper's code exposes (``PolicyContext`` fields).

    Attributes:
        prior_mean: Mean of each arm's Gaussian prior (reward = -cost, J); the paper's 0.
        prior_precision: Its precision (1 / J^2); the paper's 0 (no prior).
        prune_rounds: Rounds of pruning exploration; the paper's 2.
    """

    prior_mean: float = 0.0
    prior_precision: float = 0.0
    prune_rounds: int = PRUNE_ROUNDS

    def check(self) -> None:
        """Raise ConfigError naming the knob out of range."""
        if not math.isfinite(self.prior_mean):
            raise ConfigError(f"prior_mean must be a finite number, got {self.prior_mean}")
        if not (math.isfinite(self.prior_precision) and self.prior_precision >= 0.0):
            raise ConfigError(f"prior_precision must be finite and >= 0, got {self.prior_precision}")
        if self.prune_rounds < 0:
            raise ConfigError(f"prune_rounds must be >= 0, got {self.prune_rounds}")

    @property
    def default(self) -> bool:
        """Whether these are the paper's defaults (what the fast replays implement)."""
        return self == BanditKnobs()


def default_recurrences(job: JobTrace) -> int:
    """2 x |B| x |P| of the job on its GPU."""
    return 2 * len(job.batch_sizes) * len(job.power_limits)


def check_job(job: JobTrace) -> None:
    """Refuse a job that cannot be replayed: b0 that never converges within max epochs."""
    reach = job.reach_fraction()[job.bs_index(job.b0)]
    if reach == 0.0:
        raise ConfigError(
            f"workload {job.workload.id!r} on {job.gpu!r}: default batch size {job.b0} never "
            f"reaches the target within {job.max_epochs} epochs"
        )


class JobModel:
    """Per-configuration figures of one job for one eta, as Python lists for a fast loop."""

    def __init__(self, job: JobTrace, eta: float) -> None:
        """Precompute epoch energy, time and cost, JIT choices and path target epochs."""
        check_job(job)
        self.job = job
        self.eta = eta
        self.max_power_w = job.max_power_w
        self.max_epochs = job.max_epochs
        self.bs_index = {int(b): i for i, b in enumerate(job.batch_sizes)}
        self.limit_index = {float(p): j for j, p in enumerate(job.power_limits)}
        tpe = job.time_per_epoch_s
        pw = job.avg_power_w
        energy = tpe * pw
        self.energy_per_epoch_j: list[list[float]] = energy.tolist()
        self.time_per_epoch_s: list[list[float]] = tpe.tolist()
        # Epoch cost for the early-stop budget: the cost of one epoch's energy (time x power of
        # the trace row) and time, with the per-batch-size MAXPOWER (quirk), as the paper's code.
        cost_b = zeus_cost(energy, tpe, eta, job.max_power_by_bs_w[:, None])
        self.budget_epoch_cost: list[list[float]] = cost_b.tolist()
        prof_e, prof_t = job.profile_energy_j, job.profile_time_s
        self.profile_energy_j = (np.nanmean(energy, axis=1) if prof_e is None else prof_e).tolist()
        self.profile_time_s = (np.nanmean(tpe, axis=1) if prof_t is None else prof_t).tolist()
        jit_t = tpe if job.jit_time_per_epoch_s is None else job.jit_time_per_epoch_s
        jit_p = pw if job.jit_avg_power_w is None else job.jit_avg_power_w
        self.jit_limit_w: list[float] = []
        for i in range(len(job.batch_sizes)):
            ok = ~np.isnan(jit_t[i])
            self.jit_limit_w.append(
                jit_power_limit(
                    job.power_limits[ok], jit_t[i, ok], jit_p[i, ok], eta, float(job.max_power_by_bs_w[i])
                )
            )
        # Paths: target epoch (inf = never), per batch size.
        self.paths: list[list[float]] = [np.where(np.isnan(t), np.inf, t).tolist() for t in job.target_epochs]
        epochs = job.mean_target_epochs()
        exp_e = epochs[:, None] * energy
        exp_t = epochs[:, None] * tpe
        self.expected_energy_j: list[list[float]] = exp_e.tolist()
        self.expected_time_s: list[list[float]] = exp_t.tolist()
        self.expected_cost: list[list[float]] = zeus_cost(exp_e, exp_t, eta, job.max_power_w).tolist()

    def indices(self, decision: Decision) -> tuple[int, int]:
        """(batch size index, limit index) of a decision with a limit; ConfigError if unknown."""
        try:
            bi = self.bs_index[decision.batch_size]
            pj = self.limit_index[float(decision.power_limit_w)]  # type: ignore[arg-type]
        except KeyError:
            raise ConfigError(f"policy chose an unmeasured configuration {decision}") from None
        if math.isnan(self.time_per_epoch_s[bi][pj]):
            raise ConfigError(f"policy chose an unmeasured configuration {decision}")
        return bi, pj


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
        cost = env.try_cost(energy, time, m.eta, m.max_power_w, budget, 0.0)
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
        total = 0.0
        policy = self.policy
        self.recurrence = recurrence
        ran = False
        for attempt in range(1, MAX_TRIES + 1):
            out = self.run_try(policy.predict())
            policy.observe(out)
            if out.epochs == 0.0:
                if attempt == MAX_TRIES and not ran:
                    rows.append(self.missed_row(recurrence, attempt, out))
                continue
            ran = True
            total += out.cost
            rows.append(self.row(recurrence, attempt, out))
            if out.reached:
                self.min_cost = min(self.min_cost, total)
                return total
            if recurrence == 1:
                job = self.model.job
                raise ConfigError(
                    f"workload {job.workload.id!r} on {job.gpu!r}: batch size {out.batch_size} did "
                    f"not reach the target in the first recurrence (the default must converge)"
                )
        return math.inf


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
    if policy_cls is Zeus and window == 0 and drift is None and noise == 0.0 and knobs.default:
        fast = replay_zeus(model, seed, beta, recurrences)
        if fast is not None:
            return fast
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
