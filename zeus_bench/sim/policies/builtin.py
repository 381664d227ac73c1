"""The policies the paper evaluates: Zeus, its knob ablations and the reference baselines."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from zeus_bench.core.cost import Cost
from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.sim.policies.base import (
    Decision,
    Outcome,
    Policy,
    PolicyContext,
    changes_rules,
    horizon_blind,
    register_policy,
    scalar_face,
)
from zeus_bench.sim.policies.seed_simple import FixedArrays, GridArrays, JitB0Arrays
from zeus_bench.sim.policies.seed_zeus import SeedZeus
from zeus_bench.traces.jobs import JobTrace

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.seeds import SeedArrays, SeedPolicies


def max_limit_w(job: JobTrace, batch_size: int) -> float:
    """Largest power limit measured for a batch size (W, per GPU)."""
    return float(job.limits_of(batch_size).max())


@functools.lru_cache(maxsize=256)
def oracle_configuration(job: JobTrace, cost: Cost) -> tuple[int, float]:
    """Least expected-cost (batch size, limit) among those every path of which converges (cached)."""
    return job.least_cost_configuration(cost)


@functools.lru_cache(maxsize=256)
def max_batch_configuration(job: JobTrace) -> tuple[int, float]:
    """The largest always-converging batch size at its largest limit (cached: one per job, not per seed)."""
    b = job.max_batch()
    return b, max_limit_w(job, b)


class JitMixin:
    """Per batch size, the limit the JIT profile chose (profile on the first try of a size)."""

    def _init_jit(self) -> None:
        self.jit_limits: dict[int, float] = {}

    def _decide(self, batch_size: int) -> Decision:
        return Decision(batch_size, self.jit_limits.get(batch_size))

    def _learn_limit(self, outcome: Outcome) -> None:
        if outcome.profiled:
            self.jit_limits[outcome.batch_size] = outcome.power_limit_w

    def started(self, batch_size: int, power_limit_w: float, profiled: bool) -> None:
        """The profile's limit is known once the first epoch has profiled (the paper's JIT)."""
        if profiled:
            self.jit_limits.setdefault(batch_size, power_limit_w)


@register_policy
@horizon_blind
class Zeus(JitMixin, Policy):
    """The faithful replay: JIT power limit + pruning Gaussian Thompson Sampling over batch sizes."""

    name = "zeus"
    reads_paths = False
    randomized = True
    description = "JIT power limit on the first try of each batch size; pruning (2 rounds) then Gaussian TS"

    def __init__(self, ctx: PolicyContext) -> None:
        """Create the optimizer over the job's batch sizes, starting at b0."""
        super().__init__(ctx)
        self._init_jit()
        self.bandit = PruningThompsonSampling(
            [int(b) for b in ctx.job.batch_sizes],
            ctx.job.b0,
            ctx.rng,
            prune_rounds=ctx.prune_rounds,
            window=ctx.window,
            prior_mean=ctx.prior_mean,
            prior_precision=ctx.prior_precision,
            concurrency=ctx.concurrent,
        )

    def predict(self) -> Decision:
        """The bandit's batch size at its JIT limit (profile if new)."""
        return self._decide(self.bandit.predict())

    def observe(self, outcome: Outcome) -> None:
        """Feed the bandit; remember a profiled limit."""
        self._learn_limit(outcome)
        self.bandit.observe(outcome.batch_size, outcome.cost, outcome.reached)

    def best(self) -> Decision:
        """Best batch size known so far at its JIT limit."""
        return self._decide(self.bandit.best_batch_size())

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Zeus's face over seeds on arrays (:class:`~zeus_bench.sim.policies.seed_zeus.SeedZeus`).

        For this class and its subclasses, unless a subclass changes how Zeus decides or learns
        (any of :data:`SEED_FACE_RULES`, or early stopping: it gets the default face, one object
        per seed), or the face does not apply (:meth:`SeedZeus.applies
        <zeus_bench.sim.policies.seed_zeus.SeedZeus.applies>`).
        """
        return cls._seed_face(model, policies, Zeus, None)

    @classmethod
    def _seed_face(
        cls, model: JobModel, policies: Sequence[Policy], owner: type[Zeus], limits: list[float] | None
    ) -> SeedPolicies | SeedArrays:
        """:class:`SeedZeus` at ``limits`` (None: JIT) unless a class between ``cls`` and ``owner`` changes a rule."""
        if changes_rules(cls, owner, (*SEED_FACE_RULES, "early_stopping")):
            return scalar_face(model, policies)
        if not SeedZeus.applies(model, policies, jit=limits is None):
            return scalar_face(model, policies)
        return SeedZeus(model, policies, limits)


#: The methods of :class:`Zeus` whose rules its face over seeds replays (a subclass overriding one
#: of them gets the default face).
SEED_FACE_RULES = (
    "__init__",
    "batched",
    "_seed_face",
    "predict",
    "observe",
    "best",
    "started",
    "stop_cost",
    "_decide",
    "_learn_limit",
)


@register_policy
@horizon_blind
class BatchSizeOnly(Zeus):
    """Ablation: Zeus's batch-size optimizer at the maximum power limit."""

    name = "bs-only"
    description = "Zeus's batch-size optimizer at the maximum power limit"

    def _decide(self, batch_size: int) -> Decision:
        return Decision(batch_size, max_limit_w(self.ctx.job, batch_size))

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Zeus's face over seeds on arrays, every try at its batch size's maximum limit (never profiled)."""
        job = model.job
        return cls._seed_face(
            model, policies, BatchSizeOnly, [max_limit_w(job, int(b)) for b in job.batch_sizes]
        )


@register_policy
@horizon_blind
class PowerLimitOnly(JitMixin, Policy):
    """Ablation: JIT power limit at the default batch size b0."""

    name = "pl-only"
    reads_paths = False
    description = "JIT power limit at the default batch size b0"

    def __init__(self, ctx: PolicyContext) -> None:
        """Start unprofiled."""
        super().__init__(ctx)
        self._init_jit()

    def predict(self) -> Decision:
        """b0 at its JIT limit."""
        return self._decide(self.ctx.job.b0)

    def observe(self, outcome: Outcome) -> None:
        """Remember the profiled limit."""
        self._learn_limit(outcome)

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Its face over seeds on arrays (:class:`~zeus_bench.sim.policies.seed_simple.JitB0Arrays`).

        Unless a subclass changes a rule, or b0's JIT limit is not a measured configuration (the
        default face, one object per seed, then says so on the second try).
        """
        rules = (
            "__init__",
            "predict",
            "observe",
            "stop_cost",
            "started",
            "_decide",
            "_learn_limit",
            "early_stopping",
        )
        b0 = int(model.job.b0)
        limit = model.jit_limit_w[model.bs_index[b0]]
        if changes_rules(cls, PowerLimitOnly, rules) or limit not in model.job.limits_of(b0):
            return scalar_face(model, policies)
        return JitB0Arrays(model, policies, cls.early_stopping)


class _Fixed(Policy):
    """A reference policy that always runs one configuration, without early stopping."""

    early_stopping = False

    def __init__(self, ctx: PolicyContext) -> None:
        """Fix the configuration."""
        super().__init__(ctx)
        self.decision = Decision(*self.configuration(ctx))

    def configuration(self, ctx: PolicyContext) -> tuple[int, float]:
        """The (batch size, limit) to run."""
        raise NotImplementedError

    def predict(self) -> Decision:
        """The fixed configuration."""
        return self.decision

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Its face over seeds on arrays (:class:`~zeus_bench.sim.policies.seed_simple.FixedArrays`).

        Unless a subclass changes how it decides or learns, or the seeds' configurations differ.
        """
        rules = ("predict", "observe", "stop_cost", "started")
        decisions = {cast("_Fixed", p).decision for p in policies}
        if changes_rules(cls, _Fixed, rules) or len(decisions) != 1 or not policies:
            return scalar_face(model, policies)
        return FixedArrays(model, policies, decisions.pop(), cls.early_stopping)


@register_policy
@horizon_blind
class Baseline(_Fixed):
    """b0 at the maximum power limit (the paper code's comparison)."""

    name = "baseline"
    reads_paths = False
    description = "default batch size b0 at the maximum power limit"

    def configuration(self, ctx: PolicyContext) -> tuple[int, float]:
        """b0 at its largest limit."""
        return ctx.job.b0, max_limit_w(ctx.job, ctx.job.b0)


@register_policy
@horizon_blind
class MaxBatch(_Fixed):
    """The largest batch size whose runs all reach the target, at the maximum power limit."""

    name = "max-batch"
    description = "largest always-converging batch size at the maximum power limit"

    def configuration(self, ctx: PolicyContext) -> tuple[int, float]:
        """Largest converging batch size at its largest limit."""
        return max_batch_configuration(ctx.job)


@register_policy
@horizon_blind
class Oracle(_Fixed):
    """The least expected-cost feasible configuration from the start."""

    name = "oracle"
    description = "least expected-cost configuration that always converges"

    def configuration(self, ctx: PolicyContext) -> tuple[int, float]:
        """The oracle configuration for the context's cost."""
        return oracle_configuration(ctx.job, ctx.cost)


@register_policy
@horizon_blind
class GridSearch(Policy):
    """Try every (batch size, limit) once, b0 at the maximum limit first, then keep the best.

    The order after b0 is batch sizes ascending, limits high to low; a configuration whose try
    does not reach the target (early-stopped) is not a candidate. With early stopping.
    """

    name = "grid-search"
    reads_paths = False
    description = "every (batch size, limit) once (b0 at max limit first), then the cheapest"

    def __init__(self, ctx: PolicyContext) -> None:
        """Lay out the grid."""
        super().__init__(ctx)
        job = ctx.job
        first = (job.b0, max_limit_w(job, job.b0))
        grid = [first]
        for b in job.batch_sizes:
            for p in sorted(job.limits_of(int(b)), reverse=True):
                if (int(b), float(p)) != first:
                    grid.append((int(b), float(p)))
        self.grid = grid
        self.next = 0
        self.best_cost = math.inf
        self.best_config: tuple[int, float] = first

    def predict(self) -> Decision:
        """Next untried configuration, or the best once all were tried."""
        if self.next < len(self.grid):
            return Decision(*self.grid[self.next])
        return Decision(*self.best_config)

    def observe(self, outcome: Outcome) -> None:
        """Advance the grid; keep the cheapest configuration that reached."""
        if self.next < len(self.grid) and (outcome.batch_size, outcome.power_limit_w) == self.grid[self.next]:
            self.next += 1
            if outcome.reached and outcome.cost < self.best_cost:
                self.best_cost = outcome.cost
                self.best_config = (outcome.batch_size, outcome.power_limit_w)

    def best(self) -> Decision:
        """Cheapest configuration so far."""
        return Decision(*self.best_config)

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """Its face over seeds on arrays (:class:`~zeus_bench.sim.policies.seed_simple.GridArrays`).

        Unless a subclass changes how it decides or learns, or the seeds' grids differ.
        """
        rules = ("__init__", "predict", "observe", "stop_cost", "started")
        grids = {tuple(cast("GridSearch", p).grid) for p in policies}
        if changes_rules(cls, GridSearch, rules) or len(grids) != 1:
            return scalar_face(model, policies)
        return GridArrays(model, policies, grids.pop(), cls.early_stopping)
