"""``zeus-plus`` and ``zeus-plus-safe`` in the simulator: the JIT power limit + :class:`SafeHillClimb`.

The optimizer itself, with its rules, lives in :mod:`zeus_bench.optimizers.hill_climb`; this
module adapts it to the simulator's policy interface (:class:`ZeusPlus`, :class:`ZeusPlusSafe`)
and computes what a deployment's JIT profile would measure on a job's trace
(:func:`baseline_ratio`, :func:`profiling_overhead`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from zeus_bench.core.cost import Cost
from zeus_bench.optimizers.hill_climb import (
    ANYTIME_MARGIN,
    DEFAULT_EPOCH_EVIDENCE,
    DEFAULT_HORIZON,
    DEFAULT_MARGIN,
    DEFAULT_SAFETY,
    NOISE_Z,
    SAFE_LOAN,
    SAFE_LOOKAHEAD,
    SafeHillClimb,
)
from zeus_bench.sim.policies.base import (
    Decision,
    Outcome,
    Policy,
    PolicyContext,
    changes_rules,
    defines_methods,
    register_policy,
    scalar_face,
)
from zeus_bench.sim.policies.builtin import JitMixin
from zeus_bench.sim.policies.seed_zeus_plus import ClimbingPolicy, ZeusPlusArrays
from zeus_bench.traces.jobs import JobTrace

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.seeds import SeedArrays, SeedPolicies

__all__ = ["ZeusPlus", "ZeusPlusSafe", "baseline_ratio", "profiling_overhead"]


def baseline_ratio(job: JobTrace, cost: Cost, limit_w: float) -> float:
    """Epoch cost of b0 at its maximum limit over that at ``limit_w``: what its JIT profile measured."""
    i = job.bs_index(job.b0)
    tpe, pw = job.time_per_epoch_s[i], job.avg_power_w[i]
    costs = cost.epoch_cost(tpe, pw, job.max_power_w)
    at = costs[int(np.flatnonzero(job.power_limits == limit_w)[0])]
    top = costs[int(np.flatnonzero(~np.isnan(tpe))[-1])]
    return float(top / at)


def profiling_overhead(job: JobTrace, cost: Cost, outcome: Outcome) -> float:
    """What a profiled run's first epoch cost more than an epoch at the limit it chose (J).

    The profiler measured both (it runs the epoch over every limit); 0 for a run not profiled.
    """
    if not outcome.profiled:
        return 0.0
    i = job.bs_index(outcome.batch_size)
    tpe, pw = job.time_per_epoch_s[i], job.avg_power_w[i]
    j = int(np.flatnonzero(job.power_limits == outcome.power_limit_w)[0])
    prof_e = float(np.nanmean(tpe * pw)) if job.profile_energy_j is None else float(job.profile_energy_j[i])
    prof_t = float(np.nanmean(tpe)) if job.profile_time_s is None else float(job.profile_time_s[i])
    extra = cost.zeus_cost(prof_e - tpe[j] * pw[j], prof_t - tpe[j], job.max_power_w)
    return max(0.0, float(extra))


@register_policy
class ZeusPlus(JitMixin, Policy):
    """JIT power limit + :class:`SafeHillClimb` over batch sizes (the recommended successor of Zeus)."""

    name = "zeus-plus"
    reads_paths = False
    description = (
        "JIT power limit; budgeted neighbour probes cut at (1+margin) x the incumbent; drift restarts"
    )
    margin: float = DEFAULT_MARGIN
    safety: float = DEFAULT_SAFETY
    horizon: int = DEFAULT_HORIZON
    """Recurrences assumed when their number is not known (the optimizer's online default; 0: the anytime budget)."""
    anytime: bool = False
    """The anytime budget even when the number of recurrences is known (zeus-plus-safe)."""
    up_first: bool = True
    loan: float | None = None
    """None: the optimizer's default (:data:`~zeus_bench.optimizers.hill_climb.DEFAULT_LOAN` with a horizon, :data:`~zeus_bench.optimizers.hill_climb.ANYTIME_LOAN`, 0, without one)."""
    lookahead: float | None = None
    """None: the optimizer's default (:data:`~zeus_bench.optimizers.hill_climb.ANYTIME_LOOKAHEAD`, 0; only the anytime budget uses it)."""
    prune: bool = True
    noise_z: float = NOISE_Z
    epoch_evidence: bool = DEFAULT_EPOCH_EVIDENCE
    accepts_prior = True  # zeus_bench.sim.scenarios.warmstart binds a Prior as the class attribute `prior`

    @classmethod
    def reads_horizon(cls) -> bool:
        """Whether it reads the horizon told: not with the anytime budget (``anytime``).

        That budget assumes nothing about the number of recurrences; a subclass that defines methods
        of its own counts as reading it.
        """
        return not cls.anytime or defines_methods(cls, ZeusPlus)

    @classmethod
    def inert_constants(cls, horizon_known: bool) -> frozenset[str]:
        """Constants without effect: ``horizon`` and ``lookahead``, as the horizon decides.

        ``horizon`` is read only when no number of recurrences is told (and not ``anytime``);
        ``lookahead`` only by the anytime budget (``anytime``, or no number told and ``horizon`` 0).
        """
        inert = set()
        if cls.anytime or horizon_known:
            inert.add("horizon")
        if not (cls.anytime or (not horizon_known and cls.horizon == 0)):
            inert.add("lookahead")
        return frozenset(inert)

    def __init__(self, ctx: PolicyContext) -> None:
        """Create the optimizer over the job's batch sizes, starting at b0 (and a prior, if bound)."""
        super().__init__(ctx)
        self._init_jit()
        prior = getattr(self, "prior", None)
        known = ctx.recurrences
        self.climber = SafeHillClimb(
            [int(b) for b in ctx.job.batch_sizes],
            ctx.job.b0,
            margin=self.margin,
            safety=self.safety,
            window=ctx.window,
            horizon=0 if self.anytime else self.horizon if known is None else int(known),
            up_first=self.up_first,
            loan=self.loan,
            lookahead=self.lookahead,
            prune=self.prune,
            noise_z=self.noise_z,
            epoch_evidence=self.epoch_evidence,
            prior_best=None if prior is None else prior.best_batch_size,
            ruled_out=() if prior is None else prior.ruled_out + prior.far_from_best(1.0 + self.margin),
        )

    def predict(self) -> Decision:
        """The optimizer's batch size at its JIT limit (profile if new)."""
        return self._decide(self.climber.predict())

    def stop_cost(self, default: float, epoch_cost: float = math.nan) -> float:
        """A probe stops at its cap (or after one epoch, see :meth:`SafeHillClimb.stop_cost`).

        A run of the incumbent stops at ``beta x`` its own mean cost when that is above ``beta x``
        the best recurrence's (``default``): after drift the best is stale, and stopping the
        incumbent early only makes it run again.
        """
        if self.climber.probe is None:
            inc = self.climber.mean_cost(self.climber.incumbent())
            if math.isfinite(inc):
                default = max(default, self.ctx.beta * inc)
        return self.climber.stop_cost(default, epoch_cost)

    def observe(self, outcome: Outcome) -> None:
        """Feed the optimizer (a try that never ran costs nothing); remember a profiled limit.

        Profiling b0 measured its epoch at every limit, so from then on the optimizer knows what
        an epoch of b0 costs at the maximum limit (the baseline) against the limit chosen.
        """
        self._learn_limit(outcome)
        if not outcome.profiled:
            self.feed(outcome.batch_size, outcome.cost, outcome.reached, outcome.epochs)
            return
        if outcome.batch_size == self.ctx.job.b0:
            self.climber.baseline_ratio = baseline_ratio(self.ctx.job, self.ctx.cost, outcome.power_limit_w)
        extra = profiling_overhead(self.ctx.job, self.ctx.cost, outcome) if outcome.epochs > 0.0 else 0.0
        self.feed(outcome.batch_size, outcome.cost, outcome.reached, outcome.epochs, extra)

    def feed(self, batch_size: int, cost: float, reached: bool, epochs: float, extra: float = 0.0) -> None:
        """The optimizer's observation of a try (what :meth:`observe` tells it, the limit learnt).

        A try that never ran (no epochs) costs nothing; ``extra``: what its profiling first epoch
        cost more than an epoch at the limit chosen (0: not profiled), at most its cost.
        """
        cost = cost if epochs > 0.0 else 0.0
        self.climber.observe(batch_size, cost, reached, epochs, min(extra if cost > 0.0 else 0.0, cost))

    def best(self) -> Decision:
        """Incumbent at its JIT limit."""
        return self._decide(self.climber.best_batch_size())

    @classmethod
    def face_family(cls) -> type[Policy]:
        """:class:`ZeusPlus` for every class its face serves (no rule of :data:`SEED_FACE_RULES` changed): one face.

        The face reads each seed's constants from its own object (its optimizer's), so the arena's
        fold variants and ``zeus-plus-safe`` share it. A class that changes a rule is its own.
        """
        return cls if changes_rules(cls, ZeusPlus, SEED_FACE_RULES) else ZeusPlus

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Its face over seeds on arrays (:class:`~zeus_bench.sim.policies.seed_zeus_plus.ZeusPlusArrays`).

        For this class and its subclasses, unless a subclass changes how it decides or learns (any
        of :data:`SEED_FACE_RULES`: it gets the default face, one object per seed).
        """
        if changes_rules(cls, ZeusPlus, SEED_FACE_RULES):
            return scalar_face(model, policies)
        return ZeusPlusArrays(model, cast("Sequence[ClimbingPolicy]", policies))


#: The methods of :class:`ZeusPlus` whose rules its face over seeds asks around (a subclass
#: overriding one of them gets the default face).
SEED_FACE_RULES = (
    "__init__", "batched", "predict", "observe", "feed", "stop_cost", "early_stopping", "_decide", "_learn_limit",
)  # fmt: skip


@register_policy
class ZeusPlusSafe(ZeusPlus):
    """``zeus-plus`` with the anytime budget: safe whatever the number of recurrences, slower to explore."""

    name = "zeus-plus-safe"
    description = (
        "zeus-plus with the anytime budget (no assumed horizon): probes paid from savings made, "
        "2 % of the baseline, and loans against measured epoch-cost savings"
    )
    anytime = True
    margin = ANYTIME_MARGIN
    loan = SAFE_LOAN  # its own constants (leave-one-GPU-out): it lends and credits ahead
    lookahead = SAFE_LOOKAHEAD
    epoch_evidence = False  # its constants were not re-tuned (chosen before the rule existed)
