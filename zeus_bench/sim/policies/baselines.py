"""Standard bandit baselines over batch sizes, under Zeus's try protocol.

Every policy here runs Zeus's protocol and differs only in how it picks the next batch size:

* the power limit is profiled just in time on the first try of each batch size and kept after;
* the runner stops a try at ``beta x`` the best recurrence cost (``early_stopping``), and a
  try's cost is the runner's (:mod:`zeus_bench.core.cost`);
* b0 runs until the first try reaches the target (the first recurrence must converge);
* an arm's observations are its tries' costs, the JIT profile's extra first-epoch cost left out
  (:func:`~zeus_bench.sim.policies.zeus_plus.profiling_overhead`), in units of the first
  successful try's cost (b0's), capped at ``beta`` (what a try stopped at ``beta x`` the best
  can cost; 4 without early stopping). A try that did not reach the target (early-stopped, or
  never ran for a zero budget) counts as the cap: its recurrence still needs another try, so
  its cost so far (a lower bound, which Zeus's bandit uses) would make a batch size that always
  stops at ``beta x`` the best look as good as one that reaches at that cost.

The policies (references in ``docs/policies.md``):

* ``eps-greedy``: epsilon-greedy with Auer et al.'s decaying ``eps_t = min(1, c K / t)``.
* ``ucb1``: UCB1 (Auer, Cesa-Bianchi and Fischer 2002) on rewards ``1 - x / cap`` in [0, 1].
* ``sw-ts``: sliding-window Gaussian Thompson sampling (the window of Garivier and Moulines
  2011's SW-UCB, ``2 sqrt(T log T)`` tries for one change over ``T`` recurrences).
* ``conservative-ucb``: conservative UCB (Wu, Shariff, Lattimore and Szepesvari 2016) with the
  explicit safety budget ``alpha`` of the baseline (b0 at its maximum limit).

:mod:`zeus_bench.sim.policies.bo` adds ``bo-ei`` (Bayesian optimisation, expected improvement).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from zeus_bench.optimizers.hill_climb import DEFAULT_SAFETY
from zeus_bench.sim.policies.arm_faces import (
    EPS_C,
    SIGMA_MIN,
    TS_PRIOR_STD,
    ConservativeUCBArrays,
    EpsilonGreedyArrays,
    SlidingWindowTSArrays,
    UCB1Arrays,
    unplayed_order,
)
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
from zeus_bench.sim.policies.builtin import JitMixin
from zeus_bench.sim.policies.seed_arms import ArmArrays
from zeus_bench.sim.policies.zeus_plus import baseline_ratio, profiling_overhead

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel
    from zeus_bench.sim.policies.seeds import SeedArrays, SeedPolicies

#: Recurrences the baselines assume when their number is not known (sw-ts's window, conservative-ucb's funds).
UNKNOWN_RECURRENCES = 50
CAP_WITHOUT_EARLY_STOP = 4.0  # cap of an observation (units of the first cost) when beta is inf
MIN_SEEDS = 5  # fewer seeds replay one object per seed (the default face): at 4 seeds the two break even

#: The methods whose rules a class's face over seeds (its ``array_face``) replays on arrays: a
#: subclass overriding one of them below the class that defines its ``array_face`` gets the default face.
ARM_RULES = (
    "__init__", "predict", "choose", "observe", "record", "means", "best", "pooled_std", "ordered_unplayed",
    "posteriors", "posterior", "bounds", "stop_cost", "started", "_decide", "_learn_limit",
)  # fmt: skip


class ArmBandit(JitMixin, Policy):
    """Shared protocol of the bandit baselines: JIT limits, b0 until the first success, arm statistics.

    Per batch size it keeps the normalized costs' count, sum and sum of squares (the first
    observation is the first success, which sets the unit). Subclasses implement
    :meth:`choose` (the batch size once a try has reached the target).
    """

    reads_paths = False

    def __init__(self, ctx: PolicyContext) -> None:
        """Start with no observation."""
        super().__init__(ctx)
        self._init_jit()
        self.arms: list[int] = [int(b) for b in ctx.job.batch_sizes]
        self.index = {b: i for i, b in enumerate(self.arms)}
        self.b0 = int(ctx.job.b0)
        k = len(self.arms)
        self.n = np.zeros(k)  # observations per arm
        self.s1 = np.zeros(k)  # sum of normalized costs
        self.s2 = np.zeros(k)  # sum of their squares
        self.reached: dict[int, int] = dict.fromkeys(self.arms, 0)
        self.tries = 0
        self.scale = math.nan  # J: the first successful try's cost (profiling extra left out)
        self.cap = ctx.beta if math.isfinite(ctx.beta) else CAP_WITHOUT_EARLY_STOP
        self.horizon = int(ctx.recurrences) if ctx.recurrences else UNKNOWN_RECURRENCES
        self.successes = 0
        self.spent = 0.0  # J actually spent (profiled tries in full)
        self.current = 0.0  # J spent in the current recurrence
        self.min_cost = math.inf  # least recurrence total so far (the runner's min_cost)

    # ------------------------------------------------------------------------------ protocol
    def predict(self) -> Decision:
        """b0 until a try has reached the target, then the subclass's choice, at its JIT limit."""
        if self.successes == 0:
            return self._decide(self.b0)
        return self._decide(self.choose())

    def choose(self) -> int:
        """Batch size of the next try (after the first success)."""
        raise NotImplementedError

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """The face that decides and observes every seed on arrays (the class's ``array_face``).

        Unless no class defines ``array_face``, a subclass changes a rule of :data:`ARM_RULES`
        below the class that does (it gets the default face, one object asked per seed), there
        are fewer than :data:`MIN_SEEDS` seeds, or the face does not apply
        (:meth:`ArmArrays.applies <zeus_bench.sim.policies.seed_arms.ArmArrays.applies>`).
        """
        owner = next((k for k in cls.__mro__ if "array_face" in vars(k)), None)
        objs = cast("Sequence[ArmBandit]", policies)
        if (
            owner is None
            or len(policies) < MIN_SEEDS
            or changes_rules(cls, owner, ARM_RULES)
            or not ArmArrays.applies(model, objs)
        ):
            return scalar_face(model, policies)
        return cast("SeedArrays", getattr(cls, "array_face")(model, objs))  # noqa: B009 - defined by subclasses only

    def observe(self, outcome: Outcome) -> None:
        """Record the try's normalized cost, its success and the money spent."""
        self._learn_limit(outcome)
        b = int(outcome.batch_size)
        x = self.cap  # a try that did not reach the target (or never ran) counts as the cap
        if outcome.epochs > 0.0:
            self.spent += outcome.cost
            self.current += outcome.cost
        if outcome.reached:
            extra = profiling_overhead(self.ctx.job, self.ctx.cost, outcome) if outcome.profiled else 0.0
            cost = outcome.cost - min(extra, outcome.cost)
            if self.successes == 0:
                self.scale = cost if cost > 0.0 else 1.0
            x = min(cost / self.scale, self.cap)
            self.successes += 1
            self.reached[b] += 1
            self.min_cost = min(self.min_cost, self.current)
            self.current = 0.0
        if math.isfinite(self.scale):  # no unit before the first success: nothing to learn
            self.record(b, x)

    def record(self, b: int, x: float) -> None:
        """Add a normalized cost to a batch size's statistics."""
        i = self.index[b]
        self.n[i] += 1.0
        self.s1[i] += x
        self.s2[i] += x * x
        self.tries += 1

    def means(self) -> np.ndarray:
        """Mean normalized cost of every batch size (inf before any observation)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 0, self.s1 / np.maximum(self.n, 1.0), np.inf)

    def best(self) -> Decision:
        """The batch size of least mean cost among those that reached the target (b0 before any)."""
        done = [b for b in self.arms if self.reached[b]]
        if not done:
            return self._decide(self.b0)
        means = self.means()
        return self._decide(min(done, key=lambda b: (means[self.index[b]], b != self.b0)))

    @staticmethod
    def pooled_std(n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> float:
        """Pooled within-arm standard deviation from per-arm sums, at least :data:`SIGMA_MIN`."""
        many = n > 1
        dof = float((n[many] - 1.0).sum())
        if dof <= 0.0:
            return SIGMA_MIN
        ss = float((s2[many] - s1[many] ** 2 / n[many]).sum())
        return max(math.sqrt(max(ss, 0.0) / dof), SIGMA_MIN)

    def ordered_unplayed(self) -> list[int]:
        """Batch sizes never tried, nearest b0 first in doublings (the larger of two equals first)."""
        n = self.n
        return [self.arms[i] for i in unplayed_order(tuple(self.arms), self.b0) if n[i] == 0]


@register_policy
@horizon_blind
class EpsilonGreedy(ArmBandit):
    """Epsilon-greedy over batch sizes, ``eps_t = min(1, c K / t)`` (Auer et al. 2002)."""

    name = "eps-greedy"
    randomized = True
    description = "epsilon-greedy over batch sizes (eps_t = min(1, K/t)), JIT power limit"

    def choose(self) -> int:
        """With probability ``eps_t`` a uniformly random batch size, else the least mean cost."""
        eps = min(1.0, EPS_C * len(self.arms) / (self.tries + 1))
        rng = self.ctx.rng
        if rng.random() < eps:
            return self.arms[int(rng.integers(len(self.arms)))]
        means = self.means()
        return min(self.arms, key=lambda b: (means[self.index[b]], b != self.b0))

    @classmethod
    def array_face(cls, model: JobModel, policies: Sequence[ArmBandit]) -> ArmArrays:
        """Its face over seeds (:class:`EpsilonGreedyArrays`)."""
        return EpsilonGreedyArrays(model, policies)


@register_policy
@horizon_blind
class UCB1(ArmBandit):
    """UCB1 (Auer, Cesa-Bianchi and Fischer 2002) on rewards ``1 - cost / cap`` in [0, 1]."""

    name = "ucb1"
    description = "UCB1 over batch sizes (rewards 1 - cost/cap in [0, 1]), JIT power limit"

    def choose(self) -> int:
        """Each batch size once (nearest b0 first), then the largest upper confidence bound."""
        unplayed = self.ordered_unplayed()
        if unplayed:
            return unplayed[0]
        index = 1.0 - self.means() / self.cap + np.sqrt(2.0 * math.log(self.tries) / self.n)
        return self.arms[int(np.argmax(index))]

    @classmethod
    def array_face(cls, model: JobModel, policies: Sequence[ArmBandit]) -> ArmArrays:
        """Its face over seeds (:class:`UCB1Arrays`)."""
        return UCB1Arrays(model, policies)


def sliding_window(horizon: int) -> int:
    """SW-UCB's window for one change over ``horizon`` steps: ``ceil(2 sqrt(T log T))`` (at least 2)."""
    t = max(int(horizon), 2)
    return max(2, math.ceil(2.0 * math.sqrt(t * math.log(t))))


@register_policy
class SlidingWindowTS(ArmBandit):
    """Sliding-window Gaussian Thompson sampling over batch sizes (drift-aware).

    Only the last ``window`` tries (:func:`sliding_window` of the number of recurrences, or the
    replay's ``--window``) inform the likelihood: an arm's posterior is Gaussian, prior
    ``N(m, TS_PRIOR_STD^2)`` with ``m`` its all-time mean normalized cost (1, b0's first cost,
    if never run), times the likelihood of its windowed costs with the pooled within-arm noise
    of the window. The batch size of least sampled cost runs.
    """

    name = "sw-ts"
    randomized = True
    description = "sliding-window Gaussian Thompson sampling (window 2 sqrt(T log T) tries), JIT power limit"

    def __init__(self, ctx: PolicyContext) -> None:
        """Fix the window from the number of recurrences."""
        super().__init__(ctx)
        self.window = ctx.window if ctx.window > 0 else sliding_window(self.horizon)
        self.recent: deque[tuple[int, float]] = deque()
        k = len(self.arms)
        self.wn, self.w1, self.w2 = np.zeros(k), np.zeros(k), np.zeros(k)

    def record(self, b: int, x: float) -> None:
        """Also slide the window."""
        super().record(b, x)
        i = self.index[b]
        self.recent.append((i, x))
        self.wn[i] += 1.0
        self.w1[i] += x
        self.w2[i] += x * x
        if len(self.recent) > self.window:
            j, y = self.recent.popleft()
            self.wn[j] -= 1.0
            self.w1[j] -= y
            self.w2[j] -= y * y

    def posteriors(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior means and standard deviations of every arm's normalized cost."""
        sigma2 = self.pooled_std(self.wn, self.w1, self.w2) ** 2
        prior_prec = 1.0 / TS_PRIOR_STD**2
        prior_mean = np.where(self.n > 0, self.s1 / np.maximum(self.n, 1.0), 1.0)
        prec = prior_prec + self.wn / sigma2
        return (prior_prec * prior_mean + self.w1 / sigma2) / prec, np.sqrt(1.0 / prec)

    def choose(self) -> int:
        """The batch size of least sampled cost (one standard normal draw per arm)."""
        means, stds = self.posteriors()
        z = self.ctx.rng.standard_normal(len(self.arms))
        return self.arms[int(np.argmin(means + stds * z))]

    @classmethod
    def array_face(cls, model: JobModel, policies: Sequence[ArmBandit]) -> ArmArrays:
        """Its face over seeds (:class:`SlidingWindowTSArrays`)."""
        return SlidingWindowTSArrays(model, policies)


@register_policy
@horizon_blind
class ConservativeUCB(ArmBandit):
    """Conservative UCB (Wu et al. 2016): explore only while the baseline's budget allows.

    With ``r`` the current recurrence and ``base`` the baseline's cost per recurrence (b0 at its
    maximum limit: b0's mean cost less its confidence width, times the ratio of epoch costs its
    JIT profile measured), the arm of least lower confidence bound on its cost (an untried one
    first, nearest b0) runs when

        spent + pessimistic cost of the try <= (1 + alpha) x r x base,

    else the arm of least upper bound among those that reached the target, if the budget pays
    that bound, else b0. The pessimistic cost of an arm that has reached the target is its
    upper bound; of one that has not, ``beta x`` the best recurrence cost (where the runner
    stops it) plus b0's upper bound (the fallback that then completes the recurrence).
    Confidence widths are ``sigma sqrt(2 log n / n_i)`` with the pooled noise ``sigma``. b0, the
    safe arm, runs as the baseline does: without early stopping (stopped at ``beta x`` the best,
    a slow path of b0 would fail and be retried at a loss the budget does not foresee). So the
    cumulative cost stays within ``(1 + alpha)`` of the baseline's whenever the tries cost what
    the bounds say (``tests/sim/test_sim_baselines.py`` checks it on a deterministic job).
    Without early stopping (beta inf) an untried arm is never affordable.
    """

    name = "conservative-ucb"
    description = "conservative UCB (Wu et al. 2016), safety budget alpha = 2 % of b0 at max limit"
    alpha: float = DEFAULT_SAFETY

    def __init__(self, ctx: PolicyContext) -> None:
        """Start with the baseline's epoch-cost ratio unknown (1 until b0's profile)."""
        super().__init__(ctx)
        self.ratio = 1.0
        self.last = self.b0

    def predict(self) -> Decision:
        """The protocol's decision; remembers the batch size (b0 runs without early stop)."""
        decision = super().predict()
        self.last = decision.batch_size
        return decision

    def stop_cost(self, default: float, epoch_cost: float = math.nan) -> float:
        """No early stop for b0 (the safe arm), ``beta x`` the best for the others."""
        return math.inf if self.last == self.b0 else default

    def observe(self, outcome: Outcome) -> None:
        """Also learn what b0's JIT profile measured at its maximum limit."""
        if outcome.profiled and outcome.batch_size == self.b0:
            self.ratio = baseline_ratio(self.ctx.job, self.ctx.cost, outcome.power_limit_w)
        super().observe(outcome)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper confidence bounds of each arm's normalized cost (+-inf if untried)."""
        sigma = self.pooled_std(self.n, self.s1, self.s2)
        with np.errstate(divide="ignore", invalid="ignore"):
            width = sigma * np.sqrt(2.0 * math.log(max(self.tries, 2)) / self.n)
            means = self.means()
            return np.where(self.n > 0, means - width, -np.inf), np.where(self.n > 0, means + width, np.inf)

    @classmethod
    def array_face(cls, model: JobModel, policies: Sequence[ArmBandit]) -> ArmArrays:
        """Its face over seeds (:class:`ConservativeUCBArrays`)."""
        return ConservativeUCBArrays(model, policies)

    def choose(self, bounds: tuple[np.ndarray, np.ndarray] | None = None) -> int:
        """The optimistic arm when the budget pays its pessimistic cost, else the safest paid one, else b0.

        ``bounds``: :meth:`bounds`, when already computed.
        """
        lo, hi = self.bounds() if bounds is None else bounds
        i0 = self.index[self.b0]
        budget = (1.0 + self.alpha) * (self.successes + 1) * max(lo[i0], 0.0) * self.ratio * self.scale
        budget -= self.spent
        fallback = hi[i0] * self.scale
        worst = self.ctx.beta * self.min_cost + fallback

        def pessimistic(b: int) -> float:
            return worst if self.reached[b] == 0 else min(hi[self.index[b]] * self.scale, worst)

        unplayed = self.ordered_unplayed()
        candidate = (
            unplayed[0] if unplayed else min(self.arms, key=lambda b: (lo[self.index[b]], b != self.b0))
        )
        if candidate == self.b0 or pessimistic(candidate) <= budget:
            return candidate
        done = [b for b in self.arms if self.reached[b] and b != self.b0]
        if done:
            safest = min(done, key=lambda b: hi[self.index[b]])
            if pessimistic(safest) <= budget:
                return safest
        return self.b0
