"""The batch-size optimizer of ``zeus-plus``: safe, budgeted hill climbing, with drift detection and priors.

:class:`SafeHillClimb` is, like Zeus's :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling`,
a pure algorithm (no I/O, no clock) that the simulator replays (:mod:`zeus_bench.sim.policies.zeus_plus`
adapts it to the policy interface) and :mod:`zeus_bench.online` runs inside a training loop. It uses only
what a deployment observes: its own runs' batch size, cost, epochs and whether they reached the target, the
cost of one epoch of each batch size it ran (its JIT profile measures it) and, when known, how many times
the job will recur. Rules (``docs/policies.md``):

* **Incumbent**: the batch size of least mean cost among those that reached the target (the last
  ``window`` runs of each when ``window`` > 0); b0 before any run. A profiled run's mean cost
  leaves out what its profiling first epoch cost more than an epoch at the chosen limit.
* **Dearer**: a batch size is dearer than the incumbent when its mean cost exceeds the
  incumbent's by more than ``noise_z`` standard deviations of the incumbent's runs (over the
  square root of its own runs); with one run of the incumbent, by anything.
* **Probes**: the prior's best (warm start), then the incumbent's coarse neighbours (nearest
  twice and half it; the larger first), then its adjacent ones, then those of every batch size
  not dearer than the incumbent. Not probed: a batch size ruled out, one run twice, one whose one
  run was dearer by more than the noise (else it gets a second run), and (``prune``) one beyond a
  dearer batch size on the same side of the incumbent: the cost curve is taken as unimodal
  (``epoch_evidence``: a batch size dearer only by the epochs of its paths bounds nothing).
* **Early stop of a probe** at ``(1 + margin) x`` the incumbent's mean cost, or at its funds,
  whichever is lower (and never above ``beta x`` the best); a run of the incumbent at ``beta x``
  its own mean cost when that is higher than ``beta x`` the best (the simulator's
  :meth:`~zeus_bench.sim.policies.zeus_plus.ZeusPlus.stop_cost`). A larger batch size stops after its
  first epoch when that epoch costs no less than one of the incumbent's, or when it times the
  incumbent's mean epochs exceeds the incumbent's mean cost: a larger batch rarely needs fewer
  epochs, so it cannot win. A probe cut by its funds before it cost the incumbent's mean is
  inconclusive (tried again when the funds allow); one cut at the cap is ruled out.
* **Funds** (a conservative bandit): with ``horizon`` N recurrences (the simulator passes the
  replay's count), a probe may spend ``(1 + safety) x N x`` the baseline's recurrence cost (b0 at
  its maximum limit, estimated from b0's runs and its JIT profile) less what was spent and less
  the incumbent's cost for this and every later recurrence, plus a loan of ``loan x`` the saving
  its measured epoch cost promises. ``horizon`` 0 (the anytime budget: ``zeus-plus`` when not
  told N, and the variant ``zeus-plus-safe``) assumes nothing about N: the cumulative cost so far
  must stay within ``(1 + safety) x`` the baseline's, plus the incumbent's saving credited
  ``lookahead x t`` recurrences ahead. Its defaults lend nothing and credit nothing ahead
  (:data:`ANYTIME_LOAN`, :data:`ANYTIME_LOOKAHEAD`): a recurrence that has not run pays no probe.
* **Drift**: when a batch size's last 4 runs average more than 1.4 x its earlier mean and 3 standard
  errors above it, the job has changed: the optimizer keeps only the last run of every other batch size
  (and the 4 of this one), forgets what it ruled out, and searches again from the new incumbent.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.hill_climb_estimates import ClimbEstimates
from zeus_bench.optimizers.hill_climb_settings import (
    ANYTIME_LOAN,
    ANYTIME_LOOKAHEAD,
    ANYTIME_MARGIN,
    DEFAULT_EPOCH_EVIDENCE,
    DEFAULT_HORIZON,
    DEFAULT_LOAN,
    DEFAULT_MARGIN,
    DEFAULT_SAFETY,
    NOISE_Z,
    SAFE_LOAN,
    SAFE_LOOKAHEAD,
    ClimbSettings,
)
from zeus_bench.optimizers.hill_climb_state import from_state, to_state
from zeus_bench.optimizers.hill_climb_verdicts import Verdicts

#: The optimizer and its settings; the settings' defaults (owned by
#: :mod:`~zeus_bench.optimizers.hill_climb_settings`) are part of its interface.
__all__ = [
    "ANYTIME_LOAN",
    "ANYTIME_LOOKAHEAD",
    "ANYTIME_MARGIN",
    "DEFAULT_EPOCH_EVIDENCE",
    "DEFAULT_HORIZON",
    "DEFAULT_LOAN",
    "DEFAULT_MARGIN",
    "DEFAULT_SAFETY",
    "NOISE_Z",
    "SAFE_LOAN",
    "SAFE_LOOKAHEAD",
    "ClimbSettings",
    "SafeHillClimb",
]


class SafeHillClimb(ClimbEstimates):
    """Batch-size optimizer of ``zeus-plus``: budgeted neighbour probes with early cut-off.

    Args:
        batch_sizes: Feasible batch sizes (any order, unique).
        default_batch_size: The job's default batch size b0; must be one of ``batch_sizes``.
        settings: The tunable settings (:class:`ClimbSettings`; None: its defaults).
        prior_best: Batch size to probe first (warm start), or None; the prior says it
            converges, so its probe is budgeted as one that cannot fail.
        ruled_out: Batch sizes never to probe (warm start: they did not converge elsewhere).
        **knobs: Any field of :class:`ClimbSettings` by name (``margin=0.4, horizon=50``),
            overriding ``settings``'.

    Raises:
        ConfigError: a default batch size not among the batch sizes, or a setting out of range.
        TypeError: a keyword that names no setting.
    """

    def __init__(
        self,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        settings: ClimbSettings | None = None,
        *,
        prior_best: int | None = None,
        ruled_out: Iterable[int] = (),
        **knobs: Any,
    ) -> None:
        """Create the optimizer before any run (incumbent b0)."""
        settings = ClimbSettings() if settings is None else settings
        settings = dataclasses.replace(settings, **knobs) if knobs else settings
        bs = sorted({int(b) for b in batch_sizes})
        if not bs:
            raise ConfigError("the batch-size optimizer needs at least one batch size")
        b0 = int(default_batch_size)
        if b0 not in bs:
            raise ConfigError(f"default batch size {b0} is not among {bs}")
        self.settings = settings
        self.batch_sizes = bs
        self._feasible = frozenset(bs)  # (observe's check)
        self._coarse_of: dict[tuple[int, bool, float], int | None] = {}  # _coarse's answers (bs is fixed)
        self.default_batch_size = b0
        self.margin, self.safety = float(settings.margin), float(settings.safety)
        self.noise_z, self.window = float(settings.noise_z), int(settings.window)
        self.horizon, self.up_first = int(settings.horizon), bool(settings.up_first)
        self.loan, self.lookahead = settings.funds_rates()
        self.second_chance, self.prune = True, bool(settings.prune)
        self.epoch_evidence = bool(settings.epoch_evidence)
        self.prior_best = None if prior_best is None or int(prior_best) not in bs else int(prior_best)
        self._means: dict[int, float] = {}  # mean_cost of each batch size
        self._spreads: dict[int, float] = {}  # _spread of each batch size
        self._moments: dict[int, tuple[list[float], int, float, float]] = {}  # spread_bounds' running sums
        self._exact: dict[object, tuple[list[float], int, list[float]]] = {}  # kept_mean's partial sums
        self._incumbent: int | None = None  # incumbent()'s answer
        self._extremes: dict[int, tuple[list[float], int, float, float]] = {}  # spread_bounds' max and min
        self._runs: dict[int, tuple[int, float]] | None = None  # run_summary()'s answer
        self._neighbours_of: dict[tuple[int, frozenset[int] | None], list[int]] = {}  # _neighbours' answers
        self._sums: dict[
            str | int, tuple[list[float], int, float, float]
        ] = {}  # _summary's (list, length, mean, se)
        self._costs: dict[int, list[float]] = {}
        self.epochs: dict[int, list[float]] = {}
        self.tried: set[int] = set()
        self.ruled_out: set[int] = {int(b) for b in ruled_out if int(b) != b0}
        self.base_costs: list[float] = []
        self.baseline_ratio = 1.0
        self.spent, self.recurrences = 0.0, 0
        self.probe: int | None = None
        self.probe_cap = math.inf
        self.one_epoch = False  # the probe under way stops after its first epoch
        self.probe_funds = math.inf  # anytime budget: what the probe under way may spend
        self.scouting = False  # anytime budget: the probe under way was cut to one epoch by its funds
        self.epoch_costs: dict[int, float] = {}  # cost of one epoch per batch size (its JIT profile)
        self.short: dict[int, float] = {}  # cost at which an inconclusive probe was cut (a lower bound)
        self.capped: set[int] = set()  # larger batch sizes whose probe was cut at the cap
        self.resets = self.probes = self.failed_probes = 0

    @classmethod
    def for_job(
        cls,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        *,
        seed: int = 0,
        window: int = 0,
        prune_rounds: int | None = None,
        recurrences: int = 0,
    ) -> SafeHillClimb:
        """The optimizer before any run, with its defaults; ``recurrences`` (if > 0) its ``horizon``."""
        return cls(batch_sizes, default_batch_size, window=window, horizon=recurrences or DEFAULT_HORIZON)

    def _neighbours(self, b: int) -> list[int]:
        """Neighbours of ``b``: coarse (nearest half and twice it, log scale), then adjacent.

        They depend on ``b`` and :attr:`capped` alone (the batch sizes and ``up_first`` are fixed): kept.
        """
        return list(self._neighbours_kept(b))

    def _neighbours_kept(self, b: int) -> list[int]:
        """:meth:`_neighbours`, the kept list itself (read only: no copy)."""
        key = (b, frozenset(self.capped) if self.capped else None)
        hit = self._neighbours_of.get(key)
        if hit is None:
            hit = self._neighbours_of[key] = self._find_neighbours(b)
        return hit

    def _find_neighbours(self, b: int) -> list[int]:
        bs = self.batch_sizes
        i = bs.index(b)
        out = []
        sides = [(False, i - 1), (True, i + 1)]
        if self.up_first:
            sides.reverse()
        for up, _ in sides:
            x = self._coarse(b, up)
            # A larger batch size cut at the cap may only have drawn a slow training path: the
            # search may step over it (never over one that could not win from its first epoch).
            while up and x is not None and x in self.capped:
                x = self._coarse(x, up)
            if x is not None:
                out.append(x)
        return out + [bs[j] for _, j in sides if 0 <= j < len(bs)]

    def _coarse(self, b: int, up: bool, factor: float = 2.0) -> int | None:
        """The batch size nearest ``factor`` times (``up``) or over ``b`` on a log scale, beyond ``b``."""
        key = (b, up, factor)
        if key not in self._coarse_of:
            bs = self.batch_sizes
            i = bs.index(b)
            side = bs[i + 1 :] if up else bs[:i]
            target = b * factor if up else b / factor
            self._coarse_of[key] = min(side, key=lambda x: (abs(math.log(x / target)), x)) if side else None
        return self._coarse_of[key]

    def _candidates(self, inc: int) -> list[int]:
        """Batch sizes to probe next, in order (:meth:`Verdicts.candidates`)."""
        return Verdicts(self, inc).candidates()

    def _beyond_dearer(self, b: int, inc: int) -> bool:
        """Whether a batch size between ``b`` and the incumbent cost more than it (:meth:`Verdicts.beyond_dearer`)."""
        return Verdicts(self, inc).beyond_dearer(b)

    def _refuted(self, c: int, inc: int) -> bool:
        """Dearer, and (``epoch_evidence``) not only by its epochs (:meth:`Verdicts.refuted`)."""
        return Verdicts(self, inc).refuted(c)

    def _dearer(self, c: int, inc: int) -> bool:
        """Whether ``c`` is known to cost more than the incumbent (:meth:`Verdicts.dearer`)."""
        return Verdicts(self, inc).dearer(c)

    def _settled(self, b: int, inc: int) -> bool:
        """Whether probing ``b`` again would teach nothing (:meth:`Verdicts.settled`)."""
        return Verdicts(self, inc).settled(b)

    # --------------------------------------------------------------------------- the interface
    def predict(self) -> int:
        """Batch size of the next run: a probe when one is due and affordable, else the incumbent."""
        inc = self.incumbent()
        inc_cost = self.mean_cost(inc)
        self.probe, self.probe_cap, self.probe_funds = None, math.inf, math.inf
        if not math.isfinite(inc_cost) or not self.base_costs:
            return inc  # no run of b0 yet: no estimate of the baseline, no budget
        return self._predict_funded(inc, inc_cost)

    def _predict_funded(self, inc: int, inc_cost: float) -> int:
        """The first due probe its funds pay for, capped at them; else the incumbent.

        Unmeasured batch sizes (cost of one epoch unknown) go first, in neighbour order, then
        measured ones, the most promising first; one that cannot beat ``(1 + margin) x`` the
        incumbent even at the incumbent's epochs ends the list.
        """
        full = (1.0 + self.margin) * inc_cost
        view = Verdicts(self, inc)  # one view of the state for the whole decision
        candidates = view.candidates()
        if not candidates:
            return inc  # (most decisions)
        expected = view.expected
        budget: float | None = None  # (asked at the first candidate within reach: most decisions have none)
        for b in sorted(candidates, key=expected):
            if expected(b) > full:
                break
            if budget is None:
                budget = self.budget(inc_cost)
            funds = budget + self.loan * view.promise(b) * self._base()
            if funds >= view.need(b):
                self.probe, self.probe_cap, self.probe_funds = b, min(full, funds), funds
                return b
        return inc

    def budget(self, inc_cost: float) -> float:
        """Safety budget: what a probe may spend now, the incumbent's runs kept in reserve.

        With a horizon of N recurrences (this one is the ``t``-th): ``(1 + safety) x N x`` the
        baseline's recurrence cost, minus what was spent, minus the incumbent's cost for this
        recurrence (should the probe fail) and each of the ``N - t`` after it. Without one
        (anytime): ``(1 + safety) x`` the baseline's cumulative cost up to and including this
        recurrence, plus the incumbent's saving over the baseline credited for ``lookahead x t``
        recurrences (a job that recurred ``t`` times is expected to recur about as many again),
        minus what was spent, minus the incumbent's run this recurrence. Unbounded once the
        incumbent costs more than the baseline (after drift: probing can only help); 0 before b0
        has run.
        """
        if not self.base_costs:
            return 0.0
        base, t = self._base(), self.recurrences + 1
        if inc_cost > (1.0 + self.safety) * self._summary("base", self.base_costs)[0] * self.baseline_ratio:
            return math.inf
        if self.horizon > 0:
            n = max(self.horizon, t)
            return (1.0 + self.safety) * n * base - self.spent - (n - t + 1) * inc_cost
        credit = self.lookahead * t * max(0.0, base - inc_cost)
        return (1.0 + self.safety) * t * base + credit - self.spent - inc_cost

    def promise(self, b: int, inc: int) -> float:
        """Saving per recurrence that ``b``'s measured epoch cost promises, in baseline costs (:meth:`Verdicts.promise`)."""
        return Verdicts(self, inc).promise(b)

    def _need(self, b: int, inc: int) -> float:
        """Least funds worth a probe of ``b`` (:meth:`Verdicts.need`)."""
        return Verdicts(self, inc).need(b)

    def _cut_by_funds(self, b: int, c: float) -> bool:
        """Whether a probe that did not reach the target was stopped by its funds.

        That is: capped below ``(1 + margin) x`` the incumbent's mean cost, stopped within one
        epoch of that cap, and below the incumbent's mean cost. Otherwise it ran out of epochs or
        was clearly dearer: conclusive.
        """
        inc_cost = self.mean_cost(self.incumbent())
        epoch = self.epoch_costs.get(b, math.inf)
        funded_cap = self.probe_cap < (1.0 + self.margin) * inc_cost
        return funded_cap and c < inc_cost and c >= self.probe_cap - epoch

    def stop_cost(self, default: float, epoch_cost: float = math.nan) -> float:
        """Cost at which the run just predicted stops (``default``: beta x the best cost).

        A probe stops at its cap (:meth:`predict` set it). A probe of a larger batch size stops
        after its first epoch when that epoch's cost (``epoch_cost``, measured by the JIT profile)
        times the incumbent's mean epochs passes the incumbent's mean cost by more than
        ``noise_z`` standard deviations of its runs: a larger batch rarely needs fewer epochs to
        the target, so it cannot win. The epoch cost of every run is recorded (the funds rule of
        :meth:`predict` and the expected cost of a probe use it).
        """
        cap = self.probe_cap
        inc = self.incumbent()
        self.one_epoch = False
        if self.probe is not None and self.probe > inc and math.isfinite(epoch_cost):
            epochs = self.epochs.get(inc)
            # Beyond the noise of the incumbent's runs: a cheaper path of it could still lose.
            if epochs and epoch_cost * self._mean_epochs(inc) > self.mean_cost(
                inc
            ) + self.noise_z * self._spread(inc):
                cap, self.one_epoch = epoch_cost, True
        if self.probe is None and math.isfinite(epoch_cost):
            self.epoch_costs[inc] = float(epoch_cost)
        if self.probe is not None and math.isfinite(epoch_cost):
            # The first epoch measured the probe's epoch cost; if its expected run does not fit
            # its funds it stops after that epoch and is tried again later.
            self.epoch_costs[self.probe] = float(epoch_cost)
            expected = self._expected(self.probe, inc)
            if not self.one_epoch and (expected > self.probe_funds or cap < epoch_cost):
                cap, self.one_epoch, self.scouting = epoch_cost, True, True
        return min(default, cap)

    def observe(
        self, batch_size: int, cost: float, reached: bool, epochs: float = math.nan, overhead: float = 0.0
    ) -> None:
        """Feed back one run: its batch size, cost (0 if it never ran), whether it reached, epochs.

        ``overhead`` is what the run cost more than it would have at its chosen power limit (its
        first epoch profiled every limit): it counts as spent, but not towards the batch size's
        mean cost.
        """
        b, c, r = int(batch_size), float(cost), bool(reached)
        if not (overhead >= 0.0 and math.isfinite(overhead)):
            raise ConfigError(f"overhead must be a finite number >= 0, got {overhead}")
        if b not in self._feasible:
            raise ConfigError(f"batch size {b} is not among {self.batch_sizes}")
        probing = b == self.probe
        # Anytime budget: a probe cut by its funds before it cost the incumbent's mean (not
        # because it was clearly dearer) is inconclusive: it is tried again once funds allow.
        inconclusive = (
            probing and not r and (self.scouting or (not self.one_epoch and self._cut_by_funds(b, c)))
        )
        scouted = self.scouting
        if probing and not r and not self.one_epoch and not inconclusive and b > self.incumbent():
            self.capped.add(b)
        self.probe, self.probe_cap, self.one_epoch = None, math.inf, False
        self.probe_funds, self.scouting = math.inf, False
        self.spent += c
        if not inconclusive:
            self.tried.add(b)
        elif not scouted:
            self.short[b] = max(self.short.get(b, 0.0), c)
        if probing:
            self.probes += 1
            self.failed_probes += not r
        if not r:
            if probing:
                if not inconclusive:
                    self.ruled_out.add(b)
            elif c > 0.0:
                # The incumbent stopped early: its cost so far is a lower bound of what it costs
                # now, and keeping it makes a drifted incumbent lose its place.
                self._add_cost(b, max(0.0, c - overhead))
                self._check_drift(b)
            return
        self.recurrences += 1
        if b == self.default_batch_size:
            self.base_costs.append(c - overhead)
        self._add_cost(b, c - overhead)
        if math.isfinite(epochs):
            self.epochs.setdefault(b, []).append(float(epochs))
        self._check_drift(b)

    def best_batch_size(self) -> int:
        """Best batch size known so far (the incumbent)."""
        return self.incumbent()

    # ----------------------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable state (:mod:`~zeus_bench.optimizers.hill_climb_state`: version 3; 1 and 2 still load)."""
        return to_state(self)

    @classmethod
    def from_state_dict(cls, d: dict[str, Any]) -> SafeHillClimb:
        """Restore an optimizer saved with :meth:`state_dict`."""
        return from_state(cls, d)
